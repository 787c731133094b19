"""Every refusal of SafeQueueConsumer at its boundary: the last accepted and the first refused.

Refusals are ``SafeQueueConfigError`` (a ``ValueError``) raised at construction, with a
message naming the setting, the value and the allowed range or the fix.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_

from safe_queue import SafeQueueConfigError, SafeQueueConsumer, derive_visibility_timeout

from .conftest import make_function, make_stack

S = cdk.Duration.seconds
DAY = 86_400
IMPORTED_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:render"


def build(own_timeout: int | None = 60, /, **props: Any) -> SafeQueueConsumer:
    """A consumer in a fresh stack; `own_timeout=None` gives an imported function."""
    stack = make_stack()
    if own_timeout is None:
        function: lambda_.IFunction = lambda_.Function.from_function_arn(stack, "Fn", IMPORTED_ARN)
    else:
        function = make_function(stack, "Fn", S(own_timeout))
    return SafeQueueConsumer(stack, "Consumer", function=function, **props)


def refused(own_timeout: int | None = 60, /, **props: Any) -> str:
    with pytest.raises(SafeQueueConfigError) as raised:
        build(own_timeout, **props)
    assert isinstance(raised.value, ValueError)
    message = str(raised.value)
    assert message.startswith("SafeQueueConsumer Test/Consumer: ")
    return message


# (case id, function timeout or None for imported, accepted props, refused props, message parts)
BOUNDARIES = [
    (
        "function_timeout min",
        None,
        {"function_timeout": S(1)},
        {"function_timeout": S(0)},
        ["The function's Timeout is 0 s", "1..900 s", "[safe-queue:function-timeout-out-of-range]"],
    ),
    (
        "function_timeout max",
        None,
        {"function_timeout": S(900)},
        {"function_timeout": S(901)},
        ["The function's Timeout is 901 s", "1..900 s", "props: the function's timeout"],
    ),
    (
        "batch_size min",
        60,
        {"batch_size": 1},
        {"batch_size": 0},
        ["BatchSize is 0", "1..10000", "props: batch_size", "[safe-queue:batch-size-out-of-range]"],
    ),
    (
        "batch_size max without window",
        60,
        {"batch_size": 10},
        {"batch_size": 11},
        [
            "BatchSize is 11 without a MaximumBatchingWindowInSeconds",
            "at most 10",
            "props: batch_size, max_batching_window",
        ],
    ),
    (
        "batch_size max with window",
        60,
        {"batch_size": 10_000, "max_batching_window": S(1)},
        {"batch_size": 10_001, "max_batching_window": S(1)},
        ["BatchSize is 10001", "1..10000"],
    ),
    (
        "batch_size max on FIFO",
        60,
        {"batch_size": 10, "fifo": True},
        {"batch_size": 11, "fifo": True},
        ["BatchSize is 11", "1..10 on a FIFO queue"],
    ),
    (
        "max_batching_window max",
        60,
        {"max_batching_window": S(300)},
        {"max_batching_window": S(301)},
        ["MaximumBatchingWindowInSeconds is 301 s", "0..300 s", "props: max_batching_window"],
    ),
    (
        "max_batching_window on FIFO",
        60,
        {"fifo": True, "max_batching_window": S(0)},
        {"fifo": True, "max_batching_window": S(1)},
        [
            "MaximumBatchingWindowInSeconds is 1 s on a FIFO queue",
            "props: max_batching_window",
            "[safe-queue:batching-window-on-fifo]",
        ],
    ),
    (
        "max_concurrency min",
        60,
        {"max_concurrency": 2},
        {"max_concurrency": 1},
        ["MaximumConcurrency is 1", "2..1000", "props: max_concurrency"],
    ),
    (
        "max_concurrency max",
        60,
        {"max_concurrency": 1000},
        {"max_concurrency": 1001},
        ["MaximumConcurrency is 1001", "2..1000", "props: max_concurrency"],
    ),
    (
        "max_receive_count min",
        1,
        {"max_receive_count": 1},
        {"max_receive_count": 0},
        ["maxReceiveCount is 0", "1..1000", "props: max_receive_count"],
    ),
    (
        "max_receive_count max",
        1,
        {"max_receive_count": 1000},
        {"max_receive_count": 1001},
        ["maxReceiveCount is 1001", "1..1000", "props: max_receive_count"],
    ),
    (
        "retention_period min",
        1,
        {"retention_period": S(60)},
        {"retention_period": S(59)},
        ["Queue MessageRetentionPeriod is 59 s", "60..1209600 s", "props: retention_period"],
    ),
    (
        "retention_period max (FIFO: DLQ rule does not apply)",
        60,
        {"retention_period": S(14 * DAY), "fifo": True},
        {"retention_period": S(14 * DAY + 1), "fifo": True},
        ["Queue MessageRetentionPeriod is 1209601 s", "60..1209600 s"],
    ),
    (
        "dead_letter_retention_period min (FIFO)",
        1,
        {"dead_letter_retention_period": S(60), "fifo": True},
        {"dead_letter_retention_period": S(59), "fifo": True},
        [
            "Dead-letter queue MessageRetentionPeriod is 59 s",
            "60..1209600 s",
            "props: retention_period, dead_letter_retention_period",
        ],
    ),
    (
        "dead_letter_retention_period max",
        60,
        {"dead_letter_retention_period": S(14 * DAY)},
        {"dead_letter_retention_period": S(14 * DAY + 1)},
        ["Dead-letter queue MessageRetentionPeriod is 1209601 s", "60..1209600 s"],
    ),
    (
        "dead-letter retention longer than source (standard)",
        60,
        # equal is accepted with a warning (test_consumer_warnings); shorter is refused
        {"retention_period": S(4 * DAY), "dead_letter_retention_period": S(4 * DAY)},
        {"retention_period": S(4 * DAY), "dead_letter_retention_period": S(4 * DAY - 1)},
        [
            "MessageRetentionPeriod 345599 s is shorter than the source queue's 345600 s",
            "props: dead_letter_retention_period, retention_period",
            "safe-queue:dead-letter-retention-too-short",
        ],
    ),
    (
        "retention covers max_time_to_dead_letter",
        180,
        {"max_batching_window": S(2), "retention_period": S(5410)},
        {"max_batching_window": S(2), "retention_period": S(5409)},
        [
            "MessageRetentionPeriod 5409 s",
            "maxReceiveCount 5 x VisibilityTimeout 1082 s = 5410 s",
            "props: retention_period, max_receive_count",
        ],
    ),
    (
        "visibility_timeout not below the function timeout",
        180,
        {"visibility_timeout": S(180)},
        {"visibility_timeout": S(179)},
        [
            "VisibilityTimeout 179 s is below the function Timeout 180 s",
            "1080 s",
            "props: visibility_timeout (omit it to derive it)",
        ],
    ),
    (
        "visibility_timeout max 12 h",
        60,
        {"visibility_timeout": S(43_200), "retention_period": S(5 * DAY)},
        {"visibility_timeout": S(43_201), "retention_period": S(5 * DAY)},
        ["VisibilityTimeout is 43201 s", "0..43200 s", "props: visibility_timeout"],
    ),
    (
        "max_message_age below retention",
        1,
        {"retention_period": S(3600), "max_message_age": S(3599)},
        {"retention_period": S(3600), "max_message_age": S(3600)},
        ["max_message_age is 3600 s", "1..3599 s", "below retention_period"],
    ),
    (
        "max_message_age min",
        60,
        {"max_message_age": S(1)},
        {"max_message_age": S(0)},
        ["max_message_age is 0 s"],
    ),
    (
        "content_based_deduplication needs FIFO",
        60,
        {"content_based_deduplication": True, "fifo": True},
        {"content_based_deduplication": True},
        [
            "standard queue with ContentBasedDeduplication true",
            "props: content_based_deduplication",
            "make the queue FIFO",
        ],
    ),
]


@pytest.mark.parametrize(
    ("own_timeout", "accepted", "rejected", "parts"),
    [pytest.param(*case[1:], id=case[0]) for case in BOUNDARIES],
)
def test_boundary(
    own_timeout: int | None,
    accepted: dict[str, Any],
    rejected: dict[str, Any],
    parts: list[str],
):
    # GIVEN the last accepted value  THEN a consumer is built
    assert isinstance(build(own_timeout, **accepted), SafeQueueConsumer)
    # WHEN the first refused value is given  THEN the error names setting, value and range
    message = refused(own_timeout, **rejected)
    for part in parts:
        assert part in message


def test_imported_function_without_function_timeout_is_refused():
    message = refused(None)
    assert "function_timeout is required" in message
    assert "imported" in message
    assert "Duration.seconds(N)" in message


def test_function_timeout_disagreeing_with_the_function_is_refused():
    assert build(180, function_timeout=S(180)).function_timeout.to_seconds() == 180
    message = refused(180, function_timeout=S(181))
    assert "function_timeout is 181 s" in message
    assert "timeout of 180 s" in message
    assert "omit function_timeout" in message


def test_function_without_timeout_disagrees_with_anything_but_lambdas_default():
    stack = make_stack()
    function = make_function(stack, "Fn", timeout=None)
    consumer = SafeQueueConsumer(stack, "Default", function=function, function_timeout=S(3))
    assert consumer.function_timeout.to_seconds() == 3
    with pytest.raises(SafeQueueConfigError, match="timeout of 3 s"):
        SafeQueueConsumer(stack, "Consumer", function=function, function_timeout=S(60))


def test_timeout_is_read_through_an_alias_and_a_version():
    stack = make_stack()
    function = make_function(stack, "Fn", S(120))
    alias = lambda_.Alias(stack, "Live", alias_name="live", version=function.current_version)
    assert SafeQueueConsumer(stack, "ViaAlias", function=alias).function_timeout.to_seconds() == 120
    via_version = SafeQueueConsumer(stack, "ViaVersion", function=function.current_version)
    assert via_version.visibility_timeout.to_seconds() == 720


@pytest.mark.parametrize(
    "props",
    [
        {"visibility_timeout": "token"},
        {"retention_period": "token"},
        {"max_batching_window": "token"},
        {"batch_size": "token-number"},
        {"max_receive_count": "token-number"},
    ],
)
def test_unresolved_tokens_are_refused_not_computed_with(props: dict[str, str]):
    stack = make_stack()
    parameter = cdk.CfnParameter(stack, "P", type="Number").value_as_number
    values = {key: S(parameter) if kind == "token" else parameter for key, kind in props.items()}
    (setting,) = props
    with pytest.raises(SafeQueueConfigError) as raised:
        SafeQueueConsumer(stack, "Consumer", function=make_function(stack, "Fn", S(60)), **values)
    assert f"{setting} is an unresolved token" in str(raised.value)


def test_a_function_timeout_from_a_token_is_refused():
    stack = make_stack()
    parameter = cdk.CfnParameter(stack, "Timeout", type="Number").value_as_number
    function = make_function(stack, "Fn", S(parameter))
    with pytest.raises(SafeQueueConfigError, match="function timeout is an unresolved token"):
        SafeQueueConsumer(stack, "Consumer", function=function)


def test_fractional_seconds_are_refused():
    message = refused(60, visibility_timeout=cdk.Duration.millis(400_500))
    assert "visibility_timeout is 400.5 s" in message
    assert "whole seconds" in message


def test_a_refused_consumer_leaves_nothing_in_the_tree():
    stack = make_stack()
    function = make_function(stack, "Fn", S(60))
    with pytest.raises(SafeQueueConfigError):
        SafeQueueConsumer(stack, "Consumer", function=function, batch_size=0)
    assert stack.node.try_find_child("Consumer") is None
    # and the id can be used again
    assert SafeQueueConsumer(stack, "Consumer", function=function).node.id == "Consumer"


@pytest.mark.parametrize(
    ("timeout", "window", "message"),
    [
        (S(0), None, "The function's Timeout is 0 s"),
        (S(901), None, "The function's Timeout is 901 s"),
        (S(60), S(301), "MaximumBatchingWindowInSeconds is 301 s"),
    ],
)
def test_derive_visibility_timeout_refuses_out_of_range_inputs(
    timeout: cdk.Duration, window: cdk.Duration | None, message: str
):
    with pytest.raises(SafeQueueConfigError, match=message):
        derive_visibility_timeout(timeout, window)


def test_derive_visibility_timeout_extremes_stay_under_the_12_hour_cap():
    assert derive_visibility_timeout(S(1)).to_seconds() == 6
    assert derive_visibility_timeout(S(900), S(300)).to_seconds() == 5700


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"batch_size": 5.5}, "batch_size is 5.5; it must be a whole number"),
        ({"batch_size": True}, "batch_size is True (a bool); expected a whole number (an int)"),
        (
            {"max_receive_count": "5"},
            "max_receive_count is '5' (a str); expected a whole number (an int)."
            " Fix: max_receive_count=5.",
        ),
    ],
)
def test_counts_must_be_whole_numbers(props: dict[str, Any], message: str):
    assert message in refused(60, **props)


def test_a_whole_float_count_is_accepted_as_an_int():
    mapping = build(60, batch_size=5.0).event_source_mapping.node.default_child
    assert isinstance(mapping, lambda_.CfnEventSourceMapping)
    assert mapping.batch_size == 5


# --- Types: every prop's type is checked before the construct joins the tree ---------------

WRONG_TYPES = [
    # (prop, wrong value, parts of the message)
    (
        "max_batching_window",
        5,
        [
            "max_batching_window is 5 (an int)",
            "expected a Duration",
            "Fix: max_batching_window=Duration.seconds(5).",
        ],
    ),
    (
        "visibility_timeout",
        60,
        ["visibility_timeout is 60 (an int)", "Fix: visibility_timeout=Duration.seconds(60)."],
    ),
    (
        "function_timeout",
        180,
        ["function_timeout is 180 (an int)", "Fix: function_timeout=Duration.seconds(180)."],
    ),
    ("retention_period", "4 days", ["retention_period is '4 days' (a str)", "Duration.seconds(N)"]),
    ("dead_letter_retention_period", 1.5, ["dead_letter_retention_period is 1.5 (a float)"]),
    ("max_message_age", 600, ["max_message_age is 600 (an int)"]),
    (
        "batch_size",
        "5",
        ["batch_size is '5' (a str)", "expected a whole number (an int)", "Fix: batch_size=5."],
    ),
    ("max_concurrency", "ten", ["max_concurrency is 'ten' (a str)"]),
    (
        "max_receive_count",
        2.5,
        ["max_receive_count is 2.5; it must be a whole number", "Fix: max_receive_count=3."],
    ),
    ("fifo", "yes", ["fifo is 'yes' (a str)", "expected a bool", "Fix: fifo=True or fifo=False."]),
    (
        "report_batch_item_failures",
        1,
        ["report_batch_item_failures is 1 (an int)", "expected a bool"],
    ),
    (
        "content_based_deduplication",
        None,
        ["content_based_deduplication is None", "expected a bool"],
    ),
    ("idempotency", "true", ["idempotency is 'true' (a str)"]),
    (
        "alarm_topic",
        "alarms",
        [
            "alarm_topic is 'alarms' (a str)",
            "expected an aws_sns.ITopic",
            'Fix: alarm_topic=sns.Topic(self, "Alarms")',
        ],
    ),
    (
        "encryption_key",
        "alias/queues",
        ["encryption_key is 'alias/queues' (a str)", "expected an aws_kms.IKey"],
    ),
    (
        "removal_policy",
        "RETAIN",
        ["removal_policy is 'RETAIN' (a str)", "RemovalPolicy.RETAIN, DESTROY"],
    ),
    (
        "removal_policy",
        cdk.RemovalPolicy.SNAPSHOT,
        ["removal_policy is <RemovalPolicy.SNAPSHOT", "no snapshots"],
    ),
    ("queue_name", 42, ["queue_name is 42 (an int)", "expected a str"]),
    (
        "filters",
        {"body": {}},
        ["filters is {'body': {}} (a dict)", "expected a list of filter criteria"],
    ),
]


@pytest.mark.parametrize(
    ("prop", "value", "parts"), [pytest.param(*c, id=f"{c[0]}={c[1]!r}") for c in WRONG_TYPES]
)
def test_a_wrong_type_is_refused_naming_setting_type_and_fix(
    prop: str, value: Any, parts: list[str]
):
    # GIVEN a prop of the wrong type  WHEN the consumer is built
    stack = make_stack()
    function = make_function(stack, "Fn", S(180))
    with pytest.raises(SafeQueueConfigError) as raised:
        SafeQueueConsumer(stack, "Consumer", function=function, **{prop: value})
    message = str(raised.value)
    # THEN one clear refusal, never a jsii or attribute error, and nothing joined the tree
    for part in parts:
        assert part in message
    assert "Fix: " in message
    assert stack.node.try_find_child("Consumer") is None


@pytest.mark.parametrize("function", [None, "render", 42])
def test_a_function_that_is_not_an_ifunction_is_refused(function: Any):
    stack = make_stack()
    with pytest.raises(SafeQueueConfigError) as raised:
        SafeQueueConsumer(stack, "Consumer", function=function)
    message = str(raised.value)
    assert message.startswith("SafeQueueConsumer Test/Consumer: function is ")
    assert "expected an aws_lambda.IFunction" in message
    assert "Fix: pass the consuming lambda_.Function" in message
    assert stack.node.try_find_child("Consumer") is None


def test_imported_topic_and_key_are_accepted_as_their_interfaces():
    stack = make_stack()
    topic = cdk.aws_sns.Topic.from_topic_arn(stack, "T", "arn:aws:sns:eu-west-1:123456789012:t")
    key = cdk.aws_kms.Key.from_key_arn(
        stack, "K", "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    )
    consumer = SafeQueueConsumer(
        stack,
        "Consumer",
        function=make_function(stack, "Fn"),
        alarm_topic=topic,
        encryption_key=key,
    )
    assert consumer.queue.encryption_master_key is not None


def test_every_refusal_of_one_consumer_is_reported_together():
    # GIVEN three wrong props at once (a type, a range, a wrong topic)
    stack = make_stack()
    with pytest.raises(SafeQueueConfigError) as raised:
        SafeQueueConsumer(
            stack,
            "Consumer",
            function=make_function(stack, "Fn", S(60)),
            max_batching_window=5,
            batch_size=0,
            alarm_topic="alarms",
        )
    # THEN one error lists all three, one line each, each with its fix
    lines = str(raised.value).splitlines()
    assert lines[0] == "SafeQueueConsumer Test/Consumer: 3 settings refused:"
    assert len(lines) == 4
    assert all(line.startswith("  - ") and "Fix: " in line for line in lines[1:])
    assert {line.split(" is ")[0][4:] for line in lines[1:]} == {
        "max_batching_window",
        "BatchSize",  # an AWS limit: the engine's words, with the props to change
        "alarm_topic",
    }


def test_rules_combining_props_run_once_each_prop_is_valid_and_carry_the_rule_id():
    message = refused(180, visibility_timeout=S(179), retention_period=S(60))
    # both engine errors, each ending with its fix hint and rule id
    assert "2 settings refused" in message
    assert "[safe-queue:visibility-below-function-timeout]" in message
    assert "[safe-queue:retention-below-retry-budget]" in message
    for line in message.splitlines()[1:]:
        assert "Fix: " in line
        assert line.endswith("]")


def test_every_refusal_message_ends_with_a_fix():
    # GIVEN one refused value for every boundary case
    for case in BOUNDARIES:
        message = refused(case[1], **case[3])
        for line in message.splitlines()[1:] or [message]:
            # THEN it ends with "Fix: ..." (and the rule id where a rule applies)
            assert "Fix: " in line, line
            assert line.endswith((".", "]")), line


def test_the_error_shows_its_public_path():
    assert SafeQueueConfigError.__module__ == "safe_queue"
    assert repr(SafeQueueConfigError) == "<class 'safe_queue.SafeQueueConfigError'>"
    assert str(SafeQueueConfigError) == "<class 'safe_queue.SafeQueueConfigError'>"


# --- Names -----------------------------------------------------------------------------------

NAME_CASES = [
    # (fifo, given, synthesized or None if refused, message part)
    (False, "orders", "orders", ""),
    (False, "a" * 80, "a" * 80, ""),
    (False, "a" * 81, None, "is 81 characters long"),
    (False, "", None, "it is empty; SQS allows 1..80 letters"),
    (False, "orders.v2", None, "has characters SQS refuses ('.')"),
    (False, "orders queue", None, "has characters SQS refuses (' ')"),
    (False, "orders.fifo", None, "only FIFO queue names end with .fifo"),
    (True, "orders", "orders.fifo", ""),
    (True, "orders.fifo", "orders.fifo", ""),
    (True, "a" * 75, "a" * 75 + ".fifo", ""),
    (True, "a" * 76, None, "it is 81 characters long"),
    (True, "a" * 76 + ".fifo", None, "Fix: use at most 80 characters, .fifo included"),
]


@pytest.mark.parametrize(("fifo", "given", "expected", "part"), NAME_CASES)
def test_queue_names_at_their_boundaries(fifo: bool, given: str, expected: str | None, part: str):
    if expected is None:
        message = refused(60, fifo=fifo, queue_name=given)
        assert part in message
        assert "Fix: " in message
        dead_letter_message = refused(60, fifo=fifo, dead_letter_queue_name=given)
        assert f"The dead-letter queue's QueueName is '{given}" in dead_letter_message
        assert "props: queue_name, dead_letter_queue_name" in dead_letter_message
        return
    consumer = build(60, fifo=fifo, queue_name=given, dead_letter_queue_name="dlq")
    queue = consumer.queue.node.default_child
    assert isinstance(queue, cdk.aws_sqs.CfnQueue)
    assert queue.queue_name == expected


def test_the_two_queues_cannot_share_a_name():
    message = refused(60, queue_name="orders", dead_letter_queue_name="orders")
    assert "dead_letter_queue_name is 'orders', the same as queue_name" in message
