"""``safe-queue:visibility-below-function-timeout``: the seed incident."""

from __future__ import annotations

from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS, formula

__all__ = ["RULE"]


def check(
    *, visibility_timeout: int, function_timeout: int, batching_window: int
) -> Violation | None:
    """Error when the queue's visibility timeout is shorter than the function timeout."""
    if visibility_timeout >= function_timeout:
        return None
    return Violation(
        f"Queue VisibilityTimeout {visibility_timeout} s is below the function Timeout"
        f" {function_timeout} s: a message still being processed becomes visible again and"
        " is processed twice, and Lambda rejects the event source mapping when it is next"
        " created or updated.",
        f"set VisibilityTimeout to at least {formula(function_timeout, batching_window)}.",
    )


RULE = Rule(
    id="safe-queue:visibility-below-function-timeout",
    levels=(Level.ERROR,),
    kind="guidance",
    summary="The queue's VisibilityTimeout is shorter than the function's Timeout.",
    why="A message still being processed becomes visible again and a second invocation"
    " processes it (the seed incident: 60 s visibility, 180 s timeout). Lambda checks the"
    " pair only when the mapping is created, so raising the timeout later goes unnoticed.",
    fix="VisibilityTimeout >= 6 x function Timeout + MaximumBatchingWindowInSeconds.",
    source_url=LAMBDA_SQS,
    compliant=example("Visibility 1082 s = 6 x 180 s + 2 s.", queue={"visibility_timeout": 1082}),
    non_compliant=example(
        "Visibility 60 s on a 180 s function (the seed incident).",
        queue={"visibility_timeout": 60},
    ),
    check=check,
    properties=(("queue", "Properties/VisibilityTimeout"), ("function", "Properties/Timeout")),
)
