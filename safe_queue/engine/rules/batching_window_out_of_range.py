"""``safe-queue:batching-window-out-of-range``: MaximumBatchingWindowInSeconds over 300 s."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_ESM_API, out_of_range

__all__ = ["RULE"]


def check(*, batching_window: int) -> Violation | None:
    """Error for a batching window outside 0..300 s."""
    return out_of_range(
        "MaximumBatchingWindowInSeconds",
        batching_window,
        limits.BATCHING_WINDOW_MIN,
        limits.BATCHING_WINDOW_MAX,
        "s",
    )


RULE = Rule(
    id="safe-queue:batching-window-out-of-range",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary="MaximumBatchingWindowInSeconds is outside 0..300 s.",
    why="Lambda rejects the event source mapping, so the deployment fails.",
    fix="A batching window of at most 300 s.",
    source_url=LAMBDA_ESM_API,
    compliant=example(
        "A 300 s batching window (visibility 6 x 180 s + 300 s).",
        queue={"visibility_timeout": 1380},
        mapping={"batching_window": 300},
    ),
    non_compliant=example(
        "A 301 s batching window (visibility 6 x 180 s + 301 s).",
        queue={"visibility_timeout": 1381},
        mapping={"batching_window": 301},
    ),
    check=check,
    properties=(("mapping", "Properties/MaximumBatchingWindowInSeconds"),),
)
