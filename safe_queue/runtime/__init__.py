"""Handler-side helpers for SQS consumers; standard library and boto3 only.

Nothing here imports ``aws_cdk``, ``constructs`` or ``jsii``, so a Lambda function can
install ``safe-queue`` without aws-cdk-lib and use these helpers:

``VisibilityHeartbeat``
    Keeps messages invisible while a long or variable job runs.
``RedeliveryDiagnosis`` / ``diagnose_redelivery``
    Names the cause of every redelivery from the gap between receives; logs and counts it.
``FailureBackoff``
    Delays each failed record by ``min(cap, base x 2^(receive count - 1))`` seconds, so an
    outage spends time rather than receives. ``FailureBackoff.from_env()`` reads
    ``BACKOFF_BASE_ENV``, ``BACKOFF_CAP_ENV`` and ``BACKOFF_JITTER_ENV``.
``stop_before_deadline`` / ``DeadlineReached``
    Starts no record once the function has less than a margin left, so a batch that would
    outrun the timeout is not replayed whole.
``VISIBILITY_TIMEOUT_ENV``
    ``"SAFE_QUEUE_VISIBILITY_TIMEOUT"``, where the diagnosis reads the queue's visibility
    timeout (``SafeQueueConsumer`` sets it on the function).
"""

from safe_queue.runtime.backoff import (
    BACKOFF_BASE_ENV,
    BACKOFF_CAP_ENV,
    BACKOFF_JITTER_ENV,
    FailureBackoff,
)
from safe_queue.runtime.deadline import DeadlineReached, stop_before_deadline
from safe_queue.runtime.diagnosis import (
    VISIBILITY_TIMEOUT_ENV,
    Redelivery,
    RedeliveryCause,
    RedeliveryDiagnosis,
    diagnose_redelivery,
    visibility_timeout_from_env,
)
from safe_queue.runtime.heartbeat import HEARTBEAT_THREAD_NAME, VisibilityHeartbeat

__all__ = [
    "BACKOFF_BASE_ENV",
    "BACKOFF_CAP_ENV",
    "BACKOFF_JITTER_ENV",
    "HEARTBEAT_THREAD_NAME",
    "VISIBILITY_TIMEOUT_ENV",
    "DeadlineReached",
    "FailureBackoff",
    "Redelivery",
    "RedeliveryCause",
    "RedeliveryDiagnosis",
    "VisibilityHeartbeat",
    "diagnose_redelivery",
    "stop_before_deadline",
    "visibility_timeout_from_env",
]
