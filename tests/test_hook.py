"""The CloudFormation hook's handler on stack and change-set targets: requests shaped as the
CloudFormation Hooks User Guide documents them, payloads served from 127.0.0.1 as S3 serves
a presigned URL, and the response CloudFormation reads (status, error code, message within
4,096 characters, annotations, the token echoed)."""

from __future__ import annotations

import json
import textwrap
import time
from typing import Any

import pytest

from safe_queue.engine import RULES, Finding, Level, rule
from safe_queue.hook import Outcome, handler, respond
from safe_queue.hook import stack as stack_module
from safe_queue.hook.response import MESSAGE_MAX
from safe_queue.report import ReportedFinding
from safe_queue.template import check_paths
from tests import hook_events
from tests.hook_events import Context, PayloadServer, change_set_event, stack_event

payloads = hook_events.payloads  # fixture

VISIBILITY = "safe-queue:visibility-below-function-timeout"

SEED = textwrap.dedent(
    """\
    AWSTemplateFormatVersion: "2010-09-09"
    Resources:
      RenderQueue:
        Type: AWS::SQS::Queue
        Properties:
          VisibilityTimeout: 60
          RedrivePolicy:
            deadLetterTargetArn: !GetAtt RenderDlq.Arn
            maxReceiveCount: 5
      RenderDlq:
        Type: AWS::SQS::Queue
        Properties:
          MessageRetentionPeriod: 1209600
      RenderFn:
        Type: AWS::Lambda::Function
        Properties:
          Runtime: python3.13
          Handler: index.handler
          Role: !Sub arn:${AWS::Partition}:iam::${AWS::AccountId}:role/render
          Code: {ZipFile: "def handler(event, context): return {'batchItemFailures': []}"}
          Timeout: 180
      RenderMapping:
        Type: AWS::Lambda::EventSourceMapping
        Properties:
          EventSourceArn: !GetAtt RenderQueue.Arn
          FunctionName: !Ref RenderFn
          BatchSize: 5
          MaximumBatchingWindowInSeconds: 2
          FunctionResponseTypes: [ReportBatchItemFailures]
    """
)
FIXED = SEED.replace("VisibilityTimeout: 60", "VisibilityTimeout: 1082")
NO_DEAD_LETTER_QUEUE = textwrap.dedent(
    """\
    Resources:
      Queue:
        Type: AWS::SQS::Queue
        Properties: {VisibilityTimeout: 1082}
      Fn:
        Type: AWS::Lambda::Function
        Properties:
          Runtime: python3.13
          Handler: index.handler
          Role: arn:aws:iam::123456789012:role/render
          Code: {ZipFile: "x"}
          Timeout: 180
      Mapping:
        Type: AWS::Lambda::EventSourceMapping
        Properties:
          EventSourceArn: !GetAtt Queue.Arn
          FunctionName: !Ref Fn
          BatchSize: 5
          MaximumBatchingWindowInSeconds: 2
          FunctionResponseTypes: [ReportBatchItemFailures]
    """
)


def run_stack(
    payloads: PayloadServer, template: str | None, **event: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    request = stack_event(payloads.serve({"template": template, "previousTemplate": None}), **event)
    return request, handler(request, Context())


# --- verdicts ----------------------------------------------------------------------------


def test_the_seed_pair_is_refused(payloads: PayloadServer) -> None:
    # GIVEN the seed incident as a YAML template: visibility 60 s, function timeout 180 s
    request, response = run_stack(payloads, SEED)
    # THEN the operation is refused as non-compliant, the token echoed
    assert response["hookStatus"] == "FAILED"
    assert response["errorCode"] == "NonCompliant"
    assert response["clientRequestToken"] == request["clientRequestToken"]
    # AND the message names the rule, the mapping and the numbers
    first, second = response["message"].splitlines()[:2]
    assert first.startswith("safe-queue refused: 1 error on 1 of 1 SQS event source mapping")
    assert "stack orders" in first
    assert second.startswith(f"ERROR {VISIBILITY} at RenderMapping:")
    assert "60" in second
    assert "180" in second
    # AND one annotation per finding: rule id, status, severity, remediation and its link
    (annotation,) = response["annotations"]
    assert annotation == {
        "annotationName": VISIBILITY,
        "status": "FAILED",
        "statusMessage": annotation["statusMessage"],
        "remediationMessage": annotation["remediationMessage"],
        "remediationLink": rule(VISIBILITY).docs_url,
        "severityLevel": "HIGH",
    }
    assert annotation["statusMessage"].startswith("RenderMapping: ")
    assert "1082" in annotation["remediationMessage"]  # the fix, with its number
    assert annotation["remediationLink"].endswith("#visibility-below-function-timeout")


def test_the_fix_passes(payloads: PayloadServer) -> None:
    _, response = run_stack(payloads, FIXED)
    assert response["hookStatus"] == "SUCCESS"
    assert "errorCode" not in response
    assert response["message"] == (
        "safe-queue passed: 1 SQS event source mapping in stack orders, no finding."
    )
    assert response["annotations"] == []


def test_warnings_only_pass_and_say_so(payloads: PayloadServer) -> None:
    # GIVEN a mapping whose only finding is a warning (no dead-letter queue)
    _, response = run_stack(payloads, NO_DEAD_LETTER_QUEUE)
    # THEN the operation goes on, and the message says which warning
    assert response["hookStatus"] == "SUCCESS"
    assert "errorCode" not in response
    lines = response["message"].splitlines()
    assert lines[0].startswith("safe-queue passed with 1 warning on 1 of 1 SQS event source")
    assert lines[1].startswith("WARNING safe-queue:no-dead-letter-queue at Mapping:")
    (annotation,) = response["annotations"]
    assert (annotation["status"], annotation["severityLevel"]) == ("FAILED", "MEDIUM")


def broken_mappings(count: int) -> str:
    resources: dict[str, Any] = {
        "Fn": {
            "Type": "AWS::Lambda::Function",
            "Properties": {
                "Runtime": "python3.13",
                "Handler": "index.handler",
                "Role": "arn:aws:iam::123456789012:role/r",
                "Code": {"ZipFile": "x"},
                "Timeout": 180,
            },
        }
    }
    for index in range(count):
        resources[f"Queue{index}"] = {
            "Type": "AWS::SQS::Queue",
            "Properties": {"VisibilityTimeout": 60},
        }
        resources[f"Mapping{index}"] = {
            "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": {"Fn::GetAtt": [f"Queue{index}", "Arn"]},
                "FunctionName": {"Ref": "Fn"},
            },
        }
    return json.dumps({"Resources": resources})


def test_150_broken_mappings_stay_within_4096_characters(payloads: PayloadServer) -> None:
    # GIVEN 150 mappings, each with an error and warnings
    _, response = run_stack(payloads, broken_mappings(150))
    message = response["message"]
    # THEN the message fits CloudFormation's 4,096 characters, counts first
    assert len(message) <= MESSAGE_MAX
    assert response["errorCode"] == "NonCompliant"
    assert message.startswith("safe-queue refused: 150 errors and ")
    assert "on 150 of 150 SQS event source mappings" in message.splitlines()[0]
    # AND as many findings as fit, errors first, then how many more the annotations hold
    lines = message.splitlines()
    assert lines[1].startswith(f"ERROR {VISIBILITY} at Mapping")
    shown = sum(1 for line in lines if line.startswith(("ERROR ", "WARNING ", "INFO ")))
    assert 3 <= shown < len(response["annotations"])
    assert lines[-1].startswith(f"... and {len(response['annotations']) - shown} more findings")
    # AND every finding is an annotation
    errors = [a for a in response["annotations"] if a["annotationName"] == VISIBILITY]
    assert len(errors) == 150
    assert len({a["statusMessage"].split(":")[0] for a in errors}) == 150


def test_a_sam_template_is_read(payloads: PayloadServer) -> None:
    # GIVEN the seed as SAM: Globals' timeout, an SQS event on a queue of the template
    sam = textwrap.dedent(
        """\
        Transform: AWS::Serverless-2016-10-31
        Globals:
          Function: {Timeout: 180}
        Resources:
          Jobs:
            Type: AWS::SQS::Queue
            Properties: {VisibilityTimeout: 60}
          Worker:
            Type: AWS::Serverless::Function
            Properties:
              Runtime: python3.13
              Handler: app.handler
              CodeUri: s3://bucket/key.zip
              Events:
                Jobs:
                  Type: SQS
                  Properties: {Queue: !GetAtt Jobs.Arn, BatchSize: 5}
        """
    )
    _, response = run_stack(payloads, sam)
    assert response["errorCode"] == "NonCompliant"
    assert f"ERROR {VISIBILITY} at WorkerJobs:" in response["message"]


def test_an_acknowledgement_in_metadata_is_honoured(payloads: PayloadServer) -> None:
    # GIVEN the seed, its error acknowledged in the mapping's Metadata
    mapping = "  RenderMapping:\n    Type: AWS::Lambda::EventSourceMapping\n"
    assert mapping in SEED
    acknowledged = SEED.replace(
        mapping,
        mapping + "    Metadata:\n      safe-queue:\n        acknowledge:\n"
        f"          - id: {VISIBILITY}\n"
        "            reason: the handler extends visibility itself\n",
    )
    _, response = run_stack(payloads, acknowledged)
    # THEN it passes, and the finding is still reported, as acknowledged
    assert response["hookStatus"] == "SUCCESS"
    assert "1 acknowledged" in response["message"]
    (annotation,) = response["annotations"]
    assert annotation["status"] == "SKIPPED"
    assert "the handler extends visibility itself" in annotation["statusMessage"]


def test_a_stack_deletion_has_nothing_to_check(payloads: PayloadServer) -> None:
    _, response = run_stack(payloads, "", action="DELETE")
    assert response["hookStatus"] == "SUCCESS"
    assert "nothing to check" in response["message"]


def test_a_change_set_is_judged_by_its_template(payloads: PayloadServer) -> None:
    # GIVEN a change set's payload: the template and its changed resources
    payload = {
        "template": SEED,
        "changedResources": [
            {
                "logicalResourceId": "RenderQueue",
                "resourceType": "AWS::SQS::Queue",
                "action": "UPDATE",
                "lineNumber": 3,
                "beforeContext": '{"Properties":{"VisibilityTimeout":"1082"}}',
                "afterContext": '{"Properties":{"VisibilityTimeout":"60"}}',
            }
        ],
    }
    response = handler(change_set_event(payloads.serve(payload)), Context())
    assert response["errorCode"] == "NonCompliant"
    assert "change set SampleChangeSet of stack orders" in response["message"].splitlines()[0]


# --- the evaluation cannot be done: InternalFailure, one line, never a crash ---------------


def assert_internal_failure(response: dict[str, Any], *words: str) -> None:
    assert response["hookStatus"] == "FAILED"
    assert response["errorCode"] == "InternalFailure"
    assert "\n" not in response["message"]
    assert response["message"].startswith("safe-queue could not evaluate ")
    for word in words:
        assert word in response["message"]


def test_an_unreachable_payload_is_an_internal_failure(payloads: PayloadServer) -> None:
    # GIVEN a payload URL nothing answers on
    closed = PayloadServer()
    url = closed.serve({"template": SEED})
    closed.close()
    request = stack_event(url)
    response = handler(request, Context())
    assert_internal_failure(response, "stack orders", "could not be read after 3 attempts")
    assert response["clientRequestToken"] == request["clientRequestToken"]
    # AND the presigned URL's signature stays out of the message
    assert "X-Amz-Signature" not in response["message"]


def test_an_expired_payload_url_is_an_internal_failure(payloads: PayloadServer) -> None:
    url = payloads.serve({"template": SEED}).replace("/hooks/", "/expired/")
    assert_internal_failure(handler(stack_event(url), Context()), "HTTP 403")


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        (b"<html>not json</html>", ("is not JSON",)),
        ({"template": "Resources: [unclosed"}, ("the template cannot be read",)),
        ({"template": '{"Resources": {"Q": "not a resource"}}'}, ("resource Q",)),
    ],
)
def test_a_payload_that_cannot_be_read_is_an_internal_failure(
    payloads: PayloadServer, payload: Any, words: tuple[str, ...]
) -> None:
    assert_internal_failure(handler(stack_event(payloads.serve(payload)), Context()), *words)


@pytest.mark.parametrize("event", [None, [], {}, {"requestData": {}}])
def test_a_request_that_is_not_a_hook_request_is_an_internal_failure(event: Any) -> None:
    assert_internal_failure(handler(event, Context()), "the request")


def test_a_slow_evaluation_answers_before_cloudformation_gives_up(payloads: PayloadServer) -> None:
    # GIVEN a function with 3 s left, and a payload that takes 2 s to arrive
    url = payloads.serve({"template": SEED}, delay=2)
    started = time.monotonic()
    response = handler(stack_event(url), Context(remaining_ms=3_000))
    # THEN it answers InternalFailure after its budget (3 s less 2 s of margin), saying so
    assert time.monotonic() - started < 1.9
    assert_internal_failure(response, "took longer than 1 s", "retry the operation")


def test_a_bug_is_an_internal_failure_with_its_name(
    payloads: PayloadServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> Any:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("safe_queue.hook.entry.evaluate_template", broken)
    response = handler(stack_event(payloads.serve({"template": SEED})), Context())
    assert_internal_failure(response, "a safe-queue bug (ZeroDivisionError: division by zero)")


# --- every rule's examples: the same verdicts as safe-queue check ------------------------

CHECKED = [entry for entry in RULES if entry.check is not None]
CASES = [(entry, kind) for entry in CHECKED for kind in ("compliant", "non_compliant")]


def verdicts_of_check(template: dict[str, Any], tmp_path: Any) -> set[tuple[str, str, str]]:
    path = tmp_path / "example.json"
    path.write_text(json.dumps(template))
    return {
        (f.resource, f.rule_id, "acknowledged" if f.acknowledged else f.level.value)
        for f in check_paths([path]).findings
    }


def verdicts_of_hook(response: dict[str, Any]) -> set[tuple[str, str, str]]:
    levels = {"HIGH": "error", "MEDIUM": "warning", "INFORMATIONAL": "info"}
    return {
        (
            a["statusMessage"].split(": ", 1)[0],
            a["annotationName"],
            "acknowledged"
            if a["status"] == "SKIPPED" and "Acknowledged" in a["statusMessage"]
            else levels[a["severityLevel"]],
        )
        for a in response["annotations"]
    }


@pytest.mark.parametrize(("entry", "kind"), CASES, ids=[f"{e.name}-{k}" for e, k in CASES])
def test_every_rule_example_gets_the_verdict_check_gives(
    payloads: PayloadServer, tmp_path: Any, entry: Any, kind: str
) -> None:
    example = entry.compliant if kind == "compliant" else entry.non_compliant
    template = example.template()
    expected = verdicts_of_check(template, tmp_path)
    _, response = run_stack(payloads, json.dumps(template))
    assert verdicts_of_hook(response) == expected
    # AND the status follows the verdict: errors refused, anything else passes
    refused = any(level == "error" for _, _, level in expected)
    assert response["hookStatus"] == ("FAILED" if refused else "SUCCESS")
    if kind == "non_compliant":
        assert entry.id in {rule_id for _, rule_id, _ in expected}


def test_pseudo_parameters_and_imports_are_filled_in_as_cloudformation_does() -> None:
    exports = {"shared-queue-arn": "arn:aws:sqs:eu-west-1:123456789012:shared"}
    calls: list[int] = []

    def listed() -> dict[str, str]:
        calls.append(1)
        return exports

    pseudo = {"AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012"}
    node = {
        "A": {"Fn::ImportValue": "shared-queue-arn"},
        "B": {"Fn::Sub": "arn:aws:lambda:${AWS::Region}:${AWS::AccountId}:function:f"},
        "C": {"Fn::Sub": "${Env}-${AWS::Region}"},
        "D": {"Ref": "AWS::Region"},
        "E": {"Fn::ImportValue": {"Fn::Sub": "${Env}-arn"}},
        "F": {"Fn::ImportValue": "not-exported"},
    }
    filled = stack_module.fill_in_deployment(node, pseudo, listed)
    assert filled == {
        "A": "arn:aws:sqs:eu-west-1:123456789012:shared",
        "B": "arn:aws:lambda:eu-west-1:123456789012:function:f",
        "C": {"Fn::Sub": "${Env}-eu-west-1"},
        "D": "eu-west-1",
        "E": {"Fn::ImportValue": {"Fn::Sub": "${Env}-arn"}},
        "F": {"Fn::ImportValue": "not-exported"},
    }
    assert calls  # the exports were listed because the template imports


def test_a_resource_type_it_does_not_judge_passes_without_a_call() -> None:
    event = hook_events.resource_event("AWS::S3::Bucket", "Bucket", {"BucketName": "b"})
    response = handler(event, Context())
    assert response["hookStatus"] == "SUCCESS"
    assert response["message"].endswith("safe-queue does not check AWS::S3::Bucket.")


def test_a_cloud_control_message_stays_within_1024_characters(payloads: PayloadServer) -> None:
    # GIVEN the findings of 150 broken mappings, answered to Cloud Control API (1,024)
    _, many = run_stack(payloads, broken_mappings(150))
    findings = len(many["annotations"])
    outcome = Outcome(
        "the create of AWS::SQS::Queue Q",
        checked=150,
        findings=[
            ReportedFinding(Finding(VISIBILITY, Level.ERROR, "x" * 700), f"Mapping{i}")
            for i in range(findings)
        ],
    )
    message = respond("t", outcome, limit=1024)["message"]
    assert len(message) <= 1024
    assert message.endswith("or run safe-queue check.")
