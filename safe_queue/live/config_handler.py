"""The AWS Config custom rule's function: the live audit, as evaluations per source queue.

Deployed by :class:`safe_queue.cdk.SafeQueueConfigRule` (this module needs no CDK). On
every invocation, periodic or triggered by a change of an ``AWS::SQS::Queue`` or an
``AWS::Lambda::Function``, it audits every SQS event source mapping of the function's
own region (:func:`safe_queue.live.account.audit_mappings`), groups the findings by source
queue and reports one evaluation per queue that feeds a Lambda function:

- ``NON_COMPLIANT`` if any mapping of the queue has an ``error`` or ``warning`` finding;
  the annotation (at most 256 characters) names the rule ids broken.
- ``NOT_APPLICABLE`` if its only findings are ``info`` (``safe-queue:unchecked``: a
  value could not be read, e.g. the queue was deleted, a call was denied). Config
  accepts no ``INSUFFICIENT_DATA`` from a rule, and calling a queue that was not fully
  checked ``COMPLIANT`` would claim what was not checked; the annotation says why.
- ``COMPLIANT`` otherwise.

A queue deleted meanwhile, or one that left the rule's scope, given by the triggering
configuration item is ``NOT_APPLICABLE``. The resource id is the queue's URL, as AWS
Config records it for ``AWS::SQS::Queue``. ``OrderingTimestamp`` is the invoking event's
time (the configuration item's capture time, or the periodic notification's time).
A ``resultToken`` of ``TESTMODE`` calls ``PutEvaluations`` with ``TestMode`` (as the AWS
Config Rules Development Kit does), so the handler can be run by hand and in tests.

Examples
--------
>>> ordering_timestamp({"messageType": "ScheduledNotification",
...     "notificationCreationTime": "2026-11-30T12:00:00.000Z"}).isoformat()
'2026-11-30T12:00:00+00:00'
>>> print(annotation(["safe-queue:visibility-below-function-timeout"], 1, 2))
Breaks safe-queue:visibility-below-function-timeout (1 of 2 mappings). Run safe-queue audit
for details.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import boto3

from safe_queue.engine import Level
from safe_queue.live.account import AuditedMapping, audit_mappings, client_config, queue_url

__all__ = [
    "ANNOTATION_MAX",
    "annotation",
    "evaluate_and_report",
    "evaluations",
    "handler",
    "ordering_timestamp",
    "put_evaluations",
]

ANNOTATION_MAX: Final = 256
"""PutEvaluations' limit on an annotation's length."""
EVALUATIONS_PER_CALL: Final = 100
"""PutEvaluations' limit on evaluations per call."""
RESOURCE_TYPE: Final = "AWS::SQS::Queue"
TEST_MODE_TOKEN: Final = "TESTMODE"

_DELETED = frozenset({"ResourceDeleted", "ResourceDeletedNotRecorded"})

logger = logging.getLogger(__name__)


def ordering_timestamp(invoking_event: Mapping[str, Any]) -> datetime:
    """Return the time of the event that triggered the evaluation.

    A configuration item's capture time for a change-triggered evaluation (also for an
    oversized item's summary); the notification's time for a periodic one.
    """
    item = invoking_event.get("configurationItem") or invoking_event.get("configurationItemSummary")
    raw = (item or {}).get("configurationItemCaptureTime") or invoking_event.get(
        "notificationCreationTime"
    )
    if not raw:
        return datetime.now(UTC)
    return datetime.fromisoformat(str(raw))


def _shorten(text: str) -> str:
    return text if len(text) <= ANNOTATION_MAX else text[: ANNOTATION_MAX - 1] + "…"


def annotation(rule_ids: Sequence[str], broken: int, total: int) -> str:
    """Name the rule ids a queue's mappings break, in at most 256 characters."""
    tail = f" ({broken} of {total} mappings). Run safe-queue audit for details."
    named: list[str] = []
    for index, rule_id in enumerate(rule_ids):
        rest = len(rule_ids) - index - 1
        more = f" and {rest} more" if rest else ""
        candidate = "Breaks " + ", ".join([*named, rule_id]) + more + tail
        if len(candidate) > ANNOTATION_MAX and named:
            return _shorten("Breaks " + ", ".join(named) + f" and {rest + 1} more" + tail)
        named.append(rule_id)
    return _shorten("Breaks " + ", ".join(named) + tail)


def evaluations(
    audited: Iterable[AuditedMapping],
    timestamp: datetime,
    invoking_event: Mapping[str, Any],
    *,
    left_scope: bool = False,
) -> list[dict[str, Any]]:
    """Return one evaluation per source queue (see the module's docstring for the verdicts)."""
    by_queue: dict[str, list[AuditedMapping]] = {}
    for mapping in audited:
        by_queue.setdefault(mapping.queue_arn, []).append(mapping)
    results: dict[str, dict[str, Any]] = {}
    for queue_arn, mappings in by_queue.items():
        failing = [f for m in mappings for f in m.findings if f.level.rank >= Level.WARNING.rank]
        unchecked = [f for m in mappings for f in m.findings if f.level.rank < Level.WARNING.rank]
        if failing:
            broken = sum(
                any(f.level.rank >= Level.WARNING.rank for f in m.findings) for m in mappings
            )
            rule_ids = list(dict.fromkeys(f.rule_id for f in failing))
            compliance, note = "NON_COMPLIANT", annotation(rule_ids, broken, len(mappings))
        elif unchecked:
            compliance, note = "NOT_APPLICABLE", _shorten(f"{unchecked[0].message}")
        else:
            compliance = "COMPLIANT"
            note = f"{len(mappings)} event source mapping(s) checked by safe-queue."
        url = queue_url(queue_arn)
        results[url] = {
            "ComplianceResourceType": RESOURCE_TYPE,
            "ComplianceResourceId": url,
            "ComplianceType": compliance,
            "Annotation": note,
            "OrderingTimestamp": timestamp,
        }
    item = invoking_event.get("configurationItem") or {}
    if item.get("resourceType") == RESOURCE_TYPE and item.get("resourceId"):
        gone = left_scope or item.get("configurationItemStatus") in _DELETED
        if gone and item["resourceId"] not in results:
            results[item["resourceId"]] = {
                "ComplianceResourceType": RESOURCE_TYPE,
                "ComplianceResourceId": item["resourceId"],
                "ComplianceType": "NOT_APPLICABLE",
                "Annotation": "The queue was deleted, or left the rule's scope.",
                "OrderingTimestamp": timestamp,
            }
    return list(results.values())


def put_evaluations(
    session: boto3.Session, results: Sequence[Mapping[str, Any]], result_token: str
) -> None:
    """Send ``results`` to AWS Config, 100 per call (``TestMode`` for the ``TESTMODE`` token)."""
    config = session.client("config", config=client_config())
    for start in range(0, len(results), EVALUATIONS_PER_CALL):
        batch = list(results[start : start + EVALUATIONS_PER_CALL])
        response = config.put_evaluations(
            Evaluations=batch,
            ResultToken=result_token,
            TestMode=result_token == TEST_MODE_TOKEN,
        )
        if response.get("FailedEvaluations"):
            raise RuntimeError(f"AWS Config refused evaluations: {response['FailedEvaluations']!r}")


def evaluate_and_report(event: Mapping[str, Any], session: boto3.Session) -> dict[str, int]:
    """Audit the session's region, send the evaluations, and count them by compliance.

    Raises
    ------
    RuntimeError
        The region's mappings could not be listed (then no queue can be judged; the
        error shows as the rule's failed evaluation in the AWS Config console).
    """
    invoking_event = json.loads(event["invokingEvent"])
    region = session.region_name
    if not region:
        raise RuntimeError("no region: AWS_REGION is not set (it is, in AWS Lambda)")
    audited, listings = audit_mappings(session, [region])
    for listing in listings:
        if listing.failure is not None:
            raise RuntimeError(listing.failure.message)
    results = evaluations(
        audited,
        ordering_timestamp(invoking_event),
        invoking_event,
        left_scope=bool(event.get("eventLeftScope")),
    )
    if results:
        put_evaluations(session, results, event["resultToken"])
    counts = {"COMPLIANT": 0, "NON_COMPLIANT": 0, "NOT_APPLICABLE": 0}
    for result in results:
        counts[result["ComplianceType"]] += 1
    logger.info("safe-queue: %d mappings, evaluations %s", len(audited), counts)
    return {"mappings": len(audited), **counts}


def handler(event: Mapping[str, Any], context: object) -> dict[str, int]:
    """Lambda entry point of the AWS Config rule (``safe_queue.live.config_handler.handler``)."""
    logging.getLogger().setLevel(logging.INFO)
    return evaluate_and_report(event, boto3.Session())
