"""Apps of many consumers: built with SafeQueueConsumer, or wired by hand to the same template.

Used by `benchmarks/bench.py` and by `tests/test_scale.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs

from safe_queue import SafeQueueChecks, SafeQueueConsumer

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


def add_consumer(scope: cdk.Stack, index: int, consumer_function: lambda_.Function) -> None:
    SafeQueueConsumer(
        scope,
        f"Consumer{index}",
        function=consumer_function,
        batch_size=5,
        max_batching_window=WINDOW,
    )


def add_hand_wired(scope: cdk.Stack, index: int, consumer_function: lambda_.Function) -> None:
    """The resources SafeQueueConsumer makes, written with plain aws-cdk-lib."""
    dead_letter = sqs.Queue(
        scope,
        f"Dlq{index}",
        retention_period=cdk.Duration.days(14),
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
    )
    queue = sqs.Queue(
        scope,
        f"Queue{index}",
        visibility_timeout=cdk.Duration.seconds(6 * 180 + 2),
        retention_period=cdk.Duration.days(4),
        dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letter, max_receive_count=5),
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
    )
    consumer_function.add_event_source(
        event_sources.SqsEventSource(
            queue, batch_size=5, max_batching_window=WINDOW, report_batch_item_failures=True
        )
    )
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
    )
    cloudwatch.Alarm(
        scope,
        f"AgeAlarm{index}",
        metric=queue.metric_approximate_age_of_oldest_message(period=minute, statistic="Maximum"),
        threshold=5 * 1082,
        evaluation_periods=1,
        comparison_operator=at_least,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
    )


def consumers_app(
    count: int,
    *,
    per_stack: int = 40,
    hand_wired: bool = False,
    checks: bool = False,
    split: bool = False,
    outdir: str | None = None,
) -> cdk.App:
    """`count` consumers with their functions, `per_stack` to a stack.

    split=False: each stack holds a group of functions and their consumers.
    split=True: each group's queues in one stack, its functions in another.
    """
    app = new_app(outdir)
    add = add_hand_wired if hand_wired else add_consumer
    for group, start in enumerate(range(0, count, per_stack)):
        queues = cdk.Stack(app, f"Consumers{group}")
        functions = cdk.Stack(app, f"Functions{group}") if split else queues
        for index in range(start, min(start + per_stack, count)):
            add(queues, index, function(functions, index))
    if checks:
        cdk.Validations.of(app).add_plugins(SafeQueueChecks())
    return app
