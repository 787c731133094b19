"""``safe-queue:retention-below-retry-budget``: a failing message expires before the DLQ."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.budget import time_to_dead_letter
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import SQS_DLQ

__all__ = ["RULE"]


def check(
    *,
    retention_period: int,
    max_receive_count: int | None,
    visibility_timeout: int,
    function_timeout: int,
    batching_window: int,
    backoff_base: float | None,
    backoff_cap: float | None,
) -> Violation | None:
    """Error when messages can expire before they reach the dead-letter queue.

    A message that keeps failing spends up to the retry budget
    (:func:`~safe_queue.engine.budget.time_to_dead_letter`: ``maxReceiveCount x
    VisibilityTimeout``, or the sum over the receives with a failure backoff) in the
    source queue before it is moved.
    """
    if max_receive_count is None:
        return None

    def budget(receives: int) -> int:
        return time_to_dead_letter(
            visibility_timeout=visibility_timeout,
            max_receive_count=receives,
            function_timeout=function_timeout,
            batching_window=batching_window,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
        )

    needed = budget(max_receive_count)
    if retention_period >= needed:
        return None
    backoff = backoff_base is not None and backoff_cap is not None
    how = (
        f"the sum over {max_receive_count} receives of the longer of VisibilityTimeout"
        f" {visibility_timeout} s and the failure backoff (base {backoff_base} s, cap"
        f" {backoff_cap} s) after the function's {function_timeout} s"
        if backoff
        else f"maxReceiveCount {max_receive_count} x VisibilityTimeout {visibility_timeout} s"
    )
    if needed <= limits.RETENTION_MAX:
        fix = f"raise MessageRetentionPeriod to at least {needed} s, or lower maxReceiveCount" + (
            " or the backoff's cap." if backoff else " or the VisibilityTimeout."
        )
    else:  # no retention can hold it: fewer receives (or a shorter lease) must
        fitting = max(
            (n for n in range(1, max_receive_count) if budget(n) <= limits.RETENTION_MAX),
            default=1,
        )
        fix = (
            f"lower maxReceiveCount to at most {fitting} with MessageRetentionPeriod"
            f" {limits.RETENTION_MAX} s (14 days, the most SQS allows), or lower the"
            + (" backoff's cap" if backoff else " VisibilityTimeout")
            + f": {needed} s is more than any queue keeps a message."
        )
    return Violation(
        f"Queue MessageRetentionPeriod {retention_period} s is shorter than the retry budget,"
        f" {how} = {needed} s: a message that keeps failing expires before it reaches the"
        " dead-letter queue and is lost.",
        fix,
    )


RULE = Rule(
    id="safe-queue:retention-below-retry-budget",
    levels=(Level.ERROR,),
    kind="guidance",
    summary="MessageRetentionPeriod is shorter than the retry budget (maxReceiveCount x"
    " VisibilityTimeout, or the sum of the receives with a failure backoff).",
    why="A message that keeps failing expires before it reaches the dead-letter queue.",
    fix="A longer retention period, or a lower maxReceiveCount.",
    source_url=SQS_DLQ,
    compliant=example("Retention 4 days; 5 x 1082 s = 5410 s to the dead-letter queue."),
    non_compliant=example(
        "Retention 1 hour; 5 x 1082 s = 5410 s to the dead-letter queue.",
        queue={"retention_period": 3600},
    ),
    check=check,
    properties=(
        ("queue", "Properties/MessageRetentionPeriod"),
        ("queue", "Properties/RedrivePolicy"),
        ("queue", "Properties/VisibilityTimeout"),
    ),
)
