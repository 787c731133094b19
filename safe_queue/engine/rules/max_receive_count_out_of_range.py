"""``safe-queue:max-receive-count-out-of-range``: RedrivePolicy maxReceiveCount 1..1,000."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import SQS_DLQ_CONFIGURE, out_of_range

__all__ = ["RULE"]


def check(*, max_receive_count: int | None) -> Violation | None:
    """Error for a ``maxReceiveCount`` outside 1..1,000 (no dead-letter queue: none)."""
    if max_receive_count is None:
        return None
    return out_of_range(
        "RedrivePolicy maxReceiveCount",
        max_receive_count,
        limits.MAX_RECEIVE_COUNT_MIN,
        limits.MAX_RECEIVE_COUNT_MAX,
    )


RULE = Rule(
    id="safe-queue:max-receive-count-out-of-range",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary="RedrivePolicy maxReceiveCount is outside 1..1,000.",
    why="SQS rejects the redrive policy, so the deployment fails.",
    fix="maxReceiveCount within 1..1,000 (5 or more: see max-receive-count-below-guidance).",
    source_url=SQS_DLQ_CONFIGURE,
    compliant=example("maxReceiveCount 5.", max_receive_count=5),
    non_compliant=example("maxReceiveCount 0 (also below the guidance of 5).", max_receive_count=0),
    check=check,
    properties=(("queue", "Properties/RedrivePolicy"),),
)
