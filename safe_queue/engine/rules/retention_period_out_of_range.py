"""``safe-queue:retention-period-out-of-range``: MessageRetentionPeriod 60 s..14 days."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import SQS_ATTRIBUTES_API, out_of_range

__all__ = ["RULE"]


def check(*, retention_period: int, dead_letter_retention_period: int | None) -> Violation | None:
    """Error for a source or dead-letter retention outside 60..1,209,600 s."""
    for what, value in (
        ("Queue MessageRetentionPeriod", retention_period),
        ("Dead-letter queue MessageRetentionPeriod", dead_letter_retention_period),
    ):
        if value is not None:
            violation = out_of_range(
                what,
                value,
                limits.RETENTION_MIN,
                limits.RETENTION_MAX,
                "s",
                setting=what[0].lower() + what[1:],
            )
            if violation is not None:
                return violation
    return None


_RANGE = f"{limits.RETENTION_MIN}..{limits.RETENTION_MAX:,}"


RULE = Rule(
    id="safe-queue:retention-period-out-of-range",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary="The source or dead-letter queue's MessageRetentionPeriod is outside 60 s..14"
    f" days ({limits.RETENTION_MAX:,} s).",
    why="SQS rejects the queue, so the deployment fails.",
    fix=f"MessageRetentionPeriod within {_RANGE} s.",
    source_url=SQS_ATTRIBUTES_API,
    compliant=example(
        "Dead-letter queue keeps messages 14 days.",
    ),
    non_compliant=example(
        "Dead-letter queue keeps messages 1,209,601 s.",
        dead_letter_queue={"retention_period": 1_209_601},
    ),
    check=check,
    properties=(
        ("queue", "Properties/MessageRetentionPeriod"),
        ("dead_letter_queue", "Properties/MessageRetentionPeriod"),
    ),
)
