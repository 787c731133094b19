"""Measure what ``safe_queue.cfnlint`` adds to cfn-lint. Run by hand; record in README.md.

    .venv/bin/python -m benchmarks.bench_cfnlint              # 7 runs of each, interleaved
    .venv/bin/python -m benchmarks.bench_cfnlint --repeat 11

The templates are those of the consistency test (tests/test_cfnlint.py): every template
fixture in tests/fixtures/templates and both examples of every rule (written as JSON).
"Whole process" runs the ``cfn-lint`` command once over all of them, with and without
``--append-rules safe_queue.cfnlint --include-checks I95``, as CI or pre-commit runs it
(interpreter start, cfn-lint's imports and rule loading included); the two variants run
interleaved, and both wall time and the CPU time of the child process are given (CPU time
moves less when other people use the machine). "In one process" runs cfn-lint's
``Runner`` over the same files in this process after a warm-up run, with and without the
module, and with the module's rules but its judgement switched off (what cfn-lint spends on
28 more rule classes): what the module costs per template, imports aside. Medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "templates"
CFN_LINT = Path(sys.executable).parent / "cfn-lint"
MODULE = "safe_queue.cfnlint"


def templates(directory: Path) -> list[Path]:
    """The consistency test's templates: fixtures, real-world corpus, every rule's examples."""
    from safe_queue.engine import RULES

    files = sorted(
        path
        for path in FIXTURES.rglob("*")
        if path.suffix in (".yaml", ".yml", ".json")
        and path.name != "manifest.json"
        and not path.name.endswith(".assets.json")
    )
    files.extend(sorted((ROOT / "tests" / "fixtures" / "corpus" / "templates").glob("*.yaml")))
    for entry in RULES:
        for kind in ("compliant", "non_compliant"):
            example = getattr(entry, kind)
            if example is not None:
                path = directory / f"{entry.name}-{kind}.json"
                path.write_text(json.dumps(example.template(), indent=1))
                files.append(path)
    return files


ALONE, RULES_ONLY, APPENDED = "alone", "its rules, judging nothing", f"with {MODULE}"
Result = tuple[float, float, int]  # wall seconds, CPU seconds, matches


def options(variant: str) -> list[str]:
    return [] if variant == ALONE else ["--append-rules", MODULE, "--include-checks", "I95"]


def whole_process(files: list[Path], variant: str) -> Result:
    """Run the cfn-lint command once; return wall seconds, child CPU seconds, matches."""
    command = [str(CFN_LINT), *options(variant), "--format", "json", "--", *map(str, files)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert completed.stdout.startswith("["), completed.stderr
    return wall, cpu, len(json.loads(completed.stdout))


def in_process(files: list[Path], variant: str) -> Result:
    """Run cfn-lint's Runner over the files in this process; return wall, CPU, matches.

    ``RULES_ONLY`` appends the module with its judgement switched off: what cfn-lint itself
    spends on safe-queue's rule classes (it configures, enables and runs every rule on
    every template and resource), apart from reading and judging the template.
    """
    from cfnlint.config import ConfigMixIn
    from cfnlint.runner import Runner

    from safe_queue.cfnlint import _rules

    judge = _rules._judge
    if variant == RULES_ONLY:
        _rules._judge = lambda cfn: []
    try:
        runner = Runner(ConfigMixIn([*options(variant), "--", *map(str, files)]))
        started, cpu_started = time.perf_counter(), time.process_time()
        matches = list(runner.run())
        return time.perf_counter() - started, time.process_time() - cpu_started, len(matches)
    finally:
        _rules._judge = judge


def medians(
    measure: Callable[[list[Path], str], Result],
    files: list[Path],
    variants: tuple[str, ...],
    repeat: int,
) -> dict[str, Result]:
    """Run every variant ``repeat`` times, interleaved (order turning); return medians."""
    runs: dict[str, list[Result]] = {variant: [] for variant in variants}
    for index in range(repeat):
        turn = index % len(variants)
        for variant in variants[turn:] + variants[:turn]:
            runs[variant].append(measure(files, variant))
    return {
        variant: (
            statistics.median(run[0] for run in values),
            statistics.median(run[1] for run in values),
            values[0][2],
        )
        for variant, values in runs.items()
    }


def table(title: str, results: dict[str, Result]) -> None:
    alone = results[ALONE]
    print(f"\n{title}\n")
    print("| cfn-lint | wall | CPU | wall ratio | CPU ratio | matches |")
    print("|---|---|---|---|---|---|")
    for variant, (wall, cpu, matches) in results.items():
        print(
            f"| {variant} | {wall:.2f} s | {cpu:.2f} s | {wall / alone[0]:.3f} |"
            f" {cpu / alone[1]:.3f} | {matches} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    from importlib.metadata import version

    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()},"
        f" cfn-lint {version('cfn-lint')}, {os.cpu_count()} cores, {platform.machine()},"
        f" load average {os.getloadavg()[0]:.1f}, repeat {args.repeat}"
    )
    with tempfile.TemporaryDirectory() as directory:
        files = templates(Path(directory))
        print(f"{len(files)} templates")
        whole = medians(whole_process, files, (ALONE, APPENDED), args.repeat)
        table("Whole process (the cfn-lint command):", whole)
        in_process(files, APPENDED)  # warm-up: imports, schemas, the module
        variants = (ALONE, RULES_ONLY, APPENDED)
        table("In one process, after a warm-up:", medians(in_process, files, variants, args.repeat))
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
