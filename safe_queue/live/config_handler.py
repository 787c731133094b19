"""The AWS Config custom rule's function: the live audit, as evaluations per source queue.

Deployed by :class:`safe_queue.cdk.SafeQueueConfigRule` (this module needs no CDK). On
every invocation, periodic or triggered by a change of an ``AWS::SQS::Queue`` or an
``AWS::Lambda::Function``, it audits every SQS event source mapping of the function's
own region (:func:`safe_queue.live.account.audit_mappings`, with the ``config-rule``
retry settings of :mod:`safe_queue.retries`), groups the findings by source queue and
reports one evaluation per queue that feeds a Lambda function:

- ``NON_COMPLIANT`` if any mapping of the queue has an ``error`` or ``warning`` finding;
  the annotation (at most 256 characters) names the rule ids broken (and, if a read
  failed too, ``Also not read:`` with the operation and the error code).
- ``NON_COMPLIANT`` too if a mapping of the queue could not be evaluated: a read failed
  after the retries (denied, throttled, a server error, an unreachable endpoint, its
  function or dead-letter queue not found), or a value could not be understood. The
  annotation starts with ``Not evaluated:`` and names the operation, the error and the
  fix. AWS Config has no verdict for "could not evaluate" that a custom rule may send:
  "AWS Config does not accept INSUFFICIENT_DATA as the value for ComplianceType from a
  PutEvaluations request. For example, an AWS Lambda function for a custom AWS Config
  rule cannot pass an INSUFFICIENT_DATA value to AWS Config"
  (https://docs.aws.amazon.com/config/latest/APIReference/API_Evaluation.html). Of the
  three it accepts, ``COMPLIANT`` would claim what was not checked and
  ``NOT_APPLICABLE`` would hide the queue from the rule's non-compliant list: a finding
  turned into silence. So it is ``NON_COMPLIANT``, until a run reads it.
- ``NOT_APPLICABLE`` if the source queue itself does not exist (deleted between the
  mapping's listing and the read), and for a queue deleted, or out of the rule's scope,
  that triggered the evaluation: "Rules reporting on deleted resources should return the
  evaluation result of NOT_APPLICABLE"
  (https://docs.aws.amazon.com/config/latest/developerguide/evaluate-config_develop-rules-delete.html).
- ``COMPLIANT`` otherwise.

Every read that failed is logged as one line (the operation, the resource, the AWS error
code and message, the fix). A region whose mappings cannot be listed, and a failed
``PutEvaluations``, fail the invocation (logged first as one line): the AWS Config console
then shows the rule's failed evaluation, and the previous verdicts stay. Any other
exception is a bug and fails the invocation with its traceback.

The resource id is the queue's URL, as AWS Config records it for ``AWS::SQS::Queue``.
``OrderingTimestamp`` is the invoking event's time (the configuration item's capture
time, or the periodic notification's time). A ``resultToken`` of ``TESTMODE`` calls
``PutEvaluations`` with ``TestMode`` (as the AWS Config Rules Development Kit does), so
the handler can be run by hand and in tests.

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
from botocore.exceptions import BotoCoreError, ClientError

from safe_queue.engine import Level
from safe_queue.live.account import AuditedMapping, audit_mappings, queue_url, unreadable
from safe_queue.live.aws_errors import describe
from safe_queue.report import Unreadable
from safe_queue.retries import client_config

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
        unread = [u for m in mappings for u in m.unreadable]
        deleted = [u for u in unread if u.kind == "not-found" and u.resource == queue_arn]
        if deleted:
            compliance, note = "NOT_APPLICABLE", _shorten(_deleted(deleted[0]))
        elif failing:
            broken = sum(
                any(f.level.rank >= Level.WARNING.rank for f in m.findings) for m in mappings
            )
            rule_ids = list(dict.fromkeys(f.rule_id for f in failing))
            compliance, note = "NON_COMPLIANT", annotation(rule_ids, broken, len(mappings))
            if unread:  # what was found stands; say that more could not be read
                note = _shorten(f"{note} Also not read: {unread[0].operation} ({unread[0].code}).")
        elif unread or unchecked:
            reason = unread[0].sentence() if unread else unchecked[0].message
            compliance, note = "NON_COMPLIANT", _shorten(f"Not evaluated: {reason}")
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


def _deleted(failure: Unreadable) -> str:
    return (
        f"The queue does not exist (deleted?): {failure.code} from {failure.operation}."
        " A deleted resource is NOT_APPLICABLE."
    )


def put_evaluations(
    session: boto3.Session, results: Sequence[Mapping[str, Any]], result_token: str
) -> None:
    """Send ``results`` to AWS Config, 100 per call (``TestMode`` for the ``TESTMODE`` token)."""
    config = session.client("config", config=client_config("config-rule"))
    for start in range(0, len(results), EVALUATIONS_PER_CALL):
        batch = list(results[start : start + EVALUATIONS_PER_CALL])
        try:
            response = config.put_evaluations(
                Evaluations=batch,
                ResultToken=result_token,
                TestMode=result_token == TEST_MODE_TOKEN,
            )
        except (ClientError, BotoCoreError) as error:
            failure = describe(
                error, "config:PutEvaluations", f"{len(results)} evaluations", region=None
            )
            if failure is not None:
                logger.error("safe-queue: %s", failure.sentence())
            raise
        if response.get("FailedEvaluations"):
            raise RuntimeError(f"AWS Config refused evaluations: {response['FailedEvaluations']!r}")


def evaluate_and_report(event: Mapping[str, Any], session: boto3.Session) -> dict[str, int]:
    """Audit the session's region, send the evaluations, and count them by compliance.

    Raises
    ------
    RuntimeError
        The region's mappings could not be listed (then no queue can be judged; the
        error shows as the rule's failed evaluation in the AWS Config console).
    botocore.exceptions.ClientError
        ``PutEvaluations`` failed after its retries (logged first, as one line).
    """
    invoking_event = json.loads(event["invokingEvent"])
    region = session.region_name
    if not region:
        raise RuntimeError("no region: AWS_REGION is not set (it is, in AWS Lambda)")
    audited, listings = audit_mappings(session, [region], caller="config-rule")
    for listing in listings:
        if listing.unreadable is not None:
            sentence = listing.unreadable.sentence()
            logger.error("safe-queue: no queue evaluated: %s", sentence)
            raise RuntimeError(f"no queue evaluated: {sentence}")
    failures = unreadable(audited, listings)
    for failure in failures:
        count = len(failure.mappings)
        logger.warning(
            "safe-queue: not evaluated (%d mapping%s): %s",
            count,
            "" if count == 1 else "s",
            failure.sentence(),
        )
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
    logger.info(
        "safe-queue: %d mappings, %d failed reads, evaluations %s",
        len(audited),
        len(failures),
        counts,
    )
    return {"mappings": len(audited), "unreadable": len(failures), **counts}


def handler(event: Mapping[str, Any], context: object) -> dict[str, int]:
    """Lambda entry point of the AWS Config rule (``safe_queue.live.config_handler.handler``)."""
    logging.getLogger().setLevel(logging.INFO)
    return evaluate_and_report(event, boto3.Session())
