"""The live adapter: audit an AWS account's SQS -> Lambda mappings with boto3 (no CDK).

:func:`audit` reads the account and returns a :class:`~safe_queue.report.Report`;
``safe-queue audit`` (:mod:`safe_queue.live.command`) prints it, and the AWS Config
rule's function (:mod:`safe_queue.live.config_handler`) turns it into evaluations. The
names below load :mod:`safe_queue.live.account` (and boto3) on first use, so the
``safe-queue`` command can list ``audit`` without importing boto3.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from safe_queue.live.account import (
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


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'safe_queue.live' has no attribute {name!r}")
    value = getattr(importlib.import_module("safe_queue.live.account"), name)
    globals()[name] = value
    return value
