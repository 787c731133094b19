"""SafeQueueConsumer against the same resources wired by hand with plain aws-cdk-lib.

    .venv/bin/python -m benchmarks.bench_consumer            # 100 consumers, 4 stacks, 7 runs
    .venv/bin/python -m benchmarks.bench_consumer --repeat 11 --count 100 --per-stack 25

Issue 18's target: a whole ``python app.py`` process with 100 ``SafeQueueConsumer``s in 4
stacks takes at most 1.05x the same resources wired by hand (``benchmarks/apps.py``). In
order:

1. Both apps are synthesized here and their resources compared (every stack's template,
   logical ids and construct paths aside, and the cdk-nag acknowledgements reaching each
   resource): any difference stops the benchmark, since the ratio would mean nothing.
2. Round trips into jsii to build and synthesize each app, by kind (deterministic).
3. In one process, after a warm-up: build + ``app.synth()``, wall and CPU time (this
   process and the jsii kernel's node processes), variants interleaved.
4. Whole processes, as ``cdk synth`` runs ``python app.py``: ``python -m benchmarks.run_app
   100 --per-stack 25 [--hand-wired]`` (interpreter start, ``import aws_cdk``, the jsii
   kernel's start, build, synth), interleaved, the order of the pair alternating; wall and
   CPU time of the process tree. The hand-wired process never imports safe_queue.

``--before REF`` adds the consumer as it is at a git ref (its ``safe_queue`` exported into
a temporary directory, run with this tree's benchmarks), to show what a change gained.
``--ablate`` adds another process to the rotation: the consumer without the record it leaves
under its function (``run_app --without record``: no second-consumer notice, no synth-time
drift check), to show what that costs; an experiment, not a mode of the construct.

Python's bytecode cache is on for the processes timed (in a temporary directory), as for
an installed package; ``--no-bytecode-cache`` keeps this workplace's
``PYTHONDONTWRITEBYTECODE=1``. Record the output in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.measure import (
    ROOT,
    Loads,
    Runs,
    bytecode_cache,
    machine,
    pair_ratios,
    ratio,
    round_trips,
    run_process,
    synth_in_process,
    use_project_node,
)

use_project_node()

import aws_cdk as cdk  # noqa: E402

from benchmarks.apps import consumers_app, differences  # noqa: E402

Build = Callable[[str], cdk.App]
ABLATED = "SafeQueueConsumer without its function record (experiment)"


def check_same_resources(count: int, per_stack: int) -> int:
    """Synthesize both apps; exit if their resources differ. Return the resource count."""
    with tempfile.TemporaryDirectory() as construct, tempfile.TemporaryDirectory() as hand:
        consumers_app(count, per_stack=per_stack, outdir=construct).synth()
        consumers_app(count, per_stack=per_stack, hand_wired=True, outdir=hand).synth()
        found = differences(construct, hand)
        if found:
            sys.exit(
                f"The hand-wired app differs from the SafeQueueConsumer app ({len(found)}"
                " resources): the ratio would mean nothing. Fix benchmarks/apps.py.\n"
                + "\n".join(line[:300] for line in found[:10])
            )
        return sum(
            len(json.loads(path.read_text())["Resources"])
            for path in Path(construct).glob("*.template.json")
        )


def checkout(ref: str, directory: Path) -> Path:
    """``safe_queue`` as it is at ``ref`` in ``directory``, beside this tree's benchmarks
    (a process started there imports that safe_queue: the current directory comes first)."""
    archive = subprocess.run(
        ["git", "archive", ref, "safe_queue"], cwd=ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive.stdout, check=True)
    (directory / "benchmarks").symlink_to(ROOT / "benchmarks")
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--per-stack", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=7, help="whole-process runs of each")
    parser.add_argument("--in-process-repeat", type=int, default=5)
    parser.add_argument("--no-bytecode-cache", action="store_true")
    parser.add_argument(
        "--before",
        metavar="REF",
        help="also time SafeQueueConsumer as it is at this git ref (e.g. main)",
    )
    parser.add_argument(
        "--ablate",
        action="store_true",
        help="also time the consumer without its record under the function (drift check)",
    )
    args = parser.parse_args()
    count, per_stack = args.count, args.per_stack
    stacks = -(-count // per_stack)
    print(machine("aws-cdk-lib", "jsii"))
    resources = check_same_resources(count, per_stack)
    print(
        f"\n{count} consumers in {stacks} stacks: {resources} resources, the same for the"
        " hand-wired app (checked: templates, logical ids aside, and acknowledgements)."
    )

    def construct(outdir: str) -> cdk.App:
        return consumers_app(count, per_stack=per_stack, outdir=outdir)

    def hand(outdir: str) -> cdk.App:
        return consumers_app(count, per_stack=per_stack, hand_wired=True, outdir=outdir)

    calls = {"SafeQueueConsumer": round_trips(construct), "hand-wired": round_trips(hand)}
    kinds = sorted(set(calls["SafeQueueConsumer"]) | set(calls["hand-wired"]))
    print("\nRound trips into jsii per consumer (build + synth), by request kind:\n")
    print(f"| app | total | {' | '.join(kinds)} |\n|---|---|{'---|' * len(kinds)}")
    for name, counted in calls.items():
        cells = " | ".join(f"{counted[kind] / count:.2f}" for kind in kinds)
        print(f"| {name} | **{sum(counted.values()) / count:.2f}** | {cells} |")

    loads = Loads()
    here = {"SafeQueueConsumer": Runs(), "hand-wired": Runs()}
    synth_in_process(construct), synth_in_process(hand)  # warm-up
    for _ in range(args.in_process_repeat):
        for name, build in (("SafeQueueConsumer", construct), ("hand-wired", hand)):
            loads.sample()
            here[name].add(*synth_in_process(build))
    loads.sample()
    a, b = here["SafeQueueConsumer"], here["hand-wired"]
    print(
        f"\nIn one process, build + synth, {args.in_process_repeat} runs each, interleaved"
        f" ({loads}); medians (min-max):\n"
    )
    print("| | SafeQueueConsumer | hand-wired | ratio |\n|---|---|---|---|")
    print(f"| wall | {Runs.spread(a.wall)} | {Runs.spread(b.wall)} | {ratio(a.wall, b.wall):.3f} |")
    print(f"| CPU | {Runs.spread(a.cpu)} | {Runs.spread(b.cpu)} | {ratio(a.cpu, b.cpu):.3f} |")

    command = [sys.executable, "-m", "benchmarks.run_app", str(count), "--per-stack"]
    variants = {
        "SafeQueueConsumer": [*command, str(per_stack)],
        "hand-wired": [*command, str(per_stack), "--hand-wired"],
    }
    if args.ablate:
        variants[ABLATED] = [*command, str(per_stack), "--without", "record"]
    before = f"SafeQueueConsumer at {args.before}"
    if args.before:
        variants[before] = [*command, str(per_stack)]
    loads = Loads()
    whole = {name: Runs() for name in variants}
    names = list(variants)
    with bytecode_cache(not args.no_bytecode_cache) as env, tempfile.TemporaryDirectory() as old:
        places = {name: ROOT for name in variants}
        if args.before:
            places[before] = checkout(args.before, Path(old))
        for name, argv in variants.items():  # warm-up: file cache, bytecode
            run_process(argv, env, cwd=places[name])
        for index in range(args.repeat):
            for name in names[index % len(names) :] + names[: index % len(names)]:
                loads.sample()
                whole[name].add(*run_process(variants[name], env, cwd=places[name]))
        loads.sample()
    hand = whole["hand-wired"]
    cache = "off" if args.no_bytecode_cache else "on"
    print(
        f"\nWhole process (`python -m benchmarks.run_app {count} --per-stack {per_stack}"
        f" [--hand-wired]`), {args.repeat} runs each, interleaved (the order rotating),"
        f" bytecode cache {cache} ({loads}); medians (min-max); ratios to the hand-wired"
        " app: of the medians, and the median (min-max) of the runs made side by side:\n"
    )
    print("| | wall | ratio | pair ratios | CPU | ratio | pair ratios |")
    print("|---|---|---|---|---|---|---|")
    for name, runs in whole.items():
        print(
            f"| {name} | {Runs.spread(runs.wall)} | **{ratio(runs.wall, hand.wall):.3f}** |"
            f" {pair_ratios(runs.wall, hand.wall)} | {Runs.spread(runs.cpu)} |"
            f" **{ratio(runs.cpu, hand.cpu):.3f}** | {pair_ratios(runs.cpu, hand.cpu)} |"
        )
    for name, runs in whole.items():
        gaps = [p - q for p, q in zip(runs.wall, hand.wall, strict=True)]
        print(
            f"\n{name}, every run: wall {[round(t, 2) for t in runs.wall]} s, CPU"
            f" {[round(t, 2) for t in runs.cpu]} s; wall minus the hand-wired run beside it:"
            f" median {statistics.median(gaps):+.2f} s"
        )


if __name__ == "__main__":
    main()
