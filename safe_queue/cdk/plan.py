"""SafeQueueConsumer's numbers: props in, validated and derived settings out. Pure, no CDK.

The ranges are AWS's limits (:mod:`safe_queue.engine.limits`); the rules are the engine's
(:func:`safe_queue.engine.evaluate` over the facts the consumer would synthesize), so the
construct refuses exactly what ``safe-queue check`` reports as an error, and warns about
what it reports as a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from safe_queue.engine import (
    FunctionFacts,
    Level,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    evaluate,
    limits,
)
from safe_queue.engine.rules import Finding, recommended_visibility_timeout
from safe_queue.errors import SafeQueueConfigError

__all__ = ["Bound", "Plan", "plan"]


@dataclass(frozen=True)
class Bound:
    """An allowed range for one setting; :meth:`check` refuses values outside it.

    Examples
    --------
    >>> Bound("batch_size", 1, 10, note="without max_batching_window").check(11)
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: batch_size is 11; allowed 1..10 without ...
    """

    setting: str
    low: int
    high: int
    unit: str = ""
    note: str = ""

    def check(self, value: int) -> int:
        """Return ``value`` if ``low <= value <= high``, else raise SafeQueueConfigError."""
        if self.low <= value <= self.high:
            return value
        note = f" {self.note}" if self.note else ""
        raise SafeQueueConfigError(
            f"{self.setting} is {value}{self.unit}; allowed {self.low}..{self.high}{self.unit}"
            f"{note}."
        )


# The allowed range of every numeric prop: AWS's own limits.
FUNCTION_TIMEOUT = Bound(
    "function timeout",
    limits.FUNCTION_TIMEOUT_MIN,
    limits.FUNCTION_TIMEOUT_MAX,
    " s",
    "(Lambda's limit; the function's `timeout`, or `function_timeout`)",
)
BATCHING_WINDOW = Bound("max_batching_window", 0, limits.BATCHING_WINDOW_MAX, " s")
_BATCH_SIZE_FIFO = Bound("batch_size", 1, limits.BATCH_SIZE_MAX_FIFO, note="on a FIFO queue")
_BATCH_SIZE_WITH_WINDOW = Bound(
    "batch_size", 1, limits.BATCH_SIZE_MAX_STANDARD, note="with a max_batching_window"
)
_BATCH_SIZE_WITHOUT_WINDOW = Bound(
    "batch_size",
    1,
    limits.BATCH_SIZE_MAX_WITHOUT_WINDOW,
    note=f"without max_batching_window (1..{limits.BATCH_SIZE_MAX_STANDARD} with a"
    " max_batching_window of at least 1 s, standard queues only)",
)
_MAX_CONCURRENCY = Bound("max_concurrency", limits.MAX_CONCURRENCY_MIN, limits.MAX_CONCURRENCY_MAX)
_MAX_RECEIVE_COUNT = Bound(
    "max_receive_count", limits.MAX_RECEIVE_COUNT_MIN, limits.MAX_RECEIVE_COUNT_MAX
)
_RETENTION = Bound("retention_period", limits.RETENTION_MIN, limits.RETENTION_MAX, " s")
_DEAD_LETTER_RETENTION = Bound(
    "dead_letter_retention_period", limits.RETENTION_MIN, limits.RETENTION_MAX, " s"
)
_VISIBILITY_TIMEOUT = Bound("visibility_timeout", 0, limits.VISIBILITY_TIMEOUT_MAX, " s")

# The construct's own words for the engine's rules: which props to change.
_PROP_HINTS = {
    "safe-queue:visibility-below-function-timeout": "raise visibility_timeout, or omit it to"
    " derive it",
    "safe-queue:visibility-below-guidance": "omit visibility_timeout to derive it",
    "safe-queue:max-receive-count-below-guidance": "max_receive_count",
    "safe-queue:dead-letter-retention-too-short": "dead_letter_retention_period, retention_period",
    "safe-queue:retention-below-retry-budget": "retention_period, max_receive_count",
    "safe-queue:no-report-batch-item-failures": "report_batch_item_failures=True, or batch_size=1",
    "safe-queue:reserved-concurrency-without-max-concurrency": "max_concurrency",
    "safe-queue:max-concurrency-above-reserved-concurrency": "max_concurrency",
}


def with_prop_hint(finding: Finding) -> Finding:
    """Return ``finding`` with the SafeQueueConsumer props to change, where there are any."""
    hint = _PROP_HINTS.get(finding.rule_id)
    if hint is None:
        return finding
    return Finding(finding.rule_id, finding.level, f"{finding.message} (props: {hint})")


def batch_size_bound(*, fifo: bool, batching_window: int) -> Bound:
    """Return the allowed batch sizes for this queue type and batching window."""
    if fifo:
        return _BATCH_SIZE_FIFO
    return _BATCH_SIZE_WITH_WINDOW if batching_window > 0 else _BATCH_SIZE_WITHOUT_WINDOW


@dataclass(frozen=True)
class Plan:
    """Every number the construct synthesizes, in whole seconds; validated."""

    function_timeout: int
    batching_window: int
    batch_size: int
    max_concurrency: int | None
    max_receive_count: int
    retention_period: int
    dead_letter_retention_period: int
    visibility_timeout: int
    max_message_age: int
    warnings: tuple[Finding, ...]

    @property
    def max_time_to_dead_letter(self) -> int:
        """Worst case before a failing message is dead-lettered: receives x visibility."""
        return self.max_receive_count * self.visibility_timeout

    @property
    def reported_rule_ids(self) -> tuple[str, ...]:
        """The rule ids the construct reports itself (as annotations), for "one verdict"."""
        return tuple(dict.fromkeys(w.rule_id for w in self.warnings))


def plan(
    *,
    function_timeout: int,
    batch_size: int,
    batching_window: int,
    max_concurrency: int | None,
    max_receive_count: int,
    retention_period: int,
    dead_letter_retention_period: int,
    visibility_timeout: int | None,
    report_batch_item_failures: bool,
    fifo: bool,
    content_based_deduplication: bool,
    max_message_age: int | None,
) -> Plan:
    """Validate the props (plain values) and derive the rest.

    Examples
    --------
    >>> p = plan(function_timeout=180, batch_size=5, batching_window=2, max_concurrency=None,
    ...     max_receive_count=5, retention_period=345_600, dead_letter_retention_period=1_209_600,
    ...     visibility_timeout=None, report_batch_item_failures=True, fifo=False,
    ...     content_based_deduplication=False, max_message_age=None)
    >>> p.visibility_timeout, p.max_time_to_dead_letter, p.warnings
    (1082, 5410, ())
    """
    FUNCTION_TIMEOUT.check(function_timeout)
    BATCHING_WINDOW.check(batching_window)
    if fifo and batching_window > 0:
        raise SafeQueueConfigError(
            f"max_batching_window is {batching_window} s on a FIFO queue; Lambda supports no"
            " batching window for FIFO queues. Fix: omit max_batching_window, or use fifo=False."
        )
    if content_based_deduplication and not fifo:
        raise SafeQueueConfigError(
            "content_based_deduplication is True on a standard queue; it exists only on FIFO"
            " queues. Fix: set fifo=True, or drop content_based_deduplication."
        )
    batch_size_bound(fifo=fifo, batching_window=batching_window).check(batch_size)
    if max_concurrency is not None:
        _MAX_CONCURRENCY.check(max_concurrency)
    _MAX_RECEIVE_COUNT.check(max_receive_count)
    _RETENTION.check(retention_period)
    _DEAD_LETTER_RETENTION.check(dead_letter_retention_period)
    if visibility_timeout is None:
        visibility_timeout = recommended_visibility_timeout(function_timeout, batching_window)
    _VISIBILITY_TIMEOUT.check(visibility_timeout)

    # The engine judges the pair this consumer would synthesize, as any surface would.
    findings = [
        with_prop_hint(f)
        for f in evaluate(
            MappingFacts(
                queue=QueueFacts(
                    visibility_timeout=visibility_timeout,
                    retention_period=retention_period,
                    fifo=fifo,
                    redrive=RedriveFacts(
                        max_receive_count,
                        QueueFacts(retention_period=dead_letter_retention_period, fifo=fifo),
                    ),
                ),
                function=FunctionFacts(timeout=function_timeout),
                batch_size=batch_size,
                batching_window=batching_window,
                report_batch_item_failures=report_batch_item_failures,
                max_concurrency=max_concurrency,
            )
        )
    ]
    errors = [f for f in findings if f.level is Level.ERROR]
    if errors:
        raise SafeQueueConfigError(" ".join(f"{f.message} [{f.rule_id}]" for f in errors))

    if max_message_age is None:
        max_message_age = min(max_receive_count * visibility_timeout, retention_period // 2)
    Bound(
        "max_message_age",
        1,
        retention_period - 1,
        " s",
        f"(below retention_period {retention_period} s, or messages expire before it fires)",
    ).check(max_message_age)
    return Plan(
        function_timeout=function_timeout,
        batching_window=batching_window,
        batch_size=batch_size,
        max_concurrency=max_concurrency,
        max_receive_count=max_receive_count,
        retention_period=retention_period,
        dead_letter_retention_period=dead_letter_retention_period,
        visibility_timeout=visibility_timeout,
        max_message_age=max_message_age,
        warnings=tuple(f for f in findings if f.level is not Level.ERROR),
    )
