"""SafeQueueConsumer's numbers: props in, validated and derived settings out. Pure, no CDK.

The consumer's props become the engine's facts (``None`` where a prop is not given, so the
engine supplies AWS's default), and the engine judges them as it judges any template: an
``error`` finding (an AWS limit, or a setting that duplicates or loses messages) refuses
the consumer, a ``warning`` is reported on it. So the construct refuses exactly what
``safe-queue check`` reports as an error, with the same rule ids. What is the construct's
own lives here too: its defaults (``max_receive_count`` 5, dead-letter retention 14 days,
the derived visibility timeout), the age-alarm threshold, and the words that name the props
to change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from safe_queue.cdk._values import (
    Refusals,
    is_string_token,
    plain_bool,
    plain_number,
    type_error,
    whole_seconds,
)
from safe_queue.engine import (
    FailureBackoffFacts,
    Finding,
    FunctionFacts,
    Level,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    Role,
    Unknown,
    evaluate,
    limits,
    recommended_visibility_timeout,
    rule,
    rule_inputs,
    time_to_dead_letter,
)

__all__ = [
    "DEAD_LETTER_RETENTION_DEFAULT",
    "FIFO_SUFFIX",
    "MAX_RECEIVE_COUNT_DEFAULT",
    "QUEUE_NAME_MAX_LENGTH",
    "Plan",
    "plan",
    "plan_props",
    "queue_name",
    "refuse_errors",
    "with_props",
]

MAX_RECEIVE_COUNT_DEFAULT: Final = limits.MAX_RECEIVE_COUNT_GUIDANCE
"""The consumer's ``max_receive_count`` when none is given: AWS's guidance, 5."""
DEAD_LETTER_RETENTION_DEFAULT: Final = limits.RETENTION_MAX
"""The dead-letter queue keeps messages as long as SQS allows (14 days) unless told."""
QUEUE_NAME_MAX_LENGTH: Final = limits.QUEUE_NAME_MAX_LENGTH
FIFO_SUFFIX: Final = limits.FIFO_SUFFIX

# The consumer's prop for each property the engine's rules read (Rule.properties).
_PROPS: Final[dict[tuple[Role, str], str]] = {
    ("queue", "Properties/VisibilityTimeout"): "visibility_timeout (omit it to derive it)",
    ("queue", "Properties/MessageRetentionPeriod"): "retention_period",
    ("queue", "Properties/RedrivePolicy"): "max_receive_count",
    ("queue", "Properties/FifoQueue"): "fifo",
    ("queue", "Properties/ContentBasedDeduplication"): "content_based_deduplication",
    ("queue", "Properties/QueueName"): "queue_name",
    ("dead_letter_queue", "Properties/MessageRetentionPeriod"): "dead_letter_retention_period",
    ("dead_letter_queue", "Properties/QueueName"): "dead_letter_queue_name",
    ("function", "Properties/Timeout"): "the function's timeout (function_timeout if imported)",
    ("function", "Properties/ReservedConcurrentExecutions"): "the function's reserved concurrency",
    ("mapping", "Properties/BatchSize"): "batch_size",
    ("mapping", "Properties/MaximumBatchingWindowInSeconds"): "max_batching_window",
    ("mapping", "Properties/FunctionResponseTypes"): "report_batch_item_failures",
    ("mapping", "Properties/ScalingConfig"): "max_concurrency",
    ("mapping", "Properties/ScalingConfig/MaximumConcurrency"): "max_concurrency",
    ("mapping", "Properties/FilterCriteria"): "filters",
}


def with_props(finding: Finding) -> Finding:
    """Return ``finding`` naming the consumer's props that set what its rule reads."""
    props = dict.fromkeys(
        _PROPS[place] for place in rule(finding.rule_id).properties if place in _PROPS
    )
    if not props:
        return finding
    return Finding(
        finding.rule_id,
        finding.level,
        f"{finding.message} (props: {', '.join(props)})",
        finding.acknowledged,
    )


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
    facts: MappingFacts | None = None
    """The facts the engine judged: what the consumer synthesizes."""
    report_batch_item_failures: bool = True
    fifo: bool = False
    content_based_deduplication: bool = False
    queue_name: str | None = None
    """The source queue's name as given, ``.fifo`` added on FIFO queues; ``None``: none."""
    dead_letter_queue_name: str | None = None
    filters: tuple[Mapping[str, Any], ...] = field(default=())
    failure_backoff: tuple[float, float] | None = None
    """The handler's failure backoff (base, cap), seconds; ``None`` without one."""

    @property
    def max_time_to_dead_letter(self) -> int:
        """Worst case before a failing message is dead-lettered (the engine's retry budget).

        ``max_receive_count x visibility_timeout``; with a failure backoff, the sum over the
        receives (:func:`~safe_queue.engine.budget.time_to_dead_letter`).
        """
        base, cap = self.failure_backoff or (None, None)
        return time_to_dead_letter(
            visibility_timeout=self.visibility_timeout,
            max_receive_count=self.max_receive_count,
            function_timeout=self.function_timeout,
            batching_window=self.batching_window,
            backoff_base=base,
            backoff_cap=cap,
        )

    @property
    def reported_rule_ids(self) -> tuple[str, ...]:
        """The ids of the warnings the construct reports itself, for "one verdict".

        Infos (``safe-queue:unchecked``) are left out: another surface may know more.
        """
        return tuple(dict.fromkeys(w.rule_id for w in self.warnings if w.level is Level.WARNING))


def refuse_errors(findings: list[Finding], refused: Refusals) -> None:
    """Add every error of ``findings`` (already :func:`with_props`) to ``refused``."""
    for finding in findings:
        if finding.level is Level.ERROR and finding.rule_id not in refused.settings:
            refused.add(finding.rule_id, f"{finding.message} [{finding.rule_id}]")


def plan(
    *,
    function_timeout: int | None,
    batch_size: int | None,
    batching_window: int | None,
    max_concurrency: int | None,
    max_receive_count: int | None,
    retention_period: int | None,
    dead_letter_retention_period: int | None,
    visibility_timeout: int | None,
    report_batch_item_failures: bool,
    fifo: bool,
    content_based_deduplication: bool,
    max_message_age: int | None,
    reserved_concurrency: int | Unknown | None = None,
    has_filters: bool = False,
    queue_name: str | None = None,
    dead_letter_queue_name: str | None = None,
    failure_backoff: tuple[float, float] | None = None,
    refusals: Refusals | None = None,
) -> Plan:
    """Judge the props (plain values; ``None``: not given) and derive the rest.

    The props become one mapping's facts and the engine judges them (AWS's defaults for what
    is not given, the consumer's own for ``max_receive_count``, the dead-letter retention
    and the visibility timeout); every ``error`` is collected in ``refusals`` (settings
    already refused there, e.g. for their type, were passed as ``None``), and with any
    refusal one :class:`~safe_queue.SafeQueueConfigError` lists them all.

    With ``reserved_concurrency`` R and no ``max_concurrency``, ``max_concurrency`` is R
    when R is a valid maximum concurrency (2..1,000); otherwise the engine's concurrency
    rules report it.

    Examples
    --------
    >>> p = plan(function_timeout=180, batch_size=5, batching_window=2, max_concurrency=None,
    ...     max_receive_count=None, retention_period=None, dead_letter_retention_period=None,
    ...     visibility_timeout=None, report_batch_item_failures=True, fifo=False,
    ...     content_based_deduplication=False, max_message_age=None, reserved_concurrency=20)
    >>> p.visibility_timeout, p.max_time_to_dead_letter, p.max_concurrency, p.warnings
    (1082, 5410, 20, ())
    """
    refused = Refusals() if refusals is None else refusals
    # AWS's defaults for what is not given, from the engine (function timeout, batch size,
    # batching window, retention); the visibility timeout is derived from them.
    defaults = rule_inputs(
        MappingFacts(
            QueueFacts(retention_period=retention_period),
            FunctionFacts(timeout=function_timeout),
            batch_size=batch_size,
            batching_window=batching_window,
        )
    )
    effective_timeout = int(defaults["function_timeout"])  # type: ignore[arg-type]
    effective_window = int(defaults["batching_window"])  # type: ignore[arg-type]
    if visibility_timeout is None:
        visibility_timeout = recommended_visibility_timeout(effective_timeout, effective_window)
    receives = MAX_RECEIVE_COUNT_DEFAULT if max_receive_count is None else max_receive_count
    dead_letter_retention = (
        DEAD_LETTER_RETENTION_DEFAULT
        if dead_letter_retention_period is None
        else dead_letter_retention_period
    )
    from_reserved = (
        max_concurrency is None
        and isinstance(reserved_concurrency, int)
        and limits.MAX_CONCURRENCY_MIN <= reserved_concurrency <= limits.MAX_CONCURRENCY_MAX
    )
    if from_reserved:
        max_concurrency = reserved_concurrency  # type: ignore[assignment]
    # The engine judges the pair this consumer would synthesize, as any surface would.
    facts = MappingFacts(
        queue=QueueFacts(
            visibility_timeout=visibility_timeout,
            retention_period=retention_period,
            fifo=fifo,
            queue_name=queue_name,
            content_based_deduplication=content_based_deduplication,
            redrive=RedriveFacts(
                receives,
                QueueFacts(
                    retention_period=dead_letter_retention,
                    fifo=fifo,
                    queue_name=dead_letter_queue_name,
                ),
            ),
        ),
        function=FunctionFacts(
            timeout=function_timeout,
            reserved_concurrency=reserved_concurrency,
            failure_backoff=None
            if failure_backoff is None
            else FailureBackoffFacts(*failure_backoff),
        ),
        batch_size=batch_size,
        batching_window=batching_window,
        report_batch_item_failures=report_batch_item_failures,
        max_concurrency=max_concurrency,
        has_filters=has_filters,
    )
    findings = [with_props(f) for f in evaluate(facts)]
    refuse_errors(findings, refused)
    retention = int(defaults["retention_period"])  # type: ignore[arg-type]
    if max_message_age is not None and not 1 <= max_message_age < retention:
        refused.add(
            "max_message_age",
            f"max_message_age is {max_message_age} s; allowed 1..{retention - 1} s (below"
            f" retention_period {retention} s, or messages expire before it fires). Fix: set"
            f" max_message_age below {retention} s, or omit it to derive it.",
        )
    if refused:
        raise refused.error()

    budget = time_to_dead_letter(
        visibility_timeout=visibility_timeout,
        max_receive_count=receives,
        function_timeout=effective_timeout,
        batching_window=effective_window,
        backoff_base=None if failure_backoff is None else failure_backoff[0],
        backoff_cap=None if failure_backoff is None else failure_backoff[1],
    )
    return Plan(
        failure_backoff=failure_backoff,
        report_batch_item_failures=report_batch_item_failures,
        fifo=fifo,
        content_based_deduplication=content_based_deduplication,
        function_timeout=effective_timeout,
        batching_window=effective_window,
        batch_size=int(defaults["batch_size"]),  # type: ignore[arg-type]
        max_concurrency=max_concurrency,
        max_receive_count=receives,
        retention_period=retention,
        dead_letter_retention_period=dead_letter_retention,
        visibility_timeout=visibility_timeout,
        max_message_age=(
            min(budget, retention // 2) if max_message_age is None else max_message_age
        ),
        warnings=tuple(f for f in findings if f.level is not Level.ERROR),
        max_concurrency_from_reserved=from_reserved,
        facts=facts,
    )


def queue_name(setting: str, name: str, fifo: bool) -> str:
    """Return the queue name CloudFormation gets: ``.fifo`` added on FIFO queues.

    SQS's naming rules are the engine's (``safe-queue:queue-name-invalid``, judged with
    the rest in :func:`plan`); a token (a parameter, an import) is used as given.

    Examples
    --------
    >>> queue_name("queue_name", "orders", True)
    'orders.fifo'
    >>> queue_name("queue_name", 5, True)
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: queue_name is 5 (an int); expected a str. Fix: ...
    """
    if not isinstance(name, str):
        raise type_error(setting, name, "a str", f"{setting}='orders', or omit it")
    if is_string_token(name) or not fifo or name.endswith(FIFO_SUFFIX):
        return name
    return f"{name}{FIFO_SUFFIX}"


_FILTERS_FIX = 'filters=[lambda_.FilterCriteria.filter({"body": {...}})]'


def plan_props(
    props: Mapping[str, Any],
    *,
    function_timeout: int | None,
    reserved_concurrency: int | Unknown | None,
    refusals: Refusals,
) -> Plan:
    """Check the type of every numeric, flag, name and filter prop, then :func:`plan` them.

    ``props`` are the consumer's props as given (``batch_size``, ``max_batching_window``,
    ... ``filters``); a prop of the wrong type is refused in ``refusals`` and judged as not
    given, so that every refusal of the consumer is found in one pass.

    Raises
    ------
    SafeQueueConfigError
        Any refusal (those already in ``refusals`` included), all listed together.
    """

    def number(setting: str) -> int | None:
        value = props.get(setting)
        return None if value is None else refusals.attempt(setting, plain_number, setting, value)

    def seconds(setting: str) -> int | None:
        value = props.get(setting)
        return None if value is None else refusals.attempt(setting, whole_seconds, setting, value)

    def flag(setting: str, default: bool) -> bool:
        value = props.get(setting, default)
        checked = refusals.attempt(setting, plain_bool, setting, value)
        return default if checked is None else checked

    fifo = flag("fifo", False)
    names: list[str | None] = []
    for setting in ("queue_name", "dead_letter_queue_name"):
        name = props.get(setting)
        names.append(
            None
            if name is None or "fifo" in refusals.settings  # the suffix depends on it
            else refusals.attempt(setting, queue_name, setting, name, fifo)
        )
    if names[0] is not None and names[0] == names[1]:
        refusals.add(
            "dead_letter_queue_name",
            f"dead_letter_queue_name is {props.get('dead_letter_queue_name')!r}, the same as"
            " queue_name; two queues cannot share a name in one account and region. Fix: give"
            " the dead-letter queue another name, or omit dead_letter_queue_name.",
        )
    filters = props.get("filters")
    if filters is not None and (
        not isinstance(filters, Sequence)
        or isinstance(filters, str)
        or not all(isinstance(f, Mapping) for f in filters)
    ):
        refusals.add(
            "filters",
            str(type_error("filters", filters, "a list of filter criteria", _FILTERS_FIX)),
        )
        filters = None
    judged = [None if name is None or is_string_token(name) else name for name in names]
    backoff = props.get("failure_backoff")
    backoff_settings: tuple[float, float] | None = None
    if backoff is not None:
        base, cap = getattr(backoff, "base", None), getattr(backoff, "cap", None)
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (base, cap)):
            refusals.add(
                "failure_backoff",
                str(
                    type_error(
                        "failure_backoff",
                        backoff,
                        "a safe_queue.runtime.FailureBackoff",
                        "failure_backoff=FailureBackoff(base=30, cap=900)",
                    )
                ),
            )
        else:
            backoff_settings = (float(base), float(cap))  # type: ignore[arg-type]
    plan_ = plan(
        function_timeout=function_timeout,
        batch_size=number("batch_size"),
        batching_window=seconds("max_batching_window"),
        max_concurrency=number("max_concurrency"),
        max_receive_count=number("max_receive_count"),
        retention_period=seconds("retention_period"),
        dead_letter_retention_period=seconds("dead_letter_retention_period"),
        visibility_timeout=seconds("visibility_timeout"),
        report_batch_item_failures=flag("report_batch_item_failures", True),
        fifo=fifo,
        content_based_deduplication=flag("content_based_deduplication", False),
        max_message_age=seconds("max_message_age"),
        reserved_concurrency=None if refusals else reserved_concurrency,
        has_filters=bool(filters),
        queue_name=judged[0],
        dead_letter_queue_name=judged[1],
        failure_backoff=backoff_settings,
        refusals=refusals,
    )
    return dataclasses.replace(
        plan_,
        queue_name=names[0],
        dead_letter_queue_name=names[1],
        filters=tuple(filters or ()),
    )
