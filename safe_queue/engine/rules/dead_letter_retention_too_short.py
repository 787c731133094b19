"""``safe-queue:dead-letter-retention-too-short``: a failed message expires unseen."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import SQS_DLQ

__all__ = ["RULE"]


def check(
    *, fifo: bool, retention_period: int, dead_letter_retention_period: int | None
) -> Violation | None:
    """Error when a standard queue's DLQ keeps messages shorter; warn when as long.

    On standard queues a message's expiry counts from its original enqueue time, which the
    move to the dead-letter queue does not reset: with a shorter DLQ retention a failed
    message can expire there at once; with an equal one (CDK's default, 4 days both) it has
    only what is left of the source's retention. FIFO queues reset the timestamp, so the
    rule does not apply to them.
    """
    if fifo or dead_letter_retention_period is None:
        return None
    if dead_letter_retention_period > retention_period:
        return None
    shorter = dead_letter_retention_period < retention_period
    consequence = (
        "can expire in the dead-letter queue before anyone sees it"
        if shorter
        else "has only what is left of the source's retention once it is dead-lettered"
    )
    if retention_period < limits.RETENTION_MAX:
        fix = (
            "make the dead-letter MessageRetentionPeriod longer than the source's (up to"
            f" {limits.RETENTION_MAX} s = 14 days), or shorten the source's."
        )
    else:  # the source already keeps messages the longest SQS allows
        fix = (
            f"shorten the source queue's MessageRetentionPeriod below {limits.RETENTION_MAX} s"
            f" and keep the dead-letter queue's at {limits.RETENTION_MAX} s (14 days, the most"
            " SQS allows)."
        )
    return Violation(
        f"Dead-letter queue MessageRetentionPeriod {dead_letter_retention_period} s is"
        f" {'shorter than' if shorter else 'the same as'} the source queue's"
        f" {retention_period} s: on a standard queue expiry counts from the original enqueue"
        f" time, so a failed message {consequence}.",
        fix,
        Level.ERROR if shorter else Level.WARNING,
    )


RULE = Rule(
    id="safe-queue:dead-letter-retention-too-short",
    levels=(Level.ERROR, Level.WARNING),
    kind="guidance",
    summary="Standard queues: the dead-letter queue's MessageRetentionPeriod is shorter than"
    " the source's (error) or the same (warning).",
    why="Expiry counts from the original enqueue time, which the move to the DLQ does not"
    " reset: a failed message can expire before anyone sees it. FIFO queues reset it, so"
    " the rule does not apply to them.",
    fix="Dead-letter retention longer than the source's (14 days is the maximum).",
    source_url=SQS_DLQ,
    compliant=example("Source 4 days, dead-letter queue 14 days."),
    non_compliant=example(
        "Source 4 days, dead-letter queue 1 day.",
        dead_letter_queue={"retention_period": 86_400},
    ),
    check=check,
    properties=(
        ("dead_letter_queue", "Properties/MessageRetentionPeriod"),
        ("queue", "Properties/MessageRetentionPeriod"),
    ),
)
