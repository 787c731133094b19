"""The plugin through the real CDK CLI (node_modules/.bin/cdk), as a CDK Pipelines app runs it.

The CLI forces ``@aws-cdk/core:failSynthOnValidationErrors=false`` on the app, then reads
``validation-report.json`` itself and keeps only what concerns the stacks it selected (the
app's top-level stacks unless told otherwise), so an in-process ``app.synth()`` proves
nothing about what a user's ``cdk synth`` does. Here one app has a clean top-level stack
and the seed mistake inside ``Stage(app, "Prod")``:

- plain ``cdk synth`` (the default selection, what a pipeline's synth step runs) fails and
  prints the finding;
- ``cdk synth '**'`` (the Stage selected) fails and prints it once, not twice;
- with the error acknowledged in the app, ``cdk synth`` passes.

The app runs once per state; ``cdk synth --app cdk.out`` then reads the same cloud assembly
with another selection, without running the app again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

CDK = ROOT / "node_modules" / ".bin" / "cdk"
RULE = "safe-queue:visibility-below-function-timeout"

APP = (
    """
import aws_cdk as cdk
from aws_cdk import Acknowledgment, Duration, Validations
from aws_cdk import aws_lambda as lambda_, aws_lambda_event_sources as sources, aws_sqs as sqs
from safe_queue import SafeQueueChecks


def consumer(stack, visibility):
    function = lambda_.Function(stack, "Render", runtime=lambda_.Runtime.PYTHON_3_13,
        handler="index.handler", code=lambda_.Code.from_inline("def handler(e, c): pass"),
        timeout=Duration.seconds(180))
    dead_letter = sqs.Queue(stack, "Dlq", retention_period=Duration.days(14))
    queue = sqs.Queue(stack, "Invoices", visibility_timeout=Duration.seconds(visibility),
        dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letter, max_receive_count=5))
    function.add_event_source(sources.SqsEventSource(queue, batch_size=5,
        max_batching_window=Duration.seconds(2), report_batch_item_failures=True))
    return function


app = cdk.App()
consumer(cdk.Stack(app, "Pipeline"), 1082)
broken = consumer(cdk.Stack(cdk.Stage(app, "Prod"), "Service"), 60)
if ACKNOWLEDGED:
    Validations.of(broken).acknowledge(
        Acknowledgment(id="SafeQueue::RULE", reason="replaced in the next release"))
Validations.of(app).add_plugins(SafeQueueChecks())
app.synth()
"""
).replace("RULE", RULE)


def cdk_synth(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "PATH": f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [str(CDK), "synth", "--quiet", *args],
        cwd=directory,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def app_directory(tmp_path: Path, acknowledged: bool) -> Path:
    directory = tmp_path / ("acknowledged" if acknowledged else "broken")
    directory.mkdir()
    (directory / "app.py").write_text(APP.replace("ACKNOWLEDGED", repr(acknowledged), 1))
    cdk_json = (ROOT / "cdk.json").read_text().replace(".venv/bin/python", sys.executable, 1)
    (directory / "cdk.json").write_text(cdk_json)
    return directory


@pytest.fixture(scope="module")
def broken(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    directory = app_directory(tmp_path_factory.mktemp("cli"), acknowledged=False)
    return directory, cdk_synth(directory)


def test_plain_cdk_synth_fails_on_an_error_inside_a_stage(broken) -> None:
    # GIVEN a clean top-level stack and the seed mistake inside Stage "Prod"
    # WHEN `cdk synth` runs with its default selection (the top-level stacks only)
    _, completed = broken
    # THEN it fails, and prints the finding with where it is and its acknowledgement id
    assert completed.returncode != 0, completed.stderr
    output = completed.stdout + completed.stderr
    assert output.count(f"Acknowledge with 'SafeQueue::{RULE}'") == 1
    assert "[Prod/Service/Render/SqsEventSource:" in output
    assert "Queue VisibilityTimeout 60 s is below the function Timeout 180 s" in output


def test_selecting_every_stack_reports_the_finding_once(broken) -> None:
    directory, _ = broken
    completed = cdk_synth(directory, "--app", "cdk.out", "**")
    assert completed.returncode != 0
    output = completed.stdout + completed.stderr
    assert output.count(f"Acknowledge with 'SafeQueue::{RULE}'") == 1


def test_an_acknowledged_stage_error_lets_cdk_synth_pass(tmp_path: Path) -> None:
    directory = app_directory(tmp_path, acknowledged=True)
    completed = cdk_synth(directory)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert f"Acknowledge with 'SafeQueue::{RULE}'" not in completed.stdout + completed.stderr


@pytest.fixture(autouse=True, scope="module")
def _cdk_cli_installed() -> None:
    # scripts/setup --node installs it; without it these tests cannot say anything.
    assert CDK.exists(), "run scripts/setup --node (node_modules/.bin/cdk)"
    assert shutil.which("node", path=str(CDK.parent)) is not None
