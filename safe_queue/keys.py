"""Names shared by several surfaces: template metadata keys and environment variables.

A leaf module (it imports nothing), so the construct that writes a key and every adapter
that reads it use the same string.
"""

from typing import Final

__all__ = [
    "ACKNOWLEDGE",
    "BACKOFF_BASE_ENV",
    "BACKOFF_CAP_ENV",
    "BACKOFF_JITTER_ENV",
    "CDK_ACKNOWLEDGED_RULES",
    "CDK_LOGICAL_ID",
    "DERIVED_FUNCTION_TIMEOUT",
    "MEMBER_ROLE_ENV",
    "METADATA_SECTION",
    "REPORTED",
    "VISIBILITY_TIMEOUT_ENV",
]

# Metadata a SafeQueueConsumer writes on its source queue's AWS::SQS::Queue resource.
DERIVED_FUNCTION_TIMEOUT: Final = "safe-queue:derived-function-timeout"
"""The function timeout the queue was derived from (the drift check reads it)."""
REPORTED: Final = "safe-queue:reported"
"""The rule ids the consumer already reported as annotations (one verdict, not two)."""

# Acknowledgements written in a template: Metadata: {"safe-queue": {"acknowledge": [...]}}.
METADATA_SECTION: Final = "safe-queue"
"""A resource's ``Metadata`` key holding safe-queue settings."""
ACKNOWLEDGE: Final = "acknowledge"
"""Under :data:`METADATA_SECTION`: a list of ``{"id": ..., "reason": ...}``."""

# What the AWS CDK writes into a cloud assembly's stack metadata.
CDK_ACKNOWLEDGED_RULES: Final = "aws:cdk:acknowledged-rules"
"""``Validations.of(x).acknowledge(...)``: ``{"<Plugin>::<rule>": "<reason>"}`` at x's path."""
CDK_LOGICAL_ID: Final = "aws:cdk:logicalId"
"""A construct path's CloudFormation logical id."""

# Environment variables a SafeQueueConsumer sets on its function for the handler helpers.
VISIBILITY_TIMEOUT_ENV: Final = "SAFE_QUEUE_VISIBILITY_TIMEOUT"
"""The queue's visibility timeout, whole seconds (``RedeliveryDiagnosis``)."""
BACKOFF_BASE_ENV: Final = "SAFE_QUEUE_BACKOFF_BASE"
"""``FailureBackoff``'s base, seconds."""
BACKOFF_CAP_ENV: Final = "SAFE_QUEUE_BACKOFF_CAP"
"""``FailureBackoff``'s cap, seconds."""
BACKOFF_JITTER_ENV: Final = "SAFE_QUEUE_BACKOFF_JITTER"
"""``FailureBackoff``'s jitter: ``true`` (also when unset) or ``false``."""

# Set on the organization Config rule's function (``SafeQueueOrganizationConfigRule``).
MEMBER_ROLE_ENV: Final = "SAFE_QUEUE_MEMBER_ROLE"
"""The role the function assumes in each member account (``safe_queue.live.organization``)."""
