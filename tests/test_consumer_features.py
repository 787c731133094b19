"""The props and behaviour of issue 12: removal policy, KMS, names, reserved concurrency,
filters, the redelivery alarm, the visibility variable and the dashboard."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Annotations, Match, Template
from constructs import Construct

from safe_queue import SafeQueueConsumer
from safe_queue.cdk.dashboard import SafeQueueDashboard
from safe_queue.errors import SafeQueueConfigError
from safe_queue.runtime import VISIBILITY_TIMEOUT_ENV

from .conftest import make_function, make_stack

S = cdk.Duration.seconds


def resources(stack: cdk.Stack, kind: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = Template.from_stack(stack).find_resources(kind)
    return found


def logical_id(construct: Any) -> str:
    return cdk.Stack.of(construct).get_logical_id(construct.node.default_child)


def warnings(stack: cdk.Stack) -> list[str]:
    """The safe-queue warnings (not aws-cdk-lib's own, e.g. on imported functions)."""
    found = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    return [str(m.entry.data) for m in found if "safe-queue:" in str(m.entry.data)]


def infos(stack: cdk.Stack) -> list[str]:
    found = Annotations.from_stack(stack).find_info("*", Match.any_value())
    return [str(m.entry.data) for m in found]


# --- removal_policy ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("props", "deletion", "replace"),
    [
        # the default: pending and dead-lettered messages survive a stack deletion
        ({}, "Retain", "Retain"),
        ({"removal_policy": cdk.RemovalPolicy.RETAIN}, "Retain", "Retain"),
        ({"removal_policy": cdk.RemovalPolicy.DESTROY}, "Delete", "Delete"),
        (
            {"removal_policy": cdk.RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE},
            "RetainExceptOnCreate",
            "Retain",
        ),
    ],
)
def test_both_queues_follow_the_removal_policy(props: dict[str, Any], deletion: str, replace: str):
    stack = make_stack()
    SafeQueueConsumer(stack, "C", function=make_function(stack), **props)
    queues = resources(stack, "AWS::SQS::Queue")
    assert len(queues) == 2
    for queue in queues.values():
        assert queue["DeletionPolicy"] == deletion
        assert queue["UpdateReplacePolicy"] == replace


# --- encryption_key ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def encrypted() -> tuple[cdk.Stack, SafeQueueConsumer, kms.Key, iam.Role]:
    stack = make_stack("Encrypted")
    key = kms.Key(stack, "QueueKey", enable_key_rotation=True)
    consumer = SafeQueueConsumer(
        stack,
        "C",
        function=make_function(stack, "Fn", S(60)),
        encryption_key=key,
        alarm_topic=sns.Topic(stack, "Alarms"),
    )
    producer = iam.Role(stack, "Producer", assumed_by=iam.ServicePrincipal("ec2.amazonaws.com"))
    consumer.queue.grant_send_messages(producer)
    return stack, consumer, key, producer


def kms_actions_of(stack: cdk.Stack, role_id: str, key_id: str) -> set[str]:
    actions: set[str] = set()
    for policy in resources(stack, "AWS::IAM::Policy").values():
        if {"Ref": role_id} not in policy["Properties"]["Roles"]:
            continue
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Resource"] == {"Fn::GetAtt": [key_id, "Arn"]}:
                action = statement["Action"]
                actions.update([action] if isinstance(action, str) else action)
    return actions


def test_both_queues_use_sse_kms_with_the_key(encrypted: Any):
    stack, consumer, key, _ = encrypted
    template = Template.from_stack(stack).to_json()["Resources"]
    for queue in (consumer.queue, consumer.dead_letter_queue):
        props = template[logical_id(queue)]["Properties"]
        assert props["KmsMasterKeyId"] == {"Fn::GetAtt": [logical_id(key), "Arn"]}
        assert "SqsManagedSseEnabled" not in props


def test_the_function_can_decrypt_and_a_producer_can_encrypt(encrypted: Any):
    stack, _, key, producer = encrypted
    function_role = resources(stack, "AWS::Lambda::Function")
    ((function,),) = [list(function_role.values())]
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    assert "kms:Decrypt" in kms_actions_of(stack, role_id, logical_id(key))
    producer_actions = kms_actions_of(stack, logical_id(producer), logical_id(key))
    assert {"kms:Encrypt", "kms:GenerateDataKey*", "kms:Decrypt"} <= producer_actions


def test_the_key_policy_stays_the_accounts_own(encrypted: Any):
    # grants go to the roles' policies; the key policy only delegates to the account (IAM)
    stack = encrypted[0]
    (key_resource,) = resources(stack, "AWS::KMS::Key").values()
    statements = key_resource["Properties"]["KeyPolicy"]["Statement"]
    assert len(statements) == 1
    assert statements[0]["Action"] == "kms:*"
    assert "root" in json.dumps(statements[0]["Principal"])


def test_the_alarms_do_not_change_with_a_key(encrypted: Any):
    stack, consumer, _, _ = encrypted
    plain_stack = make_stack("Plain")
    plain = SafeQueueConsumer(
        plain_stack,
        "C",
        function=make_function(plain_stack, "Fn", S(60)),
        alarm_topic=sns.Topic(plain_stack, "Alarms"),
    )
    with_key = Template.from_stack(stack).to_json()["Resources"]
    without = Template.from_stack(plain_stack).to_json()["Resources"]
    for mine, theirs in zip(consumer.alarms, plain.alarms, strict=True):
        # the same but for the stack's name in the description
        mine_props = dict(with_key[logical_id(mine)]["Properties"])
        theirs_props = dict(without[logical_id(theirs)]["Properties"])
        assert mine_props.pop("AlarmDescription").replace("Encrypted/", "") == theirs_props.pop(
            "AlarmDescription"
        ).replace("Plain/", "")
        assert mine_props == theirs_props


# --- names ---------------------------------------------------------------------------------------


def test_fifo_queues_at_any_depth_get_valid_names():
    # GIVEN a FIFO consumer under a long stack name and eight nested constructs
    app = cdk.App()
    stack = cdk.Stack(app, "AnInvoiceRenderingStackWithAVeryLongNameIndeed")
    scope: Construct = stack
    for level in range(8):
        scope = Construct(scope, f"DeeplyNestedOrganisationalUnit{level}")
    consumer = SafeQueueConsumer(scope, "RenderInvoices", function=make_function(stack), fifo=True)
    names = [q["Properties"]["QueueName"] for q in resources(stack, "AWS::SQS::Queue").values()]
    # THEN both names are valid SQS FIFO names, and distinct
    assert len(set(names)) == 2
    for name in names:
        assert len(name) <= 80
        assert name.endswith(".fifo")
        assert name.removesuffix(".fifo").replace("-", "").replace("_", "").isalnum()
    assert consumer.node.path.count("/") == 9


def test_standard_queues_without_names_are_named_by_cloudformation():
    stack = make_stack()
    SafeQueueConsumer(stack, "C", function=make_function(stack))
    for queue in resources(stack, "AWS::SQS::Queue").values():
        assert "QueueName" not in queue["Properties"]


def test_given_names_are_used():
    stack = make_stack()
    SafeQueueConsumer(
        stack,
        "C",
        function=make_function(stack),
        fifo=True,
        queue_name="orders",
        dead_letter_queue_name="orders-failed.fifo",
    )
    names = {q["Properties"]["QueueName"] for q in resources(stack, "AWS::SQS::Queue").values()}
    assert names == {"orders.fifo", "orders-failed.fifo"}


# --- reserved concurrency ------------------------------------------------------------------------


def with_reserved(reserved: int | None, **props: Any) -> tuple[cdk.Stack, SafeQueueConsumer]:
    stack = make_stack()
    function = lambda_.Function(
        stack,
        "Fn",
        runtime=lambda_.Runtime.PYTHON_3_13,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
        timeout=S(60),
        reserved_concurrent_executions=reserved,
    )
    return stack, SafeQueueConsumer(stack, "C", function=function, **props)


def scaling(stack: cdk.Stack) -> Any:
    (mapping,) = resources(stack, "AWS::Lambda::EventSourceMapping").values()
    return mapping["Properties"].get("ScalingConfig")


@pytest.mark.parametrize("reserved", [2, 20, 1000])
def test_max_concurrency_is_the_reserved_concurrency(reserved: int):
    stack, consumer = with_reserved(reserved)
    assert consumer.max_concurrency == reserved
    assert consumer.max_concurrency_from_reserved_concurrency
    assert scaling(stack) == {"MaximumConcurrency": reserved}
    assert warnings(stack) == []


@pytest.mark.parametrize("reserved", [0, 1, 1001])
def test_a_reserved_concurrency_outside_2_to_1000_warns(reserved: int):
    stack, consumer = with_reserved(reserved)
    assert consumer.max_concurrency is None
    assert scaling(stack) is None
    (warning,) = warnings(stack)
    assert f"ReservedConcurrentExecutions {reserved}" in warning
    assert warning.endswith("[ack: safe-queue:reserved-concurrency-without-max-concurrency]")
    assert "props: max_concurrency" in warning


def test_max_concurrency_above_the_reserved_concurrency_warns():
    stack, consumer = with_reserved(20, max_concurrency=21)
    assert consumer.max_concurrency == 21
    assert not consumer.max_concurrency_from_reserved_concurrency
    (warning,) = warnings(stack)
    assert (
        "MaximumConcurrency 21 is above the function's ReservedConcurrentExecutions 20" in warning
    )
    assert warning.endswith("[ack: safe-queue:max-concurrency-above-reserved-concurrency]")


def test_max_concurrency_at_the_reserved_concurrency_is_quiet():
    stack, _ = with_reserved(20, max_concurrency=20)
    assert scaling(stack) == {"MaximumConcurrency": 20}
    assert warnings(stack) == []


def test_no_reserved_concurrency_no_limit():
    stack, consumer = with_reserved(None)
    assert consumer.max_concurrency is None
    assert scaling(stack) is None


def test_an_imported_functions_reserved_concurrency_is_reported_unchecked():
    stack = make_stack()
    imported = lambda_.Function.from_function_arn(
        stack, "Fn", "arn:aws:lambda:eu-west-1:123456789012:function:render"
    )
    SafeQueueConsumer(stack, "C", function=imported, function_timeout=S(60))
    assert warnings(stack) == []
    (info,) = infos(stack)
    assert "ReservedConcurrentExecutions is not known" in info
    assert "safe-queue:unchecked" in info
    # the reported ids (metadata) list warnings only, not infos
    for q in resources(stack, "AWS::SQS::Queue").values():
        assert "safe-queue:reported" not in q.get("Metadata", {})


# --- filters -------------------------------------------------------------------------------------


def test_filters_reach_the_mapping_with_a_warning_that_can_be_acknowledged():
    stack = make_stack()
    consumer = SafeQueueConsumer(
        stack,
        "C",
        function=make_function(stack),
        filters=[
            lambda_.FilterCriteria.filter(
                {"body": {"kind": lambda_.FilterRule.is_equal("invoice")}}
            )
        ],
    )
    (mapping,) = resources(stack, "AWS::Lambda::EventSourceMapping").values()
    (criterion,) = mapping["Properties"]["FilterCriteria"]["Filters"]
    assert json.loads(criterion["Pattern"]) == {"body": {"kind": ["invoice"]}}
    (warning,) = warnings(stack)
    assert "deletes every message that matches no filter" in warning
    assert warning.endswith("[ack: safe-queue:filter-deletes-unmatched]")
    queue = resources(stack, "AWS::SQS::Queue")[logical_id(consumer.queue)]
    assert queue["Metadata"]["safe-queue:reported"] == ["safe-queue:filter-deletes-unmatched"]
    cdk.Annotations.of(consumer).acknowledge_warning(
        "safe-queue:filter-deletes-unmatched", "only invoices are sent to this queue"
    )
    assert warnings(stack) == []


def test_no_filters_no_warning():
    stack = make_stack()
    SafeQueueConsumer(stack, "C", function=make_function(stack), filters=[])
    (mapping,) = resources(stack, "AWS::Lambda::EventSourceMapping").values()
    assert "FilterCriteria" not in mapping["Properties"]
    assert warnings(stack) == []


# --- redelivery alarm ----------------------------------------------------------------------------


def test_the_redelivery_alarm_is_received_minus_deleted_as_a_share_of_received():
    stack = make_stack()
    topic = sns.Topic(stack, "Alarms")
    consumer = SafeQueueConsumer(stack, "C", function=make_function(stack), alarm_topic=topic)
    alarm = resources(stack, "AWS::CloudWatch::Alarm")[logical_id(consumer.redelivery_alarm)]
    props = alarm["Properties"]
    # THEN: >= 10 % in 3 of 3 periods, periods with < 10 receives count as 0, no data is fine
    assert props["Threshold"] == 10
    assert props["EvaluationPeriods"] == 3
    assert props["DatapointsToAlarm"] == 3
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert props["TreatMissingData"] == "notBreaching"
    assert props["AlarmActions"] == [{"Ref": logical_id(topic)}]
    queries = {q["Id"]: q for q in props["Metrics"]}
    assert queries["expr_1"]["Expression"] == (
        "IF(received >= 10, 100 * (received - deleted) / received, 0)"
    )
    assert queries["expr_1"]["ReturnData"] is True
    queue_name = {"Fn::GetAtt": [logical_id(consumer.queue), "QueueName"]}
    for query_id, metric_name in (
        ("received", "NumberOfMessagesReceived"),
        ("deleted", "NumberOfMessagesDeleted"),
    ):
        stat = queries[query_id]["MetricStat"]
        assert queries[query_id]["ReturnData"] is False
        assert stat["Metric"]["MetricName"] == metric_name
        assert stat["Metric"]["Namespace"] == "AWS/SQS"
        assert stat["Metric"]["Dimensions"] == [{"Name": "QueueName", "Value": queue_name}]
        assert stat["Stat"] == "Sum"
        assert stat["Period"] == 300


# --- SAFE_QUEUE_VISIBILITY_TIMEOUT ---------------------------------------------------------------


def variables(stack: cdk.Stack) -> dict[str, Any]:
    (function,) = resources(stack, "AWS::Lambda::Function").values()
    found: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return found


def test_the_function_gets_the_visibility_timeout_in_whole_seconds():
    stack = make_stack()
    SafeQueueConsumer(
        stack, "C", function=make_function(stack, "Fn", S(180)), max_batching_window=S(2)
    )
    assert VISIBILITY_TIMEOUT_ENV == "SAFE_QUEUE_VISIBILITY_TIMEOUT"
    assert variables(stack) == {VISIBILITY_TIMEOUT_ENV: "1082"}


def test_a_function_consuming_two_queues_keeps_the_first_value_and_says_so():
    stack = make_stack()
    function = make_function(stack, "Fn", S(60))
    SafeQueueConsumer(stack, "First", function=function)
    SafeQueueConsumer(stack, "Same", function=function)  # same value: nothing to say
    SafeQueueConsumer(stack, "Other", function=function, visibility_timeout=S(400))
    assert variables(stack) == {VISIBILITY_TIMEOUT_ENV: "360"}
    (info,) = infos(stack)
    assert "also consumes Test/First, whose visibility timeout 360 s" in info
    assert "this queue's is 400 s" in info
    assert "Fix: " in info


def test_every_consumer_of_a_shared_function_is_checked_for_drift_at_synth():
    # GIVEN two consumers of one function (one record of checks under it), whose timeout
    # an escape hatch raises after both derived their queues from 60 s
    stack = make_stack()
    function = make_function(stack, "Fn", S(60))
    SafeQueueConsumer(stack, "First", function=function)
    SafeQueueConsumer(stack, "Second", function=function)
    cfn_function = function.node.default_child
    assert isinstance(cfn_function, lambda_.CfnFunction)
    cfn_function.timeout = 600
    # WHEN synthesized  THEN both consumers fail it, each named
    app = stack.node.root
    assert isinstance(app, cdk.App)
    with pytest.raises(RuntimeError) as raised:
        app.synth()
    message = str(raised.value)
    assert "SafeQueueConsumer Test/First, function Test/Fn/Resource" in message
    assert "SafeQueueConsumer Test/Second, function Test/Fn/Resource" in message
    assert message.count("safe-queue:function-timeout-changed") == 2


def test_a_function_child_that_takes_the_record_id_is_reported_not_overwritten():
    # GIVEN a function with a child of its own under the id the consumer uses
    stack = make_stack()
    function = make_function(stack, "Fn", S(60))
    Construct(function, "SafeQueueVisibilityTimeout")
    # WHEN a consumer is made on it  THEN CDK's duplicate-id error is raised as it is
    with pytest.raises(RuntimeError, match="SafeQueueVisibilityTimeout"):
        SafeQueueConsumer(stack, "First", function=function)


# --- dashboard -----------------------------------------------------------------------------------


def test_dashboard_widgets_show_the_consumers_metrics_and_thresholds():
    stack = make_stack()
    consumer = SafeQueueConsumer(stack, "C", function=make_function(stack, "Fn", S(60)))
    SafeQueueDashboard(stack, "Board", consumers=[consumer], dashboard_name="queues")
    (dashboard,) = resources(stack, "AWS::CloudWatch::Dashboard").values()
    assert dashboard["Properties"]["DashboardName"] == "queues"
    body = json.loads(
        "".join(
            part if isinstance(part, str) else "TOKEN"
            for part in dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
        )
    )
    widgets = body["widgets"]
    titles = [w["properties"].get("title") for w in widgets[1:]]
    assert titles == [
        "Queue depth",
        "Age of the oldest message (s)",
        "Received vs deleted",
        "Dead-letter queue depth",
        "Function errors and throttles",
        "Function duration (ms)",
    ]
    by_title = {w["properties"]["title"]: w["properties"] for w in widgets[1:]}

    def metric_names(title: str) -> list[str]:
        return [m[1] for m in by_title[title]["metrics"] if len(m) > 1 and isinstance(m[1], str)]

    assert metric_names("Queue depth") == [
        "ApproximateNumberOfMessagesVisible",
        "ApproximateNumberOfMessagesNotVisible",
    ]
    assert metric_names("Age of the oldest message (s)") == ["ApproximateAgeOfOldestMessage"]
    assert metric_names("Received vs deleted")[:2] == [
        "NumberOfMessagesReceived",
        "NumberOfMessagesDeleted",
    ]
    assert metric_names("Dead-letter queue depth") == ["ApproximateNumberOfMessagesVisible"]
    assert metric_names("Function errors and throttles") == ["Errors", "Throttles"]
    assert metric_names("Function duration (ms)") == ["Duration", "Duration"]
    # the alarm thresholds and the timeout are drawn as lines
    line = lambda title: by_title[title]["annotations"]["horizontal"][0]["value"]  # noqa: E731
    assert line("Age of the oldest message (s)") == consumer.max_message_age.to_seconds()
    assert line("Dead-letter queue depth") == 1
    assert line("Function duration (ms)") == 60_000
    assert line("Received vs deleted") == 10


def test_a_dashboard_needs_consumers():
    stack = make_stack()
    for consumers in ([], "C", [object()]):
        with pytest.raises(SafeQueueConfigError, match=r"consumers is .*Fix: consumers="):
            SafeQueueDashboard(stack, "Board", consumers=consumers)  # type: ignore[arg-type]
