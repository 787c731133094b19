"""What the SafeQueueChecks plugin adds to a whole ``cdk synth``, beside cdk-nag as the peer.

    .venv/bin/python -m benchmarks.bench_plugin [--repeat 7] [--counts 200]

Each run is the real CDK CLI, as a user runs it: ``node_modules/.bin/cdk synth --app
"python -m benchmarks.run_app N [--checks | --nag]" -o <temporary directory> --quiet`` in
the repository (its ``cdk.json``: feature flags, no notices, no telemetry). That is the
CLI's start, the app's process (interpreter start, ``import aws_cdk``, the jsii kernel,
build, synth, validation plugins), and the CLI reading the assembly and the validation
report. Three variants of the same N-consumer app (40 consumers with their functions to a
stack): no checks, ``Validations.of(app).add_plugins(SafeQueueChecks())``, and cdk-nag 3's
``AwsSolutionsChecks(app)`` added the same way (its findings on the benchmark's functions
make the CLI exit 1 after the same work). Runs are interleaved, the order rotating each
round; medians with min-max of wall time and of the CPU time of the whole process tree.

Before timing, a probe proves through the same CLI that each checker runs: with a seeded
mistake (a 60 s queue on a 180 s function), the SafeQueue plugin's violation and cdk-nag's
appear in the validation report.

``--in-process`` adds what the whole-process noise hides: in one process, after a warm-up,
``app.synth()`` of the same three apps, interleaved, wall and CPU (this process and the
jsii kernel's node processes), and the CPU time spent inside ``SafeQueueChecks.validate``
itself (measured around the call).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.measure import (
    ROOT,
    Loads,
    Runs,
    bytecode_cache,
    machine,
    pair_ratios,
    ratio,
    run_process,
    use_project_node,
)

VARIANTS = {"no checks": [], "SafeQueueChecks": ["--checks"], "cdk-nag AwsSolutions": ["--nag"]}
EXIT = {"no checks": 0, "SafeQueueChecks": 0, "cdk-nag AwsSolutions": 1}
CDK = str(ROOT / "node_modules" / ".bin" / "cdk")


def synth_command(count: int, flags: list[str], outdir: str) -> list[str]:
    app = " ".join([sys.executable, "-m", "benchmarks.run_app", str(count), *flags])
    return [CDK, "synth", "--app", app, "-o", outdir, "--quiet"]


def probe(env: dict[str, str]) -> None:
    """Exit unless each checker, run by the CLI, reports the seeded mistake."""
    for name, flags, plugin in (
        ("SafeQueueChecks", ["--checks"], "SafeQueue"),
        ("cdk-nag", ["--nag"], "AwsSolutions"),
    ):
        with tempfile.TemporaryDirectory() as outdir:
            run_process(synth_command(2, [*flags, "--seed-mistake"], outdir), env, ok=1)
            report = json.loads(Path(outdir, "validation-report.json").read_text())
        names = {r.get("pluginName") for r in report["pluginReports"]}
        if plugin not in names:
            sys.exit(f"{name} did not report the seeded mistake through the CLI: {names}")


@contextmanager
def quiet() -> Iterator[None]:
    """Send this process's standard output and error (file descriptors 1 and 2, which the
    jsii kernel's output goes to) to /dev/null."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def in_process(count: int, repeat: int) -> None:
    """Synth of the three apps in this process, and the plugin's own validate time."""
    import gc
    import time

    from benchmarks.apps import consumers_app
    from benchmarks.measure import cpu_seconds
    from safe_queue import plugin

    validate = plugin.SafeQueueChecks.validate
    inside: list[float] = []

    def timed(self: plugin.SafeQueueChecks, context: object) -> object:
        started = time.process_time()
        try:
            return validate(self, context)  # type: ignore[arg-type]
        finally:
            inside.append(time.process_time() - started)

    plugin.SafeQueueChecks.validate = timed  # type: ignore[assignment,method-assign]
    flags = {
        "no checks": {},
        "SafeQueueChecks": {"checks": True},
        "cdk-nag AwsSolutions": {"nag": True},
    }

    def synth(name: str) -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as outdir:
            app = consumers_app(count, outdir=outdir, **flags[name])
            gc.collect()
            with quiet():  # the validation report CDK prints for cdk-nag's findings
                cpu, wall = cpu_seconds(), time.perf_counter()
                try:
                    app.synth()
                except RuntimeError as error:  # cdk-nag's findings on the benchmark's functions
                    if not str(error).startswith("ValidationFailed"):
                        raise
                return time.perf_counter() - wall, cpu_seconds() - cpu

    runs = {name: Runs() for name in flags}
    loads = Loads()
    for name in flags:
        synth(name)  # warm-up
    inside.clear()
    for _ in range(repeat):
        for name in flags:
            loads.sample()
            runs[name].add(*synth(name))
    loads.sample()
    base = runs["no checks"]
    print(
        f"\n{count} mappings, `app.synth()` in one process after a warm-up, {repeat} runs each,"
        f" interleaved ({loads}); medians (min-max):\n"
    )
    print("| | synth wall | overhead | synth CPU | overhead |\n|---|---|---|---|---|")
    for name, row in runs.items():
        print(
            f"| {name} | {Runs.spread(row.wall)} | {100 * (ratio(row.wall, base.wall) - 1):+.1f} %"
            f" | {Runs.spread(row.cpu)} | {100 * (ratio(row.cpu, base.cpu) - 1):+.1f} % |"
        )
    print(
        f"\nInside SafeQueueChecks.validate (reading {count} mappings' templates and"
        f" assembly metadata, judging, reporting): CPU {Runs.spread(inside)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--counts", type=int, nargs="+", default=[200])
    parser.add_argument("--in-process", action="store_true")
    args = parser.parse_args()
    use_project_node()
    print(machine("aws-cdk-lib", "cdk-nag"))
    with bytecode_cache() as env:
        probe(env)
        print("probe: SafeQueueChecks and cdk-nag each reported the seeded mistake via the CLI")
        for count in args.counts:
            loads = Loads()
            runs = {name: Runs() for name in VARIANTS}
            names = list(VARIANTS)
            with tempfile.TemporaryDirectory() as outdir:
                for name in names:  # warm-up: file cache, bytecode
                    run_process(synth_command(count, VARIANTS[name], outdir), env, ok=EXIT[name])
                for index in range(args.repeat):
                    order = names[index % 3 :] + names[: index % 3]
                    for name in order:
                        loads.sample()
                        command = synth_command(count, VARIANTS[name], outdir)
                        runs[name].add(*run_process(command, env, ok=EXIT[name]))
                loads.sample()
            base = runs["no checks"]
            print(
                f"\n{count} mappings, `cdk synth` (CLI {CDK}), {args.repeat} runs each,"
                f" interleaved ({loads}); medians (min-max), overhead = ratio of medians - 1,"
                " and the median (min-max) ratio of the runs made side by side:\n"
            )
            print("| | wall | overhead | pair ratios | CPU | overhead | pair ratios |")
            print("|---|---|---|---|---|---|---|")
            for name in names:
                row = runs[name]
                cells = []
                for mine, theirs in ((row.wall, base.wall), (row.cpu, base.cpu)):
                    overhead = 100 * (ratio(mine, theirs) - 1)
                    cells.append(
                        f"{Runs.spread(mine)} | {overhead:+.1f} % | {pair_ratios(mine, theirs)}"
                    )
                print(f"| {name} | {' | '.join(cells)} |")
            for name in names:
                print(
                    f"\n{name}: wall {[round(t, 2) for t in runs[name].wall]},"
                    f" CPU {[round(t, 2) for t in runs[name].cpu]}"
                )
    if args.in_process:
        use_project_node()
        for count in args.counts:
            in_process(count, args.repeat)


if __name__ == "__main__":
    main()
