"""The live adapter: audit an AWS account's SQS -> Lambda mappings with boto3 (no CDK).

:func:`audit` reads the account and returns a :class:`~safe_queue.report.Report`;
``safe-queue audit`` (:mod:`safe_queue.live.command`) prints it, and the AWS Config
rule's function (:mod:`safe_queue.live.config_handler`) turns it into evaluations.
"""

from safe_queue.live.audit import (
    IAM_ACTIONS,
    AuditedMapping,
    AuditError,
    RegionListing,
    audit,
    audit_mappings,
    iam_policy,
    queue_url,
)

__all__ = [
    "IAM_ACTIONS",
    "AuditError",
    "AuditedMapping",
    "RegionListing",
    "audit",
    "audit_mappings",
    "iam_policy",
    "queue_url",
]
