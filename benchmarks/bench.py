"""Measure what safe_queue costs at synth time. Run by hand; record results in README.md.

    .venv/bin/python -m benchmarks.bench                # everything (a few minutes)
    .venv/bin/python -m benchmarks.bench --only ratio   # one part: ratio, checks, scale, resources

Times are the median of --repeat runs of "build the app + app.synth()" in one process,
after a warm-up run, the variants interleaved so that drift hits both alike.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

# The project's Node.js (scripts/setup --node) for jsii here and in the timed subprocesses.
os.environ["PATH"] = os.pathsep.join(
    [str(Path(__file__).resolve().parent.parent / "node_modules" / ".bin"), os.environ["PATH"]]
)

import aws_cdk as cdk

from benchmarks.apps import consumers_app
from benchmarks.measure import round_trips, synth_in_process


def synth_seconds(build: Callable[[str], cdk.App]) -> float:
    with tempfile.TemporaryDirectory() as outdir:
        gc.collect()
        started = time.perf_counter()
        build(outdir).synth()
        return time.perf_counter() - started


def process_seconds(*args: str) -> float:
    """Wall time of a whole `python app.py`-like process: start, import, build, synth."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "benchmarks.run_app", *args], check=True)
    return time.perf_counter() - started


def compare_processes(label: str, a: list[str], b: list[str], repeat: int) -> None:
    times_a, times_b = [], []
    for _ in range(repeat):
        times_a.append(process_seconds(*a))
        times_b.append(process_seconds(*b))
    median_a, median_b = statistics.median(times_a), statistics.median(times_b)
    print(f"| {label} | {median_a:.2f} s | {median_b:.2f} s | {median_a / median_b:.3f} |")


def compare(
    label: str, a: Callable[[str], cdk.App], b: Callable[[str], cdk.App], repeat: int
) -> tuple[float, float]:
    synth_seconds(a)  # warm-up
    synth_seconds(b)
    times_a, times_b = [], []
    for _ in range(repeat):
        times_a.append(synth_seconds(a))
        times_b.append(synth_seconds(b))
    median_a, median_b = statistics.median(times_a), statistics.median(times_b)
    print(f"| {label} | {median_a:.2f} s | {median_b:.2f} s | {median_a / median_b:.3f} |")
    return median_a, median_b


def jsii_calls(build: Callable[[str], cdk.App]) -> int:
    """Round trips between Python and the jsii kernel to build and synthesize the app."""
    return sum(round_trips(build).values())


def compare_cpu(
    label: str, a: Callable[[str], cdk.App], b: Callable[[str], cdk.App], repeat: int
) -> None:
    """Median wall and CPU time (Python + jsii kernel) of a and b, interleaved."""
    synth_in_process(a)  # warm-up
    synth_in_process(b)
    runs_a, runs_b = [], []
    for _ in range(repeat):
        runs_a.append(synth_in_process(a))
        runs_b.append(synth_in_process(b))
    wall_a, cpu_a = (statistics.median(r[i] for r in runs_a) for i in (0, 1))
    wall_b, cpu_b = (statistics.median(r[i] for r in runs_b) for i in (0, 1))
    print(
        f"| {label} | {wall_a:.2f} s | {wall_b:.2f} s | {wall_a / wall_b:.3f} |"
        f" {cpu_a:.2f} s | {cpu_b:.2f} s | {cpu_a / cpu_b:.3f} |"
    )


def ratio(repeat: int) -> None:
    print("\nIn one process, after warm-up (build + synth), wall and CPU (Python + node):")
    print(
        "\n| consumers | SafeQueueConsumer | hand-wired | ratio | CPU construct | CPU hand |"
        " CPU ratio |\n|---|---|---|---|---|---|---|"
    )
    for count in (1, 10, 50):
        compare_cpu(
            str(count),
            lambda outdir, n=count: consumers_app(n, outdir=outdir),
            lambda outdir, n=count: consumers_app(n, hand_wired=True, outdir=outdir),
            repeat,
        )
    print("\nRound trips into jsii (build + synth), per consumer at 50 consumers:")
    construct = jsii_calls(lambda outdir: consumers_app(50, outdir=outdir))
    hand = jsii_calls(lambda outdir: consumers_app(50, hand_wired=True, outdir=outdir))
    print("\n| SafeQueueConsumer | hand-wired | ratio |\n|---|---|---|")
    print(f"| {construct / 50:.1f} | {hand / 50:.1f} | {construct / hand:.3f} |")
    print("\nWhole process, as `cdk synth` runs the app (start + import + build + synth):")
    print("\n| consumers | SafeQueueConsumer | hand-wired | ratio |\n|---|---|---|---|")
    for count in (1, 50):
        compare_processes(str(count), [str(count)], [str(count), "--hand-wired"], repeat)


def checks(repeat: int) -> None:
    print("\nIn one process, after warm-up (build + synth):")
    print("\n| mappings | with SafeQueueChecks | without | ratio |\n|---|---|---|---|")
    for count in (50, 200):
        compare(
            str(count),
            lambda outdir, n=count: consumers_app(n, checks=True, outdir=outdir),
            lambda outdir, n=count: consumers_app(n, outdir=outdir),
            repeat,
        )
    print("\nWhole process, as `cdk synth` runs the app:")
    print("\n| mappings | with SafeQueueChecks | without | ratio |\n|---|---|---|---|")
    for count in (50, 200):
        compare_processes(str(count), [str(count), "--checks"], [str(count)], repeat)


def scale(repeat: int) -> None:
    print("\n| consumers | layout | stacks | synth | per consumer |\n|---|---|---|---|---|")
    for count in (50, 100, 200):
        for split in (False, True):
            times = [
                synth_seconds(
                    lambda outdir, n=count, s=split: consumers_app(
                        n, checks=True, split=s, outdir=outdir
                    )
                )
                for _ in range(repeat)
            ]
            median = statistics.median(times)
            layout = "queues / functions split" if split else "group per stack"
            stacks = (count + 39) // 40 * (2 if split else 1)
            per_consumer = median / count * 1000
            print(f"| {count} | {layout} | {stacks} | {median:.2f} s | {per_consumer:.0f} ms |")


def resources() -> None:
    with tempfile.TemporaryDirectory() as outdir:
        consumers_app(1, outdir=outdir).synth()
        template = json.loads((Path(outdir) / "Consumers0.template.json").read_text())
    types = Counter(r["Type"] for r in template["Resources"].values())
    print("\n| resource | per consumer + its function |\n|---|---|")
    for kind, number in sorted(types.items()):
        print(f"| {kind} | {number} |")
    total = sum(types.values())
    print(f"| total | {total} |  -> {500 // total} consumers per stack with their functions")


def suite() -> None:
    """Wall time of the README's test command (set-up already done)."""
    started = time.perf_counter()
    subprocess.run(
        ["scripts/test", "-q", "-p", "no:cacheprovider"], check=True, capture_output=True
    )
    print(f"\nFull test suite (`scripts/test`): {time.perf_counter() - started:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=["ratio", "checks", "scale", "resources", "suite"])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{time.strftime('%Y-%m-%d')}, Python {platform.python_version()},"
        f" aws-cdk-lib {version('aws-cdk-lib')}, {os.cpu_count()} cores, {platform.machine()}"
    )
    parts: dict[str, Callable[[], None]] = {
        "resources": resources,
        "ratio": lambda: ratio(args.repeat),
        "checks": lambda: checks(args.repeat),
        "scale": lambda: scale(max(1, args.repeat // 2)),
        "suite": suite,
    }
    for name, part in parts.items():
        if args.only in (None, name):
            part()


if __name__ == "__main__":
    main()
