"""``safe-queue:visibility-below-guidance``: at least the timeout, but without headroom."""

from __future__ import annotations

from safe_queue.engine.budget import recommended_visibility_timeout
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS, formula

__all__ = ["RULE"]


def check(
    *, visibility_timeout: int, function_timeout: int, batching_window: int
) -> Violation | None:
    """Warn when visibility is at least the function timeout but below the AWS guidance."""
    recommended = recommended_visibility_timeout(function_timeout, batching_window)
    if visibility_timeout >= recommended or visibility_timeout < function_timeout:
        return None
    return Violation(
        f"Queue VisibilityTimeout {visibility_timeout} s is below the recommended"
        f" {formula(function_timeout, batching_window)}: AWS accepts it, but time spent"
        " batching and retrying throttled invocations comes out of the same lease, so a"
        " message can reappear while it is still being processed.",
        f"use {recommended} s or more.",
    )


RULE = Rule(
    id="safe-queue:visibility-below-guidance",
    levels=(Level.WARNING,),
    kind="guidance",
    summary="VisibilityTimeout is at least the function Timeout but below 6 x Timeout +"
    " batching window.",
    why="Batching and retries of throttled invocations come out of the same lease, so a"
    " message can reappear while it is still being processed.",
    fix="Raise VisibilityTimeout to the recommended value the finding states.",
    source_url=LAMBDA_SQS,
    compliant=example("Visibility 1082 s = 6 x 180 s + 2 s.", queue={"visibility_timeout": 1082}),
    non_compliant=example(
        "Visibility 600 s: above the 180 s timeout, below 1082 s.",
        queue={"visibility_timeout": 600},
    ),
    check=check,
    properties=(("queue", "Properties/VisibilityTimeout"), ("function", "Properties/Timeout")),
)
