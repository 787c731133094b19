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

The reads are :mod:`safe_queue.live.reader`'s, the facts :mod:`safe_queue.live.facts`';
every audited mapping of the run is then judged at once (:func:`~safe_queue.engine.evaluate_all`),
so the mappings of one function share its reserved concurrency as on every surface.

Examples
--------
>>> iam_policy()["Statement"][0]["Action"][-1]
'sqs:GetQueueAttributes'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any, Final

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from safe_queue.arn import Arn, queue_url, service_of, unqualified_function_arn
from safe_queue.engine import UNCHECKED, Finding, MappingFacts, evaluate_all, rule
from safe_queue.live.actions import IAM_ACTIONS
from safe_queue.live.aws_errors import describe
from safe_queue.live.facts import mapping_facts, unknown
from safe_queue.live.reader import AccountReader, AuditError
from safe_queue.report import Report, ReportedFinding, Unreadable, Where
from safe_queue.retries import Caller

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


def iam_policy() -> dict[str, Any]:
    """Return the least-privilege IAM policy the audit needs, as the README prints it."""
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


def _audit_one(
    mapping: Mapping[str, Any], region: str, reader: AccountReader
) -> tuple[MappingFacts, tuple[Unreadable, ...]]:
    """Build one mapping's facts; an unexpected exception goes on, naming the mapping."""
    try:
        return mapping_facts(mapping, region, reader)
    except (AuditError, NoCredentialsError):
        raise
    except Exception as error:  # a bug: not swallowed, only located
        error.add_note(
            f"safe-queue: while auditing event source mapping {mapping.get('UUID')} in {region}"
            f" (queue {mapping.get('EventSourceArn')}, function {mapping.get('FunctionArn')})"
        )
        raise


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
        parsed = Arn.parse(self.queue_arn)
        return self.queue_arn if parsed is None else parsed.name

    @property
    def function_name(self) -> str:
        """The function's name, with its alias or version if the mapping names one."""
        parsed = Arn.parse(self.function_arn)
        return self.function_arn if parsed is None else parsed.name

    def reported(self) -> list[ReportedFinding]:
        """Return the findings located at this mapping, as every output format takes them."""
        where = Where(
            queue_arn=self.queue_arn,
            function_arn=self.function_arn,
            queue_name=self.queue_name,
            function_name=self.function_name,
            region=self.region,
        )
        return [ReportedFinding(f, self.uuid, where=where) for f in self.findings]


@dataclass
class RegionListing:
    """One region's SQS event source mappings, or why they could not be listed."""

    region: str
    mappings: list[Mapping[str, Any]] = field(default_factory=list)
    failure: Finding | None = None
    unreadable: Unreadable | None = None
    skipped: bool = False


def _list_region(
    reader: AccountReader, region: str, page_size: int | None, skip_unavailable: bool
) -> RegionListing:
    listing = RegionListing(region)
    paginator = reader.client("lambda", region).get_paginator("list_event_source_mappings")
    pagination = {} if page_size is None else {"PageSize": page_size}
    try:
        for page in paginator.paginate(PaginationConfig=pagination):
            listing.mappings.extend(
                m
                for m in page.get("EventSourceMappings", [])
                if service_of(m.get("EventSourceArn")) == "sqs"
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
    reason = unknown(f"the event source mappings of {failure.resource}", "are", failure)
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
    reader = AccountReader(session, caller, max_workers)
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
    read = [result for result in results if result is not None]
    assert len(read) == len(work)  # every future completed, or the loop raised
    verdicts = evaluate_all([facts for facts, _ in read])
    audited = [
        AuditedMapping(
            uuid=mapping["UUID"],
            region=region,
            queue_arn=mapping["EventSourceArn"],
            function_arn=mapping["FunctionArn"],
            findings=tuple(findings),
            unreadable=failed,
        )
        for (region, mapping), (_, failed), findings in zip(work, read, verdicts, strict=True)
    ]
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
                ReportedFinding(listing.failure, listing.region, where=Where(region=listing.region))
            )
    report.findings.extend(_reported(audited))
    return report


def _reported(audited: Iterable[AuditedMapping]) -> list[ReportedFinding]:
    return [finding for mapping in audited for finding in mapping.reported()]
