"""The rules, and the one registry every surface applies.

Each rule is a pure function over plain values (whole seconds, counts, flags; ``None`` for
a setting that is absent) that returns a :class:`Finding` when the configuration breaks it
and ``None`` when it complies or does not apply. :data:`RULES` lists every rule id with its
level, what it catches, why and the fix; the construct, the CDK validation plugin, the
``safe-queue check`` and ``safe-queue audit`` commands and the AWS Config rule all go
through :func:`safe_queue.engine.evaluate`, so they give the same verdict with the same id.
Messages name the CloudFormation / API attributes; a surface may add its own hint.

Examples
--------
>>> from safe_queue.engine.rules import visibility_meets_guidance
>>> visibility_meets_guidance(visibility_timeout=1110, function_timeout=180, batching_window=2)
>>> finding = visibility_meets_guidance(
...     visibility_timeout=600, function_timeout=180, batching_window=2)
>>> finding.rule_id, finding.level.value
('safe-queue:visibility-below-guidance', 'warning')
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from safe_queue.engine import limits

__all__ = [
    "RULES",
    "Finding",
    "Level",
    "Rule",
    "batch_failures_reported",
    "dead_letter_queue_configured",
    "dead_letter_retention_exceeds_source",
    "filters_delete_unmatched",
    "function_timeout_unchanged",
    "max_concurrency_within_reserved",
    "max_receive_count_meets_guidance",
    "recommended_visibility_timeout",
    "reserved_concurrency_has_max_concurrency",
    "retention_covers_retries",
    "rule",
    "visibility_covers_function_timeout",
    "visibility_meets_guidance",
]

PREFIX = "safe-queue:"
UNCHECKED = f"{PREFIX}unchecked"


class Level(enum.Enum):
    """How serious a finding is: errors fail ``cdk synth`` and, by default, the CLI."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """2 for errors, 1 for warnings, 0 for infos (for ``--fail-on``)."""
        return {"error": 2, "warning": 1, "info": 0}[self.value]


@dataclass(frozen=True)
class Finding:
    """One broken rule.

    Attributes
    ----------
    rule_id
        Stable identifier, prefixed ``safe-queue:``.
    level
        :class:`Level` of this finding (a rule may give a warning or an error).
    message
        The attributes and values found, the rule, and the fix.
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
    return limits.VISIBILITY_MULTIPLIER * function_timeout + batching_window


def _formula(function_timeout: int, batching_window: int) -> str:
    recommended = recommended_visibility_timeout(function_timeout, batching_window)
    return (
        f"{limits.VISIBILITY_MULTIPLIER} x function Timeout {function_timeout} s"
        f" + MaximumBatchingWindowInSeconds {batching_window} s = {recommended} s"
    )


def visibility_covers_function_timeout(
    *, visibility_timeout: int, function_timeout: int, batching_window: int
) -> Finding | None:
    """Error when the queue's visibility timeout is shorter than the function timeout."""
    if visibility_timeout >= function_timeout:
        return None
    return Finding(
        f"{PREFIX}visibility-below-function-timeout",
        Level.ERROR,
        f"Queue VisibilityTimeout {visibility_timeout} s is below the function Timeout"
        f" {function_timeout} s: a message still being processed becomes visible again and"
        " is processed twice, and Lambda rejects the event source mapping when it is next"
        " created or updated. Fix: set VisibilityTimeout to at least"
        f" {_formula(function_timeout, batching_window)}.",
    )


def visibility_meets_guidance(
    *, visibility_timeout: int, function_timeout: int, batching_window: int
) -> Finding | None:
    """Warn when visibility is at least the function timeout but below the AWS guidance."""
    recommended = recommended_visibility_timeout(function_timeout, batching_window)
    if visibility_timeout >= recommended or visibility_timeout < function_timeout:
        return None
    return Finding(
        f"{PREFIX}visibility-below-guidance",
        Level.WARNING,
        f"Queue VisibilityTimeout {visibility_timeout} s is below the recommended"
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
        f"{PREFIX}no-dead-letter-queue",
        Level.WARNING,
        "Queue has no RedrivePolicy (no dead-letter queue): a message that always fails is"
        " retried until its MessageRetentionPeriod ends and is then lost. Fix: add a"
        " dead-letter queue with a RedrivePolicy maxReceiveCount >="
        f" {limits.MAX_RECEIVE_COUNT_GUIDANCE}.",
    )


def max_receive_count_meets_guidance(*, max_receive_count: int | None) -> Finding | None:
    """Warn when ``maxReceiveCount`` is below 5 (AWS guidance); no DLQ: not applicable."""
    if max_receive_count is None or max_receive_count >= limits.MAX_RECEIVE_COUNT_GUIDANCE:
        return None
    return Finding(
        f"{PREFIX}max-receive-count-below-guidance",
        Level.WARNING,
        f"RedrivePolicy maxReceiveCount is {max_receive_count}, below the recommended"
        f" {limits.MAX_RECEIVE_COUNT_GUIDANCE}: a few transient errors or throttles send"
        " healthy messages to the dead-letter queue. Fix: set maxReceiveCount to"
        f" {limits.MAX_RECEIVE_COUNT_GUIDANCE} or more.",
    )


def dead_letter_retention_exceeds_source(
    *, fifo: bool, retention_period: int, dead_letter_retention_period: int | None
) -> Finding | None:
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
    return Finding(
        f"{PREFIX}dead-letter-retention-too-short",
        Level.ERROR if shorter else Level.WARNING,
        f"Dead-letter queue MessageRetentionPeriod {dead_letter_retention_period} s is"
        f" {'shorter than' if shorter else 'the same as'} the source queue's"
        f" {retention_period} s: on a standard queue expiry counts from the original enqueue"
        " time, so a failed message "
        + (
            "can expire in the dead-letter queue before anyone sees it"
            if shorter
            else "has only what is left of the source's retention once it is dead-lettered"
        )
        + ". Fix: make the dead-letter MessageRetentionPeriod longer than the source's"
        f" (up to {limits.RETENTION_MAX} s = 14 days), or shorten the source's.",
    )


def retention_covers_retries(
    *, retention_period: int, max_receive_count: int | None, visibility_timeout: int
) -> Finding | None:
    """Error when messages can expire before they reach the dead-letter queue.

    A message that keeps failing spends up to ``maxReceiveCount x VisibilityTimeout`` in the
    source queue before it is moved.
    """
    if max_receive_count is None:
        return None
    budget = max_receive_count * visibility_timeout
    if retention_period >= budget:
        return None
    return Finding(
        f"{PREFIX}retention-below-retry-budget",
        Level.ERROR,
        f"Queue MessageRetentionPeriod {retention_period} s is shorter than maxReceiveCount"
        f" {max_receive_count} x VisibilityTimeout {visibility_timeout} s = {budget} s: a"
        " message that keeps failing expires before it reaches the dead-letter queue and is"
        f" lost. Fix: raise MessageRetentionPeriod to at least {budget} s (at most"
        f" {limits.RETENTION_MAX} s), or lower maxReceiveCount.",
    )


def batch_failures_reported(*, batch_size: int, report_batch_item_failures: bool) -> Finding | None:
    """Warn when a batch larger than one fails as a whole (no ReportBatchItemFailures)."""
    if batch_size <= 1 or report_batch_item_failures:
        return None
    return Finding(
        f"{PREFIX}no-report-batch-item-failures",
        Level.WARNING,
        f"BatchSize is {batch_size} and FunctionResponseTypes has no"
        f" {limits.REPORT_BATCH_ITEM_FAILURES}: one failing message makes the whole batch"
        " visible again, so the messages that succeeded are processed again. Fix: add"
        f" {limits.REPORT_BATCH_ITEM_FAILURES} to FunctionResponseTypes and return"
        " batchItemFailures from the handler (Powertools BatchProcessor), or use BatchSize 1.",
    )


def reserved_concurrency_has_max_concurrency(
    *, reserved_concurrency: int | None, max_concurrency: int | None
) -> Finding | None:
    """Warn when the function has reserved concurrency and the mapping no maximum."""
    if reserved_concurrency is None or max_concurrency is not None:
        return None
    if reserved_concurrency >= limits.MAX_CONCURRENCY_MIN:
        fix = f"set ScalingConfig.MaximumConcurrency to at most {reserved_concurrency}"
    else:
        fix = (
            "raise ReservedConcurrentExecutions to at least"
            f" {limits.MAX_CONCURRENCY_MIN} (MaximumConcurrency's minimum) and set"
            " MaximumConcurrency to at most that"
        )
    return Finding(
        f"{PREFIX}reserved-concurrency-without-max-concurrency",
        Level.WARNING,
        f"The function has ReservedConcurrentExecutions {reserved_concurrency} and the mapping"
        " has no ScalingConfig.MaximumConcurrency: the SQS poller takes more messages than"
        " the function may run, throttled messages return to the queue and count as"
        f" receives, and healthy messages get dead-lettered. Fix: {fix}.",
    )


def max_concurrency_within_reserved(
    *, reserved_concurrency: int | None, max_concurrency: int | None
) -> Finding | None:
    """Warn when the mapping's maximum concurrency exceeds the function's reserved one."""
    if reserved_concurrency is None or max_concurrency is None:
        return None
    if max_concurrency <= reserved_concurrency:
        return None
    return Finding(
        f"{PREFIX}max-concurrency-above-reserved-concurrency",
        Level.WARNING,
        f"ScalingConfig.MaximumConcurrency {max_concurrency} is above the function's"
        f" ReservedConcurrentExecutions {reserved_concurrency}: the poller invokes more"
        " often than the function may run, throttled messages return to the queue and count"
        " as receives. Fix: set MaximumConcurrency to at most"
        f" {reserved_concurrency}, or raise the reserved concurrency.",
    )


def filters_delete_unmatched(*, has_filters: bool) -> Finding | None:
    """Warn that an SQS mapping with filter criteria deletes the messages that match none."""
    if not has_filters:
        return None
    return Finding(
        f"{PREFIX}filter-deletes-unmatched",
        Level.WARNING,
        "The event source mapping has FilterCriteria: for SQS, Lambda deletes every message"
        " that matches no filter, without invoking the function and without dead-lettering"
        " it. Fix: make sure no other consumer needs those messages (send them to another"
        " queue instead), or acknowledge this finding.",
    )


def function_timeout_unchanged(
    *, function_timeout: int, derived_function_timeout: int | None
) -> Finding | None:
    """Error when a SafeQueueConsumer's function timeout changed after the queue was derived."""
    if derived_function_timeout is None or function_timeout == derived_function_timeout:
        return None
    return Finding(
        f"{PREFIX}function-timeout-changed",
        Level.ERROR,
        f"The function's Timeout is now {function_timeout} s, but SafeQueueConsumer derived"
        f" the queue from {derived_function_timeout} s (the timeout was changed after the"
        " consumer was built, e.g. with an escape hatch or a property override): the drift"
        " this library exists to stop. Fix: set the timeout on the Function before creating"
        " the consumer, so the visibility timeout is derived from it.",
    )


@dataclass(frozen=True)
class Rule:
    """One entry of the registry: a rule id, its level, its documentation and its check.

    Attributes
    ----------
    id
        Stable identifier (``safe-queue:...``); renaming one is a breaking change.
    level
        The most serious level it gives.
    summary
        What it catches, in one sentence.
    why
        Why that loses or duplicates messages.
    fix
        What to change.
    inputs
        The names of the engine's inputs the check reads (its keyword arguments).
    check
        The pure function; ``None`` for ``safe-queue:unchecked``, which the engine itself
        gives when an input is unknown.
    """

    id: str
    level: Level
    summary: str
    why: str
    fix: str
    inputs: tuple[str, ...] = ()
    check: Callable[..., Finding | None] | None = None


_TIMING = ("visibility_timeout", "function_timeout", "batching_window")
_CONCURRENCY = ("reserved_concurrency", "max_concurrency")

RULES: tuple[Rule, ...] = (
    Rule(
        f"{PREFIX}visibility-below-function-timeout",
        Level.ERROR,
        "The queue's VisibilityTimeout is shorter than the function's Timeout.",
        "A message still being processed becomes visible again and a second invocation"
        " processes it (the seed incident: 60 s visibility, 180 s timeout). Lambda checks the"
        " pair only when the mapping is created, so raising the timeout later goes unnoticed.",
        "VisibilityTimeout >= 6 x function Timeout + MaximumBatchingWindowInSeconds.",
        _TIMING,
        visibility_covers_function_timeout,
    ),
    Rule(
        f"{PREFIX}visibility-below-guidance",
        Level.WARNING,
        "VisibilityTimeout is at least the function Timeout but below 6 x Timeout + batching"
        " window.",
        "Batching and retries of throttled invocations come out of the same lease, so a"
        " message can reappear while it is still being processed.",
        "Raise VisibilityTimeout to the recommended value the finding states.",
        _TIMING,
        visibility_meets_guidance,
    ),
    Rule(
        f"{PREFIX}no-dead-letter-queue",
        Level.WARNING,
        "The source queue has no RedrivePolicy.",
        "A message that always fails is retried until its retention ends, and is then lost.",
        f"Add a dead-letter queue with maxReceiveCount >= {limits.MAX_RECEIVE_COUNT_GUIDANCE}.",
        ("has_dead_letter_queue",),
        dead_letter_queue_configured,
    ),
    Rule(
        f"{PREFIX}max-receive-count-below-guidance",
        Level.WARNING,
        f"RedrivePolicy maxReceiveCount is below {limits.MAX_RECEIVE_COUNT_GUIDANCE}.",
        "A few transient errors or throttles send healthy messages to the dead-letter queue.",
        f"maxReceiveCount >= {limits.MAX_RECEIVE_COUNT_GUIDANCE}.",
        ("max_receive_count",),
        max_receive_count_meets_guidance,
    ),
    Rule(
        f"{PREFIX}dead-letter-retention-too-short",
        Level.ERROR,
        "Standard queues: the dead-letter queue's MessageRetentionPeriod is shorter than the"
        " source's (error) or the same (warning).",
        "Expiry counts from the original enqueue time, which the move to the DLQ does not"
        " reset: a failed message can expire before anyone sees it. FIFO queues reset it, so"
        " the rule does not apply to them.",
        "Dead-letter retention longer than the source's (14 days is the maximum).",
        ("fifo", "retention_period", "dead_letter_retention_period"),
        dead_letter_retention_exceeds_source,
    ),
    Rule(
        f"{PREFIX}retention-below-retry-budget",
        Level.ERROR,
        "MessageRetentionPeriod is shorter than maxReceiveCount x VisibilityTimeout.",
        "A message that keeps failing expires before it reaches the dead-letter queue.",
        "A longer retention period, or a lower maxReceiveCount.",
        ("retention_period", "max_receive_count", "visibility_timeout"),
        retention_covers_retries,
    ),
    Rule(
        f"{PREFIX}no-report-batch-item-failures",
        Level.WARNING,
        "BatchSize > 1 without ReportBatchItemFailures in FunctionResponseTypes.",
        "One failing message makes the whole batch visible again; the ones that succeeded are"
        " processed again.",
        "Turn on ReportBatchItemFailures and return batchItemFailures (Powertools"
        " BatchProcessor), or BatchSize 1.",
        ("batch_size", "report_batch_item_failures"),
        batch_failures_reported,
    ),
    Rule(
        f"{PREFIX}reserved-concurrency-without-max-concurrency",
        Level.WARNING,
        "The function has ReservedConcurrentExecutions and the mapping no"
        " ScalingConfig.MaximumConcurrency.",
        "Event source mappings do not account for reserved concurrency: the poller takes more"
        " messages than the function may run, throttled messages come back and burn"
        " receives, and healthy ones get dead-lettered.",
        "Set ScalingConfig.MaximumConcurrency <= ReservedConcurrentExecutions.",
        _CONCURRENCY,
        reserved_concurrency_has_max_concurrency,
    ),
    Rule(
        f"{PREFIX}max-concurrency-above-reserved-concurrency",
        Level.WARNING,
        "ScalingConfig.MaximumConcurrency is above the function's ReservedConcurrentExecutions.",
        "The poller invokes more often than the function may run; throttled messages return"
        " to the queue and count as receives.",
        "MaximumConcurrency <= ReservedConcurrentExecutions.",
        _CONCURRENCY,
        max_concurrency_within_reserved,
    ),
    Rule(
        f"{PREFIX}filter-deletes-unmatched",
        Level.WARNING,
        "The SQS event source mapping has FilterCriteria.",
        "For SQS, Lambda deletes every message that matches no filter, without invoking the"
        " function or dead-lettering it.",
        "Make sure no one needs the unmatched messages, or route them elsewhere; acknowledge"
        " the finding once that is so.",
        ("has_filters",),
        filters_delete_unmatched,
    ),
    Rule(
        f"{PREFIX}function-timeout-changed",
        Level.ERROR,
        "A SafeQueueConsumer's function now has another Timeout than the one its queue was"
        " derived from.",
        "The timeout was changed after the consumer was built (an escape hatch, a property"
        " override): the queue no longer fits the function, the drift of the seed incident.",
        "Set the timeout on the Function before creating the consumer.",
        ("function_timeout", "derived_function_timeout"),
        function_timeout_unchanged,
    ),
    Rule(
        UNCHECKED,
        Level.INFO,
        "A value the rules need is not known from this source (an imported queue or function,"
        " a parameter without a value, a denied API call, a deleted resource).",
        "The rules that need it are skipped rather than guessed; this finding lists them.",
        "Define the resource where it can be read, give the parameter a value, grant the"
        " read action, or check those settings by hand.",
    ),
)
"""Every rule, in the order findings are reported."""

_BY_ID = {entry.id: entry for entry in RULES}


def rule(rule_id: str) -> Rule:
    """Return the registry entry of ``rule_id``.

    Raises
    ------
    KeyError
        ``rule_id`` is not a rule, with the known ids.

    Examples
    --------
    >>> rule("safe-queue:no-dead-letter-queue").level.value
    'warning'
    """
    try:
        return _BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"{rule_id!r} is not a safe-queue rule; known: {sorted(_BY_ID)}") from None
