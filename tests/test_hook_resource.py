"""The CloudFormation hook's handler against a moto server (127.0.0.1, over HTTP): resource
targets judged with the live account, and a stack target whose template reaches outside itself.

moto runs the stacks (``DescribeStackResource`` gives physical ids, ``ListExports`` the
exports), the queues, functions and mappings. It does not return a resource's ``Metadata``
from ``DescribeStackResource``; where a test needs it, it is added to the answer as AWS
documents the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from safe_queue.hook import entry, handler
from safe_queue.live.actions import HOOK_IAM_ACTIONS
from tests import hook_events, moto_world
from tests.hook_events import Context, PayloadServer, resource_event, stack_event
from tests.moto_world import DLQ_RETENTION, Calls, World

moto_endpoint = moto_world.moto_endpoint  # fixtures
aws_environment = moto_world.aws_environment
payloads = hook_events.payloads

REGION = "ca-central-1"  # this module's own region of the shared moto server
VISIBILITY = "safe-queue:visibility-below-function-timeout"
MAPPING = "AWS::Lambda::EventSourceMapping"
GOOD_BATCHES = {
    "BatchSize": "5",  # CloudFormation may pass numbers as strings
    "MaximumBatchingWindowInSeconds": "2",
    "FunctionResponseTypes": ["ReportBatchItemFailures"],
}


@dataclass
class Account:
    world: World
    cloudformation: Any
    short_queue: str
    functions_stack: str  # a stack holding the function "Fn" (timeout 30 s)
    queues_stack: str  # a stack holding "Queue" (visibility 300 s) and its "Dlq"
    queue_arn: str
    dlq_arn: str
    stack_function: str


def function_resource(role: str, timeout: int) -> dict[str, Any]:
    return {
        "Type": "AWS::Lambda::Function",
        "Properties": {
            "Code": {"ZipFile": "def handler(event, context):\n    return None\n"},
            "Handler": "index.handler",
            "Runtime": "python3.13",
            "Role": role,
            "Timeout": timeout,
        },
    }


@pytest.fixture(scope="module")
def account(aws_environment: str) -> Account:
    """GIVEN a function of 180 s with a short queue (visibility 60 s) not yet mapped; a
    stack of functions (Fn: 30 s); a stack of queues (Queue: visibility 300 s, a
    dead-letter queue of 14 days), Queue mapped to Fn from outside both stacks; and an
    exported queue ARN."""
    world = World(REGION)
    world.function("render", 180)
    dlq = world.queue("render-dlq", MessageRetentionPeriod=DLQ_RETENTION)
    short = world.queue("short", VisibilityTimeout=60, RedrivePolicy=world.redrive(dlq))
    cloudformation = boto3.Session(region_name=REGION).client("cloudformation")
    functions = cloudformation.create_stack(
        StackName="functions",
        TemplateBody=json.dumps({"Resources": {"Fn": function_resource(world.role, 30)}}),
    )["StackId"]
    queues_template = {
        "Resources": {
            "Dlq": {
                "Type": "AWS::SQS::Queue",
                "Properties": {"MessageRetentionPeriod": DLQ_RETENTION},
            },
            "Queue": {
                "Type": "AWS::SQS::Queue",
                "Properties": {
                    "VisibilityTimeout": 300,
                    "RedrivePolicy": {
                        "deadLetterTargetArn": {"Fn::GetAtt": ["Dlq", "Arn"]},
                        "maxReceiveCount": 5,
                    },
                },
            },
        },
        "Outputs": {
            "QueueArn": {
                "Value": {"Fn::GetAtt": ["Queue", "Arn"]},
                "Export": {"Name": "shared-queue-arn"},
            }
        },
    }
    queues = cloudformation.create_stack(
        StackName="queues", TemplateBody=json.dumps(queues_template)
    )["StackId"]

    def physical(stack: str, logical_id: str) -> str:
        return str(
            cloudformation.describe_stack_resource(StackName=stack, LogicalResourceId=logical_id)[
                "StackResourceDetail"
            ]["PhysicalResourceId"]
        )

    function_name = physical(functions, "Fn")
    queue_url = physical(queues, "Queue")
    queue_arn = f"arn:aws:sqs:{REGION}:123456789012:{queue_url.rsplit('/', 1)[1]}"
    dlq_url = physical(queues, "Dlq")
    dlq_arn = f"arn:aws:sqs:{REGION}:123456789012:{dlq_url.rsplit('/', 1)[1]}"
    world.mapping(
        queue_arn,
        function_name,
        BatchSize=5,
        MaximumBatchingWindowInSeconds=2,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    return Account(
        world, cloudformation, short, functions, queues, queue_arn, dlq_arn, function_name
    )


def run(event: dict[str, Any], session: boto3.Session | None = None) -> dict[str, Any]:
    """Call the handler; with ``session``, its AWS calls go through that session (to inject
    faults or record the calls)."""
    if session is None:
        return handler(event, Context())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(entry, "session_for", lambda request: session)
        return handler(event, Context())


def recorded() -> tuple[boto3.Session, Calls]:
    session = boto3.Session(region_name=REGION)
    return session, Calls(session)


# --- AWS::Lambda::EventSourceMapping -------------------------------------------------------


def test_a_mapping_created_against_a_short_live_queue_is_refused(account: Account) -> None:
    # GIVEN a new mapping from the live queue (visibility 60 s) to the live 180 s function
    event = resource_event(
        MAPPING,
        "RenderMapping",
        {"EventSourceArn": account.short_queue, "FunctionName": "render", **GOOD_BATCHES},
        action="CREATE",
        region=REGION,
    )
    session, calls = recorded()
    response = run(event, session)
    # THEN it is refused, naming the rule and the live values
    assert response["hookStatus"] == "FAILED"
    assert response["errorCode"] == "NonCompliant"
    assert response["clientRequestToken"] == event["clientRequestToken"]
    lines = response["message"].splitlines()
    assert lines[0].startswith("safe-queue refused: 1 error on 1 of 1 SQS event source mapping")
    assert "the create of AWS::Lambda::EventSourceMapping RenderMapping" in lines[0]
    assert lines[1].startswith(f"ERROR {VISIBILITY} at RenderMapping: ")
    assert "60" in lines[1]
    assert "180" in lines[1]
    assert [a["annotationName"] for a in response["annotations"]] == [VISIBILITY]
    # AND it read only what its role allows
    assert set(calls.actions) <= set(HOOK_IAM_ACTIONS)
    assert calls.params("lambda:ListEventSourceMappings") == [{"FunctionName": "render"}]


def test_a_mapping_against_a_long_enough_live_queue_passes(account: Account) -> None:
    good = account.world.queue(
        "long-enough",
        VisibilityTimeout=1082,
        RedrivePolicy=account.world.redrive(
            account.world.queue("long-enough-dlq", MessageRetentionPeriod=DLQ_RETENTION)
        ),
    )
    event = resource_event(
        MAPPING,
        "RenderMapping",
        {"EventSourceArn": good, "FunctionName": "render", **GOOD_BATCHES},
        action="CREATE",
        region=REGION,
    )
    response = run(event)
    assert response["hookStatus"] == "SUCCESS", response["message"]
    assert response["message"].startswith("safe-queue passed: 1 SQS event source mapping")


def test_a_mapping_of_a_stream_is_not_judged(account: Account) -> None:
    stream = f"arn:aws:kinesis:{REGION}:123456789012:stream/clicks"
    event = resource_event(
        MAPPING, "Clicks", {"EventSourceArn": stream, "FunctionName": "render"}, region=REGION
    )
    response = run(event)
    assert response["hookStatus"] == "SUCCESS"
    assert "not an SQS queue" in response["message"]


# --- AWS::Lambda::Function: the change no template tool sees ------------------------------


def function_update(account: Account, timeout: str) -> dict[str, Any]:
    properties = {
        "Code": {"ZipFile": "def handler(event, context):\n    return None\n"},
        "Handler": "index.handler",
        "Runtime": "python3.13",
        "Role": account.world.role,
        "Timeout": timeout,
    }
    previous = {**properties, "Timeout": "30"}
    return resource_event(
        "AWS::Lambda::Function",
        "Fn",
        properties,
        previous,
        stack=account.functions_stack,
        region=REGION,
    )


def test_a_function_timeout_raised_above_its_queues_visibility_is_refused(
    account: Account,
) -> None:
    # GIVEN the function's stack raises its timeout from 30 s to 600 s; the queue that feeds
    # it (visibility 300 s) lives in another stack, mapped from outside both
    session, calls = recorded()
    response = run(function_update(account, "600"), session)
    # THEN the update is refused, naming the mapping, the queue and the new timeout
    assert response["errorCode"] == "NonCompliant"
    first, second = response["message"].splitlines()[:2]
    assert "the update of AWS::Lambda::Function Fn" in first
    assert second.startswith(f"ERROR {VISIBILITY} at mapping ")
    assert "queues-Queue" in second
    assert "600" in second
    # AND the function's physical name came from its stack; only allowed actions were called
    assert calls.params("cloudformation:DescribeStackResource") == [
        {"StackName": account.functions_stack, "LogicalResourceId": "Fn"}
    ]
    assert calls.params("lambda:ListEventSourceMappings") == [
        {"FunctionName": account.stack_function}
    ]
    assert "lambda:GetFunctionConfiguration" not in calls.actions  # the new one is proposed
    assert set(calls.actions) <= set(HOOK_IAM_ACTIONS)


def test_a_function_timeout_the_queue_covers_passes(account: Account) -> None:
    response = run(function_update(account, "45"))
    # 300 s covers 6 x 45 s + 2 s: no finding on the one mapping of the function
    assert response["hookStatus"] == "SUCCESS", response["message"]
    assert response["message"] == (
        "safe-queue passed: 1 SQS event source mapping in the update of"
        " AWS::Lambda::Function Fn, no finding."
    )


def test_an_acknowledgement_in_the_resources_metadata_is_honoured(account: Account) -> None:
    # GIVEN the function's Metadata acknowledges the rule (DescribeStackResource's Metadata)
    session, _ = recorded()
    metadata = {"safe-queue": {"acknowledge": [{"id": VISIBILITY, "reason": "drained first"}]}}

    def with_metadata(parsed: dict[str, Any], **_: Any) -> None:
        parsed["StackResourceDetail"]["Metadata"] = json.dumps(metadata)

    session.events.register("after-call.cloudformation.DescribeStackResource", with_metadata)
    response = run(function_update(account, "600"), session)
    # THEN the error no longer fails the update, and is reported as acknowledged
    assert response["hookStatus"] == "SUCCESS", response["message"]
    acknowledged = [a for a in response["annotations"] if a["annotationName"] == VISIBILITY]
    assert acknowledged[0]["status"] == "SKIPPED"
    assert "drained first" in acknowledged[0]["statusMessage"]


# --- AWS::SQS::Queue ------------------------------------------------------------------------


def queue_update(account: Account, logical_id: str, properties: dict[str, Any]) -> dict[str, Any]:
    return resource_event(
        "AWS::SQS::Queue", logical_id, properties, stack=account.queues_stack, region=REGION
    )


def test_a_queue_visibility_lowered_below_its_functions_timeout_is_refused(
    account: Account,
) -> None:
    redrive = {"deadLetterTargetArn": account.dlq_arn, "maxReceiveCount": "5"}
    response = run(
        queue_update(account, "Queue", {"VisibilityTimeout": "20", "RedrivePolicy": redrive})
    )
    assert response["errorCode"] == "NonCompliant"
    assert f"ERROR {VISIBILITY} at mapping " in response["message"]
    assert " 20 s" in response["message"]


def test_a_dead_letter_queue_whose_retention_is_cut_fails_its_source_queues_mapping(
    account: Account,
) -> None:
    # GIVEN the dead-letter queue (not itself mapped) keeps messages 1 day from now on
    session, calls = recorded()
    response = run(queue_update(account, "Dlq", {"MessageRetentionPeriod": "86400"}), session)
    # THEN the mapping of the queue it serves is judged, and refused (4 days > 1 day)
    assert response["errorCode"] == "NonCompliant"
    assert "ERROR safe-queue:dead-letter-retention-too-short at mapping " in response["message"]
    assert calls.actions["sqs:ListDeadLetterSourceQueues"] == 1
    assert set(calls.actions) <= set(HOOK_IAM_ACTIONS)


def test_a_new_queue_has_no_mapping_yet(account: Account) -> None:
    event = resource_event(
        "AWS::SQS::Queue", "NewQueue", {"VisibilityTimeout": "5"}, action="CREATE", region=REGION
    )
    response = run(event)
    assert response["hookStatus"] == "SUCCESS"
    assert "no event source mapping yet" in response["message"]


# --- AWS errors after the retries ------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "code", "action"),
    [
        ("lambda.ListEventSourceMappings", "ThrottlingException", "lambda:ListEventSourceMappings"),
        ("cloudformation.DescribeStackResource", "AccessDenied", "cloudformation:Describe"),
        ("lambda.GetFunctionConcurrency", "AccessDeniedException", "lambda:GetFunctionConcurrency"),
    ],
)
def test_an_aws_error_after_the_retries_is_an_internal_failure(
    account: Account, operation: str, code: str, action: str
) -> None:
    session, _ = recorded()
    moto_world.deny(session, operation, code=code)
    event = queue_update(account, "Queue", {"VisibilityTimeout": "1082"})
    response = run(event, session)
    assert response["hookStatus"] == "FAILED"
    assert response["errorCode"] == "InternalFailure"
    message = response["message"]
    assert "\n" not in message
    assert message.startswith("safe-queue could not evaluate the update of AWS::SQS::Queue Queue")
    assert action in message
    assert code in message
    assert "Fix: " in message


def test_an_unexpected_aws_error_is_an_internal_failure_not_a_crash(account: Account) -> None:
    # GIVEN the resource is not (yet) in its stack: CloudFormation answers ValidationError
    event = function_update(account, "600")
    event["requestData"]["targetLogicalId"] = "NotThere"
    response = run(event)
    assert response["errorCode"] == "InternalFailure"
    assert "ValidationError" in response["message"]


# --- a stack target whose template reaches outside itself --------------------------------


def test_an_imported_queue_and_a_function_by_arn_are_read_live(
    account: Account, payloads: PayloadServer
) -> None:
    # GIVEN a template whose mapping imports the shared queue (visibility 300 s) and names a
    # function outside the template by ARN, built from pseudo parameters (the 180 s one)
    template = {
        "Resources": {
            "Mapping": {
                "Type": "AWS::Lambda::EventSourceMapping",
                "Properties": {
                    "EventSourceArn": {"Fn::ImportValue": "shared-queue-arn"},
                    "FunctionName": {
                        "Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:"
                        "${AWS::AccountId}:function:render"
                    },
                    "BatchSize": 5,
                    "MaximumBatchingWindowInSeconds": 2,
                    "FunctionResponseTypes": ["ReportBatchItemFailures"],
                },
            }
        }
    }
    event = stack_event(payloads.serve({"template": json.dumps(template)}), region=REGION)
    session, calls = recorded()
    response = run(event, session)
    # THEN the live values are judged: 300 s < 180 s x 6 + 2 s is a warning, not an error
    assert response["hookStatus"] == "SUCCESS", response["message"]
    assert "WARNING" in response["message"]
    assert calls.actions["cloudformation:ListExports"] == 1
    assert calls.params("lambda:GetFunctionConfiguration") == [
        {"FunctionName": f"arn:aws:lambda:{REGION}:123456789012:function:render"}
    ]
    assert set(calls.actions) <= set(HOOK_IAM_ACTIONS)


def test_a_template_without_outside_references_makes_no_aws_call(
    account: Account, payloads: PayloadServer
) -> None:
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}
    event = stack_event(payloads.serve({"template": json.dumps(template)}), region=REGION)
    session, calls = recorded()
    response = run(event, session)
    assert response["hookStatus"] == "SUCCESS"
    assert calls.calls == []


def test_exports_that_cannot_be_listed_are_an_internal_failure(
    account: Account, payloads: PayloadServer
) -> None:
    template = {
        "Resources": {
            "Mapping": {
                "Type": "AWS::Lambda::EventSourceMapping",
                "Properties": {
                    "EventSourceArn": {"Fn::ImportValue": "shared-queue-arn"},
                    "FunctionName": "render",
                },
            }
        }
    }
    session, _ = recorded()
    moto_world.deny(session, "cloudformation.ListExports")
    event = stack_event(payloads.serve({"template": json.dumps(template)}), region=REGION)
    response = run(event, session)
    assert response["errorCode"] == "InternalFailure"
    assert "cloudformation:ListExports" in response["message"]
