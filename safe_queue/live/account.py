"""Audit the SQS -> Lambda event source mappings of a live AWS account with boto3.

For each region: list every event source mapping (paginated), keep the SQS ones, read
the source queue, its dead-letter queue, the function (following a qualified ARN to
its alias or version) and the function's reserved concurrency, build the engine's
:class:`~safe_queue.engine.MappingFacts` and :func:`~safe_queue.engine.evaluate` them,
the same rules ``safe-queue check`` applies to templates.

Read-only: the four actions of :data:`IAM_ACTIONS`, nothing else. A lookup that is
denied, or whose resource was deleted meanwhile, becomes an
:class:`~safe_queue.engine.Unknown` in that mapping's facts (so the engine reports an
``info`` ``safe-queue:unchecked`` naming the action or the resource) and the audit goes
on. Throttling is retried by botocore's adaptive retry mode.

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
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

import boto3
import botocore.loaders
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
)

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
from safe_queue.report import Report, ReportedFinding

__all__ = [
    "IAM_ACTIONS",
    "AuditError",
    "AuditedMapping",
    "RegionListing",
    "audit",
    "audit_mappings",
    "client_config",
    "iam_policy",
    "queue_url",
    "unqualified_function_arn",
]

MAX_WORKERS: Final = 8
"""Concurrent lookups: enough to hide latency, few enough not to be throttled."""

_DENIED = frozenset(
    {"AccessDenied", "AccessDeniedException", "AuthorizationError", "UnauthorizedOperation"}
)
_MISSING = frozenset(
    {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "ResourceNotFoundException"}
)
# The credentials themselves were refused: expired, or a region not enabled for the account
# (an opt-in region answers every call with UnrecognizedClientException).
_REJECTED = frozenset(
    {
        "AuthFailure",
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "InvalidSignatureException",
        "SignatureDoesNotMatch",
        "UnrecognizedClientException",
    }
)

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


def client_config(max_workers: int = MAX_WORKERS) -> Config:
    """Return the botocore configuration of every client: adaptive retries, a pool per worker.

    Adaptive mode retries throttling errors with exponential backoff and also slows the
    client down on the client side when AWS throttles it.
    """
    return Config(
        retries={"mode": "adaptive", "max_attempts": 10},
        max_pool_connections=max(10, max_workers),
        user_agent_extra="safe-queue-audit",
    )


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


def _unknown(what: str, verb: str, action: str, resource: str, error: Exception) -> Unknown:
    """Say what a failed lookup leaves unknown, naming the action or the missing resource."""
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        if code in _DENIED or "AccessDenied" in code:
            return Unknown(what, f"{verb} unknown: {action} on {resource} was denied ({code})")
        if code in _MISSING:
            return Unknown(
                what, f"{verb} unknown: {resource} does not exist (deleted?) ({code} from {action})"
            )
        return Unknown(what, f"{verb} unknown: {action} on {resource} failed ({code})")
    return Unknown(what, f"{verb} unknown: {action} on {resource} failed ({error})")


class _Reader:
    """The account's queues and functions, each read once, from any thread."""

    def __init__(self, session: boto3.Session, config: Config) -> None:
        self._session = session
        self._config = config
        self._clients_lock = threading.Lock()
        self._clients: dict[tuple[str, str], Any] = {}
        self._queues: _Once[Mapping[str, str] | Unknown] = _Once()
        self._functions: _Once[Mapping[str, Any] | Unknown] = _Once()
        self._concurrency: _Once[int | Unknown | None] = _Once()

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

    def queue(self, arn: str, region: str) -> Mapping[str, str] | Unknown:
        def read() -> Mapping[str, str] | Unknown:
            try:
                response = self.client("sqs", _arn_region(arn, region)).get_queue_attributes(
                    QueueUrl=queue_url(arn), AttributeNames=list(QUEUE_ATTRIBUTES)
                )
            except NoCredentialsError:
                raise
            except (ClientError, BotoCoreError, ValueError) as error:
                return _unknown(
                    f"the queue {arn}'s attributes", "are", "sqs:GetQueueAttributes", arn, error
                )
            attributes: Mapping[str, str] = response.get("Attributes", {})
            return attributes

        return self._queues.get(arn, read)

    def function(self, arn: str, region: str) -> Mapping[str, Any] | Unknown:
        def read() -> Mapping[str, Any] | Unknown:
            try:
                response = self.client(
                    "lambda", _arn_region(arn, region)
                ).get_function_configuration(FunctionName=arn)
            except NoCredentialsError:
                raise
            except (ClientError, BotoCoreError) as error:
                return _unknown(
                    f"the function {arn}'s configuration",
                    "is",
                    "lambda:GetFunctionConfiguration",
                    arn,
                    error,
                )
            configuration: Mapping[str, Any] = response
            return configuration

        return self._functions.get(arn, read)

    def reserved_concurrency(self, arn: str, region: str) -> int | Unknown | None:
        function = unqualified_function_arn(arn)

        def read() -> int | Unknown | None:
            try:
                response = self.client(
                    "lambda", _arn_region(function, region)
                ).get_function_concurrency(FunctionName=function)
            except NoCredentialsError:
                raise
            except (ClientError, BotoCoreError) as error:
                return _unknown(
                    f"the function {function}'s ReservedConcurrentExecutions",
                    "is",
                    "lambda:GetFunctionConcurrency",
                    function,
                    error,
                )
            value = response.get("ReservedConcurrentExecutions")
            return None if value is None else int(value)

        return self._concurrency.get(function, read)


def _int(value: str | int | None) -> int | None:
    return None if value is None else int(value)


def _queue_facts(
    arn: str, attributes: Mapping[str, str], dead_letter: Callable[[str], QueueFacts | Unknown]
) -> QueueFacts:
    redrive: RedriveFacts | Unknown | None = None
    raw = attributes.get("RedrivePolicy")
    if raw:
        try:
            policy = json.loads(raw)
            redrive = RedriveFacts(
                max_receive_count=int(policy["maxReceiveCount"]),
                dead_letter_queue=dead_letter(str(policy["deadLetterTargetArn"])),
            )
        except (ValueError, KeyError, TypeError):
            redrive = Unknown(f"the queue {arn}'s RedrivePolicy", f"is not readable: {raw!r}")
    fifo = attributes.get("FifoQueue")
    return QueueFacts(
        name=arn,
        visibility_timeout=_int(attributes.get("VisibilityTimeout")),
        retention_period=_int(attributes.get("MessageRetentionPeriod")),
        fifo=None if fifo is None else fifo.lower() == "true",
        redrive=redrive,
    )


def _mapping_facts(mapping: Mapping[str, Any], region: str, reader: _Reader) -> MappingFacts:
    """Build one SQS mapping's facts from ``ListEventSourceMappings`` and the lookups."""
    queue_arn: str = mapping["EventSourceArn"]
    function_arn: str = mapping["FunctionArn"]

    def dead_letter(arn: str) -> QueueFacts | Unknown:
        attributes = reader.queue(arn, region)
        if isinstance(attributes, Unknown):
            return attributes
        return QueueFacts(name=arn, retention_period=_int(attributes.get("MessageRetentionPeriod")))

    attributes = reader.queue(queue_arn, region)
    queue: QueueFacts | Unknown = (
        attributes
        if isinstance(attributes, Unknown)
        else _queue_facts(queue_arn, attributes, dead_letter)
    )
    configuration = reader.function(function_arn, region)
    function: FunctionFacts | Unknown
    if isinstance(configuration, Unknown):
        function = configuration
    else:
        function = FunctionFacts(
            name=function_arn,
            timeout=_int(configuration.get("Timeout")),
            reserved_concurrency=reader.reserved_concurrency(function_arn, region),
        )
    response_types = mapping.get("FunctionResponseTypes")
    scaling = mapping.get("ScalingConfig") or {}
    filters = mapping.get("FilterCriteria")
    return MappingFacts(
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


def _safe_mapping_facts(mapping: Mapping[str, Any], region: str, reader: _Reader) -> MappingFacts:
    """Build the facts; a value in an unexpected shape makes them unknown, not a crash."""
    try:
        return _mapping_facts(mapping, region, reader)
    except NoCredentialsError:
        raise
    except Exception as error:  # the audit goes on; the finding says what went wrong
        unknown = Unknown(
            f"the settings of mapping {mapping.get('UUID')}, its queue and its function",
            f"are unknown: reading them failed ({type(error).__name__}: {error})",
        )
        return MappingFacts(
            queue=unknown,
            function=unknown,
            name=str(mapping.get("UUID")),
            batch_size=unknown,
            batching_window=unknown,
            report_batch_item_failures=unknown,
            max_concurrency=unknown,
            has_filters=unknown,
        )


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
        The engine's findings; empty for a mapping that complies.
    """

    uuid: str
    region: str
    queue_arn: str
    function_arn: str
    findings: tuple[Finding, ...] = field(default=())

    def reported(self) -> list[ReportedFinding]:
        """Return the findings located at this mapping, as every output format takes them."""
        extra = {
            "queue_arn": self.queue_arn,
            "function_arn": self.function_arn,
            "region": self.region,
        }
        return [ReportedFinding(f, self.uuid, extra=dict(extra)) for f in self.findings]


@dataclass
class RegionListing:
    """One region's SQS event source mappings, or why they could not be listed."""

    region: str
    mappings: list[Mapping[str, Any]] = field(default_factory=list)
    failure: Finding | None = None
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
    except NoCredentialsError:
        raise
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in _REJECTED:
            if skip_unavailable:
                listing.skipped = True
                return listing
            raise AuditError(
                f"region {region}: the credentials were refused ({code}); refresh them, or"
                " check that the region is enabled for the account"
            ) from None
        listing.failure = _region_unchecked(region, error)
    except EndpointConnectionError as error:
        raise AuditError(
            f"region {region}: cannot reach the Lambda endpoint ({error}); check the network,"
            " the region name and AWS_ENDPOINT_URL"
        ) from None
    except BotoCoreError as error:
        listing.failure = _region_unchecked(region, error)
    return listing


def _region_unchecked(region: str, error: Exception) -> Finding:
    reason = _unknown(
        f"the event source mappings of {region}",
        "are",
        "lambda:ListEventSourceMappings",
        region,
        error,
    )
    denied = "was denied" in reason.why
    fix = (
        "grant lambda:ListEventSourceMappings (see the audit's IAM policy)"
        if denied
        else "find out why the call failed (the error above)"
    )
    return Finding(
        UNCHECKED,
        rule(UNCHECKED).level,
        f"Not checked: {reason.what} {reason.why}, so none of its mappings was audited."
        f" Fix: {fix}, then audit again.",
    )


def audit_mappings(
    session: boto3.Session,
    regions: Sequence[str],
    *,
    max_workers: int = MAX_WORKERS,
    page_size: int | None = None,
    skip_unavailable_regions: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[AuditedMapping], list[RegionListing]]:
    """Audit every SQS mapping of ``regions``; return them and each region's listing.

    See :func:`audit`, which turns this into a :class:`~safe_queue.report.Report`; the
    AWS Config rule uses the mappings themselves (a queue without findings is compliant).
    """
    if session.get_credentials() is None:
        raise AuditError(
            "no AWS credentials found; set AWS_PROFILE or pass --profile, or configure"
            " credentials (aws configure, environment variables, an instance role)"
        )
    reader = _Reader(session, client_config(max_workers))
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
                pool.submit(_safe_mapping_facts, mapping, region, reader): index
                for index, (region, mapping) in enumerate(work)
            }
            facts: list[MappingFacts | None] = [None] * len(work)
            for done, future in enumerate(as_completed(futures), start=1):
                facts[futures[future]] = future.result()
                if progress is not None:
                    progress(done, len(work))
    except NoCredentialsError:
        raise AuditError(
            "no AWS credentials found; set AWS_PROFILE or pass --profile, or configure credentials"
        ) from None
    audited = [
        AuditedMapping(
            uuid=mapping["UUID"],
            region=region,
            queue_arn=mapping["EventSourceArn"],
            function_arn=mapping["FunctionArn"],
            findings=tuple(evaluate(fact)) if fact is not None else (),
        )
        for (region, mapping), fact in zip(work, facts, strict=True)
    ]
    return audited, listings


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
        Findings located at mapping UUIDs, with ``queue_arn``, ``function_arn`` and
        ``region`` as extra fields; ``mappings_checked`` counts every SQS mapping
        audited; ``sources`` lists the regions read. A region whose mappings could not
        be listed gives one ``safe-queue:unchecked`` finding located at the region.

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
