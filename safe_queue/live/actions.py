"""What the live audit calls, as data.

A leaf module (no boto3), so that the Config rule's construct and the docs can name the
actions without importing the audit.
"""

from typing import Final

__all__ = ["HOOK_IAM_ACTIONS", "IAM_ACTIONS", "QUEUE_ATTRIBUTES"]

IAM_ACTIONS: Final = (
    "lambda:GetFunctionConcurrency",
    "lambda:GetFunctionConfiguration",
    "lambda:ListEventSourceMappings",
    "sqs:GetQueueAttributes",
)
"""Every API action the audit calls; the policy in the README and the Config rule's role."""

HOOK_IAM_ACTIONS: Final = (
    *IAM_ACTIONS,
    "cloudformation:DescribeStackResource",
    "cloudformation:ListExports",
    "sqs:ListDeadLetterSourceQueues",
)
"""Every API action the CloudFormation hook's handler (:mod:`safe_queue.hook`) calls, all
read-only: the audit's reads, plus a resource's physical id and ``Metadata``
(``DescribeStackResource``), the account's exports (``ListExports``, for
``Fn::ImportValue``) and the queues whose dead-letter queue a queue is
(``ListDeadLetterSourceQueues``). ``SafeQueueHook`` grants exactly these."""

QUEUE_ATTRIBUTES: Final = (
    "VisibilityTimeout",
    "MessageRetentionPeriod",
    "RedrivePolicy",
    "FifoQueue",
    "ContentBasedDeduplication",
)
"""The queue attributes read, for a source queue and its dead-letter queue alike."""
