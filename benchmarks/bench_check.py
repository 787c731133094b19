"""Measure ``safe-queue check`` beside cfn-lint on a 480-resource template. Run by hand.

    .venv/bin/python -m benchmarks.bench_check              # JSON and YAML, 7 runs each
    .venv/bin/python -m benchmarks.bench_check --repeat 15 --consumers 100

The template has 96 consumers of 5 resources each (queue, dead-letter queue, role,
function, event source mapping): 480 resources, under the stack maximum of 500; every
mapping gets findings. "In one process" times ``check_paths`` + ``render(..., "sarif")``
after a warm-up run; "whole process" times ``python -m safe_queue.cli check``, i.e.
interpreter start and imports included, as CI runs it; "cfn-lint" times the ``cfn-lint``
command on the same file, the same way (``--cfn-lint-repeat`` runs, interleaved with
ours). Medians; no CDK is imported. Record the results in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CONSUMERS = 96


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
        resources[f"Role{index}"] = {
            "Type": "AWS::IAM::Role",
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                },
                "ManagedPolicyArns": [
                    {
                        "Fn::Sub": "arn:${AWS::Partition}:iam::aws:policy/service-role/"
                        "AWSLambdaSQSQueueExecutionRole"
                    }
                ],
            },
        }
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


def in_process(path: Path, repeat: int) -> tuple[float, int, int]:
    from safe_queue.formats import render
    from safe_queue.template import check_paths

    check_paths([path])  # warm-up
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        report = check_paths([path])
        render(report, "sarif")
        times.append(time.perf_counter() - started)
    return statistics.median(times), report.mappings_checked, len(report.findings)


def whole_process(path: Path, repeat: int) -> float:
    command = [sys.executable, "-m", "safe_queue.cli", "check", "--format", "sarif", str(path)]
    subprocess.run(command, capture_output=True, check=False)  # warm the file cache
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        assert completed.returncode == 1, completed.stderr
    return statistics.median(times)


def cfn_lint_seconds(path: Path, repeat: int) -> float:
    """Median wall time of the ``cfn-lint`` command beside this interpreter, on ``path``."""
    command = [str(Path(sys.executable).with_name("cfn-lint")), "--", str(path)]
    subprocess.run(command, capture_output=True, check=False)  # warm the file cache
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        # cfn-lint's exit code is a bitmask: 2 errors, 4 warnings (E3505, W3005...)
        assert completed.returncode & 2, completed.stdout[-500:]
    return statistics.median(times)


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
    parser.add_argument("--cfn-lint-repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, {platform.machine()}, repeat {args.repeat}")
    body = template(args.consumers)
    print(f"template: {len(body['Resources'])} resources, {args.consumers} SQS mappings")
    with tempfile.TemporaryDirectory() as directory:
        json_path = Path(directory, "template.json")
        json_path.write_text(json.dumps(body, indent=1))
        yaml_path = Path(directory, "template.yaml")
        yaml_path.write_text(to_yaml(body))
        print(
            "| input | size | in one process | whole process | cfn-lint (whole process) |"
            " ratio | mappings | findings |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for label, path in (("JSON", json_path), ("YAML (short-form tags)", yaml_path)):
            seconds, mappings, findings = in_process(path, args.repeat)
            process = whole_process(path, args.repeat)
            lint = cfn_lint_seconds(path, args.cfn_lint_repeat)
            size = path.stat().st_size // 1024
            print(
                f"| {label} | {size} KiB | {seconds:.3f} s | {process:.3f} s | {lint:.2f} s |"
                f" {lint / process:.0f}x | {mappings} | {findings} |"
            )
    print()
    print("| `python -c 'import ...'` | median |")
    print("|---|---|")
    for module in ("sys", "yaml", "safe_queue.cli", "cfnlint.decode"):
        print(f"| {module} | {import_seconds(module, args.repeat):.3f} s |")


if __name__ == "__main__":
    main()
