"""What the live audit calls, as data.

A leaf module (no boto3), so that the Config rule's construct and the docs can name the
actions without importing the audit.
"""

from typing import Final

__all__ = ["IAM_ACTIONS", "QUEUE_ATTRIBUTES"]

IAM_ACTIONS: Final = (
    "lambda:GetFunctionConcurrency",
    "lambda:GetFunctionConfiguration",
    "lambda:ListEventSourceMappings",
    "sqs:GetQueueAttributes",
)
"""Every API action the audit calls; the policy in the README and the Config rule's role."""

QUEUE_ATTRIBUTES: Final = (
    "VisibilityTimeout",
    "MessageRetentionPeriod",
    "RedrivePolicy",
    "FifoQueue",
    "ContentBasedDeduplication",
)
"""The queue attributes read, for a source queue and its dead-letter queue alike."""
