"""Apply every rule to the mappings of a run: AWS's defaults, acknowledgements, unknowns.

:func:`evaluate_all` is what every surface calls with all the mappings it read (a rule
such as ``max-concurrency-sum-above-reserved-concurrency`` spans the mappings of one
function); :func:`evaluate` is the same for one mapping alone. :func:`rule_inputs` is the
only place where a setting that is not set becomes AWS's default.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from safe_queue.engine import limits
from safe_queue.engine.facts import (
    Acknowledgement,
    FailureBackoffFacts,
    FunctionFacts,
    MappingFacts,
    ProvisionedFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
)
from safe_queue.engine.rule import Finding
from safe_queue.engine.rules import RULES
from safe_queue.engine.rules.unchecked import unchecked

__all__ = ["Input", "evaluate", "evaluate_all", "rule_inputs"]

Input = int | float | bool | str | Unknown | None
"""A rule input: a plain value, :class:`Unknown`, or ``None`` for an absent setting."""


def _default(value: Any, default: Any) -> Any:
    return default if value is None else value


def _queue_inputs(queue: QueueFacts | Unknown) -> dict[str, Input]:
    if isinstance(queue, Unknown):
        names = (
            "visibility_timeout",
            "retention_period",
            "fifo",
            "queue_name",
            "content_based_deduplication",
        )
        # Whether it has a dead-letter queue is as unknown as the rest of it.
        unknown: dict[str, Input] = dict.fromkeys(names, queue)
        return unknown | _redrive_inputs(queue)
    return {
        "visibility_timeout": _default(queue.visibility_timeout, limits.VISIBILITY_TIMEOUT_DEFAULT),
        "retention_period": _default(queue.retention_period, limits.RETENTION_DEFAULT),
        "fifo": _default(queue.fifo, False),
        "queue_name": queue.queue_name,
        "content_based_deduplication": _default(queue.content_based_deduplication, False),
    } | _redrive_inputs(queue.redrive)


_DEAD_LETTER = (
    "max_receive_count",
    "dead_letter_retention_period",
    "dead_letter_fifo",
    "dead_letter_queue_name",
    "dead_letter_content_based_deduplication",
)


def _redrive_inputs(redrive: RedriveFacts | Unknown | None) -> dict[str, Input]:
    if redrive is None:
        return {"has_dead_letter_queue": False} | dict.fromkeys(_DEAD_LETTER)
    if isinstance(redrive, Unknown):  # not even known whether there is one
        unknown: dict[str, Input] = dict.fromkeys(("has_dead_letter_queue", *_DEAD_LETTER), redrive)
        return unknown
    dead_letter = redrive.dead_letter_queue
    inputs: dict[str, Input] = {
        "has_dead_letter_queue": True,
        "max_receive_count": redrive.max_receive_count,
    }
    if isinstance(dead_letter, Unknown):
        return inputs | dict.fromkeys(_DEAD_LETTER[1:], dead_letter)
    return inputs | {
        "dead_letter_retention_period": _default(
            dead_letter.retention_period, limits.RETENTION_DEFAULT
        ),
        "dead_letter_fifo": _default(dead_letter.fifo, False),
        "dead_letter_queue_name": dead_letter.queue_name,
        "dead_letter_content_based_deduplication": _default(
            dead_letter.content_based_deduplication, False
        ),
    }


def _function_inputs(function: FunctionFacts | Unknown) -> dict[str, Input]:
    if isinstance(function, Unknown):
        names = (
            "function_timeout",
            "reserved_concurrency",
            "capacity_provider",
            "backoff_base",
            "backoff_cap",
        )
        return dict.fromkeys(names, function)
    backoff = function.failure_backoff
    return {
        "function_timeout": _default(function.timeout, limits.FUNCTION_TIMEOUT_DEFAULT),
        "reserved_concurrency": function.reserved_concurrency,
        "capacity_provider": _default(function.capacity_provider, False),
        "backoff_base": backoff.base if isinstance(backoff, FailureBackoffFacts) else backoff,
        "backoff_cap": backoff.cap if isinstance(backoff, FailureBackoffFacts) else backoff,
    }


def _mapping_inputs(facts: MappingFacts) -> dict[str, Input]:
    provisioned = facts.provisioned
    inputs: dict[str, Input] = {
        "batch_size": _default(facts.batch_size, limits.BATCH_SIZE_DEFAULT),
        "batching_window": _default(facts.batching_window, limits.BATCHING_WINDOW_DEFAULT),
        "report_batch_item_failures": _default(facts.report_batch_item_failures, False),
        "max_concurrency": facts.max_concurrency,
        "has_filters": _default(facts.has_filters, False),
        "derived_function_timeout": facts.derived_function_timeout,
    }
    if isinstance(provisioned, ProvisionedFacts):
        return inputs | {
            "provisioned": True,
            "minimum_pollers": _default(
                provisioned.minimum_pollers, limits.MINIMUM_POLLERS_DEFAULT
            ),
            "maximum_pollers": _default(
                provisioned.maximum_pollers, limits.MAXIMUM_POLLERS_DEFAULT
            ),
        }
    if isinstance(provisioned, Unknown):
        return inputs | dict.fromkeys(
            ("provisioned", "minimum_pollers", "maximum_pollers"), provisioned
        )
    return inputs | {"provisioned": False, "minimum_pollers": None, "maximum_pollers": None}


def rule_inputs(
    facts: MappingFacts,
    *,
    function_sqs_mappings: int = 1,
    function_max_concurrency_total: int | Unknown | None = None,
) -> dict[str, Input]:
    """Flatten one mapping's facts into the rules' inputs, applying AWS's defaults.

    This is the only place where an unset value becomes AWS's default: visibility 30 s,
    retention 4 days, function timeout 3 s, batch size 10, batching window 0 s, standard
    (not FIFO) queue, no ``ReportBatchItemFailures``, no filters, provisioned pollers 2 and
    200. A mapping without ``ProvisionedPollerConfig`` has ``provisioned`` False.

    ``function_sqs_mappings`` and ``function_max_concurrency_total`` describe the other
    SQS mappings of the same function (:func:`evaluate_all` computes them); alone, the
    mapping is its function's only one.

    Examples
    --------
    >>> from safe_queue.engine.facts import FunctionFacts, MappingFacts, QueueFacts
    >>> inputs = rule_inputs(MappingFacts(QueueFacts(), FunctionFacts()))
    >>> inputs["visibility_timeout"], inputs["function_timeout"], inputs["batch_size"]
    (30, 3, 10)
    >>> inputs["has_dead_letter_queue"], inputs["max_receive_count"], inputs["provisioned"]
    (False, None, False)
    """
    return (
        _mapping_inputs(facts)
        | _queue_inputs(facts.queue)
        | _function_inputs(facts.function)
        | {
            "function_sqs_mappings": function_sqs_mappings,
            "function_max_concurrency_total": (
                facts.max_concurrency
                if function_sqs_mappings == 1
                else function_max_concurrency_total
            ),
        }
    )


def _judge(facts: MappingFacts, inputs: dict[str, Input]) -> list[Finding]:
    findings: list[Finding] = []
    skipped: dict[Unknown, list[str]] = {}
    for entry in RULES:
        if entry.check is None:
            continue
        args = {name: inputs[name] for name in entry.inputs}
        missing = [value for value in args.values() if isinstance(value, Unknown)]
        if missing:
            for value in dict.fromkeys(missing):
                skipped.setdefault(value, []).append(entry.id)
            continue
        violation = entry.check(**args)
        if violation is not None:
            findings.append(entry.finding(violation))
    if skipped:
        findings.append(unchecked(skipped.items()))
    if facts.notes:
        assumed = " ".join(facts.notes)
        findings = [dataclasses.replace(f, message=f"{f.message} ({assumed})") for f in findings]
    by_rule: dict[str, Acknowledgement] = {}
    for acknowledgement in facts.acknowledgements:
        by_rule.setdefault(acknowledgement.rule_id, acknowledgement)
    return [dataclasses.replace(f, acknowledged=by_rule.get(f.rule_id)) for f in findings]


def _group_totals(mappings: Sequence[MappingFacts]) -> int | Unknown | None:
    """Return the sum of the mappings' MaximumConcurrency; None when one has none."""
    total = 0
    for facts in mappings:
        value = facts.max_concurrency
        if isinstance(value, Unknown) or value is None:
            return value
        total += value
    return total


def evaluate_all(mappings: Sequence[MappingFacts]) -> list[list[Finding]]:
    """Apply every rule to every mapping of a run; one list of findings per mapping. Pure.

    Mappings whose functions have the same non-empty :attr:`FunctionFacts.key` share that
    function (its reserved concurrency must cover their MaximumConcurrency together). A rule
    with an :class:`~safe_queue.engine.facts.Unknown` input is skipped, and one ``info``
    finding (``safe-queue:unchecked``) per mapping says what could not be checked, why,
    and which rules were skipped. The adapter's ``notes`` (assumed parameter values) are
    added to every message, and findings covered by the mapping's acknowledgements are
    marked (:attr:`Finding.acknowledged`).
    """
    groups: dict[str, list[MappingFacts]] = {}
    for facts in mappings:
        function = facts.function
        if isinstance(function, FunctionFacts) and function.key:
            groups.setdefault(function.key, []).append(facts)
    # each shared function's mapping count and MaximumConcurrency total, summed once
    shared = {key: (len(group), _group_totals(group)) for key, group in groups.items()}
    results = []
    for facts in mappings:
        function = facts.function
        count, total = (
            shared[function.key]
            if isinstance(function, FunctionFacts) and function.key and shared[function.key][0] > 1
            else (1, None)
        )
        inputs = rule_inputs(
            facts, function_sqs_mappings=count, function_max_concurrency_total=total
        )
        results.append(_judge(facts, inputs))
    return results


def evaluate(facts: MappingFacts) -> list[Finding]:
    """Apply every rule in :data:`~safe_queue.engine.rules.RULES` to one mapping alone. Pure.

    See :func:`evaluate_all`, which surfaces that read several mappings call instead.

    Examples
    --------
    >>> from safe_queue.engine.facts import (FunctionFacts, MappingFacts, QueueFacts,
    ...     RedriveFacts, Unknown)
    >>> dlq = RedriveFacts(5, QueueFacts(retention_period=1_209_600))
    >>> seed = MappingFacts(QueueFacts(visibility_timeout=60, redrive=dlq),
    ...     FunctionFacts(timeout=180), batch_size=5, batching_window=2,
    ...     report_batch_item_failures=True)
    >>> [f.rule_id for f in evaluate(seed)]
    ['safe-queue:visibility-below-function-timeout']
    >>> imported = MappingFacts(seed.queue, Unknown("the function's Timeout", "is imported"))
    >>> [(f.rule_id, f.level.value) for f in evaluate(imported)]
    [('safe-queue:no-report-batch-item-failures', 'warning'), ('safe-queue:unchecked', 'info')]
    """
    return evaluate_all([facts])[0]
