"""SafeQueueChecks, the CDK policy-validation plugin, on real apps: every rule, Stages,
overrides, escape hatches, acknowledgements, and one verdict with SafeQueueConsumer."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Acknowledgment, Aspects, Validations
from aws_cdk import aws_kinesis as kinesis
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from aws_cdk import cloudformation_include as include

from example.stack import InvoiceRenderingStack
from safe_queue import SafeQueueChecks, SafeQueueConsumer
from safe_queue.engine import RULES
from safe_queue.template import check_paths

from .conftest import ROOT, make_app, make_function

S = cdk.Duration.seconds
DAY = 86_400


def checked_app(**plugin_props: Any) -> cdk.App:
    app = make_app()
    Validations.of(app).add_plugins(SafeQueueChecks(**plugin_props))
    return app


Found = dict[str, list[tuple[str, str, str]]]


def synth(app: cdk.App) -> tuple[str, Found]:
    """Synthesize ``app``; return (the failure, or ""), {level: [(rule id, message, path)]}.

    The findings are the plugin's unacknowledged violations, read from the
    validation-report.json that ``cdk synth`` writes; the construct path is the violating
    construct's.
    """
    failure = ""
    try:
        app.synth()
    except RuntimeError as error:
        failure = str(error)
    assert failure == "" or failure.startswith("ValidationFailed"), failure
    found: Found = {}
    report_file = Path(app.outdir) / "validation-report.json"
    if report_file.exists():
        for plugin in json.loads(report_file.read_text())["pluginReports"]:
            if plugin["pluginName"] != "SafeQueue":
                continue
            for violation in plugin["violations"]:
                for construct in violation["violatingConstructs"]:
                    # A finding inside a Stage names no construct (so that the CDK CLI keeps
                    # it whatever stacks it selected); its description starts with the path.
                    path = (
                        construct.get("constructPath")
                        or violation["description"][1:].split(" in ", 1)[0]
                    )
                    found.setdefault(violation["severity"], []).append(
                        (violation["ruleName"], violation["description"], path)
                    )
    return failure, found


def findings(app: cdk.App) -> Found:
    return synth(app)[1]


def ids(app: cdk.App) -> set[tuple[str, str]]:
    return {(level, rule) for level, items in findings(app).items() for rule, _, _ in items}


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


def test_seed_incident_configuration_fails_the_synth_with_one_error():
    # GIVEN the seed's broken pair: timeout 180 s, visibility 60 s, batch 5, window 2 s
    app = checked_app()
    hand_wired(cdk.Stack(app, "Seed"), visibility=60)
    # WHEN the app is synthesized
    failure, found = synth(app)
    # THEN the synth fails with one error naming both values and the fix
    assert failure.startswith("ValidationFailed")
    assert [rule for rule, _, _ in found["error"]] == [
        "safe-queue:visibility-below-function-timeout"
    ]
    ((_, message, path),) = found["error"]
    assert "VisibilityTimeout 60 s is below the function Timeout 180 s" in message
    assert "6 x function Timeout 180 s + MaximumBatchingWindowInSeconds 2 s = 1082 s" in message
    assert path.startswith("Seed/Worker/SqsEventSource")  # the hand-wired mapping itself
    assert "warning" not in found  # below the function timeout, the guidance warning is moot


def test_seed_fixed_configuration_passes():
    app = checked_app()
    hand_wired(cdk.Stack(app, "Fixed"), visibility=1110)
    assert synth(app) == ("", {})


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
    app = checked_app()
    hand_wired(cdk.Stack(app, "Wired"), **kwargs)
    assert ids(app) == expected


def concurrency_and_filters(stack: cdk.Stack, name: str, **mapping: Any) -> None:
    """A compliant pair whose function has reserved concurrency 10, with mapping options."""
    dlq = sqs.Queue(stack, f"{name}Dlq", retention_period=S(14 * DAY))
    queue = sqs.Queue(
        stack,
        f"{name}Queue",
        visibility_timeout=S(360),
        dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=5),
    )
    function = make_function(stack, f"{name}Fn", S(60))
    cfn_function = function.node.default_child
    assert isinstance(cfn_function, lambda_.CfnFunction)
    cfn_function.reserved_concurrent_executions = 10
    function.add_event_source(
        event_sources.SqsEventSource(
            queue, batch_size=1, report_batch_item_failures=True, **mapping
        )
    )


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        ({}, {("warning", "safe-queue:reserved-concurrency-without-max-concurrency")}),
        ({"max_concurrency": 10}, set()),
        ({"max_concurrency": 11}, {("warning", "safe-queue:max-concurrency-above-reserved-concurrency")}),
        (
            {"max_concurrency": 10, "filters": [lambda_.FilterCriteria.filter({"body": {"k": ["v"]}})]},
            {("warning", "safe-queue:filter-deletes-unmatched")},
        ),
    ],
)  # fmt: skip
def test_concurrency_and_filter_rules(mapping: dict[str, Any], expected: set[tuple[str, str]]):
    app = checked_app()
    concurrency_and_filters(cdk.Stack(app, "Concurrency"), "C", **mapping)
    assert ids(app) == expected


def prefixed(template: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A template's resources with every logical id (and every Ref/GetAtt to one) prefixed."""
    names = set(template["Resources"])

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"Ref"} and node["Ref"] in names:
                return {"Ref": prefix + node["Ref"]}
            if set(node) == {"Fn::GetAtt"} and node["Fn::GetAtt"][0] in names:
                return {"Fn::GetAtt": [prefix + node["Fn::GetAtt"][0], node["Fn::GetAtt"][1]]}
            return {key: rename(value) for key, value in node.items()}
        if isinstance(node, list):
            return [rename(item) for item in node]
        return node

    return {prefix + name: rename(resource) for name, resource in template["Resources"].items()}


def test_every_rule_of_the_registry_is_reported_by_the_plugin(tmp_path: Path):
    # GIVEN one app with a stack that breaks each rule (one synth for the whole registry)
    app = checked_app()
    stack = cdk.Stack(app, "All")
    hand_wired(stack, visibility=60, retention=239, dead_letter_retention=60, batch_size=2,
               report=False, max_receive_count=4)  # fmt: skip
    concurrency_and_filters(stack, "Reserved")
    concurrency_and_filters(
        stack, "Above", max_concurrency=11,
        filters=[lambda_.FilterCriteria.filter({"body": {"k": ["v"]}})],
    )  # fmt: skip
    no_dlq = sqs.Queue(stack, "NoDlq", visibility_timeout=S(400))
    make_function(stack, "NoDlqFn", S(60)).add_event_source(
        event_sources.SqsEventSource(no_dlq, batch_size=1)
    )
    guidance = sqs.Queue(stack, "Guidance", visibility_timeout=S(200))
    make_function(stack, "GuidanceFn", S(60)).add_event_source(
        event_sources.SqsEventSource(guidance, batch_size=1)
    )
    imported = sqs.Queue.from_queue_arn(stack, "Imported", "arn:aws:sqs:eu-west-1:123456789012:j")
    make_function(stack, "ImportedFn", S(60)).add_event_source(
        event_sources.SqsEventSource(imported, batch_size=1)
    )
    drifted = make_function(stack, "DriftFn", S(60))
    SafeQueueConsumer(stack, "Drift", function=drifted)
    cfn_drifted = drifted.node.default_child
    assert isinstance(cfn_drifted, lambda_.CfnFunction)
    cfn_drifted.add_property_override("Timeout", 120)  # unseen by the construct: the plugin
    shared = make_function(stack, "SharedFn", S(60))
    shared_cfn = shared.node.default_child
    assert isinstance(shared_cfn, lambda_.CfnFunction)
    shared_cfn.reserved_concurrent_executions = 10
    for name in ("SharedA", "SharedB"):  # 6 + 6 > 10 reserved
        shared.add_event_source(
            event_sources.SqsEventSource(
                sqs.Queue(stack, name, visibility_timeout=S(400)), batch_size=1, max_concurrency=6
            )
        )
    # ... and, for AWS's limits, each one's non-compliant example included as L1 resources
    limits = {"Resources": {}}
    for index, entry in enumerate(e for e in RULES if e.kind == "aws-limit"):
        limits["Resources"].update(prefixed(entry.non_compliant.template(), f"L{index}"))
    path = tmp_path / "limits.json"
    path.write_text(json.dumps(limits))
    include.CfnInclude(cdk.Stack(app, "Limits"), "Examples", template_file=str(path))
    # WHEN synthesized  THEN every rule id of the registry is among the findings
    reported = {rule for _, rule in ids(app)}
    assert reported == {entry.id for entry in RULES}


def test_queue_in_one_stack_and_function_in_another_is_checked():
    app = checked_app()
    queues, workers = cdk.Stack(app, "Queues"), cdk.Stack(app, "Workers")
    hand_wired(queues, workers, visibility=60)
    found = findings(app)
    assert [(rule, path.split("/")[0]) for rule, _, path in found["error"]] == [
        ("safe-queue:visibility-below-function-timeout", "Workers")
    ]


def test_an_empty_stack_beside_a_consumer_is_read_as_no_mappings():
    # GIVEN an app with a stack CDK synthesizes without Resources (its bootstrap parameter
    # and rule only), and a broken pair in another stack
    app = checked_app()
    cdk.Stack(app, "Empty")
    hand_wired(cdk.Stack(app, "Service"), visibility=30, function_timeout=60)
    # WHEN synthesized  THEN the plugin judges the app (the broken pair, nothing else)
    failure, found = synth(app)
    assert failure.startswith("ValidationFailed")
    assert [rule for rule, _, _ in found["error"]] == [
        "safe-queue:visibility-below-function-timeout"
    ]
    # AND safe-queue check reads the same cloud assembly, the empty stack included
    report = check_paths([app.outdir])
    assert report.mappings_checked == 1
    assert sorted(Path(t).name for t in report.sources) == [
        "Empty.template.json",
        "Service.template.json",
    ]


def test_mappings_inside_a_stage_are_checked():
    # GIVEN a CDK Pipelines-like app: the broken pair lives in a Stage
    app = checked_app()
    stage = cdk.Stage(app, "Prod")
    hand_wired(cdk.Stack(stage, "Service"), visibility=30, function_timeout=60)
    # WHEN synthesized  THEN the synth fails, naming the construct inside the stage
    failure, found = synth(app)
    assert failure.startswith("ValidationFailed")
    ((rule, _, path),) = found["error"]
    assert rule == "safe-queue:visibility-below-function-timeout"
    assert path.startswith("Prod/Service/")


def test_visibility_changed_through_the_cfn_queue_is_seen():
    app = checked_app()
    stack = cdk.Stack(app, "Hatch")
    hand_wired(stack, visibility=1110)
    queue = stack.node.find_child("Work").node.default_child
    assert isinstance(queue, sqs.CfnQueue)
    queue.visibility_timeout = 60
    assert ids(app) == {("error", "safe-queue:visibility-below-function-timeout")}


def test_values_set_with_add_property_override_are_seen():
    app = checked_app()
    stack = cdk.Stack(app, "Override")
    hand_wired(stack, visibility=1110)
    queue = stack.node.find_child("Work").node.default_child
    assert isinstance(queue, sqs.CfnQueue)
    queue.add_property_override("VisibilityTimeout", 60)
    assert ids(app) == {("error", "safe-queue:visibility-below-function-timeout")}


def test_function_timeout_changed_through_the_cfn_function_is_seen():
    app = checked_app()
    function = hand_wired(cdk.Stack(app, "Hatch"), visibility=1110)
    cfn_function = function.node.default_child
    assert isinstance(cfn_function, lambda_.CfnFunction)
    cfn_function.timeout = 900  # raised after the queue was sized for 180 s
    found = findings(app)
    assert {(level, rule) for level, items in found.items() for rule, _, _ in items} == {
        ("warning", "safe-queue:visibility-below-guidance")
    }
    assert (
        "function Timeout 900 s + MaximumBatchingWindowInSeconds 2 s = 5402 s"
        in (found["warning"][0][1])
    )


def test_l1_only_wiring_is_checked():
    app = checked_app()
    stack = cdk.Stack(app, "L1")
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
    assert ids(app) == {
        ("error", "safe-queue:visibility-below-function-timeout"),
        ("warning", "safe-queue:no-dead-letter-queue"),
        ("warning", "safe-queue:no-report-batch-item-failures"),
    }


def test_mapping_through_an_alias_is_checked():
    app = checked_app()
    stack = cdk.Stack(app, "Alias")
    queue = sqs.Queue(stack, "Queue", visibility_timeout=S(60))
    function = make_function(stack, "Fn", S(180))
    alias = lambda_.Alias(stack, "Live", alias_name="live", version=function.current_version)
    alias.add_event_source(event_sources.SqsEventSource(queue, batch_size=1))
    assert ("error", "safe-queue:visibility-below-function-timeout") in ids(app)


def test_a_parameter_without_a_value_gets_an_info_not_a_guess():
    app = checked_app()
    stack = cdk.Stack(app, "Unknown")
    visibility = cdk.CfnParameter(stack, "Visibility", type="Number").value_as_number
    hand_wired(stack, visibility=None)
    queue = stack.node.find_child("Work").node.default_child
    assert isinstance(queue, sqs.CfnQueue)
    queue.visibility_timeout = visibility
    found = findings(app)
    assert set(found) == {"info"}
    ((rule, message, _),) = found["info"]
    assert rule == "safe-queue:unchecked"
    assert "Visibility" in message
    assert "safe-queue:visibility-below-function-timeout" in message


def test_a_parameter_value_given_to_the_plugin_is_used_and_named():
    app = checked_app(parameters={"Visibility": "60"})
    stack = cdk.Stack(app, "Param")
    visibility = cdk.CfnParameter(stack, "Visibility", type="Number").value_as_number
    hand_wired(stack, visibility=None)
    queue = stack.node.find_child("Work").node.default_child
    assert isinstance(queue, sqs.CfnQueue)
    queue.visibility_timeout = visibility
    found = findings(app)
    assert [rule for rule, _, _ in found["error"]] == [
        "safe-queue:visibility-below-function-timeout"
    ]
    assert "Visibility" in found["error"][0][1]  # says which value it assumed


def test_imported_queue_gets_an_info():
    app = checked_app()
    stack = cdk.Stack(app, "Imported")
    queue = sqs.Queue.from_queue_arn(stack, "Q", "arn:aws:sqs:eu-west-1:123456789012:jobs")
    make_function(stack, "Fn", S(60)).add_event_source(event_sources.SqsEventSource(queue))
    # the queue's settings are unknown; the mapping's own (batch 10, no partial failures) are not
    assert ids(app) == {
        ("info", "safe-queue:unchecked"),
        ("warning", "safe-queue:no-report-batch-item-failures"),
    }


def test_imported_function_gets_an_info():
    app = checked_app()
    stack = cdk.Stack(app, "ImportedFn")
    queue = sqs.Queue(stack, "Q", visibility_timeout=S(60))
    function = lambda_.Function.from_function_arn(
        stack, "Fn", "arn:aws:lambda:eu-west-1:123456789012:function:render"
    )
    function.add_event_source(event_sources.SqsEventSource(queue, batch_size=1))
    assert ("info", "safe-queue:unchecked") in ids(app)


def test_non_sqs_mappings_are_ignored():
    app = checked_app()
    stack = cdk.Stack(app, "Stream")
    stream = kinesis.Stream(stack, "Stream")
    make_function(stack, "Fn", S(60)).add_event_source(
        event_sources.KinesisEventSource(stream, starting_position=lambda_.StartingPosition.LATEST)
    )
    assert synth(app) == ("", {})


def test_a_finding_is_acknowledged_on_the_function_with_a_reason():
    app = checked_app()
    function = hand_wired(cdk.Stack(app, "Ack"), dead_letter=False)
    Validations.of(function).acknowledge(
        Acknowledgment(
            id="SafeQueue::safe-queue:no-dead-letter-queue",
            reason="replays are harmless: the queue is a cache refresh",
        )
    )
    assert synth(app) == ("", {})


def test_an_acknowledged_error_no_longer_fails_the_synth():
    app = checked_app()
    function = hand_wired(
        cdk.Stack(app, "AckError"), retention=4 * DAY, dead_letter_retention=4 * DAY - 1
    )
    Validations.of(function).acknowledge(
        Acknowledgment(
            id="SafeQueue::safe-queue:dead-letter-retention-too-short",
            reason="migrating: the dead-letter queue is replaced in the next release",
        )
    )
    assert synth(app) == ("", {})


def test_safe_queue_consumer_output_passes_every_rule():
    app = checked_app()
    InvoiceRenderingStack(app, "InvoiceRendering")
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
    failure, found = synth(app)
    assert failure == ""
    # the imported function's timeout is unknown to the template: an info, nothing more
    assert set(found) <= {"info"}
    assert all(path.startswith("Shapes/Imported") for _, _, path in found.get("info", []))


def consumer_warnings(consumer: SafeQueueConsumer) -> list[str]:
    return [str(e.data) for e in consumer.node.metadata if e.type == "aws:cdk:warning"]


def test_consumer_and_plugin_give_one_verdict_on_an_overridden_visibility():
    # GIVEN a consumer whose explicit visibility is below the guidance, and the plugin
    app = checked_app()
    stack = cdk.Stack(app, "Override")
    consumer = SafeQueueConsumer(
        stack, "Consumer", function=make_function(stack, "Fn", S(180)), visibility_timeout=S(600)
    )
    # WHEN synthesized  THEN the consumer's own warning is the only verdict
    assert synth(app) == ("", {})
    (warning,) = consumer_warnings(consumer)
    assert "safe-queue:visibility-below-guidance" in warning


def test_consumer_in_one_stack_with_its_function_in_another_gives_one_verdict():
    app = checked_app()
    queues, functions = cdk.Stack(app, "Queues"), cdk.Stack(app, "Functions")
    consumer = SafeQueueConsumer(
        queues, "Consumer", function=make_function(functions, "Fn", S(180)),
        visibility_timeout=S(600),
    )  # fmt: skip
    assert synth(app) == ("", {})
    assert len(consumer_warnings(consumer)) == 1


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


def test_plugin_catches_a_function_timeout_overridden_after_the_consumer_was_built():
    # GIVEN the drift done with add_property_override, which only the template shows
    app = checked_app()
    stack = cdk.Stack(app, "Drift")
    function = make_function(stack, "Fn", S(180))
    consumer = SafeQueueConsumer(stack, "Consumer", function=function)
    cfn_function = function.node.default_child
    assert isinstance(cfn_function, lambda_.CfnFunction)
    cfn_function.add_property_override("Timeout", 900)
    # WHEN synthesized  THEN the plugin fails it, on the consumer (acknowledgeable there)
    failure, found = synth(app)
    assert failure.startswith("ValidationFailed")
    assert ("safe-queue:function-timeout-changed", "Drift/Consumer") in {
        (rule, path.rsplit("/", 2)[0]) for rule, _, path in found["error"]
    }
    assert consumer.node.path == "Drift/Consumer"


def test_consumer_queue_visibility_changed_afterwards_is_an_error_on_the_consumer():
    app = checked_app()
    stack = cdk.Stack(app, "Drift")
    consumer = SafeQueueConsumer(stack, "Consumer", function=make_function(stack, "Fn", S(180)))
    queue = consumer.queue.node.default_child
    assert isinstance(queue, sqs.CfnQueue)
    queue.visibility_timeout = 60  # escape hatch after the consumer derived 1080 s
    failure, found = synth(app)
    assert failure.startswith("ValidationFailed")
    ((rule, message, path),) = found["error"]
    assert rule == "safe-queue:visibility-below-function-timeout"
    assert "VisibilityTimeout 60 s is below the function Timeout 180 s" in message
    assert path.startswith("Drift/Consumer/")


def test_the_old_aspect_form_fails_with_the_new_line():
    app = make_app()
    Aspects.of(app).add(SafeQueueChecks())
    hand_wired(cdk.Stack(app, "Old"), visibility=1110)
    with pytest.raises(RuntimeError) as raised:
        app.synth()
    assert "Validations.of(app).add_plugins(SafeQueueChecks())" in str(raised.value)


def test_fifty_mappings_are_all_checked():
    app = checked_app()
    stack = cdk.Stack(app, "Many")
    for index in range(50):
        queue = sqs.Queue(stack, f"Q{index}", visibility_timeout=S(60))
        function = make_function(stack, f"Fn{index}", S(180))
        function.add_event_source(event_sources.SqsEventSource(queue, batch_size=1))
    errors = findings(app)["error"]
    assert len(errors) == 50
    assert len({path for _, _, path in errors}) == 50


def test_the_example_app_registers_the_plugin_and_passes_it(monkeypatch: pytest.MonkeyPatch):
    # GIVEN the plugin's validate, watched
    reports: list[Any] = []
    validate = SafeQueueChecks.validate

    def watched(self: SafeQueueChecks, context: Any) -> Any:
        reports.append(validate(self, context))
        return reports[-1]

    monkeypatch.setattr(SafeQueueChecks, "validate", watched)
    monkeypatch.syspath_prepend(str(ROOT))
    # WHEN app.py runs (it synthesizes)  THEN the plugin ran once and found nothing
    runpy.run_path(str(ROOT / "app.py"), run_name="__main__")
    (report,) = reports
    assert report.success is True
    assert list(report.violations) == []
