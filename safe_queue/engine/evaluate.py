"""Apply every rule of the registry to one mapping's facts, with AWS's defaults applied once."""

from __future__ import annotations

from typing import Any

from safe_queue.engine import limits
from safe_queue.engine.facts import FunctionFacts, MappingFacts, QueueFacts, RedriveFacts, Unknown
from safe_queue.engine.rules import RULES, UNCHECKED, Finding, Level

__all__ = ["evaluate", "rule_inputs"]

Input = int | bool | Unknown | None
"""A rule input: a plain value, :class:`Unknown`, or ``None`` for an absent setting."""


def _default(value: Any, default: Any) -> Any:
    return default if value is None else value


def rule_inputs(facts: MappingFacts) -> dict[str, Input]:
    """Flatten one mapping's facts into the rules' inputs, applying AWS's defaults.

    This is the only place where an unset value becomes AWS's default: visibility 30 s,
    retention 4 days, function timeout 3 s, batch size 10, batching window 0 s, standard
    (not FIFO) queue, no ``ReportBatchItemFailures``, no filters.

    Examples
    --------
    >>> from safe_queue.engine.facts import FunctionFacts, MappingFacts, QueueFacts
    >>> inputs = rule_inputs(MappingFacts(QueueFacts(), FunctionFacts()))
    >>> inputs["visibility_timeout"], inputs["function_timeout"], inputs["batch_size"]
    (30, 3, 10)
    >>> inputs["has_dead_letter_queue"], inputs["max_receive_count"]
    (False, None)
    """
    queue = facts.queue
    function = facts.function
    inputs: dict[str, Input] = {
        "batch_size": _default(facts.batch_size, limits.BATCH_SIZE_DEFAULT),
        "batching_window": _default(facts.batching_window, 0),
        "report_batch_item_failures": _default(facts.report_batch_item_failures, False),
        "max_concurrency": facts.max_concurrency,
        "has_filters": _default(facts.has_filters, False),
        "derived_function_timeout": facts.derived_function_timeout,
    }
    if isinstance(function, FunctionFacts):
        inputs["function_timeout"] = _default(function.timeout, limits.FUNCTION_TIMEOUT_DEFAULT)
        inputs["reserved_concurrency"] = function.reserved_concurrency
    else:
        inputs["function_timeout"] = inputs["reserved_concurrency"] = function
    if isinstance(queue, QueueFacts):
        inputs["visibility_timeout"] = _default(
            queue.visibility_timeout, limits.VISIBILITY_TIMEOUT_DEFAULT
        )
        inputs["retention_period"] = _default(queue.retention_period, limits.RETENTION_DEFAULT)
        inputs["fifo"] = _default(queue.fifo, False)
        inputs.update(_redrive_inputs(queue.redrive))
    else:
        for name in (
            "visibility_timeout",
            "retention_period",
            "fifo",
            "has_dead_letter_queue",
            "max_receive_count",
            "dead_letter_retention_period",
        ):
            inputs[name] = queue
    return inputs


def _redrive_inputs(redrive: RedriveFacts | Unknown | None) -> dict[str, Input]:
    if redrive is None:
        return {
            "has_dead_letter_queue": False,
            "max_receive_count": None,
            "dead_letter_retention_period": None,
        }
    if isinstance(redrive, Unknown):
        return {
            "has_dead_letter_queue": True,
            "max_receive_count": redrive,
            "dead_letter_retention_period": redrive,
        }
    dead_letter = redrive.dead_letter_queue
    return {
        "has_dead_letter_queue": True,
        "max_receive_count": redrive.max_receive_count,
        "dead_letter_retention_period": (
            dead_letter
            if isinstance(dead_letter, Unknown)
            else _default(dead_letter.retention_period, limits.RETENTION_DEFAULT)
        ),
    }


def evaluate(facts: MappingFacts) -> list[Finding]:
    """Apply every rule in :data:`~safe_queue.engine.rules.RULES` to one mapping. Pure.

    A rule with an :class:`~safe_queue.engine.facts.Unknown` input is skipped, and one
    ``info`` finding (``safe-queue:unchecked``) says what could not be checked, why, and
    which rules were skipped. The adapter's ``notes`` (assumed parameter values) are added
    to every message.

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
    inputs = rule_inputs(facts)
    findings: list[Finding] = []
    unknown: dict[Unknown, list[str]] = {}
    for entry in RULES:
        if entry.check is None:
            continue
        args = {name: inputs[name] for name in entry.inputs}
        missing = [value for value in args.values() if isinstance(value, Unknown)]
        if missing:
            for value in dict.fromkeys(missing):
                unknown.setdefault(value, []).append(entry.id)
            continue
        finding = entry.check(**args)
        if finding is not None:
            findings.append(finding)
    if unknown:
        details = "; ".join(
            f"{value.what} {value.why} (skipped: {', '.join(skipped)})"
            for value, skipped in unknown.items()
        )
        findings.append(
            Finding(
                UNCHECKED,
                Level.INFO,
                f"Not checked, because a value is not known: {details}. Fix: make the"
                " resource readable from here (define it in the template or app, give the"
                " parameter a value, grant the read action), or check these settings by hand.",
            )
        )
    if facts.notes:
        assumed = " ".join(facts.notes)
        findings = [Finding(f.rule_id, f.level, f"{f.message} ({assumed})") for f in findings]
    return findings
