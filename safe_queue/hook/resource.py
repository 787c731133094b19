"""Resource targets: one mapping, queue or function about to change, judged with what it touches.

- ``AWS::Lambda::EventSourceMapping``: the new properties, with the live queue (and its
  dead-letter queue) and the live function. The function's other SQS mappings
  (``ListEventSourceMappings`` by function) are counted for its reserved concurrency.
- ``AWS::SQS::Queue`` (an update): every mapping that already reads the queue
  (``ListEventSourceMappings`` by queue ARN), and every mapping of the queues whose
  dead-letter queue it is (``ListDeadLetterSourceQueues``), judged with the queue's *new*
  properties and everything else live.
- ``AWS::Lambda::Function`` (an update): every SQS mapping of the function
  (``ListEventSourceMappings`` by function name), judged with its new ``Timeout``,
  ``ReservedConcurrentExecutions``, ``Environment`` and ``CapacityProviderConfig``. This
  is the change no template tool sees: a timeout raised in one stack while the queue lives
  in another. Mappings of an alias or a version are judged with the new configuration too
  (it reaches them when the version is published).

CloudFormation sends a resource's properties, not its physical id or ``Metadata``. For an
update, ``cloudformation:DescribeStackResource`` gives both: the physical id (the queue's
URL, the function's name) and the acknowledgements written in the resource's ``Metadata``
(``safe-queue: {acknowledge: [...]}``, as CloudFormation holds it when the hook runs),
which cover the findings of every mapping judged here. A new queue or function has no
mapping yet; a deleted resource is not judged.

Property values arrive as CloudFormation has them (numbers and booleans may be strings);
a property that is not set takes AWS's default, as it will once deployed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Final
from urllib.parse import urlsplit

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from safe_queue import keys
from safe_queue.arn import Arn, queue_url, service_of
from safe_queue.engine import (
    Acknowledgement,
    FunctionFacts,
    MappingFacts,
    Unknown,
    acknowledgement,
    evaluate_all,
)
from safe_queue.hook.request import FUNCTION_TYPE, MAPPING_TYPE, QUEUE_TYPE, HookRequest
from safe_queue.hook.response import Outcome
from safe_queue.live.aws_errors import describe
from safe_queue.live.facts import mapping_facts
from safe_queue.live.reader import AccountReader, region_of
from safe_queue.report import ReportedFinding, Unreadable, Where

__all__ = ["MAX_WORKERS", "ProposedReader", "evaluate_resource", "function_name"]

MAX_WORKERS: Final = 8
_MAPPING_KEYS: Final = (
    "BatchSize",
    "MaximumBatchingWindowInSeconds",
    "FunctionResponseTypes",
    "ScalingConfig",
    "FilterCriteria",
    "ProvisionedPollerConfig",
)
_QUEUE_ATTRIBUTES: Final = (
    "VisibilityTimeout",
    "MessageRetentionPeriod",
    "FifoQueue",
    "ContentBasedDeduplication",
)
_FLAGS: Final = ("FifoQueue", "ContentBasedDeduplication")
_FUNCTION_KEYS: Final[tuple[str, ...]] = ("Timeout", "Environment", "CapacityProviderConfig")


def function_name(identifier: str) -> str:
    """Return a function's name from its name, partial ARN or ARN, without alias or version.

    Examples
    --------
    >>> function_name("arn:aws:lambda:eu-west-1:123456789012:function:render:live")
    'render'
    >>> function_name("render"), function_name("123456789012:function:render")
    ('render', 'render')
    """
    arn = Arn.parse(identifier)
    text = arn.name if arn is not None else identifier.rsplit("function:", 1)[-1]
    return text.split(":")[0]


class ProposedReader(AccountReader):
    """An :class:`AccountReader` answering for the resource about to change with its new values.

    Everything else is read live.
    """

    def __init__(self, session: boto3.Session, max_workers: int = MAX_WORKERS) -> None:
        super().__init__(session, "hook", max_workers)
        self._proposed_queues: dict[str, Mapping[str, str]] = {}
        self._proposed_functions: dict[str, tuple[Mapping[str, Any], int | None]] = {}

    def propose_queue(self, arn: str, attributes: Mapping[str, str]) -> None:
        """Answer reads of the queue ``arn`` with ``attributes`` (SQS's names and strings)."""
        self._proposed_queues[arn] = attributes

    def propose_function(
        self, name: str, configuration: Mapping[str, Any], reserved: int | None
    ) -> None:
        """Answer reads of the function ``name`` (any alias or version) with these values."""
        self._proposed_functions[name] = (configuration, reserved)

    def queue(self, arn: str, region: str) -> Mapping[str, str] | Unreadable:
        """Return the proposed attributes of the changing queue, else the live ones."""
        proposed = self._proposed_queues.get(arn)
        return proposed if proposed is not None else super().queue(arn, region)

    def function(self, arn: str, region: str) -> Mapping[str, Any] | Unreadable:
        """Return the changing function's proposed configuration, else the live one."""
        proposed = self._proposed_functions.get(function_name(arn))
        return proposed[0] if proposed is not None else super().function(arn, region)

    def reserved_concurrency(self, arn: str, region: str) -> int | Unreadable | None:
        """Return the changing function's proposed reserved concurrency, else the live one."""
        proposed = self._proposed_functions.get(function_name(arn))
        return proposed[1] if proposed is not None else super().reserved_concurrency(arn, region)


@dataclass
class _Found:
    """Mappings found (``ListEventSourceMappings`` items) and the reads that failed."""

    mappings: list[Mapping[str, Any]] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)


def _failure(error: Exception, operation: str, resource: str, region: str) -> Unreadable:
    failure = describe(error, operation, resource, region=region, expected_only=False)
    if failure is None:
        raise error
    return failure


def _list_mappings(
    reader: AccountReader, region: str, found: _Found, **selector: str
) -> list[Mapping[str, Any]]:
    """List the SQS mappings ``selector`` (``EventSourceArn=`` or ``FunctionName=``) names."""
    client = reader.client("lambda", region)
    listed: list[Mapping[str, Any]] = []
    try:
        for page in client.get_paginator("list_event_source_mappings").paginate(**selector):
            listed.extend(
                item
                for item in page.get("EventSourceMappings", [])
                if service_of(item.get("EventSourceArn")) == "sqs"
            )
    except (ClientError, BotoCoreError) as error:
        (value,) = selector.values()
        found.unreadable.append(_failure(error, "lambda:ListEventSourceMappings", value, region))
    return listed


def _physical(
    request: HookRequest, reader: AccountReader
) -> tuple[str, tuple[Acknowledgement, ...], Unreadable | None]:
    """Return the resource's physical id and the acknowledgements in its ``Metadata``."""
    if not request.stack_id or not request.logical_id:
        return "", (), None
    client = reader.client("cloudformation", request.region)
    try:
        detail = client.describe_stack_resource(
            StackName=request.stack_id, LogicalResourceId=request.logical_id
        )["StackResourceDetail"]
    except (ClientError, BotoCoreError) as error:
        where = f"{request.logical_id} of {request.stack_id}"
        return (
            "",
            (),
            _failure(error, "cloudformation:DescribeStackResource", where, request.region),
        )
    raw = detail.get("Metadata") or "{}"
    try:
        metadata = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        metadata = {}
    section = metadata.get(keys.METADATA_SECTION) if isinstance(metadata, dict) else None
    written = section.get(keys.ACKNOWLEDGE) if isinstance(section, dict) else None
    source = f"Metadata of {request.logical_id} in stack {request.stack_id}"
    acknowledgements = tuple(
        acknowledgement(
            item.get("id") if isinstance(item, dict) else item,
            item.get("reason") if isinstance(item, dict) else None,
            source=source,
        )
        for item in (written if isinstance(written, list) else [])
    )
    return str(detail.get("PhysicalResourceId") or ""), acknowledgements, None


def _number(value: Any) -> int | None:
    try:
        return None if value is None else int(str(value))
    except ValueError:
        return None


def _flag(value: Any) -> str:
    return "true" if str(value).lower() == "true" else "false"


def queue_attributes(properties: Mapping[str, Any]) -> dict[str, str]:
    """Return an ``AWS::SQS::Queue``'s properties as ``GetQueueAttributes`` answers them.

    Examples
    --------
    >>> attributes = queue_attributes({"VisibilityTimeout": "60", "FifoQueue": True,
    ...     "RedrivePolicy": {"deadLetterTargetArn": "arn:aws:sqs:eu-west-1:1:dlq",
    ...                       "maxReceiveCount": "5"}})
    >>> attributes["VisibilityTimeout"], attributes["FifoQueue"]
    ('60', 'true')
    >>> attributes["RedrivePolicy"]
    '{"deadLetterTargetArn": "arn:aws:sqs:eu-west-1:1:dlq", "maxReceiveCount": "5"}'
    """
    attributes: dict[str, str] = {}
    for name in _QUEUE_ATTRIBUTES:
        value = properties.get(name)
        if value is not None:
            attributes[name] = _flag(value) if name in _FLAGS else str(value)
    policy = properties.get("RedrivePolicy")
    if policy is not None:
        attributes["RedrivePolicy"] = policy if isinstance(policy, str) else json.dumps(policy)
    return attributes


def _queue_arn(physical_id: str, request: HookRequest) -> str:
    """Return a queue's ARN from its URL (the physical id of an ``AWS::SQS::Queue``)."""
    parts = urlsplit(physical_id)
    path = [p for p in parts.path.split("/") if p]
    if len(path) != 2:
        return ""
    host = (parts.hostname or "").split(".")
    region = host[1] if len(host) > 2 and host[0] == "sqs" else request.region
    return f"arn:{request.partition}:sqs:{region}:{path[0]}:{path[1]}"


def _judge(
    subject: str,
    listed: Sequence[Mapping[str, Any]],
    reader: AccountReader,
    region: str,
    acknowledgements: tuple[Acknowledgement, ...],
    found: _Found,
) -> Outcome:
    """Judge the listed mappings (each once) with ``reader``'s answers."""
    unique = list({item["UUID"]: item for item in listed}.values())
    with ThreadPoolExecutor(max_workers=MAX_WORKERS) as pool:
        read = list(pool.map(lambda item: mapping_facts(item, region, reader), unique))
    facts = [replace(f, acknowledgements=(*f.acknowledgements, *acknowledgements)) for f, _ in read]
    outcome = Outcome(subject, checked=len(unique), unreadable=list(found.unreadable))
    for item, findings, (_, failed) in zip(unique, evaluate_all(facts), read, strict=True):
        queue, function = item["EventSourceArn"], item["FunctionArn"]
        named = f"mapping {item['UUID']} ({_name(queue)} -> {_name(function)})"
        where = Where(queue_arn=queue, function_arn=function)
        outcome.findings.extend(ReportedFinding(f, named, where=where) for f in findings)
        outcome.unreadable.extend(u for u in failed if u not in outcome.unreadable)
    if not unique and not outcome.unreadable:
        outcome.note = "No SQS event source mapping uses it."
    return outcome


def _name(arn: str) -> str:
    parsed = Arn.parse(arn)
    return arn if parsed is None else parsed.name


def _mapping(request: HookRequest, reader: AccountReader, subject: str) -> Outcome:
    properties = request.properties
    source = properties.get("EventSourceArn")
    target = properties.get("FunctionName")
    if not isinstance(source, str) or service_of(source) != "sqs":
        return Outcome(subject, note="Its event source is not an SQS queue: not checked.")
    if not isinstance(target, str) or not target:
        return Outcome(subject, note="It names no function: not checked.")
    physical, acknowledgements, failure = (
        _physical(request, reader) if request.action == "UPDATE" else ("", (), None)
    )
    found = _Found(unreadable=[failure] if failure else [])
    item = {"UUID": request.logical_id, "EventSourceArn": source, "FunctionArn": target}
    item.update({key: properties[key] for key in _MAPPING_KEYS if key in properties})
    facts, failed = mapping_facts(item, request.region, reader)
    facts = replace(facts, name=request.logical_id, acknowledgements=acknowledgements)
    # The function's other SQS mappings share its reserved concurrency.
    others = [
        other
        for other in _list_mappings(reader, request.region, found, FunctionName=target)
        if other.get("EventSourceArn") != source and other.get("UUID") != physical
    ]
    group = [facts]
    if isinstance(facts.function, FunctionFacts):
        unread = Unknown("the queue", "is not read for a mapping the hook does not judge")
        group.extend(
            MappingFacts(
                queue=unread,
                function=facts.function,
                name=str(other.get("UUID")),
                max_concurrency=_number(
                    (other.get("ScalingConfig") or {}).get("MaximumConcurrency")
                ),
            )
            for other in others
        )
    findings = evaluate_all(group)[0]
    outcome = Outcome(subject, checked=1, unreadable=[*found.unreadable, *failed])
    where = Where(queue_arn=source, function_arn=target)
    outcome.findings = [ReportedFinding(f, request.logical_id, where=where) for f in findings]
    return outcome


def _queue(request: HookRequest, reader: ProposedReader, subject: str) -> Outcome:
    physical, acknowledgements, failure = _physical(request, reader)
    if failure is not None:
        return Outcome(subject, unreadable=[failure])
    arn = _queue_arn(physical, request)
    if not arn:
        return Outcome(subject, note="Its queue URL is not known: not checked.")
    reader.propose_queue(arn, queue_attributes(request.properties))
    found = _Found()
    region = region_of(arn, request.region)
    listed = _list_mappings(reader, region, found, EventSourceArn=arn)
    client = reader.client("sqs", region)
    try:
        sources = [
            url
            for page in client.get_paginator("list_dead_letter_source_queues").paginate(
                QueueUrl=queue_url(arn)
            )
            for url in page.get("queueUrls", [])
        ]
    except (ClientError, BotoCoreError) as error:
        found.unreadable.append(_failure(error, "sqs:ListDeadLetterSourceQueues", arn, region))
        sources = []
    for url in sources:
        source_arn = _queue_arn(url, request)
        if source_arn:
            listed.extend(_list_mappings(reader, region, found, EventSourceArn=source_arn))
    return _judge(subject, listed, reader, region, acknowledgements, found)


def _function(request: HookRequest, reader: ProposedReader, subject: str) -> Outcome:
    physical, acknowledgements, failure = _physical(request, reader)
    if failure is not None:
        return Outcome(subject, unreadable=[failure])
    name = physical or str(request.properties.get("FunctionName") or "")
    if not name:
        return Outcome(subject, note="Its function name is not known: not checked.")
    properties = request.properties
    configuration: dict[str, Any] = {
        key: properties[key] for key in _FUNCTION_KEYS if key in properties
    }
    reserved = _number(properties.get("ReservedConcurrentExecutions"))
    reader.propose_function(function_name(name), configuration, reserved)
    found = _Found()
    listed = _list_mappings(reader, request.region, found, FunctionName=name)
    return _judge(subject, listed, reader, request.region, acknowledgements, found)


def evaluate_resource(request: HookRequest, reader: ProposedReader) -> Outcome:
    """Judge a resource target (see the module's docstring).

    Raises
    ------
    safe_queue.engine.AcknowledgementError
        An acknowledgement in the resource's ``Metadata`` is malformed.
    """
    kind = request.target
    subject = f"the {request.action.lower() or 'change'} of {kind} {request.logical_id}".strip()
    if kind not in (MAPPING_TYPE, QUEUE_TYPE, FUNCTION_TYPE):
        return Outcome(subject, note=f"safe-queue does not check {kind}.")
    if request.action == "DELETE":
        return Outcome(subject, note="A deletion is not checked.")
    if kind == MAPPING_TYPE:
        return _mapping(request, reader, subject)
    if request.action != "UPDATE":
        return Outcome(subject, note="A new resource has no event source mapping yet.")
    if kind == QUEUE_TYPE:
        return _queue(request, reader, subject)
    return _function(request, reader, subject)
