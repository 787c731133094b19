"""SafeQueueChecks on real stacks: each rule compliant and failing, cross-stack, escape hatches."""

from __future__ import annotations

import re
import runpy
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Aspects
from aws_cdk import aws_kinesis as kinesis
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Annotations, Match

from example.stack import InvoiceRenderingStack
from safe_queue import SafeQueueChecks, SafeQueueConsumer

from .conftest import ROOT, make_app, make_function

S = cdk.Duration.seconds
DAY = 86_400
ID = re.compile(r"\[(?:ack: )?(safe-queue:[a-z0-9-]+)\]")


def checked_app() -> cdk.App:
    app = make_app()
    Aspects.of(app).add(SafeQueueChecks())
    return app


LEVELS = {"aws:cdk:error": "error", "aws:cdk:warning": "warning", "aws:cdk:info": "info"}


def findings(stack: cdk.Stack) -> dict[str, list[tuple[str, str]]]:
    """{level: [(rule id, message)]} of the safe-queue annotations in `stack`, after synth.

    Read from the construct tree: with cdk.json's flags an error annotation (ours, or
    CDK's own E3505 check) makes the synth raise, as `cdk synth` would fail.
    """
    app = stack.node.root
    assert isinstance(app, cdk.App)
    failure = ""
    try:
        app.synth()
    except RuntimeError as error:
        failure = str(error)
    assert failure == "" or failure.startswith("ValidationFailed"), failure
    found: dict[str, list[tuple[str, str]]] = {}
    for construct in stack.node.find_all():
        for entry in construct.node.metadata:
            match = ID.search(str(entry.data))
            if entry.type in LEVELS and match:
                found.setdefault(LEVELS[entry.type], []).append((match.group(1), str(entry.data)))
    return found


def ids(stack: cdk.Stack) -> set[tuple[str, str]]:
    return {(level, rule) for level, items in findings(stack).items() for rule, _ in items}


def hand_wired(
    queue_stack: cdk.Stack,
    function_stack: cdk.Stack | None = None,
    *,
    function_timeout: int = 180,
    visibility: int | None = 1110,
    retention: int | None = None,
    dead_letter: bool = True,
    max_receive_count: int = 5,
    dead_letter_retention: int = 14 * DAY,
    batch_size: int = 5,
    window: int = 2,
    report: bool = True,
    fifo: bool = False,
) -> lambda_.Function:
    """An SQS -> Lambda pair wired by hand with plain aws-cdk-lib (no SafeQueueConsumer)."""
    fifo_or_none = True if fifo else None
    redrive = None
    if dead_letter:
        dlq = sqs.Queue(
            queue_stack, "Dlq", fifo=fifo_or_none, retention_period=S(dead_letter_retention)
        )
        redrive = sqs.DeadLetterQueue(queue=dlq, max_receive_count=max_receive_count)
    queue = sqs.Queue(
        queue_stack,
        "Work",
        fifo=fifo_or_none,
        visibility_timeout=S(visibility) if visibility is not None else None,
        retention_period=S(retention) if retention is not None else None,
        dead_letter_queue=redrive,
    )
    function = make_function(function_stack or queue_stack, "Worker", S(function_timeout))
    function.add_event_source(
        event_sources.SqsEventSource(
            queue,
            batch_size=batch_size,
            max_batching_window=S(window) if window else None,
            report_batch_item_failures=report,
        )
    )
    return function


def test_seed_incident_configuration_is_an_error():
    # GIVEN the seed's broken pair: timeout 180 s, visibility 60 s, batch 5, window 2 s
    stack = cdk.Stack(checked_app(), "Seed")
    hand_wired(stack, visibility=60, retention=None)
    # WHEN the app is synthesized  THEN one error names both values and the fix
    found = findings(stack)
    assert [rule for rule, _ in found["error"]] == ["safe-queue:visibility-below-function-timeout"]
    (_, message), *_ = found["error"]
    assert "VisibilityTimeout 60 s is below the function Timeout 180 s" in message
    assert "6 x function Timeout 180 s + MaximumBatchingWindowInSeconds 2 s = 1082 s" in message
    assert "warning" not in found  # below the function timeout, the guidance warning is moot


def test_seed_fixed_configuration_passes():
    stack = cdk.Stack(checked_app(), "Fixed")
    hand_wired(stack, visibility=1110)
    assert findings(stack) == {}


RULE_CASES = [
    # (case, hand_wired kwargs, expected findings)
    ("guidance: 1 s short", {"visibility": 1081}, {("warning", "safe-queue:visibility-below-guidance")}),
    ("guidance: exact", {"visibility": 1082}, set()),
    ("function timeout: 1 s short", {"visibility": 179}, {("error", "safe-queue:visibility-below-function-timeout")}),
    ("function timeout: equal", {"visibility": 180, "window": 0}, {("warning", "safe-queue:visibility-below-guidance")}),
    ("no DLQ", {"dead_letter": False}, {("warning", "safe-queue:no-dead-letter-queue")}),
    ("maxReceiveCount 4", {"max_receive_count": 4}, {("warning", "safe-queue:max-receive-count-below-guidance")}),
    ("maxReceiveCount 5", {"max_receive_count": 5}, set()),
    ("DLQ retention equal (standard)", {"retention": 4 * DAY, "dead_letter_retention": 4 * DAY}, {("warning", "safe-queue:dead-letter-retention-too-short")}),
    ("DLQ retention 1 s shorter (standard)", {"retention": 4 * DAY, "dead_letter_retention": 4 * DAY - 1}, {("error", "safe-queue:dead-letter-retention-too-short")}),
    ("DLQ retention 1 s longer", {"retention": 4 * DAY, "dead_letter_retention": 4 * DAY + 1}, set()),
    ("DLQ retention equal (FIFO)", {"fifo": True, "window": 0, "retention": 4 * DAY, "dead_letter_retention": 4 * DAY}, set()),
    ("retention 1 s below budget", {"retention": 5 * 1110 - 1}, {("error", "safe-queue:retention-below-retry-budget")}),
    ("retention equal to budget", {"retention": 5 * 1110}, set()),
    ("batch 2 without partial failures", {"batch_size": 2, "report": False}, {("warning", "safe-queue:no-report-batch-item-failures")}),
    ("batch 1 without partial failures", {"batch_size": 1, "report": False}, set()),
    ("AWS defaults everywhere", {"visibility": None, "function_timeout": 3, "window": 0}, set()),
    ("default visibility 30 s, timeout 6 s", {"visibility": None, "function_timeout": 6, "window": 0}, {("warning", "safe-queue:visibility-below-guidance")}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "expected"), [pytest.param(c[1], c[2], id=c[0]) for c in RULE_CASES]
)
def test_each_rule_on_a_hand_wired_stack(kwargs: dict[str, Any], expected: set[tuple[str, str]]):
    stack = cdk.Stack(checked_app(), "Wired")
    hand_wired(stack, **kwargs)
    assert ids(stack) == expected


def test_queue_in_one_stack_and_function_in_another_is_checked():
    app = checked_app()
    queues, workers = cdk.Stack(app, "Queues"), cdk.Stack(app, "Workers")
    hand_wired(queues, workers, visibility=60)
    assert ids(workers) == {("error", "safe-queue:visibility-below-function-timeout")}
    assert ids(queues) == set()


def test_visibility_changed_through_the_cfn_queue_is_seen():
    stack = cdk.Stack(checked_app(), "Hatch")
    hand_wired(stack, visibility=1110)
    queue = stack.node.find_child("Work").node.default_child
    assert isinstance(queue, sqs.CfnQueue)
    queue.visibility_timeout = 60
    assert ids(stack) == {("error", "safe-queue:visibility-below-function-timeout")}


def test_function_timeout_changed_through_the_cfn_function_is_seen():
    stack = cdk.Stack(checked_app(), "Hatch")
    function = hand_wired(stack, visibility=1110)
    cfn_function = function.node.default_child
    assert isinstance(cfn_function, lambda_.CfnFunction)
    cfn_function.timeout = 900  # raised after the queue was sized for 180 s
    found = findings(stack)
    assert ids(stack) == {("warning", "safe-queue:visibility-below-guidance")}
    assert (
        "function Timeout 900 s + MaximumBatchingWindowInSeconds 2 s = 5402 s"
        in found["warning"][0][1]
    )


def test_l1_only_wiring_is_checked():
    stack = cdk.Stack(checked_app(), "L1")
    queue = sqs.CfnQueue(stack, "Queue", visibility_timeout=60)
    function = lambda_.CfnFunction(
        stack,
        "Fn",
        code=lambda_.CfnFunction.CodeProperty(zip_file="x"),
        role="arn:aws:iam::123456789012:role/r",
        handler="index.handler",
        runtime="python3.13",
        timeout=180,
    )
    lambda_.CfnEventSourceMapping(
        stack, "Mapping", event_source_arn=queue.attr_arn, function_name=function.ref
    )
    # defaults: batch 10 without ReportBatchItemFailures, no DLQ
    assert ids(stack) == {
        ("error", "safe-queue:visibility-below-function-timeout"),
        ("warning", "safe-queue:no-dead-letter-queue"),
        ("warning", "safe-queue:no-report-batch-item-failures"),
    }


def test_mapping_through_an_alias_is_checked():
    stack = cdk.Stack(checked_app(), "Alias")
    queue = sqs.Queue(stack, "Queue", visibility_timeout=S(60))
    function = make_function(stack, "Fn", S(180))
    alias = lambda_.Alias(stack, "Live", alias_name="live", version=function.current_version)
    alias.add_event_source(event_sources.SqsEventSource(queue, batch_size=1))
    assert ("error", "safe-queue:visibility-below-function-timeout") in ids(stack)


def test_unknown_values_get_an_info_not_a_guess():
    stack = cdk.Stack(checked_app(), "Unknown")
    visibility = cdk.CfnParameter(stack, "Visibility", type="Number").value_as_number
    hand_wired(stack, visibility=None)
    queue = stack.node.find_child("Work").node.default_child
    assert isinstance(queue, sqs.CfnQueue)
    queue.visibility_timeout = visibility
    found = findings(stack)
    assert set(found) == {"info"}
    ((rule, message),) = found["info"]
    assert rule == "safe-queue:unchecked"
    assert "queue VisibilityTimeout is an unresolved token" in message
    assert "safe-queue:visibility-below-function-timeout" in message


def test_imported_queue_gets_an_info():
    stack = cdk.Stack(checked_app(), "Imported")
    queue = sqs.Queue.from_queue_arn(stack, "Q", "arn:aws:sqs:eu-west-1:123456789012:jobs")
    make_function(stack, "Fn", S(60)).add_event_source(event_sources.SqsEventSource(queue))
    found = findings(stack)
    # the queue's settings are unknown; the mapping's own (batch 10, no partial failures) are not
    assert ids(stack) == {
        ("info", "safe-queue:unchecked"),
        ("warning", "safe-queue:no-report-batch-item-failures"),
    }
    (_, message), *_ = found["info"]
    assert "arn:aws:sqs:eu-west-1:123456789012:jobs is not defined in this app" in message


def test_imported_function_gets_an_info():
    stack = cdk.Stack(checked_app(), "ImportedFn")
    queue = sqs.Queue(stack, "Q", visibility_timeout=S(60))
    function = lambda_.Function.from_function_arn(
        stack, "Fn", "arn:aws:lambda:eu-west-1:123456789012:function:render"
    )
    function.add_event_source(event_sources.SqsEventSource(queue, batch_size=1))
    assert ("info", "safe-queue:unchecked") in ids(stack)
    assert "function's timeout is unknown" in findings(stack)["info"][0][1]


def test_non_sqs_mappings_are_ignored():
    stack = cdk.Stack(checked_app(), "Stream")
    stream = kinesis.Stream(stack, "Stream")
    make_function(stack, "Fn", S(60)).add_event_source(
        event_sources.KinesisEventSource(stream, starting_position=lambda_.StartingPosition.LATEST)
    )
    assert findings(stack) == {}


def test_a_warning_can_be_acknowledged_on_the_mapping_with_a_reason():
    stack = cdk.Stack(checked_app(), "Ack")
    function = hand_wired(stack, dead_letter=False)
    (mapping,) = [c for c in function.node.children if c.node.id.startswith("SqsEventSource")]
    cdk.Annotations.of(mapping).acknowledge_warning(
        "safe-queue:no-dead-letter-queue", "replays are harmless: the queue is a cache refresh"
    )
    assert findings(stack) == {}


def test_safe_queue_consumer_output_passes_every_rule():
    app = checked_app()
    example = InvoiceRenderingStack(app, "InvoiceRendering")
    shapes = cdk.Stack(app, "Shapes")
    SafeQueueConsumer(shapes, "Fifo", function=make_function(shapes, "FifoFn", S(30)), fifo=True)
    SafeQueueConsumer(
        shapes,
        "Imported",
        function=lambda_.Function.from_function_arn(
            shapes, "ImportedFn", "arn:aws:lambda:eu-west-1:123456789012:function:f"
        ),
        function_timeout=S(900),
    )
    assert findings(example) == {}
    # the imported function's reserved concurrency cannot be read: an info, not a guess
    found = findings(shapes)
    assert [rule for rule, _ in found.pop("info")] == ["safe-queue:unchecked"]
    assert found == {}


def test_consumer_and_checks_give_one_verdict_on_an_overridden_visibility():
    # GIVEN a consumer whose explicit visibility is below the guidance, and the checks
    stack = cdk.Stack(checked_app(), "Override")
    consumer = SafeQueueConsumer(
        stack,
        "Consumer",
        function=make_function(stack, "Fn", S(180)),
        visibility_timeout=S(600),
    )
    # THEN exactly one warning, on the consumer, with the same id from both
    found = findings(stack)
    assert [rule for rule, _ in found["warning"]] == ["safe-queue:visibility-below-guidance"]
    assert set(found) == {"warning"}
    # (the assertions library sees the same: one warning, on the consumer's path)
    warnings = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("visibility-below-guidance")
    )
    assert [w.id for w in warnings] == [f"/{consumer.node.path}"]


def test_consumer_fails_synth_when_its_function_timeout_is_changed_afterwards():
    app = checked_app()
    stack = cdk.Stack(app, "Drift")
    function = make_function(stack, "Fn", S(180))
    SafeQueueConsumer(stack, "Consumer", function=function)
    cfn_function = function.node.default_child
    assert isinstance(cfn_function, lambda_.CfnFunction)
    cfn_function.timeout = 900  # escape hatch after the consumer derived 6 x 180 s
    with pytest.raises(RuntimeError) as raised:
        app.synth()
    message = str(raised.value)
    assert "Timeout is now 900 s" in message
    assert "derived the queue from 180 s" in message
    assert "safe-queue:function-timeout-changed" in message


def test_consumer_queue_visibility_changed_afterwards_is_an_error_on_the_consumer():
    app = checked_app()
    stack = cdk.Stack(app, "Drift")
    consumer = SafeQueueConsumer(stack, "Consumer", function=make_function(stack, "Fn", S(180)))
    queue = consumer.queue.node.default_child
    assert isinstance(queue, sqs.CfnQueue)
    queue.visibility_timeout = 60  # escape hatch after the consumer derived 1080 s
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    errors = [str(e.data) for e in consumer.node.metadata if e.type == "aws:cdk:error"]
    assert len(errors) == 1
    assert "VisibilityTimeout 60 s is below the function Timeout 180 s" in errors[0]
    assert "[safe-queue:visibility-below-function-timeout]" in errors[0]


def test_fifty_mappings_are_all_checked():
    stack = cdk.Stack(checked_app(), "Many")
    for index in range(50):
        queue = sqs.Queue(stack, f"Q{index}", visibility_timeout=S(60))
        function = make_function(stack, f"Fn{index}", S(180))
        function.add_event_source(event_sources.SqsEventSource(queue, batch_size=1))
    errors = findings(stack)["error"]
    assert len(errors) == 50


def test_the_example_app_applies_the_checks_and_passes_them(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(ROOT))
    app = runpy.run_path(str(ROOT / "app.py"), run_name="__main__")["app"]
    assert any(isinstance(aspect, SafeQueueChecks) for aspect in Aspects.of(app).all)
    (stack,) = [c for c in app.node.children if isinstance(c, cdk.Stack)]
    assert findings(stack) == {}


def test_consumer_in_one_stack_with_its_function_in_another_gives_one_verdict():
    # GIVEN the consumer's queues in one stack and its function (so the mapping) in another
    app = checked_app()
    queues, functions = cdk.Stack(app, "Queues"), cdk.Stack(app, "Functions")
    consumer = SafeQueueConsumer(
        queues,
        "Consumer",
        function=make_function(functions, "Fn", S(180)),
        visibility_timeout=S(600),
    )
    # THEN the checks find the mapping's owner across stacks: one warning, on the consumer
    assert findings(functions) == {}
    assert [rule for rule, _ in findings(queues)["warning"]] == [
        "safe-queue:visibility-below-guidance"
    ]
    assert len([m for m in consumer.node.metadata if m.type == "aws:cdk:warning"]) == 1
