"""``safe-queue:batching-window-on-fifo``: Lambda supports no batching window on FIFO."""

from __future__ import annotations

from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_ESM_API

__all__ = ["RULE"]


def check(*, batching_window: int, fifo: bool) -> Violation | None:
    """Error for a batching window on a FIFO queue's mapping."""
    if not fifo or batching_window == 0:
        return None
    return Violation(
        f"MaximumBatchingWindowInSeconds is {batching_window} s on a FIFO queue; Lambda"
        " supports no batching window for FIFO queues, so it rejects the mapping.",
        "remove MaximumBatchingWindowInSeconds (or set 0), or consume a standard queue.",
    )


_FIFO = {"fifo": True}

RULE = Rule(
    id="safe-queue:batching-window-on-fifo",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary="A FIFO queue's mapping has a MaximumBatchingWindowInSeconds.",
    why="Lambda supports no batching window for FIFO queues and rejects the mapping.",
    fix="No batching window on FIFO queues.",
    source_url=LAMBDA_ESM_API,
    compliant=example(
        "A FIFO queue without a batching window.",
        queue=_FIFO,
        dead_letter_queue=_FIFO,
        mapping={"batching_window": 0},
    ),
    non_compliant=example(
        "A FIFO queue with a 2 s batching window.", queue=_FIFO, dead_letter_queue=_FIFO
    ),
    check=check,
    properties=(("mapping", "Properties/MaximumBatchingWindowInSeconds"),),
)
