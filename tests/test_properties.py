"""Property tests: any input is refused clearly or yields a template whose invariants hold."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk.assertions import Annotations, Match, Template
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from safe_queue import SafeQueueConfigError, SafeQueueConsumer

from .conftest import make_function, make_stack

DAY = 86_400

props_strategy = st.fixed_dictionaries(
    {
        "function_timeout": st.integers(1, 900),
        "fifo": st.booleans(),
    },
    optional={
        "batch_size": st.integers(1, 10_000) | st.integers(1, 10),
        "max_batching_window": st.integers(0, 300),
        "max_receive_count": st.integers(1, 1000) | st.integers(1, 10),
        "retention_period": st.integers(60, 14 * DAY),
        "dead_letter_retention_period": st.integers(60, 14 * DAY),
        "visibility_timeout": st.integers(0, 43_200),
        "max_message_age": st.integers(1, 14 * DAY),
        "report_batch_item_failures": st.booleans(),
        "max_concurrency": st.integers(1, 1001),
        "reserved_concurrency": st.integers(0, 1001),
    },
)

DURATIONS = {
    "max_batching_window",
    "retention_period",
    "dead_letter_retention_period",
    "visibility_timeout",
    "max_message_age",
}


def by_type(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r["Properties"] for r in by_type_resources(template, kind)]


def by_type_resources(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == kind]


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(props_strategy)
def test_accepted_inputs_synthesize_safe_templates(raw: dict[str, Any]):
    # GIVEN any combination of props within (and around) AWS's limits
    raw = dict(raw)
    stack = make_stack()
    function = make_function(stack, "Fn", cdk.Duration.seconds(raw.pop("function_timeout")))
    reserved = raw.pop("reserved_concurrency", None)
    if reserved is not None:
        function_l1 = function.node.default_child
        assert isinstance(function_l1, cdk.aws_lambda.CfnFunction)
        function_l1.reserved_concurrent_executions = reserved
    props = {k: cdk.Duration.seconds(v) if k in DURATIONS else v for k, v in raw.items()}
    # WHEN a consumer is built
    try:
        consumer = SafeQueueConsumer(stack, "Consumer", function=function, **props)
    except SafeQueueConfigError as error:
        refusal = str(error)
    else:
        refusal = ""
    if refusal:
        # THEN a refusal is a SafeQueueConfigError naming the consumer (never a jsii error)
        assert refusal.startswith("SafeQueueConsumer Test/Consumer: ")
        event("refused")
        return
    event("accepted")
    template = Template.from_stack(stack).to_json()
    (lambda_props,) = by_type(template, "AWS::Lambda::Function")
    (mapping,) = by_type(template, "AWS::Lambda::EventSourceMapping")
    queues = by_type(template, "AWS::SQS::Queue")
    (source,) = [q for q in queues if "RedrivePolicy" in q]
    (dead_letter,) = [q for q in queues if "RedrivePolicy" not in q]
    timeout = lambda_props["Timeout"]
    window = mapping.get("MaximumBatchingWindowInSeconds", 0)
    visibility = source["VisibilityTimeout"]
    retention = source["MessageRetentionPeriod"]
    max_receive_count = source["RedrivePolicy"]["maxReceiveCount"]
    # THEN the invariants hold
    assert timeout <= visibility <= 43_200
    below_guidance = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("safe-queue:visibility-below-guidance")
    )
    if "visibility_timeout" not in raw:
        assert visibility >= 6 * timeout + window
    assert bool(below_guidance) == (visibility < 6 * timeout + window)
    if not raw["fifo"]:
        assert dead_letter["MessageRetentionPeriod"] > retention
    assert retention >= max_receive_count * visibility
    assert consumer.max_time_to_dead_letter.to_seconds() == max_receive_count * visibility
    (age_alarm,) = [
        a
        for a in by_type(template, "AWS::CloudWatch::Alarm")
        if a.get("MetricName") == "ApproximateAgeOfOldestMessage"
    ]
    assert 1 <= age_alarm["Threshold"] < retention
    assert 1 <= mapping["BatchSize"] <= (10 if raw["fifo"] or window == 0 else 10_000)
    # the mapping never takes more than the reserved concurrency lets run, unless told to
    scaling = mapping.get("ScalingConfig", {}).get("MaximumConcurrency")
    if "max_concurrency" in raw:
        assert scaling == raw["max_concurrency"]
    elif reserved is not None and 2 <= reserved <= 1000:
        assert scaling == reserved
    else:
        assert scaling is None
    # the queues survive a stack deletion; the function knows its queue's visibility timeout
    for queue in by_type_resources(template, "AWS::SQS::Queue"):
        assert queue["DeletionPolicy"] == "Retain"
    variables = lambda_props["Environment"]["Variables"]
    assert variables["SAFE_QUEUE_VISIBILITY_TIMEOUT"] == str(visibility)
    assert len(by_type(template, "AWS::CloudWatch::Alarm")) == 3
    if raw["fifo"]:
        assert window == 0
        for queue in queues:
            assert len(queue["QueueName"]) <= 80
            assert queue["QueueName"].endswith(".fifo")
        assert source["FifoQueue"] is True
        assert dead_letter["FifoQueue"] is True


ANYTHING = (
    st.none()
    | st.booleans()
    | st.integers(-5, 100_000)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
    | st.builds(cdk.Duration.seconds, st.integers(0, 100_000))
)
PROPS = [
    "function_timeout",
    "batch_size",
    "max_batching_window",
    "max_concurrency",
    "max_receive_count",
    "retention_period",
    "dead_letter_retention_period",
    "visibility_timeout",
    "report_batch_item_failures",
    "fifo",
    "content_based_deduplication",
    "max_message_age",
    "alarm_topic",
    "idempotency",
    "removal_policy",
    "encryption_key",
    "queue_name",
    "dead_letter_queue_name",
    "filters",
]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.dictionaries(st.sampled_from(PROPS), ANYTHING, max_size=4))
def test_any_value_of_any_type_is_accepted_or_refused_clearly(props: dict[str, Any]):
    # GIVEN values of any type for up to four props
    stack = make_stack()
    function = make_function(stack, "Fn", cdk.Duration.seconds(60))
    # WHEN a consumer is built  THEN it is built, or refused with a SafeQueueConfigError
    # (never a jsii, attribute or type error) and leaves nothing in the tree
    try:
        SafeQueueConsumer(stack, "Consumer", function=function, **props)
    except SafeQueueConfigError as error:
        message = str(error)
        assert message.startswith("SafeQueueConsumer Test/Consumer: ")
        assert "Fix: " in message
        assert stack.node.try_find_child("Consumer") is None
        event("refused")
    else:
        event("accepted")
