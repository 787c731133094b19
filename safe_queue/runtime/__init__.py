"""Handler-side helpers for SQS consumers; standard library and boto3 only.

Nothing here imports ``aws_cdk``, ``constructs`` or ``jsii``, so a Lambda function can
install ``safe-queue`` without aws-cdk-lib and use these helpers:

``VisibilityHeartbeat``
    Keeps messages invisible while a long or variable job runs.
``RedeliveryDiagnosis`` / ``diagnose_redelivery``
    Names the cause of every redelivery from the gap between receives; logs and counts it.
``VISIBILITY_TIMEOUT_ENV``
    ``"SAFE_QUEUE_VISIBILITY_TIMEOUT"``, where the diagnosis reads the queue's visibility
    timeout (``SafeQueueConsumer`` sets it on the function).
"""

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
    "HEARTBEAT_THREAD_NAME",
    "VISIBILITY_TIMEOUT_ENV",
    "Redelivery",
    "RedeliveryCause",
    "RedeliveryDiagnosis",
    "VisibilityHeartbeat",
    "diagnose_redelivery",
    "visibility_timeout_from_env",
]
