"""Words and numbers several rules share (not a rule)."""

from __future__ import annotations

from typing import Final

from safe_queue.engine import limits
from safe_queue.engine.budget import recommended_visibility_timeout
from safe_queue.engine.rule import Violation

__all__ = ["LAMBDA_SQS", "LAMBDA_SQS_SCALING", "SQS_DLQ", "formula", "out_of_range"]

LAMBDA_SQS: Final = "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html"
LAMBDA_SQS_ERRORS: Final = (
    "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html"
)
LAMBDA_SQS_SCALING: Final = "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html"
LAMBDA_ESM_API: Final = (
    "https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html"
)
SQS_ATTRIBUTES_API: Final = (
    "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/"
    "API_SetQueueAttributes.html"
)
SQS_CREATE_QUEUE_API: Final = (
    "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html"
)
SQS_DLQ: Final = (
    "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/"
    "sqs-dead-letter-queues.html"
)
SQS_DLQ_CONFIGURE: Final = (
    "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/"
    "sqs-configure-dead-letter-queue.html"
)


def formula(function_timeout: int, batching_window: int) -> str:
    """``6 x function Timeout 180 s + MaximumBatchingWindowInSeconds 2 s = 1082 s``."""
    recommended = recommended_visibility_timeout(function_timeout, batching_window)
    return (
        f"{limits.VISIBILITY_MULTIPLIER} x function Timeout {function_timeout} s"
        f" + MaximumBatchingWindowInSeconds {batching_window} s = {recommended} s"
    )


def out_of_range(
    what: str,
    value: int,
    low: int,
    high: int,
    unit: str = "",
    why: str = "",
    *,
    setting: str | None = None,
) -> Violation | None:
    """Return a violation when ``value`` is outside ``low..high`` (AWS rejects it).

    ``what`` starts the sentence (``The function's Timeout``); ``setting`` names it in the
    fix (default: ``what``).
    """
    if low <= value <= high:
        return None
    suffix = f" {unit}" if unit else ""
    return Violation(
        f"{what} is {value}{suffix}; AWS allows {low}..{high}{suffix}{why}, so it rejects the"
        " template or the API call.",
        f"set {setting or what} within {low}..{high}{suffix}.",
    )
