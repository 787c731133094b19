"""Measure ``safe-queue check`` on a 500-resource Terraform plan. Run by hand; record in README.md.

    .venv/bin/python -m benchmarks.bench_terraform               # 7 runs each
    .venv/bin/python -m benchmarks.bench_terraform --repeat 15

Two plans of 100 consumers with 5 resources each (queue, dead-letter queue, IAM role,
function, event source mapping: 500 resources, 100 SQS mappings):

- **terraform**: a real first plan of ``benchmarks/terraform/main.tf`` (``for_each`` over
  100 consumers), made here by ``terraform plan`` and ``terraform show -json`` when
  terraform and the AWS provider mirror are on this machine (see scripts/terraform-fixtures),
  else left out. Every ARN is known only after apply: each mapping is linked through the
  configuration's references (``aws_sqs_queue.source[each.key]``).
- **synthetic**: the committed seed plan (tests/fixtures/terraform/seed/plan-broken.json)
  copied 100 times under new resource names, no terraform needed. Each copy is linked
  through references to its own resources (no ``for_each``).

Beside them, as the peer, bench_check's 500-resource CloudFormation template of the same
100 consumers. "In one process" times ``check_paths`` + ``render(..., "sarif")`` after a
warm-up run;
"whole process" times ``python -m safe_queue.cli check --format sarif``, interpreter start
and imports included, as CI runs it, with that process's CPU time (user + system), which
moves less than wall time on a shared machine. Medians. Target: a 500-resource plan
checked in under 1 s, whole process.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from benchmarks import bench_check
from benchmarks.measure import ROOT, run_process

SEED = ROOT / "tests" / "fixtures" / "terraform" / "seed" / "plan-broken.json"
CONFIG = Path(__file__).resolve().parent / "terraform"
PROVIDER = ROOT / "tests" / "fixtures" / "terraform" / "provider.tf"
CONSUMERS = 100
_REFERENCE = re.compile(r"^(aws_[a-z0-9_]+)\.([a-z0-9_]+)")


def _rename(resource: dict[str, Any], index: int) -> None:
    resource["name"] = f"{resource['name']}_{index}"
    resource["address"] = f"{resource['type']}.{resource['name']}"


def synthetic_plan(consumers: int = CONSUMERS) -> dict[str, Any]:
    """The seed's first plan, its 5 resources copied ``consumers`` times under new names."""
    seed = json.loads(SEED.read_text())
    plan = copy.deepcopy(seed)
    planned: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    config: list[dict[str, Any]] = []
    for index in range(consumers):
        for entry in copy.deepcopy(seed["planned_values"]["root_module"]["resources"]):
            _rename(entry, index)
            for key in ("name", "function_name"):
                if isinstance(entry["values"].get(key), str):
                    entry["values"][key] += f"-{index}"
            planned.append(entry)
        for change in copy.deepcopy(seed["resource_changes"]):
            _rename(change, index)
            changes.append(change)
        for entry in copy.deepcopy(seed["configuration"]["root_module"]["resources"]):
            _rename(entry, index)
            for expression in entry.get("expressions", {}).values():
                references = expression.get("references") if isinstance(expression, dict) else None
                if references:
                    expression["references"] = [
                        _REFERENCE.sub(rf"\1.\2_{index}", reference) for reference in references
                    ]
            config.append(entry)
    plan["planned_values"]["root_module"]["resources"] = planned
    plan["resource_changes"] = changes
    plan["configuration"]["root_module"]["resources"] = config
    return plan


def terraform_plan(directory: Path) -> Path | None:
    """A real plan of benchmarks/terraform/main.tf, or ``None`` without terraform here."""
    mirror = Path(os.environ.get("TF_PROVIDER_MIRROR", "/opt/tf-plugins"))
    terraform = shutil.which("terraform")
    if terraform is None or not (mirror / "registry.terraform.io" / "hashicorp" / "aws").is_dir():
        return None
    work = directory / "terraform"
    shutil.copytree(CONFIG, work)
    shutil.copy(PROVIDER, work / "provider.tf")
    with zipfile.ZipFile(work / "handler.zip", "w") as archive:
        archive.writestr("index.py", "def handler(event, context):\n    return None\n")
    cli = directory / "cli.tfrc"
    cli.write_text(
        "provider_installation {\n"
        f'  filesystem_mirror {{\n    path = "{mirror}"\n  }}\n'
        "}\ndisable_checkpoint = true\n"
    )
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(cli), "TF_IN_AUTOMATION": "1"}
    for command in (
        ["init", "-input=false", "-no-color"],
        ["plan", "-input=false", "-no-color", "-out=plan.out"],
    ):
        subprocess.run(
            [terraform, f"-chdir={work}", *command], env=env, check=True, capture_output=True
        )
    shown = subprocess.run(
        [terraform, f"-chdir={work}", "show", "-json", "plan.out"],
        env=env,
        check=True,
        capture_output=True,
    )
    path = directory / "terraform-plan.json"
    path.write_bytes(shown.stdout)
    return path


def in_process(path: Path, repeat: int) -> tuple[float, int, int]:
    from safe_queue.template import check_paths as check_template
    from safe_queue.terraform import check_paths as check_terraform
    from safe_queue.terraform import is_terraform_json

    check = check_terraform if is_terraform_json(path) else check_template
    return bench_check.in_process(path, repeat, check)


def whole_process(path: Path, repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of the check's process."""
    command, env = bench_check.check_command(path), dict(os.environ)
    run_process(command, env, ok=lambda code: code in (0, 1))  # warm the file cache
    runs = [run_process(command, env, ok=lambda code: code in (0, 1)) for _ in range(repeat)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, {platform.machine()}, repeat {args.repeat}")
    with tempfile.TemporaryDirectory() as directory:
        plans: list[tuple[str, Path]] = []
        real = terraform_plan(Path(directory))
        if real is not None:
            plans.append(("terraform (for_each)", real))
        else:
            print("terraform or the provider mirror is not here: the real plan is left out")
        synthetic = Path(directory, "synthetic-plan.json")
        synthetic.write_text(json.dumps(synthetic_plan(), indent=1))
        plans.append(("synthetic (seed x 100)", synthetic))
        # the peer: the same 100 consumers as a CloudFormation template (bench_check's)
        from benchmarks.bench_check import template

        cloudformation = Path(directory, "template.json")
        cloudformation.write_text(json.dumps(template(), indent=1))
        plans.append(("CloudFormation template (peer)", cloudformation))
        print(
            "| input | resources | size | in one process | whole process | its CPU time"
            " | mappings | findings |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for label, path in plans:
            body = json.loads(path.read_text())
            resources = len(body.get("resource_changes") or body.get("Resources") or ())
            seconds, mappings, findings = in_process(path, args.repeat)
            process, cpu = whole_process(path, args.repeat)
            size = path.stat().st_size // 1024
            print(
                f"| {label} | {resources} | {size} KiB | {seconds:.3f} s | {process:.3f} s |"
                f" {cpu:.3f} s | {mappings} | {findings} |"
            )
    print(f"load average after the run: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
