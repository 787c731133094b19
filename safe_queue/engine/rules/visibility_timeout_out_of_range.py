"""``safe-queue:visibility-timeout-out-of-range``: VisibilityTimeout above 12 hours."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import SQS_ATTRIBUTES_API, out_of_range

__all__ = ["RULE"]


def check(*, visibility_timeout: int) -> Violation | None:
    """Error for a visibility timeout outside 0..43,200 s (12 hours)."""
    return out_of_range(
        "Queue VisibilityTimeout",
        visibility_timeout,
        limits.VISIBILITY_TIMEOUT_MIN,
        limits.VISIBILITY_TIMEOUT_MAX,
        "s",
        setting="the queue's VisibilityTimeout",
    )


_RANGE = f"{limits.VISIBILITY_TIMEOUT_MIN}..{limits.VISIBILITY_TIMEOUT_MAX:,}"


RULE = Rule(
    id="safe-queue:visibility-timeout-out-of-range",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary=f"The queue's VisibilityTimeout is outside {_RANGE} s (12 hours).",
    why="SQS rejects the queue, so the deployment fails.",
    fix=f"VisibilityTimeout within {_RANGE} s.",
    source_url=SQS_ATTRIBUTES_API,
    compliant=example("Visibility 43,200 s.", queue={"visibility_timeout": 43_200}),
    non_compliant=example("Visibility 43,201 s.", queue={"visibility_timeout": 43_201}),
    check=check,
    properties=(("queue", "Properties/VisibilityTimeout"),),
)
