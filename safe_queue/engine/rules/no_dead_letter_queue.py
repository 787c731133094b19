"""``safe-queue:no-dead-letter-queue``: a poison message is retried until it expires."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS_ERRORS

__all__ = ["RULE"]


def check(*, has_dead_letter_queue: bool) -> Violation | None:
    """Warn when the source queue has no redrive policy (no dead-letter queue)."""
    if has_dead_letter_queue:
        return None
    return Violation(
        "Queue has no RedrivePolicy (no dead-letter queue): a message that always fails is"
        " retried until its MessageRetentionPeriod ends and is then lost.",
        "add a dead-letter queue with a RedrivePolicy maxReceiveCount >="
        f" {limits.MAX_RECEIVE_COUNT_GUIDANCE}.",
    )


RULE = Rule(
    id="safe-queue:no-dead-letter-queue",
    levels=(Level.WARNING,),
    kind="guidance",
    summary="The source queue has no RedrivePolicy.",
    why="A message that always fails is retried until its retention ends, and is then lost.",
    fix=f"Add a dead-letter queue with maxReceiveCount >= {limits.MAX_RECEIVE_COUNT_GUIDANCE}.",
    source_url=LAMBDA_SQS_ERRORS,
    compliant=example("A dead-letter queue after 5 receives."),
    non_compliant=example("No RedrivePolicy.", max_receive_count=None),
    check=check,
    properties=(("queue", "Properties/RedrivePolicy"),),
)
