"""Acknowledgement ids, as every surface writes them, checked once.

A finding is acknowledged by its rule id and a reason. The id may be written as the rule
id (``safe-queue:filter-deletes-unmatched``), in the CDK plugin's form
(``SafeQueue::safe-queue:filter-deletes-unmatched``), or as the CDK records a bare id
(``Annotation::safe-queue:filter-deletes-unmatched``). An id of another tool (cdk-nag's
``AwsSolutions::SQS3``) is not safe-queue's to judge; an id in safe-queue's form that names
no rule, or an acknowledgement without a reason, is an input error.

Examples
--------
>>> acknowledgement("SafeQueue::safe-queue:filter-deletes-unmatched", "audit queue",
...     source="Metadata of Mapping in t.yaml").rule_id
'safe-queue:filter-deletes-unmatched'
>>> acknowledgement("safe-queue:nope", "x", source="Metadata of Mapping in t.yaml")
Traceback (most recent call last):
...
safe_queue.engine.acknowledge.AcknowledgementError: Metadata of Mapping in t.yaml: ...
>>> is_safe_queue_id("AwsSolutions::SQS3")
False
"""

from __future__ import annotations

from typing import Final

from safe_queue.engine.facts import Acknowledgement
from safe_queue.engine.rule import PREFIX
from safe_queue.engine.rules import RULES

__all__ = ["CDK_NAMESPACES", "AcknowledgementError", "acknowledgement", "is_safe_queue_id"]

CDK_NAMESPACES: Final = ("SafeQueue", "Annotation")
"""The CDK namespaces whose ids name safe-queue rules: the plugin's, and CDK's for a bare id."""

_IDS: Final = frozenset(entry.id for entry in RULES)


class AcknowledgementError(ValueError):
    """An acknowledgement that names no rule, or gives no reason; the message says where."""


def _rule_id(written: str) -> str:
    namespace, separator, rest = written.partition("::")
    return rest if separator and namespace in CDK_NAMESPACES else written


def is_safe_queue_id(written: str) -> bool:
    """Return True if ``written`` is in one of safe-queue's forms (known rule or not)."""
    return _rule_id(written).startswith(PREFIX)


def acknowledgement(written: object, reason: object, *, source: str) -> Acknowledgement:
    """Return the acknowledgement of the rule ``written`` names, for ``reason``.

    Parameters
    ----------
    written
        The id as written (rule id, ``SafeQueue::`` or ``Annotation::`` form).
    reason
        Why the finding is accepted: a non-empty string.
    source
        Where it was written (a resource and file, a construct path), for messages.

    Raises
    ------
    AcknowledgementError
        ``written`` names no safe-queue rule, or ``reason`` is missing or empty.
    """
    rule_id = _rule_id(written) if isinstance(written, str) else None
    if rule_id not in _IDS:
        raise AcknowledgementError(
            f"{source}: acknowledgement id {written!r} is not a safe-queue rule. Fix: use a rule"
            f" id such as {PREFIX}filter-deletes-unmatched (the rules reference lists them all)."
        )
    if not isinstance(reason, str) or not reason.strip():
        raise AcknowledgementError(
            f"{source}: the acknowledgement of {rule_id} has no reason. Fix: add a reason"
            " saying why the finding is accepted."
        )
    assert rule_id is not None
    return Acknowledgement(rule_id, reason.strip(), source)
