"""The engine's facts of one SQS mapping, from what the account's APIs answered.

``ListEventSourceMappings`` gives the mapping; :class:`~safe_queue.live.reader.AccountReader`
the queue, its dead-letter queue, the function (configuration, environment) and its reserved
concurrency. A read that failed becomes an :class:`~safe_queue.engine.Unknown` naming the
action, the resource and the error, so the engine reports it as ``safe-queue:unchecked``
and still runs the rules that need only what was read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from safe_queue import keys
from safe_queue.arn import Arn, service_of, unqualified_function_arn
from safe_queue.engine import (
    FailureBackoffFacts,
    FunctionFacts,
    MappingFacts,
    ProvisionedFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
    limits,
)
from safe_queue.live.reader import DEAD_LETTER_GONE_FIX, AccountReader
from safe_queue.report import Unreadable

__all__ = [
    "mapping_facts",
    "queue_facts",
    "read_dead_letter_queue",
    "read_function",
    "read_queue",
    "unknown",
]


def unknown(what: str, verb: str, failure: Unreadable) -> Unknown:
    """Say what a failed read leaves unknown, naming the action, the resource and the error."""
    attempts = failure.attempts or 1
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    error = f"{failure.code}: {failure.message}" if failure.message else failure.code
    if failure.kind == "denied":
        return Unknown(
            what, f"{verb} unknown: {failure.operation} on {failure.resource} was denied ({error})"
        )
    if failure.kind == "not-found":
        return Unknown(
            what,
            f"{verb} unknown: {failure.resource} does not exist (deleted?)"
            f" ({failure.code} from {failure.operation})",
        )
    return Unknown(
        what, f"{verb} unknown: {failure.operation} on {failure.resource} failed{tried} ({error})"
    )


def _int(value: str | int | None) -> int | None:
    return None if value is None else int(value)


def _redrive_policy(arn: str, raw: str) -> tuple[int, str] | Unknown:
    """Parse a ``RedrivePolicy``: ``maxReceiveCount`` and the dead-letter queue's ARN."""
    unreadable = Unknown(f"the queue {arn}'s RedrivePolicy", f"is not readable: {raw!r}")
    try:
        policy = json.loads(raw)
        count, target = int(policy["maxReceiveCount"]), str(policy["deadLetterTargetArn"])
    except (ValueError, KeyError, TypeError):
        return unreadable
    return (count, target) if service_of(target) == "sqs" else unreadable


def _flag(value: str | None) -> bool | None:
    return None if value is None else value.lower() == "true"


def queue_facts(
    arn: str,
    attributes: Mapping[str, str],
    dead_letter: Callable[[str], QueueFacts | Unknown] | None,
) -> QueueFacts:
    """Return a queue's facts from its SQS attributes (``GetQueueAttributes``' names).

    ``dead_letter`` reads the dead-letter queue its ``RedrivePolicy`` names (``None``: the
    policy is not followed, as for a dead-letter queue itself).
    """
    redrive: RedriveFacts | Unknown | None = None
    raw = attributes.get("RedrivePolicy")
    if raw and dead_letter is not None:
        policy = _redrive_policy(arn, raw)
        redrive = (
            RedriveFacts(policy, policy)
            if isinstance(policy, Unknown)  # there is one, but it cannot be read
            else RedriveFacts(max_receive_count=policy[0], dead_letter_queue=dead_letter(policy[1]))
        )
    parsed = Arn.parse(arn)
    return QueueFacts(
        name=arn,
        visibility_timeout=_int(attributes.get("VisibilityTimeout")),
        retention_period=_int(attributes.get("MessageRetentionPeriod")),
        fifo=_flag(attributes.get("FifoQueue")),
        redrive=redrive,
        queue_name=None if parsed is None else parsed.name,
        content_based_deduplication=_flag(attributes.get("ContentBasedDeduplication")),
    )


def _backoff(configuration: Mapping[str, Any]) -> FailureBackoffFacts | Unknown | None:
    """Return the failure backoff a SafeQueueConsumer declares in the function's environment."""
    variables = (configuration.get("Environment") or {}).get("Variables") or {}
    base, cap = variables.get(keys.BACKOFF_BASE_ENV), variables.get(keys.BACKOFF_CAP_ENV)
    if base is None and cap is None:
        return None
    try:
        return FailureBackoffFacts(float(str(base)), float(str(cap)))
    except ValueError:
        return Unknown(
            "the function's failure backoff (Environment)",
            f"is {keys.BACKOFF_BASE_ENV}={base!r}, {keys.BACKOFF_CAP_ENV}={cap!r}, not two"
            " numbers of seconds",
        )


def _provisioned(mapping: Mapping[str, Any]) -> ProvisionedFacts | None:
    config = mapping.get("ProvisionedPollerConfig")
    if not isinstance(config, Mapping):
        return None
    return ProvisionedFacts(
        minimum_pollers=_int(config.get("MinimumPollers")),
        maximum_pollers=_int(config.get("MaximumPollers")),
    )


def read_queue(
    arn: str, region: str, reader: AccountReader
) -> tuple[QueueFacts | Unknown, tuple[Unreadable, ...]]:
    """Read a source queue and its dead-letter queue into facts.

    Returns the queue's facts (an ``Unknown`` naming the failed read if its attributes
    could not be read) and the reads that failed.
    """
    failed: list[Unreadable] = []

    def dead_letter(target: str) -> QueueFacts | Unknown:
        facts, failures = read_dead_letter_queue(target, region, reader)
        failed.extend(failures)
        return facts

    attributes = reader.queue(arn, region)
    if isinstance(attributes, Unreadable):
        return unknown(f"the queue {arn}'s attributes", "are", attributes), (attributes,)
    queue = queue_facts(arn, attributes, dead_letter)
    return queue, tuple(failed)


def read_dead_letter_queue(
    arn: str, region: str, reader: AccountReader
) -> tuple[QueueFacts | Unknown, tuple[Unreadable, ...]]:
    """Read a dead-letter queue into facts (its own redrive policy is not followed)."""
    attributes = reader.queue(arn, region)
    if isinstance(attributes, Unreadable):
        if attributes.kind == "not-found":
            attributes = replace(attributes, fix=DEAD_LETTER_GONE_FIX)
        what = f"the dead-letter queue {arn}'s attributes"
        return unknown(what, "are", attributes), (attributes,)
    return queue_facts(arn, attributes, None), ()


def read_function(
    arn: str, region: str, reader: AccountReader
) -> tuple[FunctionFacts | Unknown, tuple[Unreadable, ...]]:
    """Read a function (version) and its reserved concurrency into facts.

    ``arn`` may also be a function's name or partial ARN, as ``GetFunctionConfiguration``
    takes it. Returns the facts and the reads that failed.
    """
    configuration = reader.function(arn, region)
    if isinstance(configuration, Unreadable):
        what = f"the function {arn}'s configuration"
        return unknown(what, "is", configuration), (configuration,)
    concurrency = reader.reserved_concurrency(arn, region)
    function = FunctionFacts(
        name=arn,
        key=unqualified_function_arn(arn),
        capacity_provider=True if configuration.get("CapacityProviderConfig") else None,
        failure_backoff=_backoff(configuration),
        timeout=_int(configuration.get("Timeout")),
        reserved_concurrency=(
            unknown(
                f"the function {concurrency.resource}'s ReservedConcurrentExecutions",
                "is",
                concurrency,
            )
            if isinstance(concurrency, Unreadable)
            else concurrency
        ),
    )
    return function, (concurrency,) if isinstance(concurrency, Unreadable) else ()


def mapping_facts(
    mapping: Mapping[str, Any], region: str, reader: AccountReader
) -> tuple[MappingFacts, tuple[Unreadable, ...]]:
    """Build one SQS mapping's facts from ``ListEventSourceMappings`` and the lookups.

    Returns the facts and the reads that failed (each also an ``Unknown`` in the facts).
    """
    queue, queue_failed = read_queue(mapping["EventSourceArn"], region, reader)
    function, function_failed = read_function(mapping["FunctionArn"], region, reader)
    response_types = mapping.get("FunctionResponseTypes")
    scaling = mapping.get("ScalingConfig") or {}
    filters = mapping.get("FilterCriteria")
    facts = MappingFacts(
        queue=queue,
        function=function,
        name=mapping["UUID"],
        batch_size=_int(mapping.get("BatchSize")),
        batching_window=_int(mapping.get("MaximumBatchingWindowInSeconds")),
        report_batch_item_failures=(
            None if response_types is None else limits.REPORT_BATCH_ITEM_FAILURES in response_types
        ),
        max_concurrency=_int(scaling.get("MaximumConcurrency")),
        has_filters=None if filters is None else bool(filters.get("Filters")),
        provisioned=_provisioned(mapping),
    )
    return facts, (*queue_failed, *function_failed)
