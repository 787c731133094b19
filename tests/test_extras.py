"""Each extra alone works: ``safe-queue[cdk]``, ``safe-queue[cli]`` and the bare distribution.

Each case runs in a fresh interpreter where only the standard library, ``safe_queue`` and
the distributions an extra brings (its requirements in ``pyproject.toml`` and theirs,
read from the installed metadata) can be imported: everything else this test
environment has (PyYAML, boto3, aws-cdk-lib, Powertools, moto...) raises ImportError, as
on a machine where only that extra was installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from . import moto_world
from .conftest import ROOT

moto_endpoint = moto_world.moto_endpoint
aws_environment = moto_world.aws_environment

EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
EXTRAS_REGION = "me-south-1"  # used by no other test module


def _distributions(requirements: Iterable[str]) -> set[str]:
    """The requirements and everything they require in turn (installed metadata)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name not in seen:
            seen.add(name)
            todo.extend(Requirement(r) for r in metadata.requires(requirement.name) or [])
    return seen


def importable(*extras: str) -> set[str]:
    """The top-level modules of the distributions ``extras`` install."""
    distributions = _distributions(r for extra in extras for r in EXTRAS[extra])
    return {
        module
        for module, names in metadata.packages_distributions().items()
        if any(canonicalize_name(name) in distributions for name in names)
    }


PRELUDE = textwrap.dedent(
    """
    import importlib.abc, json, os, sys

    ALLOWED = set(json.loads(os.environ["SAFE_QUEUE_TEST_IMPORTABLE"]))
    ALLOWED |= set(sys.stdlib_module_names) | {"safe_queue", "__main__"}

    class OnlyTheExtra(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            top = name.split(".")[0]
            if top not in ALLOWED and not top.startswith("_"):
                raise ModuleNotFoundError(f"No module named {top!r} (not installed)", name=top)
            return None

    sys.meta_path.insert(0, OnlyTheExtra())
    """
)


def run_with(
    extras: tuple[str, ...], code: str, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SAFE_QUEUE_TEST_IMPORTABLE": json.dumps(sorted(importable(*extras))),
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_extras_bring_what_the_cases_below_rely_on():
    # The split each case relies on: no YAML or boto3 with [cdk], no CDK with [cli]
    assert {"aws_cdk", "constructs", "jsii"} <= importable("cdk")
    assert not {"yaml", "boto3", "botocore"} & importable("cdk")
    assert {"yaml", "boto3", "botocore"} <= importable("cli")
    assert not {"aws_cdk", "constructs", "jsii"} & importable("cli")


def test_the_blocker_blocks_what_the_extra_does_not_install():
    # GIVEN only [cli]  WHEN the construct is asked for  THEN it is not there, and says so
    result = run_with(("cli",), "import safe_queue\nsafe_queue.SafeQueueConsumer\n")
    assert result.returncode != 0
    assert "pip install 'safe-queue[cdk]'" in result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        "ModuleNotFoundError: safe_queue.SafeQueueConsumer"
    )


def test_the_bare_distribution_runs_the_engine_and_the_runtime():
    # GIVEN nothing but the standard library
    result = run_with(
        (),
        """
        from safe_queue.engine import FunctionFacts, MappingFacts, QueueFacts, evaluate
        from safe_queue.runtime import FailureBackoff, VisibilityHeartbeat
        facts = MappingFacts(QueueFacts(visibility_timeout=30), FunctionFacts(timeout=180))
        print(sorted({f.rule_id for f in evaluate(facts)})[0])
        print(FailureBackoff(base=30, cap=900, jitter=False).delay_range(receive_count=3))
        with VisibilityHeartbeat([], interval=1, extension=3):
            pass
        print(sorted(m for m in sys.modules if m.split(".")[0] in {"boto3", "yaml", "aws_cdk"}))
        """,
    )
    # THEN the engine judges and the runtime computes, importing no extra
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "safe-queue:no-dead-letter-queue",
        "(120, 120)",  # 30 x 2^(3-1), no jitter
        "[]",
    ]


def test_the_cdk_extra_alone_builds_and_checks_an_app(tmp_path: Path):
    # GIVEN only [cdk]: an app with a good consumer and the seed mistake in a Stage
    result = run_with(
        ("cdk",),
        f"""
        import aws_cdk as cdk
        from aws_cdk import aws_lambda as lambda_, aws_sqs as sqs, aws_lambda_event_sources as es
        from safe_queue import SafeQueueChecks, SafeQueueConsumer
        from safe_queue.template import check_paths

        def fn(scope, timeout):
            return lambda_.Function(scope, "Fn", runtime=lambda_.Runtime.PYTHON_3_13,
                handler="index.handler", code=lambda_.Code.from_inline("x = 1"),
                timeout=cdk.Duration.seconds(timeout))

        app = cdk.App(outdir={str(tmp_path / "cdk.out")!r})
        cdk.Validations.of(app).add_plugins(SafeQueueChecks())
        good = cdk.Stack(app, "Good")
        consumer = SafeQueueConsumer(good, "Orders", function=fn(good, 180))
        prod = cdk.Stage(app, "Prod")
        bad = cdk.Stack(prod, "Bad")
        queue = sqs.Queue(bad, "Queue", visibility_timeout=cdk.Duration.seconds(30))
        fn(bad, 180).add_event_source(es.SqsEventSource(queue))
        try:
            app.synth()
        except Exception as error:
            print("synth refused:", "safe-queue:visibility-below-function-timeout" in str(error))
        print("visibility", consumer.visibility_timeout.to_seconds())
        report = check_paths([{str(tmp_path / "cdk.out")!r}])
        print("check", report.mappings_checked, sorted({{f.rule_id for f in report.findings}}))
        print(sorted(m for m in sys.modules if m.split(".")[0] in {{"boto3", "yaml"}}))
        """,
    )
    # THEN the construct derives, the plugin refuses the Stage's mistake, check reads the
    # assembly (JSON: no YAML needed), and neither PyYAML nor boto3 was imported
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "synth refused: True"
    assert lines[1] == "visibility 1080"
    assert lines[2].startswith("check 2 ")
    assert "safe-queue:visibility-below-function-timeout" in lines[2]
    assert lines[3] == "[]"


def test_the_cli_extra_alone_runs_check_audit_and_redrive(tmp_path: Path, aws_environment: str):
    # GIVEN only [cli]: a YAML template with the seed mistake, and a live account (moto)
    # with the same mistake and a queue that is neither a source nor a dead-letter queue
    # a region of its own on the worker's moto server: other modules leave mappings in theirs
    world = moto_world.World(EXTRAS_REGION)
    queue = world.queue("extras-orders", VisibilityTimeout=30)
    world.mapping(queue, world.function("extras-render", 180))
    lonely = world.queue("extras-lonely")
    (tmp_path / "template.yaml").write_text(
        textwrap.dedent(
            """
            Resources:
              Queue: {Type: AWS::SQS::Queue, Properties: {VisibilityTimeout: 30}}
              Fn: {Type: AWS::Lambda::Function, Properties: {Timeout: 180}}
              Mapping:
                Type: AWS::Lambda::EventSourceMapping
                Properties: {EventSourceArn: !GetAtt Queue.Arn, FunctionName: !Ref Fn}
            """
        )
    )
    result = run_with(
        ("cli",),
        f"""
        import contextlib, io
        from safe_queue.cli import main
        for argv in (["check", "template.yaml", "--format", "json"],
                     ["audit", "--region", {EXTRAS_REGION!r}, "--format", "json"],
                     ["redrive", {lonely!r}]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
            print(json.dumps([argv[0], code, out.getvalue(), err.getvalue()]))
        print(sorted(m for m in sys.modules if m.split(".")[0] in {{"aws_cdk", "jsii"}}))
        """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    *runs, loaded = result.stdout.splitlines()
    (check, audit, redrive) = [json.loads(line) for line in runs]
    # THEN check reads the YAML and finds the mistake (exit 1)
    assert check[1] == 1
    assert "safe-queue:visibility-below-function-timeout" in check[2]
    # AND the audit finds it in the account (exit 1)
    assert audit[1] == 1
    assert "extras-orders" in audit[2]
    assert "safe-queue:visibility-below-function-timeout" in audit[2]
    # AND redrive reaches SQS and refuses a queue it cannot redrive, in one line (exit 2)
    assert redrive[1] == 2
    assert "extras-lonely" in redrive[3]
    assert len(redrive[3].strip().splitlines()) == 1
    # AND no CDK module was imported
    assert loaded == "[]"


@pytest.mark.parametrize("extra", ["cdk", "cli"])
def test_each_extra_is_declared_with_ranges(extra: str):
    # The extras users install name ranges, never exact pins (constraints.txt pins)
    assert all(">=" in r and "==" not in r for r in EXTRAS[extra])
