"""``safe-queue:batch-size-out-of-range``: a BatchSize Lambda rejects for this queue."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_ESM_API, out_of_range

__all__ = ["RULE"]


def check(*, batch_size: int, batching_window: int, fifo: bool) -> Violation | None:
    """Error for a batch size outside what Lambda takes for this queue type and window."""
    if fifo:
        return out_of_range(
            "BatchSize",
            batch_size,
            limits.BATCH_SIZE_MIN,
            limits.BATCH_SIZE_MAX_FIFO,
            why=" on a FIFO queue",
        )
    window_needed = batch_size > limits.BATCH_SIZE_MAX_WITHOUT_WINDOW
    if window_needed and batch_size <= limits.BATCH_SIZE_MAX_STANDARD and batching_window < 1:
        return Violation(
            f"BatchSize is {batch_size} without a MaximumBatchingWindowInSeconds; Lambda"
            f" allows at most {limits.BATCH_SIZE_MAX_WITHOUT_WINDOW} unless the batching"
            f" window is at least 1 s (then up to {limits.BATCH_SIZE_MAX_STANDARD}), so it"
            " rejects the mapping.",
            "set MaximumBatchingWindowInSeconds to at least 1 s, or BatchSize to at most"
            f" {limits.BATCH_SIZE_MAX_WITHOUT_WINDOW}.",
        )
    return out_of_range(
        "BatchSize",
        batch_size,
        limits.BATCH_SIZE_MIN,
        limits.BATCH_SIZE_MAX_STANDARD,
        why=" on a standard queue",
    )


_FIFO = f"{limits.BATCH_SIZE_MIN}..{limits.BATCH_SIZE_MAX_FIFO}"
_STANDARD = f"{limits.BATCH_SIZE_MIN}..{limits.BATCH_SIZE_MAX_STANDARD:,}"


RULE = Rule(
    id="safe-queue:batch-size-out-of-range",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary=f"BatchSize is outside what Lambda allows: {_FIFO} on FIFO queues; {_STANDARD} on"
    f" standard queues, above {limits.BATCH_SIZE_MAX_WITHOUT_WINDOW} only with a batching window"
    " of at least 1 s.",
    why="Lambda rejects the event source mapping, so the deployment fails.",
    fix="A BatchSize within the range for the queue type, or a batching window.",
    source_url=LAMBDA_ESM_API,
    compliant=example("BatchSize 100 with a 2 s batching window.", mapping={"batch_size": 100}),
    non_compliant=example(
        "BatchSize 100 without a batching window.",
        mapping={"batch_size": 100, "batching_window": 0},
    ),
    check=check,
    properties=(
        ("mapping", "Properties/BatchSize"),
        ("mapping", "Properties/MaximumBatchingWindowInSeconds"),
    ),
)
