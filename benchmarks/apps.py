"""Apps of many consumers: built with SafeQueueConsumer, or wired by hand to the same template.

Used by `benchmarks/bench.py`, `benchmarks/run_app.py`, `tests/test_scale.py` and
`tests/test_consumer_baseline.py`. safe_queue is imported only where it is used, so that a
hand-wired app's process (`python -m benchmarks.run_app N --hand-wired`) pays for aws-cdk-lib
alone, as a hand-wired `app.py` would.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs

CONTEXT: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent.parent / "cdk.json").read_text()
)["context"]
TIMEOUT = cdk.Duration.seconds(180)
WINDOW = cdk.Duration.seconds(2)


def new_app(outdir: str | None = None) -> cdk.App:
    return cdk.App(context=CONTEXT, outdir=outdir)


def function(scope: cdk.Stack, index: int) -> lambda_.Function:
    return lambda_.Function(
        scope,
        f"Fn{index}",
        runtime=lambda_.Runtime.PYTHON_3_13,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
        timeout=TIMEOUT,
    )


def add_consumer(
    scope: cdk.Stack, index: int, consumer_function: lambda_.Function, scope_path: str = ""
) -> None:
    from safe_queue import SafeQueueConsumer

    SafeQueueConsumer(
        scope,
        f"Consumer{index}",
        function=consumer_function,
        batch_size=5,
        max_batching_window=WINDOW,
    )


# The acknowledgements SafeQueueConsumer makes (cdk-nag rules that cannot apply), made the
# same way: Validations.of(...).acknowledge on the dead-letter queue and on the mapping.
_DEAD_LETTER_ACK = cdk.Acknowledgment(
    id="Serverless::Serverless-SQSRedrivePolicy",
    reason="This is the dead-letter queue: a redrive policy of its own would move failed"
    " messages on again instead of keeping them for inspection.",
)
_MAPPING_ACK = cdk.Acknowledgment(
    id="Serverless::Serverless-LambdaEventSourceMappingDestination",
    reason="SQS event source mappings support no OnFailure destination; failed messages"
    " go to the queue's dead-letter queue through its redrive policy.",
)


def add_hand_wired(
    scope: cdk.Stack, index: int, consumer_function: lambda_.Function, scope_path: str = ""
) -> None:
    """The resources SafeQueueConsumer makes, written with plain aws-cdk-lib.

    The same template as :func:`add_consumer` but for the logical ids, the same
    acknowledgements, the same environment variable: :func:`differences` checks it (the
    benchmark before it times anything, and ``tests/test_consumer_baseline.py``), so that
    the ratio measures what the construct adds and nothing else. The mapping is made with
    ``add_event_source_mapping`` and the grant that ``SqsEventSource`` would give (the same
    resources; it returns the mapping to acknowledge).
    """
    # The consumer's path in the alarm descriptions, as a hand-wired app writes it: from
    # what it knows (``scope_path``, the stack's path), not read from jsii.
    path = f"{scope_path or scope.node.path}/Consumer{index}"
    visibility = 6 * 180 + 2
    dead_letter = sqs.Queue(
        scope,
        f"Dlq{index}",
        retention_period=cdk.Duration.days(14),
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        removal_policy=cdk.RemovalPolicy.RETAIN,
    )
    cdk.Validations.of(dead_letter).acknowledge(_DEAD_LETTER_ACK)
    queue = sqs.Queue(
        scope,
        f"Queue{index}",
        visibility_timeout=cdk.Duration.seconds(visibility),
        retention_period=cdk.Duration.days(4),
        dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letter, max_receive_count=5),
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        removal_policy=cdk.RemovalPolicy.RETAIN,
    )
    cfn_queue = queue.node.default_child
    assert isinstance(cfn_queue, sqs.CfnQueue)
    cfn_queue.add_metadata("safe-queue:derived-function-timeout", 180)
    mapping = consumer_function.add_event_source_mapping(
        f"Mapping{index}",
        event_source_arn=queue.queue_arn,
        batch_size=5,
        max_batching_window=WINDOW,
        report_batch_item_failures=True,
    )
    queue.grant_consume_messages(consumer_function)
    cdk.Validations.of(mapping).acknowledge(_MAPPING_ACK)
    consumer_function.add_environment("SAFE_QUEUE_VISIBILITY_TIMEOUT", str(visibility))
    minute = cdk.Duration.minutes(1)
    at_least = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
    cloudwatch.Alarm(
        scope,
        f"DlqAlarm{index}",
        metric=dead_letter.metric_approximate_number_of_messages_visible(
            period=minute, statistic="Maximum"
        ),
        threshold=1,
        evaluation_periods=1,
        comparison_operator=at_least,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        alarm_description=f"Messages in the dead-letter queue of {path}: each failed 5"
        " receives. Inspect them, fix the consumer, then redrive them to the source queue.",
    )
    cloudwatch.Alarm(
        scope,
        f"AgeAlarm{index}",
        metric=queue.metric_approximate_age_of_oldest_message(period=minute, statistic="Maximum"),
        threshold=5 * visibility,
        evaluation_periods=1,
        comparison_operator=at_least,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        alarm_description=f"The oldest message in {path} is {5 * visibility} s old or more:"
        " the consumer is falling behind, disabled or throttled, and messages expire after"
        " 345600 s.",
    )
    five_minutes = cdk.Duration.minutes(5)
    cloudwatch.Alarm(
        scope,
        f"RedeliveryAlarm{index}",
        metric=cloudwatch.MathExpression(
            expression="IF(received >= 10, 100 * (received - deleted) / received, 0)",
            using_metrics={
                "received": queue.metric_number_of_messages_received(
                    period=five_minutes, statistic="Sum"
                ),
                "deleted": queue.metric_number_of_messages_deleted(
                    period=five_minutes, statistic="Sum"
                ),
            },
            period=five_minutes,
            label="Received and not deleted (%)",
        ),
        threshold=10,
        evaluation_periods=3,
        datapoints_to_alarm=3,
        comparison_operator=at_least,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        alarm_description=f"At least 10 % of the messages received from {path} were not"
        " deleted, in 3 periods of 5 minutes in a row: messages are delivered again"
        " (visibility expired while processing, throttling, failed batches). Check the"
        " function's duration, errors and throttles; see RedeliveryDiagnosis in the"
        " function's logs.",
    )


def consumers_app(
    count: int,
    *,
    per_stack: int = 40,
    hand_wired: bool = False,
    checks: bool = False,
    nag: bool = False,
    split: bool = False,
    seed_mistake: bool = False,
    outdir: str | None = None,
) -> cdk.App:
    """`count` consumers with their functions, `per_stack` to a stack.

    split=False: each stack holds a group of functions and their consumers.
    split=True: each group's queues in one stack, its functions in another.
    seed_mistake=True adds, in its own stack, the mistake every checker must find: a plain
    queue of 60 s visibility feeding a 180 s function (the benchmarks' probe that a
    checker really ran).
    """
    app = new_app(outdir)
    add = add_hand_wired if hand_wired else add_consumer
    for group, start in enumerate(range(0, count, per_stack)):
        queues = cdk.Stack(app, f"Consumers{group}")
        functions = cdk.Stack(app, f"Functions{group}") if split else queues
        for index in range(start, min(start + per_stack, count)):
            add(queues, index, function(functions, index), f"Consumers{group}")
    if seed_mistake:
        from aws_cdk import aws_lambda_event_sources as event_sources

        stack = cdk.Stack(app, "SeedMistake")
        queue = sqs.Queue(stack, "Queue", visibility_timeout=cdk.Duration.seconds(60))
        function(stack, 0).add_event_source(event_sources.SqsEventSource(queue))
    if checks:
        from safe_queue import SafeQueueChecks

        cdk.Validations.of(app).add_plugins(SafeQueueChecks())
    if nag:  # the peer line for the plugin's cost: cdk-nag 3's AwsSolutions pack
        from cdk_nag import AwsSolutionsChecks

        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


def _resources(outdir: Path) -> dict[str, list[str]]:
    """Each stack's resources, normalized: logical ids and construct paths left out.

    A resource is its JSON (every logical id replaced by ``<ID>``, ``aws:cdk:path`` dropped)
    with the cdk-nag rules acknowledged on it or on any construct above it (from the
    stack's ``aws:cdk:acknowledged-rules`` metadata, as cdk-nag and CDK's validation report
    read them); a stack is the sorted list of its resources.
    """
    stacks: dict[str, list[str]] = {}
    for template_path in sorted(outdir.glob("*.template.json")):
        stack = template_path.name.removesuffix(".template.json")
        resources = json.loads(template_path.read_text())["Resources"]
        metadata = json.loads((outdir / f"{stack}.metadata.json").read_text())
        paths = {
            entry["data"]: path
            for path, entries in metadata.items()
            for entry in entries
            if entry["type"] == "aws:cdk:logicalId"
        }
        acknowledged = [
            (path, sorted(entry["data"]))
            for path, entries in metadata.items()
            for entry in entries
            if entry["type"] == cdk.Validations.ACKNOWLEDGED_RULES_METADATA_KEY
        ]
        ids = sorted(resources, key=len, reverse=True)
        pattern = re.compile("|".join(map(re.escape, ids)))
        normalized = []
        for logical_id, resource in resources.items():
            resource = dict(resource)
            kept = {k: v for k, v in resource.pop("Metadata", {}).items() if k != "aws:cdk:path"}
            if kept:
                resource["Metadata"] = kept
            path = paths.get(logical_id, "")
            resource["acknowledged"] = sorted(
                rule
                for where, rules in acknowledged
                if path == where or path.startswith(f"{where}/")
                for rule in rules
            )
            normalized.append(pattern.sub("<ID>", json.dumps(resource, sort_keys=True)))
        stacks[stack] = sorted(normalized)
    return stacks


def differences(construct_outdir: str | Path, hand_outdir: str | Path) -> list[str]:
    """What differs between two synthesized apps' resources ([] when they are the same).

    Compares every stack's template resources (types, properties, metadata, dependencies),
    logical ids and construct paths aside, and the cdk-nag acknowledgements that reach each
    resource. The benchmark calls it on the SafeQueueConsumer app and the hand-wired one
    before timing them: the ratio only means something while both build the same thing.
    """
    construct = _resources(Path(construct_outdir))
    hand = _resources(Path(hand_outdir))
    found = []
    for stack in sorted(construct.keys() | hand.keys()):
        a, b = Counter(construct.get(stack, [])), Counter(hand.get(stack, []))
        found += [f"{stack}: only with SafeQueueConsumer: {r}" for r in sorted(a - b)]
        found += [f"{stack}: only hand-wired: {r}" for r in sorted(b - a)]
    return found
