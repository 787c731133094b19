"""Measure ``safe-queue check`` beside cfn-lint on a 480-resource template. Run by hand.

    .venv/bin/python -m benchmarks.bench_check              # JSON and YAML, 7 runs each
    .venv/bin/python -m benchmarks.bench_check --repeat 15 --cfn-lint-repeat 7

The template has 96 consumers of 5 resources each (queue, dead-letter queue, role,
function, event source mapping): 480 resources, under the stack maximum of 500; every
mapping gets findings. "In one process" times ``check_paths`` + ``render(..., "sarif")``
after a warm-up run; "whole process" times ``python -m safe_queue.cli check --format
sarif``, i.e. interpreter start and imports included, as CI runs it; "cfn-lint" times the
``cfn-lint`` command on the same file, the same way. The two commands run side by side,
round by round (cfn-lint in the first ``--cfn-lint-repeat`` rounds), the order alternating,
with Python's bytecode cache on for both (``benchmarks.measure.bytecode_cache``); wall and
CPU time (user + system) of each process, medians with min-max. No CDK is imported.
Record the results in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.measure import (
    Loads,
    Runs,
    bytecode_cache,
    machine,
    ratio,
    run_process,
    use_project_node,
)
from safe_queue.engine.example import lambda_sqs_role

CONSUMERS = 96


def lint_found_errors(code: int) -> bool:
    """cfn-lint's exit code is a bitmask: 2 errors (E3505, visibility below the timeout)."""
    return bool(code & 2)


def template(consumers: int = CONSUMERS) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for index in range(consumers):
        resources[f"Dlq{index}"] = {
            "Type": "AWS::SQS::Queue",
            "Properties": {"MessageRetentionPeriod": 1_209_600},
        }
        resources[f"Queue{index}"] = {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "VisibilityTimeout": 60 + index,
                "RedrivePolicy": {
                    "deadLetterTargetArn": {"Fn::GetAtt": [f"Dlq{index}", "Arn"]},
                    "maxReceiveCount": 3,
                },
            },
        }
        resources[f"Role{index}"] = lambda_sqs_role()
        resources[f"Fn{index}"] = {
            "Type": "AWS::Lambda::Function",
            "Properties": {
                "Runtime": "python3.13",
                "Handler": "index.handler",
                "Role": {"Fn::GetAtt": [f"Role{index}", "Arn"]},
                "Code": {"ZipFile": "def handler(event, context):\n    return None\n"},
                "Timeout": 90,
                "Environment": {"Variables": {"QUEUE_URL": {"Ref": f"Queue{index}"}}},
            },
        }
        resources[f"Mapping{index}"] = {
            "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": {"Fn::GetAtt": [f"Queue{index}", "Arn"]},
                "FunctionName": {"Ref": f"Fn{index}"},
                "BatchSize": 5,
                "MaximumBatchingWindowInSeconds": 2,
            },
        }
    return {"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources}


def to_yaml(body: dict[str, Any]) -> str:
    """YAML with short-form tags, as people write it (``!GetAtt X.Arn``, ``!Ref X``)."""
    import yaml

    text: str = yaml.safe_dump(body, sort_keys=False, width=1000)
    text = re.sub(r"\n\s+Fn::GetAtt:\n\s+- (\w+)\n\s+- (\w+)", r" !GetAtt \1.\2", text)
    return re.sub(r"\n\s+Ref: (\w+)", r" !Ref \1", text)


def in_process(
    path: Path, repeat: int, check: Callable[[list[Path]], Any] | None = None
) -> tuple[float, int, int]:
    """Median seconds of ``check`` (the template reader's ``check_paths`` by default) + SARIF."""
    from safe_queue.formats import render
    from safe_queue.template import check_paths

    check_paths = check or check_paths
    check_paths([path])  # warm-up
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        report = check_paths([path])
        render(report, "sarif")
        times.append(time.perf_counter() - started)
    return statistics.median(times), report.mappings_checked, len(report.findings)


def check_command(path: Path) -> list[str]:
    return [sys.executable, "-m", "safe_queue.cli", "check", "--format", "sarif", str(path)]


def cfn_lint_command(path: Path) -> list[str]:
    return [str(Path(sys.executable).with_name("cfn-lint")), "--", str(path)]


def side_by_side(
    path: Path, repeat: int, lint_repeat: int, env: dict[str, str], loads: Loads
) -> tuple[Runs, Runs]:
    """Whole processes of ``safe-queue check`` and ``cfn-lint`` on ``path``, interleaved.

    Each round runs ``check`` once and, in the first ``lint_repeat`` rounds, cfn-lint
    once, in alternating order. ``check`` exits 1 (findings at the default --fail-on);
    cfn-lint's exit code is a bitmask with 2 for errors (E3505...).
    """
    ours, lint = Runs(), Runs()
    run_process(check_command(path), env, ok=1)  # warm-up: file cache, bytecode
    run_process(cfn_lint_command(path), env, ok=lint_found_errors)
    for index in range(repeat):
        pair = [(ours, check_command(path), 1)]
        if index < lint_repeat:
            pair.append((lint, cfn_lint_command(path), lint_found_errors))
        for runs, command, ok in pair if index % 2 == 0 else reversed(pair):
            loads.sample()
            runs.add(*run_process(command, env, ok=ok))
    loads.sample()
    return ours, lint


def import_seconds(module: str, repeat: int) -> float:
    command = [sys.executable, "-c", f"import {module}"]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--consumers", type=int, default=CONSUMERS)
    parser.add_argument("--cfn-lint-repeat", type=int, default=5)
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE=1 as set here: every process compiles safe_queue",
    )
    args = parser.parse_args()
    use_project_node()  # only for the line below: neither command runs node
    print(machine("PyYAML", "cfn-lint"), f"repeat {args.repeat}, cfn-lint {args.cfn_lint_repeat}")
    body = template(args.consumers)
    print(f"template: {len(body['Resources'])} resources, {args.consumers} SQS mappings\n")
    cache = not args.no_bytecode_cache
    print(f"bytecode cache {'on' if cache else 'off (PYTHONDONTWRITEBYTECODE kept)'}")
    with tempfile.TemporaryDirectory() as directory, bytecode_cache(cache) as env:
        json_path = Path(directory, "template.json")
        json_path.write_text(json.dumps(body, indent=1))
        yaml_path = Path(directory, "template.yaml")
        yaml_path.write_text(to_yaml(body))
        rows, loads = [], Loads()
        for label, path in (("JSON", json_path), ("YAML (short-form tags)", yaml_path)):
            seconds, mappings, findings = in_process(path, args.repeat)
            ours, lint = side_by_side(path, args.repeat, args.cfn_lint_repeat, env, loads)
            rows.append((label, path, seconds, mappings, findings, ours, lint))
        print(
            f"Whole processes, interleaved ({loads}); medians (min-max); ratio = cfn-lint's"
            " median / check's median, for wall and CPU time:\n"
        )
        print(
            "| input | size | check in one process | check (whole process) | cfn-lint (whole"
            " process) | ratio | check CPU | cfn-lint CPU | CPU ratio | mappings | findings |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for label, path, seconds, mappings, findings, ours, lint in rows:
            print(
                f"| {label} | {path.stat().st_size // 1024} KiB | {seconds:.3f} s |"
                f" {Runs.spread(ours.wall)} | {Runs.spread(lint.wall)} |"
                f" **{ratio(lint.wall, ours.wall):.1f}x** | {Runs.spread(ours.cpu)} |"
                f" {Runs.spread(lint.cpu)} | {ratio(lint.cpu, ours.cpu):.1f}x | {mappings} |"
                f" {findings} |"
            )
    print()
    print("| `python -c 'import ...'` | median |")
    print("|---|---|")
    for module in ("sys", "yaml", "safe_queue.cli", "cfnlint.decode"):
        print(f"| {module} | {import_seconds(module, args.repeat):.3f} s |")


if __name__ == "__main__":
    main()
