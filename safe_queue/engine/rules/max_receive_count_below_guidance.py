"""``safe-queue:max-receive-count-below-guidance``: healthy messages dead-lettered."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS_ERRORS

__all__ = ["RULE"]

_GUIDANCE = limits.MAX_RECEIVE_COUNT_GUIDANCE


def check(*, max_receive_count: int | None) -> Violation | None:
    """Warn when ``maxReceiveCount`` is below 5 (AWS guidance); no DLQ: not applicable."""
    if max_receive_count is None or max_receive_count >= _GUIDANCE:
        return None
    return Violation(
        f"RedrivePolicy maxReceiveCount is {max_receive_count}, below the recommended"
        f" {_GUIDANCE}: a few transient errors or throttles send healthy messages to the"
        " dead-letter queue.",
        f"set maxReceiveCount to {_GUIDANCE} or more.",
    )


RULE = Rule(
    id="safe-queue:max-receive-count-below-guidance",
    levels=(Level.WARNING,),
    kind="guidance",
    summary=f"RedrivePolicy maxReceiveCount is below {_GUIDANCE}.",
    why="A few transient errors or throttles send healthy messages to the dead-letter queue.",
    fix=f"maxReceiveCount >= {_GUIDANCE}.",
    source_url=LAMBDA_SQS_ERRORS,
    compliant=example("maxReceiveCount 5.", max_receive_count=5),
    non_compliant=example("maxReceiveCount 3.", max_receive_count=3),
    check=check,
    properties=(("queue", "Properties/RedrivePolicy"),),
)
