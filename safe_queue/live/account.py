"""Audit the SQS -> Lambda event source mappings of a live AWS account with boto3.

For each region: list every event source mapping (paginated), keep the SQS ones, read
the source queue, its dead-letter queue, the function (following a qualified ARN to
its alias or version) and the function's reserved concurrency, build the engine's
:class:`~safe_queue.engine.MappingFacts` and :func:`~safe_queue.engine.evaluate` them,
the same rules ``safe-queue check`` applies to templates.

Read-only: the four actions of :data:`IAM_ACTIONS`, nothing else. Every client retries as
:mod:`safe_queue.retries` sets it for its caller (``audit`` or ``config-rule``).

An audit is complete, or says it is not. A read that still fails after the retries with
an error :mod:`safe_queue.live.aws_errors` expects (access denied, throttled, not found, a
server error, an unreachable endpoint) becomes an :class:`~safe_queue.engine.Unknown` in
that mapping's facts (so the engine reports an ``info`` ``safe-queue:unchecked`` naming
the action, the resource and the error, and still runs the rules that need only what was
read) **and** a :class:`~safe_queue.report.Unreadable` in the report: the audit goes on
with the other mappings, and ``safe-queue audit`` exits 2. Credentials that are refused
stop the audit (:class:`AuditError`). Any other exception is a bug: it propagates, with
the mapping it happened on in its notes.

Speed: each queue, function version and function is read once however many mappings
share it (``GetQueueAttributes`` per queue, ``GetFunctionConfiguration`` per function and
qualifier, ``GetFunctionConcurrency`` per function), by a small thread pool. That is at
most 4 calls per mapping beyond the listing's pages.

No CDK here: this module runs inside the AWS Config rule's function as well.

Examples
--------
>>> queue_url("arn:aws:sqs:eu-west-1:123456789012:invoice-render")
'https://sqs.eu-west-1.amazonaws.com/123456789012/invoice-render'
>>> unqualified_function_arn("arn:aws:lambda:eu-west-1:123456789012:function:render:live")
'arn:aws:lambda:eu-west-1:123456789012:function:render'
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any, Final, Generic, TypeVar

import boto3
import botocore.loaders
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from safe_queue.engine import (
    UNCHECKED,
    Finding,
    FunctionFacts,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
    evaluate,
    limits,
    rule,
)
from safe_queue.live.actions import IAM_ACTIONS, QUEUE_ATTRIBUTES
from safe_queue.live.aws_errors import describe
from safe_queue.report import Report, ReportedFinding, Unreadable
from safe_queue.retries import Caller, client_config

__all__ = [
    "IAM_ACTIONS",
    "AuditError",
    "AuditedMapping",
    "RegionListing",
    "audit",
    "audit_mappings",
    "iam_policy",
    "queue_url",
    "unqualified_function_arn",
    "unreadable",
]

MAX_WORKERS: Final = 8
"""Concurrent lookups: enough to hide latency, few enough not to be throttled."""

T = TypeVar("T")


class AuditError(Exception):
    """The audit cannot run at all: no credentials, or credentials the account refuses."""


def iam_policy() -> dict[str, Any]:
    """Return the least-privilege IAM policy the audit needs, as the README prints it.

    Examples
    --------
    >>> iam_policy()["Statement"][0]["Action"][-1]
    'sqs:GetQueueAttributes'
    """
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "SafeQueueAudit",
                "Effect": "Allow",
                "Action": list(IAM_ACTIONS),
                "Resource": "*",
            }
        ],
    }


@functools.cache
def _dns_suffixes() -> dict[str, str]:
    partitions = botocore.loaders.create_loader().load_data("partitions")["partitions"]
    return {p["id"]: p["outputs"]["dnsSuffix"] for p in partitions}


def queue_url(queue_arn: str) -> str:
    """Build a queue's URL from its ARN, without a ``GetQueueUrl`` call.

    ``arn:<partition>:sqs:<region>:<account>:<name>`` has everything the URL has: the
    URL is ``https://sqs.<region>.<partition's DNS suffix>/<account>/<name>``. SQS finds
    the queue by the account and name in the URL's path (the request itself goes to the
    client's endpoint), so this saves one call per queue and also works for a queue in
    another account. It is also the resource id AWS Config records for an
    ``AWS::SQS::Queue`` (Config's ``resourceId`` of a queue is its URL in this form).
    """
    parts = queue_arn.split(":", 5)
    if len(parts) != 6 or parts[2] != "sqs":
        raise ValueError(
            f"queue ARN {queue_arn!r} is not an SQS queue ARN; expected"
            " arn:<partition>:sqs:<region>:<account>:<name>"
        )
    partition, region, account, name = parts[1], parts[3], parts[4], parts[5]
    suffix = _dns_suffixes().get(partition, "amazonaws.com")
    return f"https://sqs.{region}.{suffix}/{account}/{name}"


def unqualified_function_arn(function_arn: str) -> str:
    """Drop an alias or version from a function ARN (reserved concurrency is per function)."""
    return ":".join(function_arn.split(":")[:7])


def _arn_service(arn: str | None) -> str:
    parts = (arn or "").split(":")
    return parts[2] if len(parts) > 2 else ""


def _arn_region(arn: str, default: str) -> str:
    parts = arn.split(":")
    return parts[3] if len(parts) > 3 and parts[3] else default


class _Once(Generic[T]):
    """Compute each key's value once, even when several threads ask for it together."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, T] = {}
        self._key_locks: dict[str, threading.Lock] = {}

    def get(self, key: str, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                return self._values[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._values:
                    return self._values[key]
            value = compute()
            with self._lock:
                self._values[key] = value
            return value


def _unknown(what: str, verb: str, failure: Unreadable) -> Unknown:
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


def _failure(error: Exception, operation: str, resource: str, region: str) -> Unreadable:
    """Describe an expected AWS error; re-raise anything else (a bug) and refused credentials."""
    fixes = {"denied": _DENIED_FIX, "not-found": _MAPPING_GONE_FIX}
    failure = describe(error, operation, resource, fixes=fixes, region=region)
    if failure is None:
        raise error
    if failure.kind == "refused":
        raise AuditError(
            f"region {region}: the credentials were refused ({failure.code}) on {operation};"
            f" {failure.fix}"
        ) from None
    return failure


_DENIED_FIX: Final = (
    "grant it to the audit's credentials (the IAM policy in docs/audit.md; a queue of another"
    " account must also allow it in its queue policy)"
)
_MAPPING_GONE_FIX: Final = (
    "if it was deleted for good, delete the event source mappings that still name it (aws"
    " lambda delete-event-source-mapping --uuid <mapping UUID>), else audit again once it exists"
)
_DEAD_LETTER_GONE_FIX: Final = (
    "a RedrivePolicy names this dead-letter queue: create it, or point the source queue's"
    " deadLetterTargetArn at one that exists"
)


class _Reader:
    """The account's queues and functions, each read once, from any thread."""

    def __init__(self, session: boto3.Session, caller: Caller, max_workers: int) -> None:
        self._session = session
        self._config = client_config(caller, max_pool_connections=max(10, max_workers))
        self._clients_lock = threading.Lock()
        self._clients: dict[tuple[str, str], Any] = {}
        self._queues: _Once[Mapping[str, str] | Unreadable] = _Once()
        self._functions: _Once[Mapping[str, Any] | Unreadable] = _Once()
        self._concurrency: _Once[int | Unreadable | None] = _Once()

    def client(self, service: str, region: str) -> Any:
        # Creating a client is not thread-safe; using one is.
        with self._clients_lock:
            key = (service, region)
            if key not in self._clients:
                self._clients[key] = self._session.client(
                    service,  # type: ignore[call-overload]
                    region_name=region,
                    config=self._config,
                )
            return self._clients[key]

    def queue(self, arn: str, region: str) -> Mapping[str, str] | Unreadable:
        where = _arn_region(arn, region)

        def read() -> Mapping[str, str] | Unreadable:
            try:
                response = self.client("sqs", where).get_queue_attributes(
                    QueueUrl=queue_url(arn), AttributeNames=list(QUEUE_ATTRIBUTES)
                )
            except (ClientError, BotoCoreError) as error:
                return _failure(error, "sqs:GetQueueAttributes", arn, where)
            attributes: Mapping[str, str] = response.get("Attributes", {})
            return attributes

        return self._queues.get(arn, read)

    def function(self, arn: str, region: str) -> Mapping[str, Any] | Unreadable:
        where = _arn_region(arn, region)

        def read() -> Mapping[str, Any] | Unreadable:
            try:
                response = self.client("lambda", where).get_function_configuration(FunctionName=arn)
            except (ClientError, BotoCoreError) as error:
                return _failure(error, "lambda:GetFunctionConfiguration", arn, where)
            configuration: Mapping[str, Any] = response
            return configuration

        return self._functions.get(arn, read)

    def reserved_concurrency(self, arn: str, region: str) -> int | Unreadable | None:
        function = unqualified_function_arn(arn)
        where = _arn_region(function, region)

        def read() -> int | Unreadable | None:
            try:
                response = self.client("lambda", where).get_function_concurrency(
                    FunctionName=function
                )
            except (ClientError, BotoCoreError) as error:
                return _failure(error, "lambda:GetFunctionConcurrency", function, where)
            value = response.get("ReservedConcurrentExecutions")
            return None if value is None else int(value)

        return self._concurrency.get(function, read)


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
    return (count, target) if _arn_service(target) == "sqs" else unreadable


def _queue_facts(
    arn: str, attributes: Mapping[str, str], dead_letter: Callable[[str], QueueFacts | Unknown]
) -> QueueFacts:
    redrive: RedriveFacts | Unknown | None = None
    raw = attributes.get("RedrivePolicy")
    if raw:
        policy = _redrive_policy(arn, raw)
        redrive = (
            policy
            if isinstance(policy, Unknown)
            else RedriveFacts(max_receive_count=policy[0], dead_letter_queue=dead_letter(policy[1]))
        )
    fifo = attributes.get("FifoQueue")
    return QueueFacts(
        name=arn,
        visibility_timeout=_int(attributes.get("VisibilityTimeout")),
        retention_period=_int(attributes.get("MessageRetentionPeriod")),
        fifo=None if fifo is None else fifo.lower() == "true",
        redrive=redrive,
    )


def _mapping_facts(
    mapping: Mapping[str, Any], region: str, reader: _Reader
) -> tuple[MappingFacts, tuple[Unreadable, ...]]:
    """Build one SQS mapping's facts from ``ListEventSourceMappings`` and the lookups.

    Returns the facts and the reads that failed (each also an ``Unknown`` in the facts).
    """
    queue_arn: str = mapping["EventSourceArn"]
    function_arn: str = mapping["FunctionArn"]
    failed: list[Unreadable] = []

    def dead_letter(arn: str) -> QueueFacts | Unknown:
        attributes = reader.queue(arn, region)
        if isinstance(attributes, Unreadable):
            if attributes.kind == "not-found":
                attributes = replace(attributes, fix=_DEAD_LETTER_GONE_FIX)
            failed.append(attributes)
            return _unknown(f"the dead-letter queue {arn}'s attributes", "are", attributes)
        return QueueFacts(name=arn, retention_period=_int(attributes.get("MessageRetentionPeriod")))

    attributes = reader.queue(queue_arn, region)
    queue: QueueFacts | Unknown
    if isinstance(attributes, Unreadable):
        failed.append(attributes)
        queue = _unknown(f"the queue {queue_arn}'s attributes", "are", attributes)
    else:
        queue = _queue_facts(queue_arn, attributes, dead_letter)
    configuration = reader.function(function_arn, region)
    function: FunctionFacts | Unknown
    if isinstance(configuration, Unreadable):
        failed.append(configuration)
        function = _unknown(f"the function {function_arn}'s configuration", "is", configuration)
    else:
        concurrency = reader.reserved_concurrency(function_arn, region)
        if isinstance(concurrency, Unreadable):
            failed.append(concurrency)
        function = FunctionFacts(
            name=function_arn,
            timeout=_int(configuration.get("Timeout")),
            reserved_concurrency=(
                _unknown(
                    f"the function {concurrency.resource}'s ReservedConcurrentExecutions",
                    "is",
                    concurrency,
                )
                if isinstance(concurrency, Unreadable)
                else concurrency
            ),
        )
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
    )
    return facts, tuple(failed)


def _audit_one(
    mapping: Mapping[str, Any], region: str, reader: _Reader
) -> tuple[MappingFacts, tuple[Unreadable, ...]]:
    """Build one mapping's facts; an unexpected exception goes on, naming the mapping."""
    try:
        return _mapping_facts(mapping, region, reader)
    except (AuditError, NoCredentialsError):
        raise
    except Exception as error:  # a bug: not swallowed, only located
        error.add_note(
            f"safe-queue: while auditing event source mapping {mapping.get('UUID')} in {region}"
            f" (queue {mapping.get('EventSourceArn')}, function {mapping.get('FunctionArn')})"
        )
        raise


def _name(arn: str, kind: str) -> str:
    """Return a queue's or function's name from its ARN (a function keeps its qualifier)."""
    parts = arn.split(":")
    if kind == "function" and len(parts) >= 7 and parts[5] == "function":
        return ":".join(parts[6:])
    return parts[-1]


@dataclass(frozen=True)
class AuditedMapping:
    """One audited SQS event source mapping and what the engine found.

    Attributes
    ----------
    uuid
        The mapping's ``UUID``.
    region
        Where it is.
    queue_arn
        Its source queue (``EventSourceArn``).
    function_arn
        Its function as the mapping names it (with the alias or version, if any).
    findings
        The engine's findings; empty for a mapping that complies (and was read in full).
    unreadable
        The reads that failed for this mapping (its queue, dead-letter queue, function or
        the function's concurrency): what its findings could not take into account.
    """

    uuid: str
    region: str
    queue_arn: str
    function_arn: str
    findings: tuple[Finding, ...] = field(default=())
    unreadable: tuple[Unreadable, ...] = field(default=())

    @property
    def queue_name(self) -> str:
        """The source queue's name (the ARN's last part)."""
        return _name(self.queue_arn, "queue")

    @property
    def function_name(self) -> str:
        """The function's name, with its alias or version if the mapping names one."""
        return _name(self.function_arn, "function")

    def reported(self) -> list[ReportedFinding]:
        """Return the findings located at this mapping, as every output format takes them."""
        extra = {
            "queue_arn": self.queue_arn,
            "function_arn": self.function_arn,
            "queue_name": self.queue_name,
            "function_name": self.function_name,
            "region": self.region,
        }
        return [ReportedFinding(f, self.uuid, extra=dict(extra)) for f in self.findings]


@dataclass
class RegionListing:
    """One region's SQS event source mappings, or why they could not be listed."""

    region: str
    mappings: list[Mapping[str, Any]] = field(default_factory=list)
    failure: Finding | None = None
    unreadable: Unreadable | None = None
    skipped: bool = False


def _list_region(
    reader: _Reader, region: str, page_size: int | None, skip_unavailable: bool
) -> RegionListing:
    listing = RegionListing(region)
    paginator = reader.client("lambda", region).get_paginator("list_event_source_mappings")
    pagination = {} if page_size is None else {"PageSize": page_size}
    try:
        for page in paginator.paginate(PaginationConfig=pagination):
            listing.mappings.extend(
                m
                for m in page.get("EventSourceMappings", [])
                if _arn_service(m.get("EventSourceArn")) == "sqs"
            )
    except (ClientError, BotoCoreError) as error:
        if isinstance(error, NoCredentialsError):
            raise
        failure = describe(
            error,
            "lambda:ListEventSourceMappings",
            region,
            fixes={"denied": "grant lambda:ListEventSourceMappings (see the audit's IAM policy)"},
            region=region,
        )
        if failure is None:
            raise
        if failure.kind == "refused":
            if skip_unavailable:
                listing.skipped = True
                return listing
            raise AuditError(
                f"region {region}: the credentials were refused ({failure.code}); refresh them,"
                " or check that the region is enabled for the account"
            ) from None
        listing.mappings = []
        listing.unreadable = failure
        listing.failure = _region_unchecked(failure)
    return listing


def _region_unchecked(failure: Unreadable) -> Finding:
    reason = _unknown(f"the event source mappings of {failure.resource}", "are", failure)
    return Finding(
        UNCHECKED,
        rule(UNCHECKED).level,
        f"Not checked: {reason.what} {reason.why}, so none of its mappings was audited."
        f" Fix: {failure.fix}, then audit again.",
    )


def audit_mappings(
    session: boto3.Session,
    regions: Sequence[str],
    *,
    max_workers: int = MAX_WORKERS,
    page_size: int | None = None,
    skip_unavailable_regions: bool = False,
    progress: Callable[[int, int], None] | None = None,
    caller: Caller = "audit",
) -> tuple[list[AuditedMapping], list[RegionListing]]:
    """Audit every SQS mapping of ``regions``; return them and each region's listing.

    See :func:`audit`, which turns this into a :class:`~safe_queue.report.Report`; the
    AWS Config rule uses the mappings themselves (``caller="config-rule"``: its retry
    settings, see :mod:`safe_queue.retries`).
    """
    if session.get_credentials() is None:
        raise AuditError(
            "no AWS credentials found; set AWS_PROFILE or pass --profile, or configure"
            " credentials (aws configure, environment variables, an instance role)"
        )
    reader = _Reader(session, caller, max_workers)
    for region in regions:  # create the listing clients before the threads start
        reader.client("lambda", region)
    try:
        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            listings = list(
                pool.map(
                    lambda r: _list_region(reader, r, page_size, skip_unavailable_regions),
                    regions,
                )
            )
            work = [(listing.region, m) for listing in listings for m in listing.mappings]
            futures = {
                pool.submit(_audit_one, mapping, region, reader): index
                for index, (region, mapping) in enumerate(work)
            }
            results: list[tuple[MappingFacts, tuple[Unreadable, ...]] | None] = [None] * len(work)
            try:
                for done, future in enumerate(as_completed(futures), start=1):
                    results[futures[future]] = future.result()
                    if progress is not None:
                        progress(done, len(work))
            except BaseException:
                for pending in futures:
                    pending.cancel()
                raise
    except NoCredentialsError:
        raise AuditError(
            "no AWS credentials found; set AWS_PROFILE or pass --profile, or configure credentials"
        ) from None
    audited = []
    for (region, mapping), result in zip(work, results, strict=True):
        assert result is not None  # every future completed, or the loop raised
        facts, failed = result
        audited.append(
            AuditedMapping(
                uuid=mapping["UUID"],
                region=region,
                queue_arn=mapping["EventSourceArn"],
                function_arn=mapping["FunctionArn"],
                findings=tuple(evaluate(facts)),
                unreadable=failed,
            )
        )
    return audited, listings


def unreadable(
    audited: Iterable[AuditedMapping], listings: Iterable[RegionListing]
) -> list[Unreadable]:
    """Return every failed read once, with the mappings it leaves unchecked.

    A queue, dead-letter queue or function shared by several mappings is read once, so
    one failure can leave several mappings unchecked: it is listed once, naming them all.
    Regions whose mappings could not be listed come first.
    """
    by_read: dict[tuple[str, str], Unreadable] = {}
    for mapping in audited:
        for failure in mapping.unreadable:
            key = (failure.operation, failure.resource)
            known = by_read.get(key, failure)
            by_read[key] = replace(known, mappings=(*known.mappings, mapping.uuid))
    regions = [listing.unreadable for listing in listings if listing.unreadable is not None]
    return [*regions, *by_read.values()]


def audit(
    session: boto3.Session,
    regions: Sequence[str],
    *,
    max_workers: int = MAX_WORKERS,
    page_size: int | None = None,
    skip_unavailable_regions: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Audit every SQS -> Lambda event source mapping of ``regions`` with ``session``.

    Parameters
    ----------
    session
        Credentials and endpoint (``AWS_PROFILE``, ``AWS_ENDPOINT_URL``... as boto3 reads them).
    regions
        The regions to read, each listed in full.
    max_workers
        Concurrent lookups.
    page_size
        ``ListEventSourceMappings`` page size (``MaxItems``); ``None``: AWS's default.
    skip_unavailable_regions
        Leave out a region that refuses the credentials (an opt-in region that is not
        enabled) instead of raising :class:`AuditError`; it is then not in
        ``Report.sources``. ``--all-regions`` uses this.
    progress
        Called as ``progress(done, total)`` after each mapping.

    Returns
    -------
    Report
        Findings located at mapping UUIDs, with ``queue_arn``, ``function_arn``,
        ``queue_name``, ``function_name`` and ``region`` as extra fields;
        ``mappings_checked`` counts every SQS mapping audited; ``sources`` lists the
        regions read (``source_kind`` is ``region``). ``unreadable`` lists every read
        that failed after the retries (the report is then not ``complete``); each also
        gives a ``safe-queue:unchecked`` finding, at the mapping or at the region whose
        mappings could not be listed.

    Raises
    ------
    AuditError
        No credentials, or credentials the account refuses.
    """
    audited, listings = audit_mappings(
        session,
        regions,
        max_workers=max_workers,
        page_size=page_size,
        skip_unavailable_regions=skip_unavailable_regions,
        progress=progress,
    )
    report = Report(
        mappings_checked=len(audited),
        sources=[listing.region for listing in listings if not listing.skipped],
        source_kind="region",
        unreadable=unreadable(audited, listings),
    )
    for listing in listings:
        if listing.failure is not None:
            report.findings.append(
                ReportedFinding(listing.failure, listing.region, extra={"region": listing.region})
            )
    report.findings.extend(_reported(audited))
    return report


def _reported(audited: Iterable[AuditedMapping]) -> list[ReportedFinding]:
    return [finding for mapping in audited for finding in mapping.reported()]
