"""``safe-queue:content-based-deduplication-on-standard-queue``: a FIFO-only attribute."""

from __future__ import annotations

from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import SQS_CREATE_QUEUE_API

__all__ = ["RULE"]


def check(
    *,
    fifo: bool,
    content_based_deduplication: bool,
    dead_letter_fifo: bool | None,
    dead_letter_content_based_deduplication: bool | None,
) -> Violation | None:
    """Error for ContentBasedDeduplication on a standard source or dead-letter queue."""
    for what, is_fifo, deduplication in (
        ("The queue", fifo, content_based_deduplication),
        ("The dead-letter queue", dead_letter_fifo, dead_letter_content_based_deduplication),
    ):
        if deduplication and not is_fifo:
            return Violation(
                f"{what} is a standard queue with ContentBasedDeduplication true; the"
                " attribute exists only on FIFO queues, so SQS rejects the queue.",
                "remove ContentBasedDeduplication, or make the queue FIFO (FifoQueue true,"
                " a name ending in .fifo).",
            )
    return None


RULE = Rule(
    id="safe-queue:content-based-deduplication-on-standard-queue",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary="A standard (not FIFO) queue has ContentBasedDeduplication.",
    why="The attribute exists only on FIFO queues; SQS rejects the queue.",
    fix="ContentBasedDeduplication on FIFO queues only.",
    source_url=SQS_CREATE_QUEUE_API,
    compliant=example(
        "A FIFO queue with content-based deduplication.",
        queue={"fifo": True, "content_based_deduplication": True},
        dead_letter_queue={"fifo": True},
        mapping={"batching_window": 0},
    ),
    non_compliant=example(
        "A standard queue with content-based deduplication.",
        queue={"content_based_deduplication": True},
    ),
    check=check,
    properties=(
        ("queue", "Properties/ContentBasedDeduplication"),
        ("dead_letter_queue", "Properties/ContentBasedDeduplication"),
    ),
)
