"""What the SafeQueueChecks plugin adds to a whole `cdk synth`, beside cdk-nag as the peer.

    .venv/bin/python -m benchmarks.bench_plugin [--repeat 7] [--counts 50 200]

Each run is a whole process, as `cdk synth` runs the app (interpreter start, `import
aws_cdk`, build, synth, validation plugins): `python -m benchmarks.run_app N` without
checks, with `SafeQueueChecks`, and with cdk-nag's `AwsSolutionsChecks`, interleaved run by
run so that drift on this shared machine hits all three alike; medians are reported.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from importlib.metadata import version

VARIANTS = {"none": [], "SafeQueueChecks": ["--checks"], "cdk-nag AwsSolutions": ["--nag"]}


def seconds(count: int, flags: list[str]) -> float:
    started = time.perf_counter()
    command = [sys.executable, "-m", "benchmarks.run_app", str(count), *flags]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--counts", type=int, nargs="+", default=[50, 200])
    args = parser.parse_args()
    print(
        f"{date.today()}, Python {platform.python_version()}, aws-cdk-lib"
        f" {version('aws-cdk-lib')}, cdk-nag {version('cdk-nag')}, node"
        f" {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()},"
        f" {os.cpu_count()} cores, {platform.machine()}, {args.repeat} runs each\n"
    )
    print("| mappings | no checks | SafeQueueChecks | overhead | cdk-nag AwsSolutions | overhead |")
    print("|---|---|---|---|---|---|")
    for count in args.counts:
        times: dict[str, list[float]] = {name: [] for name in VARIANTS}
        seconds(count, [])  # warm caches (jsii unpacking, bytecode)
        for _ in range(args.repeat):
            for name, flags in VARIANTS.items():
                times[name].append(seconds(count, flags))
        base = statistics.median(times["none"])
        ours = statistics.median(times["SafeQueueChecks"])
        nag = statistics.median(times["cdk-nag AwsSolutions"])
        print(
            f"| {count} | {base:.2f} s | {ours:.2f} s | {100 * (ours / base - 1):+.1f} % |"
            f" {nag:.2f} s | {100 * (nag / base - 1):+.1f} % |"
        )


if __name__ == "__main__":
    main()
