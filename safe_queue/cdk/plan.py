"""SafeQueueConsumer's numbers: props in, validated and derived settings out. Pure, no CDK.

The ranges are AWS's limits (:mod:`safe_queue.engine.limits`); the rules are the engine's
(:func:`safe_queue.engine.evaluate` over the facts the consumer would synthesize), so the
construct refuses exactly what ``safe-queue check`` reports as an error, and warns about
what it reports as a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from safe_queue.cdk._values import Refusals, is_string_token, type_error
from safe_queue.engine import (
    FunctionFacts,
    Level,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
    evaluate,
    limits,
)
from safe_queue.engine.rules import Finding, recommended_visibility_timeout
from safe_queue.errors import SafeQueueConfigError

__all__ = [
    "FIFO_SUFFIX",
    "QUEUE_NAME_MAX_LENGTH",
    "Bound",
    "Plan",
    "plan",
    "queue_name",
]


@dataclass(frozen=True)
class Bound:
    """An allowed range for one setting; :meth:`check` refuses values outside it.

    Examples
    --------
    >>> Bound("batch_size", 1, 10, note="without max_batching_window").check(11)
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: batch_size is 11; allowed 1..10 without ... Fix: ...
    """

    setting: str
    low: int
    high: int
    unit: str = ""
    note: str = ""
    fix: str = ""
    """What to do instead; default: set the setting within the range."""

    def check(self, value: int) -> int:
        """Return ``value`` if ``low <= value <= high``, else raise SafeQueueConfigError."""
        if self.low <= value <= self.high:
            return value
        note = f" {self.note}" if self.note else ""
        fix = self.fix or f"set {self.setting} within {self.low}..{self.high}{self.unit}"
        raise SafeQueueConfigError(
            f"{self.setting} is {value}{self.unit}; allowed {self.low}..{self.high}{self.unit}"
            f"{note}. Fix: {fix}."
        )


# The allowed range of every numeric prop: AWS's own limits.
FUNCTION_TIMEOUT = Bound(
    "function timeout",
    limits.FUNCTION_TIMEOUT_MIN,
    limits.FUNCTION_TIMEOUT_MAX,
    " s",
    "(Lambda's limit; the function's `timeout`, or `function_timeout`)",
    f"give the function a timeout of {limits.FUNCTION_TIMEOUT_MIN}..{limits.FUNCTION_TIMEOUT_MAX}"
    " s (or pass that as function_timeout for an imported function)",
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
    """The engine's warnings and infos about the pair (errors are refused)."""
    max_concurrency_from_reserved: bool = False
    """True when :attr:`max_concurrency` is the function's reserved concurrency."""

    @property
    def max_time_to_dead_letter(self) -> int:
        """Worst case before a failing message is dead-lettered: receives x visibility."""
        return self.max_receive_count * self.visibility_timeout

    @property
    def reported_rule_ids(self) -> tuple[str, ...]:
        """The ids of the warnings the construct reports itself, for "one verdict".

        Infos (``safe-queue:unchecked``) are left out: another surface may know more.
        """
        return tuple(dict.fromkeys(w.rule_id for w in self.warnings if w.level is Level.WARNING))


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
    reserved_concurrency: int | Unknown | None = None,
    has_filters: bool = False,
    refusals: Refusals | None = None,
) -> Plan:
    """Validate the props (plain values) and derive the rest.

    Each prop is checked against its range on its own, and every refusal is collected in
    ``refusals`` (settings already refused there, e.g. for their type, are skipped); the
    engine's rules, which combine props, run once every prop is valid on its own. With any
    refusal, one :class:`~safe_queue.SafeQueueConfigError` lists them all.

    With ``reserved_concurrency`` R and no ``max_concurrency``, ``max_concurrency`` is R
    when R is a valid maximum concurrency (2..1,000); otherwise the engine's concurrency
    rules report it.

    Examples
    --------
    >>> p = plan(function_timeout=180, batch_size=5, batching_window=2, max_concurrency=None,
    ...     max_receive_count=5, retention_period=345_600, dead_letter_retention_period=1_209_600,
    ...     visibility_timeout=None, report_batch_item_failures=True, fifo=False,
    ...     content_based_deduplication=False, max_message_age=None, reserved_concurrency=20)
    >>> p.visibility_timeout, p.max_time_to_dead_letter, p.max_concurrency, p.warnings
    (1082, 5410, 20, ())
    """
    refused = Refusals() if refusals is None else refusals

    def check(key: str, bound: Bound, value: int) -> None:
        if key not in refused.settings:
            refused.attempt(key, bound.check, value)

    check("function_timeout", FUNCTION_TIMEOUT, function_timeout)
    check("max_batching_window", BATCHING_WINDOW, batching_window)
    if fifo and batching_window > 0 and not {"fifo", "max_batching_window"} & refused.settings:
        refused.add(
            "max_batching_window",
            f"max_batching_window is {batching_window} s on a FIFO queue; Lambda supports no"
            " batching window for FIFO queues. Fix: omit max_batching_window, or use fifo=False.",
        )
    if content_based_deduplication and not fifo and "fifo" not in refused.settings:
        refused.add(
            "content_based_deduplication",
            "content_based_deduplication is True on a standard queue; it exists only on FIFO"
            " queues. Fix: set fifo=True, or drop content_based_deduplication.",
        )
    check("batch_size", batch_size_bound(fifo=fifo, batching_window=batching_window), batch_size)
    if max_concurrency is not None:
        check("max_concurrency", _MAX_CONCURRENCY, max_concurrency)
    check("max_receive_count", _MAX_RECEIVE_COUNT, max_receive_count)
    check("retention_period", _RETENTION, retention_period)
    check("dead_letter_retention_period", _DEAD_LETTER_RETENTION, dead_letter_retention_period)
    if visibility_timeout is None:  # derived from valid inputs, it is always in range
        visibility_timeout = recommended_visibility_timeout(function_timeout, batching_window)
    else:
        check("visibility_timeout", _VISIBILITY_TIMEOUT, visibility_timeout)
    if max_message_age is not None and "retention_period" not in refused.settings:
        check("max_message_age", _max_message_age(retention_period), max_message_age)
    if refused:
        raise refused.error()

    from_reserved = (
        max_concurrency is None
        and isinstance(reserved_concurrency, int)
        and _MAX_CONCURRENCY.low <= reserved_concurrency <= _MAX_CONCURRENCY.high
    )
    if from_reserved:
        max_concurrency = reserved_concurrency  # type: ignore[assignment]
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
                function=FunctionFacts(
                    timeout=function_timeout, reserved_concurrency=reserved_concurrency
                ),
                batch_size=batch_size,
                batching_window=batching_window,
                report_batch_item_failures=report_batch_item_failures,
                max_concurrency=max_concurrency,
                has_filters=has_filters,
            )
        )
    ]
    for finding in findings:
        if finding.level is Level.ERROR:
            refused.add(finding.rule_id, f"{finding.message} [{finding.rule_id}]")
    if refused:
        raise refused.error()

    if max_message_age is None:
        max_message_age = min(max_receive_count * visibility_timeout, retention_period // 2)
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
        max_concurrency_from_reserved=from_reserved,
    )


def _max_message_age(retention_period: int) -> Bound:
    return Bound(
        "max_message_age",
        1,
        retention_period - 1,
        " s",
        f"(below retention_period {retention_period} s, or messages expire before it fires)",
        f"set max_message_age below {retention_period} s, or omit it to derive it",
    )


QUEUE_NAME_MAX_LENGTH = limits.QUEUE_NAME_MAX_LENGTH  # the limit's source: engine.limits
FIFO_SUFFIX = ".fifo"
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def queue_name(setting: str, name: str, fifo: bool) -> str:
    """Return the queue name CloudFormation gets: ``.fifo`` added on FIFO queues; validated.

    A token (a parameter, an import) is used as given: it cannot be checked at synth time.

    Examples
    --------
    >>> queue_name("queue_name", "orders", True)
    'orders.fifo'
    >>> queue_name("queue_name", "orders.fifo", False)
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: queue_name is 'orders.fifo': ... Fix: ...
    """
    if not isinstance(name, str):
        raise type_error(setting, name, "a str", f"{setting}='orders', or omit it")
    if is_string_token(name):
        return name
    base = name.removesuffix(FIFO_SUFFIX)
    if not fifo and base != name:
        raise SafeQueueConfigError(
            f"{setting} is {name!r}: only FIFO queue names end with {FIFO_SUFFIX}. Fix: drop"
            f" {FIFO_SUFFIX}, or set fifo=True."
        )
    full = f"{base}{FIFO_SUFFIX}" if fifo else base
    longest = QUEUE_NAME_MAX_LENGTH - (len(FIFO_SUFFIX) if fifo else 0)
    bad = sorted(set(base) - _NAME_CHARACTERS)
    if not base or len(full) > QUEUE_NAME_MAX_LENGTH or bad:
        problem = (
            f"has characters SQS refuses ({''.join(bad)!r})"
            if bad
            else f"is {len(full)} characters long" + (f" with {FIFO_SUFFIX}" if fifo else "")
        )
        raise SafeQueueConfigError(
            f"{setting} is {name!r}: it {problem}; SQS allows 1..{QUEUE_NAME_MAX_LENGTH}"
            " characters of letters, digits, - and _"
            + (f", {FIFO_SUFFIX} included" if fifo else "")
            + f". Fix: use at most {longest} such characters"
            + (f" before {FIFO_SUFFIX}" if fifo else "")
            + ", or omit it to let CloudFormation name the queue."
        )
    return full
