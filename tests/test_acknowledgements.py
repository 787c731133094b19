"""Acknowledgements, an engine concept every surface honours: in template Metadata (check),
in a CDK cloud assembly (check cdk.out, the plugin), and in every output format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Acknowledgment, Validations
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs

from safe_queue import SafeQueueChecks
from safe_queue.cli import main

from .conftest import CDK_CONTEXT, make_function

S = cdk.Duration.seconds
# CDK's own template check (E3505, the 1x visibility rule) as warnings: these tests are about
# safe-queue's verdict on the same mistake.
CONTEXT = {**CDK_CONTEXT, "@aws-cdk/core:validateAgainstDefaultRules": False}
VISIBILITY = "safe-queue:visibility-below-function-timeout"
NO_DLQ = "safe-queue:no-dead-letter-queue"


def acknowledge(*items: tuple[str, str | None]) -> dict[str, Any]:
    entries = [{"id": rule_id, **({} if reason is None else {"reason": reason})}
               for rule_id, reason in items]  # fmt: skip
    return {"safe-queue": {"acknowledge": entries}}


def seed_template(on: str | None = None, metadata: dict[str, Any] | None = None) -> str:
    """The seed mistake (60 s visibility, 180 s function, no DLQ), ``metadata`` on ``on``."""
    resources: dict[str, Any] = {
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 60}},
        "Fn": {
            "Type": "AWS::Lambda::Function",
            "Properties": {"Timeout": 180, "Runtime": "python3.13", "Handler": "i.h"},
        },
        "Mapping": {
            "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": {"Fn::GetAtt": ["Queue", "Arn"]},
                "FunctionName": {"Ref": "Fn"},
                "BatchSize": 1,
            },
        },
    }
    if on is not None:
        resources[on]["Metadata"] = metadata
    return json.dumps({"Resources": resources}, indent=1)


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(tmp_path: Path, text: str, name: str = "t.json") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("on", ["Mapping", "Fn", "Queue"])
def test_an_acknowledged_error_in_template_metadata_is_reported_but_does_not_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], on: str
) -> None:
    # GIVEN the seed mistake, its error acknowledged on the mapping, the function or the queue
    path = write(tmp_path, seed_template(on, acknowledge((VISIBILITY, "migrating next sprint"))))
    # WHEN checked
    code, out, _ = check(capsys, "--format", "json", path)
    # THEN it passes, and the finding is still there, acknowledged with the reason
    assert code == 0
    report = json.loads(out)
    by_rule = {f["rule_id"]: f for f in report["findings"]}
    assert by_rule[VISIBILITY]["acknowledged"] == {
        "reason": "migrating next sprint",
        "source": f"Metadata of {on} in {path}",
    }
    assert by_rule[NO_DLQ]["acknowledged"] is None
    assert report["summary"]["errors"] == 0
    assert report["summary"]["acknowledged"] == 1
    assert report["summary"]["worst"] == "warning"


def test_acknowledged_findings_never_count_towards_fail_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both = acknowledge((VISIBILITY, "known"), (NO_DLQ, "a cache refresh: loss is harmless"))
    path = write(tmp_path, seed_template("Mapping", both))
    for fail_on in ("error", "warning", "info"):
        assert check(capsys, "--fail-on", fail_on, path)[0] == 0


def test_text_marks_and_counts_acknowledged_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, seed_template("Fn", acknowledge((VISIBILITY, "known"))))
    _, out, _ = check(capsys, path)
    (line,) = [line for line in out.splitlines() if VISIBILITY in line]
    assert line.endswith("[acknowledged: known]")
    assert (
        out.splitlines()[-1]
        == "0 errors, 1 warning, 0 infos, 1 acknowledged in 1 mapping (1 template)"
    )


def test_sarif_suppresses_acknowledged_findings_in_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, seed_template("Queue", acknowledge((VISIBILITY, "known"))))
    _, out, _ = check(capsys, "--format", "sarif", path)
    results = {r["ruleId"]: r for r in json.loads(out)["runs"][0]["results"]}
    assert results[VISIBILITY]["suppressions"] == [{"kind": "inSource", "justification": "known"}]
    assert "suppressions" not in results[NO_DLQ]


def test_the_cdk_form_of_the_id_is_accepted_in_templates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, seed_template("Mapping", acknowledge((f"SafeQueue::{VISIBILITY}", "x"))))
    assert check(capsys, path)[0] == 0


def test_a_sam_functions_acknowledgement_covers_all_its_sqs_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = """
Transform: AWS::Serverless-2016-10-31
Resources:
  A: {Type: AWS::SQS::Queue, Properties: {VisibilityTimeout: 60}}
  B: {Type: AWS::SQS::Queue, Properties: {VisibilityTimeout: 60}}
  Fn:
    Type: AWS::Serverless::Function
    Metadata:
      safe-queue:
        acknowledge:
          - {id: safe-queue:visibility-below-function-timeout, reason: replaced next week}
    Properties:
      Timeout: 180
      Events:
        FromA: {Type: SQS, Properties: {Queue: !GetAtt A.Arn, BatchSize: 1}}
        FromB: {Type: SQS, Properties: {Queue: !GetAtt B.Arn, BatchSize: 1}}
"""
    path = write(tmp_path, template, "sam.yaml")
    code, out, _ = check(capsys, "--format", "json", path)
    assert code == 0
    acknowledged = {
        f["resource"] for f in json.loads(out)["findings"] if f["acknowledged"] is not None
    }
    assert acknowledged == {"FnFromA", "FnFromB"}


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        (
            acknowledge(("safe-queue:no-such-rule", "r")),
            "'safe-queue:no-such-rule' is not a safe-queue rule",
        ),
        (acknowledge((VISIBILITY, None)), f"the acknowledgement of {VISIBILITY} has no reason"),
        (acknowledge((VISIBILITY, "  ")), "has no reason"),
        ({"safe-queue": {"acknowledgements": []}}, "resource Fn: Metadata 'safe-queue' is"),
        ({"safe-queue": {"acknowledge": "all"}}, "is not a list"),
        ({"safe-queue": {"acknowledge": [{"reason": "r"}]}}, "has no id"),
    ],
)
def test_a_bad_acknowledgement_is_an_input_error_naming_the_resource(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], metadata: dict[str, Any], says: str
) -> None:
    path = write(tmp_path, seed_template("Fn", metadata))
    code, out, err = check(capsys, path)
    assert code == 2
    assert out == ""
    assert err.startswith(f"safe-queue check: error: {path}")
    assert says in err
    assert "Fix: " in err
    assert len(err.strip().splitlines()) == 1


# --- a CDK app's acknowledgements, read from its cloud assembly -----------------------------


def seed_stack(app: cdk.App, name: str, acknowledge_on: str | None, written: str) -> None:
    """The seed mistake in stack ``name``, acknowledged with ``written`` on one construct."""
    stack = cdk.Stack(app, name)
    other = cdk.Stack(app, f"{name}Other")  # an acknowledgement elsewhere covers nothing here
    sqs.Queue(other, "Unrelated")
    queue = sqs.Queue(stack, "Queue", visibility_timeout=S(60))
    function = make_function(stack, "Fn", S(180))
    function.add_event_source(event_sources.SqsEventSource(queue, batch_size=1))
    targets = {"function": function, "queue": queue, "stack": stack, "other": other}
    if acknowledge_on is not None:
        Validations.of(targets[acknowledge_on]).acknowledge(
            Acknowledgment(id=written, reason="accepted in the design review")
        )


CDK_CASES = [
    ("function", f"SafeQueue::{VISIBILITY}", True),
    ("function", VISIBILITY, True),  # the bare id: CDK records it as Annotation::
    ("queue", f"SafeQueue::{VISIBILITY}", True),
    ("stack", f"SafeQueue::{VISIBILITY}", True),  # an ancestor of everything
    ("other", f"SafeQueue::{VISIBILITY}", False),
    ("function", f"SafeQueue::{NO_DLQ}", False),  # another rule
    ("function", "AwsSolutions::SQS3", False),  # another plugin's: left to it
    (None, "", False),
]


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `cdk synth` (no plugin) with a stack per case of CDK_CASES."""
    outdir = tmp_path_factory.mktemp("acknowledged") / "cdk.out"
    app = cdk.App(outdir=str(outdir), context=CONTEXT)
    for index, (on, written, _) in enumerate(CDK_CASES):
        seed_stack(app, f"Seed{index}", on, written)
    app.synth()
    return outdir


@pytest.mark.parametrize(("index", "case"), list(enumerate(CDK_CASES)))
def test_check_cdk_out_honours_the_apps_acknowledgements(
    assembly: Path, capsys: pytest.CaptureFixture[str], index: int, case: tuple[Any, str, bool]
) -> None:
    # GIVEN `cdk synth` of an app that acknowledged (or not) the visibility error
    _, _, acknowledged = case
    # WHEN `safe-queue check cdk.out` reads the assembly
    code, out, _ = check(capsys, "--format", "json", str(assembly))
    # THEN it agrees with the app: the error is acknowledged where the app acknowledged it
    (finding,) = [
        f
        for f in json.loads(out)["findings"]
        if f["rule_id"] == VISIBILITY and f["stack"] == f"Seed{index}"
    ]
    assert (finding["acknowledged"] is not None) is acknowledged
    assert code == 1  # other stacks' errors are not acknowledged
    if acknowledged:
        assert finding["acknowledged"]["reason"] == "accepted in the design review"


def test_an_app_whose_errors_are_all_acknowledged_passes_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = cdk.App(outdir=str(tmp_path / "cdk.out"), context=CONTEXT)
    seed_stack(app, "Seed", "stack", f"SafeQueue::{VISIBILITY}")
    app.synth()
    assert check(capsys, str(tmp_path / "cdk.out"))[0] == 0


def test_an_unknown_safe_queue_id_acknowledged_in_an_app_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = cdk.App(outdir=str(tmp_path / "cdk.out"), context=CONTEXT)
    seed_stack(app, "Seed", "function", "SafeQueue::safe-queue:visibility-too-low")
    app.synth()
    code, _, err = check(capsys, str(tmp_path / "cdk.out"))
    assert code == 2
    assert "construct Seed/Fn: " in err
    assert "'SafeQueue::safe-queue:visibility-too-low' is not a safe-queue rule" in err


def test_the_plugin_honours_the_bare_id_that_cdk_records_as_an_annotation(tmp_path: Path) -> None:
    # GIVEN the plugin, and the error acknowledged with the bare rule id
    app = cdk.App(outdir=str(tmp_path / "out"), context=CONTEXT)
    stack = cdk.Stack(app, "Seed")
    queue = sqs.Queue(stack, "Queue", visibility_timeout=S(60))
    function = make_function(stack, "Fn", S(180))
    function.add_event_source(event_sources.SqsEventSource(queue, batch_size=1))
    Validations.of(function).acknowledge(Acknowledgment(id=VISIBILITY, reason="known"))
    Validations.of(app).add_plugins(SafeQueueChecks())
    # WHEN synthesized  THEN the synth passes; the finding is an info, marked acknowledged
    app.synth()
    report = json.loads((tmp_path / "out" / "validation-report.json").read_text())
    (plugin,) = [p for p in report["pluginReports"] if p["pluginName"] == "SafeQueue"]
    (violation,) = [v for v in plugin["violations"] if v["ruleName"] == VISIBILITY]
    assert violation["severity"] == "info"
    assert violation["description"].endswith("Acknowledged: known")
