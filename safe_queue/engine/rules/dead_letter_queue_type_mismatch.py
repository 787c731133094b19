"""``safe-queue:dead-letter-queue-type-mismatch``: FIFO and standard do not mix."""

from __future__ import annotations

from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import SQS_DLQ

__all__ = ["RULE"]


def _kind(fifo: bool) -> str:
    return "a FIFO" if fifo else "a standard"


def check(*, fifo: bool, dead_letter_fifo: bool | None) -> Violation | None:
    """Error when the dead-letter queue is not of the source queue's type."""
    if dead_letter_fifo is None or dead_letter_fifo == fifo:
        return None
    return Violation(
        f"The queue is {_kind(fifo)} queue and its dead-letter queue {_kind(dead_letter_fifo)}"
        " one; SQS requires a FIFO queue's dead-letter queue to be FIFO and a standard"
        " queue's to be standard, so it rejects the redrive policy.",
        f"make the dead-letter queue {_kind(fifo)} queue"
        + (" (FifoQueue true, a name ending in .fifo)." if fifo else " (no FifoQueue)."),
    )


RULE = Rule(
    id="safe-queue:dead-letter-queue-type-mismatch",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary="The dead-letter queue is FIFO and the source standard, or the other way round.",
    why="SQS rejects the redrive policy, so the deployment fails.",
    fix="A dead-letter queue of the source queue's type.",
    source_url=SQS_DLQ,
    compliant=example(
        "A FIFO queue with a FIFO dead-letter queue.",
        queue={"fifo": True},
        dead_letter_queue={"fifo": True},
        mapping={"batching_window": 0},
    ),
    non_compliant=example(
        "A FIFO queue with a standard dead-letter queue.",
        queue={"fifo": True},
        mapping={"batching_window": 0},
    ),
    check=check,
    properties=(
        ("queue", "Properties/FifoQueue"),
        ("dead_letter_queue", "Properties/FifoQueue"),
    ),
)
