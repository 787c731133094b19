"""A consumer's metrics and alarms: what tells an operator that messages are at risk.

Metrics first, then the alarms on them (cdk-monitoring-constructs' layering): the
dead-letter queue's depth, the age of the source queue's oldest message, and the share of
received messages that were not deleted (redeliveries). The dashboard (:mod:`widgets`)
draws the same metrics with the alarms' thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sqs as sqs
from constructs import Construct

if TYPE_CHECKING:  # an app without an alarm topic does not load aws_sns (≈ 35 ms)
    from aws_cdk import aws_sns as sns

__all__ = [
    "REDELIVERY_ALARM_EVALUATION_PERIODS",
    "REDELIVERY_ALARM_MIN_RECEIVES",
    "REDELIVERY_ALARM_PERIOD",
    "REDELIVERY_ALARM_THRESHOLD_PERCENT",
    "ConsumerAlarms",
    "consumer_alarms",
    "redelivery_percent",
]

_REDELIVERY_ALARM_PERIOD_MINUTES: Final = 5
REDELIVERY_ALARM_PERIOD: Final = Duration.minutes(_REDELIVERY_ALARM_PERIOD_MINUTES)
"""Period of the redelivery alarm's metrics (sums over 5 minutes)."""
REDELIVERY_ALARM_THRESHOLD_PERCENT: Final = 10
"""Alarm when at least 10 % of the received messages were not deleted, ..."""
REDELIVERY_ALARM_EVALUATION_PERIODS: Final = 3
"""... in each of 3 consecutive periods (15 minutes) ..."""
REDELIVERY_ALARM_MIN_RECEIVES: Final = 10
"""... counting only periods with at least 10 receives (fewer say nothing)."""

_ONE_MINUTE: Final = Duration.minutes(1)
_AT_LEAST = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
_QUIET = cloudwatch.TreatMissingData.NOT_BREACHING


def redelivery_percent(queue: sqs.IQueue) -> cloudwatch.MathExpression:
    """Return the share of ``queue``'s received messages that were not deleted, in percent.

    ``100 x (NumberOfMessagesReceived - NumberOfMessagesDeleted) / received``, sums over
    5 minutes; 0 for periods with fewer than 10 receives.
    """
    received = queue.metric_number_of_messages_received(
        period=REDELIVERY_ALARM_PERIOD, statistic="Sum"
    )
    deleted = queue.metric_number_of_messages_deleted(
        period=REDELIVERY_ALARM_PERIOD, statistic="Sum"
    )
    return cloudwatch.MathExpression(
        expression=(
            f"IF(received >= {REDELIVERY_ALARM_MIN_RECEIVES},"
            " 100 * (received - deleted) / received, 0)"
        ),
        using_metrics={"received": received, "deleted": deleted},
        period=REDELIVERY_ALARM_PERIOD,
        label="Received and not deleted (%)",
    )


@dataclass(frozen=True)
class ConsumerAlarms:
    """A consumer's three alarms."""

    dead_letter: cloudwatch.Alarm
    age: cloudwatch.Alarm
    redelivery: cloudwatch.Alarm

    def all(self) -> list[cloudwatch.Alarm]:
        """Return the three, in the order the consumer lists them."""
        return [self.dead_letter, self.age, self.redelivery]


def consumer_alarms(
    scope: Construct,
    *,
    path: str,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    max_receive_count: int,
    max_message_age: int,
    retention_period: int,
    alarm_topic: sns.ITopic | None,
) -> ConsumerAlarms:
    """Create ``DeadLetterAlarm``, ``AgeAlarm`` and ``RedeliveryAlarm`` in ``scope``.

    ``path`` is the consumer's construct path, for the descriptions. Every alarm notifies
    ``alarm_topic`` when one is given; missing data never alarms.
    """
    alarms = ConsumerAlarms(
        dead_letter=cloudwatch.Alarm(
            scope,
            "DeadLetterAlarm",
            metric=dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=_ONE_MINUTE, statistic="Maximum"
            ),
            threshold=1,
            evaluation_periods=1,
            comparison_operator=_AT_LEAST,
            treat_missing_data=_QUIET,
            alarm_description=(
                f"Messages in the dead-letter queue of {path}: each failed"
                f" {max_receive_count} receives. Inspect them, fix the consumer, then"
                " redrive them to the source queue."
            ),
        ),
        age=cloudwatch.Alarm(
            scope,
            "AgeAlarm",
            metric=queue.metric_approximate_age_of_oldest_message(
                period=_ONE_MINUTE, statistic="Maximum"
            ),
            threshold=max_message_age,
            evaluation_periods=1,
            comparison_operator=_AT_LEAST,
            treat_missing_data=_QUIET,
            alarm_description=(
                f"The oldest message in {path} is {max_message_age} s old or"
                " more: the consumer is falling behind, disabled or throttled, and messages"
                f" expire after {retention_period} s."
            ),
        ),
        redelivery=cloudwatch.Alarm(
            scope,
            "RedeliveryAlarm",
            metric=redelivery_percent(queue),
            threshold=REDELIVERY_ALARM_THRESHOLD_PERCENT,
            evaluation_periods=REDELIVERY_ALARM_EVALUATION_PERIODS,
            datapoints_to_alarm=REDELIVERY_ALARM_EVALUATION_PERIODS,
            comparison_operator=_AT_LEAST,
            treat_missing_data=_QUIET,
            alarm_description=(
                f"At least {REDELIVERY_ALARM_THRESHOLD_PERCENT} % of the messages received from"
                f" {path} were not deleted, in {REDELIVERY_ALARM_EVALUATION_PERIODS} periods of"
                f" {_REDELIVERY_ALARM_PERIOD_MINUTES} minutes in a row: messages are"
                " delivered again (visibility expired while processing, throttling, failed"
                " batches). Check the function's duration, errors and throttles; see"
                " RedeliveryDiagnosis in the function's logs."
            ),
        ),
    )
    if alarm_topic is not None:
        from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions  # only then

        action = cloudwatch_actions.SnsAction(alarm_topic)
        for alarm in alarms.all():
            alarm.add_alarm_action(action)
    return alarms
