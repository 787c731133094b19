"""The rules that keep an SQS -> Lambda pair from processing a message twice or losing it.

Each rule is a pure function over plain values (whole seconds, counts, flags) that returns
a :class:`Finding` when the configuration breaks it and ``None`` when it complies.
:class:`~safe_queue.SafeQueueConsumer` applies them to its own settings at construction
time and :class:`~safe_queue.SafeQueueChecks` applies them to every mapping of an app at
synth time, so both give the same verdict with the same id and the same message.

Examples
--------
>>> from safe_queue.rules import visibility_meets_guidance
>>> visibility_meets_guidance(visibility_timeout=1110, function_timeout=180, batching_window=2)
>>> finding = visibility_meets_guidance(
...     visibility_timeout=600, function_timeout=180, batching_window=2)
>>> finding.rule_id, finding.level.value
('safe-queue:visibility-below-guidance', 'warning')
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from safe_queue import _limits

__all__ = [
    "Finding",
    "Level",
    "batch_failures_reported",
    "dead_letter_queue_configured",
    "dead_letter_retention_exceeds_source",
    "max_receive_count_meets_guidance",
    "recommended_visibility_timeout",
    "retention_covers_retries",
    "visibility_covers_function_timeout",
    "visibility_meets_guidance",
]


class Level(enum.Enum):
    """How serious a finding is; errors fail ``cdk synth``."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    """One broken rule.

    Attributes
    ----------
    rule_id
        Stable identifier, prefixed ``safe-queue:``; acknowledge warnings with it.
    level
        :class:`Level` of the finding.
    message
        The values found, the rule, and the fix.
    """

    rule_id: str
    level: Level
    message: str


def recommended_visibility_timeout(function_timeout: int, batching_window: int = 0) -> int:
    """Return AWS's recommended visibility timeout: 6 x function timeout + batching window.

    Examples
    --------
    >>> recommended_visibility_timeout(180, 2)
    1082
    """
    return _limits.VISIBILITY_MULTIPLIER * function_timeout + batching_window


def _formula(function_timeout: int, batching_window: int) -> str:
    recommended = recommended_visibility_timeout(function_timeout, batching_window)
    return (
        f"{_limits.VISIBILITY_MULTIPLIER} x function timeout {function_timeout} s"
        f" + batching window {batching_window} s = {recommended} s"
    )


def visibility_covers_function_timeout(
    *, visibility_timeout: int, function_timeout: int, batching_window: int = 0
) -> Finding | None:
    """Error when the visibility timeout is shorter than the function timeout.

    Lambda rejects such a mapping when it is created, but not when the function timeout
    is raised later; a message still being processed then reappears and is processed
    again (the seed incident: 60 s visibility, 180 s timeout).
    """
    if visibility_timeout >= function_timeout:
        return None
    return Finding(
        "safe-queue:visibility-below-function-timeout",
        Level.ERROR,
        f"Queue visibility_timeout {visibility_timeout} s is below the function timeout"
        f" {function_timeout} s: a message still being processed becomes visible again and"
        " is processed twice, and Lambda rejects the event source mapping when it is next"
        " created or updated. Fix: set the queue's visibility_timeout to at least"
        f" {_formula(function_timeout, batching_window)} (or build the pair with"
        " SafeQueueConsumer, which derives it).",
    )


def visibility_meets_guidance(
    *, visibility_timeout: int, function_timeout: int, batching_window: int = 0
) -> Finding | None:
    """Warn when visibility is at least the function timeout but below the AWS guidance.

    The guidance is ``6 x function timeout + batching window``; the headroom lets Lambda
    retry a throttled batch inside the same lease. Below the function timeout, the
    error of :func:`visibility_covers_function_timeout` applies instead.
    """
    recommended = recommended_visibility_timeout(function_timeout, batching_window)
    if visibility_timeout >= recommended or visibility_timeout < function_timeout:
        return None
    return Finding(
        "safe-queue:visibility-below-guidance",
        Level.WARNING,
        f"Queue visibility_timeout {visibility_timeout} s is below the recommended"
        f" {_formula(function_timeout, batching_window)}: AWS accepts it, but time spent"
        " batching and retrying throttled invocations comes out of the same lease, so a"
        f" message can reappear while it is still being processed. Fix: use {recommended} s"
        " or more.",
    )


def dead_letter_queue_configured(*, has_dead_letter_queue: bool) -> Finding | None:
    """Warn when the source queue has no redrive policy (no dead-letter queue)."""
    if has_dead_letter_queue:
        return None
    return Finding(
        "safe-queue:no-dead-letter-queue",
        Level.WARNING,
        "Queue has no dead-letter queue (no RedrivePolicy): a message that always fails is"
        " retried until its retention period ends and is then lost. Fix: give the queue a"
        f" dead_letter_queue with max_receive_count >= {_limits.MAX_RECEIVE_COUNT_GUIDANCE}.",
    )


def max_receive_count_meets_guidance(*, max_receive_count: int) -> Finding | None:
    """Warn when ``maxReceiveCount`` is below 5 (AWS guidance)."""
    if max_receive_count >= _limits.MAX_RECEIVE_COUNT_GUIDANCE:
        return None
    return Finding(
        "safe-queue:max-receive-count-below-guidance",
        Level.WARNING,
        f"max_receive_count is {max_receive_count}, below the recommended"
        f" {_limits.MAX_RECEIVE_COUNT_GUIDANCE}: a few transient errors or throttles send"
        " healthy messages to the dead-letter queue. Fix: use max_receive_count >="
        f" {_limits.MAX_RECEIVE_COUNT_GUIDANCE}.",
    )


def dead_letter_retention_exceeds_source(
    *, fifo: bool, retention_period: int, dead_letter_retention_period: int
) -> Finding | None:
    """Error when a standard queue's dead-letter retention is not longer than its own.

    On standard queues a message's expiry counts from its original enqueue time, which
    the move to the dead-letter queue does not reset. FIFO queues reset it, so the rule
    does not apply to them.
    """
    if fifo or dead_letter_retention_period > retention_period:
        return None
    return Finding(
        "safe-queue:dead-letter-retention-too-short",
        Level.ERROR,
        f"Dead-letter queue retention_period {dead_letter_retention_period} s is not longer"
        f" than the source queue's {retention_period} s: on a standard queue expiry counts"
        " from the original enqueue time, so a failed message can expire in the dead-letter"
        " queue before anyone sees it. Fix: make the dead-letter retention longer than the"
        f" source's (at most {_limits.RETENTION_MAX} s = 14 days), or shorten the source's.",
    )


def retention_covers_retries(
    *, retention_period: int, max_receive_count: int, visibility_timeout: int
) -> Finding | None:
    """Error when messages can expire before they reach the dead-letter queue.

    A message that keeps failing spends up to ``max_receive_count x visibility_timeout``
    in the source queue before it is moved.
    """
    budget = max_receive_count * visibility_timeout
    if retention_period >= budget:
        return None
    return Finding(
        "safe-queue:retention-below-retry-budget",
        Level.ERROR,
        f"Queue retention_period {retention_period} s is shorter than max_receive_count"
        f" {max_receive_count} x visibility_timeout {visibility_timeout} s = {budget} s:"
        " a message that keeps failing expires before it reaches the dead-letter queue and"
        f" is lost. Fix: raise retention_period to at least {budget} s (at most"
        f" {_limits.RETENTION_MAX} s), or lower max_receive_count.",
    )


def batch_failures_reported(*, batch_size: int, report_batch_item_failures: bool) -> Finding | None:
    """Warn when a batch larger than one fails as a whole (no ReportBatchItemFailures)."""
    if batch_size <= 1 or report_batch_item_failures:
        return None
    return Finding(
        "safe-queue:no-report-batch-item-failures",
        Level.WARNING,
        f"batch_size is {batch_size} without report_batch_item_failures: one failing"
        " message makes the whole batch visible again, so the messages that succeeded are"
        " processed again. Fix: set report_batch_item_failures=True (FunctionResponseTypes"
        " ReportBatchItemFailures) and return batchItemFailures from the handler"
        " (Powertools BatchProcessor), or use batch_size=1.",
    )
