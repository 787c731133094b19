"""CloudWatch widgets for one SafeQueueConsumer: what :class:`SafeQueueDashboard` shows.

What is on it follows what cdk-monitoring-constructs shows for SQS and Lambda: the queue's
depth and the age of its oldest message, received against deleted, the dead-letter queue,
and the function's errors, throttles and duration. Each graph that has an alarm shows the
alarm's threshold as a horizontal line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from safe_queue.cdk.alarms import (
    REDELIVERY_ALARM_PERIOD,
    REDELIVERY_ALARM_THRESHOLD_PERCENT,
    redelivery_percent,
)

if TYPE_CHECKING:
    from safe_queue.cdk.consumer import SafeQueueConsumer

__all__ = ["consumer_widgets"]

_MINUTE = Duration.minutes(1)
_WIDTH = 8  # three graphs to a row of 24
_HEIGHT = 6
_ALARM_COLOUR = cloudwatch.Color.RED


def _graph(
    title: str,
    left: Sequence[cloudwatch.IMetric],
    *,
    right: Sequence[cloudwatch.IMetric] = (),
    left_line: tuple[float, str] | None = None,
    right_line: tuple[float, str] | None = None,
) -> cloudwatch.GraphWidget:
    def line(value: tuple[float, str] | None) -> list[cloudwatch.HorizontalAnnotation] | None:
        if value is None:
            return None
        return [
            cloudwatch.HorizontalAnnotation(value=value[0], label=value[1], color=_ALARM_COLOUR)
        ]

    return cloudwatch.GraphWidget(
        title=title,
        left=list(left),
        right=list(right) or None,
        left_annotations=line(left_line),
        right_annotations=line(right_line),
        width=_WIDTH,
        height=_HEIGHT,
    )


def consumer_widgets(consumer: SafeQueueConsumer) -> list[cloudwatch.IWidget]:
    """Return a title and six graphs for ``consumer`` (what ``dashboard_widgets`` returns).

    Examples
    --------
    >>> from aws_cdk import App, Duration, Stack, aws_lambda as lambda_
    >>> from safe_queue import SafeQueueConsumer
    >>> stack = Stack(App(), "Invoices")
    >>> render = lambda_.Function(stack, "Render", runtime=lambda_.Runtime.PYTHON_3_13,
    ...     handler="index.handler", code=lambda_.Code.from_inline("def handler(e, c): pass"),
    ...     timeout=Duration.seconds(180))
    >>> consumer = SafeQueueConsumer(stack, "RenderInvoices", function=render)
    >>> len(consumer_widgets(consumer))
    7
    """
    queue = consumer.queue
    dead_letter = consumer.dead_letter_queue
    function = consumer.function
    timeout_ms = consumer.function_timeout.to_milliseconds()
    title = cloudwatch.TextWidget(
        markdown=f"### SafeQueueConsumer {consumer.node.path}\n"
        f"Visibility timeout {consumer.visibility_timeout.to_seconds()} s, function timeout"
        f" {consumer.function_timeout.to_seconds()} s.",
        width=3 * _WIDTH,
        height=2,
    )
    return [
        title,
        _graph(
            "Queue depth",
            [
                queue.metric_approximate_number_of_messages_visible(
                    period=_MINUTE, statistic="Maximum", label="Visible"
                ),
                queue.metric_approximate_number_of_messages_not_visible(
                    period=_MINUTE, statistic="Maximum", label="In flight"
                ),
            ],
        ),
        _graph(
            "Age of the oldest message (s)",
            [
                queue.metric_approximate_age_of_oldest_message(
                    period=_MINUTE, statistic="Maximum", label="Oldest message"
                )
            ],
            left_line=(consumer.max_message_age.to_seconds(), "Age alarm"),
        ),
        _graph(
            "Received vs deleted",
            [
                queue.metric_number_of_messages_received(
                    period=REDELIVERY_ALARM_PERIOD, statistic="Sum", label="Received"
                ),
                queue.metric_number_of_messages_deleted(
                    period=REDELIVERY_ALARM_PERIOD, statistic="Sum", label="Deleted"
                ),
            ],
            right=[redelivery_percent(queue)],
            right_line=(REDELIVERY_ALARM_THRESHOLD_PERCENT, "Redelivery alarm (%)"),
        ),
        _graph(
            "Dead-letter queue depth",
            [
                dead_letter.metric_approximate_number_of_messages_visible(
                    period=_MINUTE, statistic="Maximum", label="Dead-lettered"
                )
            ],
            left_line=(1, "Dead-letter alarm"),
        ),
        _graph(
            "Function errors and throttles",
            [
                function.metric_errors(period=_MINUTE, statistic="Sum", label="Errors"),
                function.metric_throttles(period=_MINUTE, statistic="Sum", label="Throttles"),
            ],
        ),
        _graph(
            "Function duration (ms)",
            [
                function.metric_duration(period=_MINUTE, statistic="Maximum", label="Maximum"),
                function.metric_duration(period=_MINUTE, statistic="p99", label="p99"),
            ],
            left_line=(timeout_ms, "Function timeout"),
        ),
    ]
