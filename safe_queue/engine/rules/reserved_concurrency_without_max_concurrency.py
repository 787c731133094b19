"""``safe-queue:reserved-concurrency-without-max-concurrency``: throttles burn receives."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS_SCALING

__all__ = ["RULE"]


def check(
    *, reserved_concurrency: int | None, max_concurrency: int | None, provisioned: bool
) -> Violation | None:
    """Warn when the function has reserved concurrency and the mapping no maximum.

    Not applicable in provisioned mode, where ``MaximumConcurrency`` cannot be set (the
    pollers bound the concurrency).
    """
    if reserved_concurrency is None or max_concurrency is not None or provisioned:
        return None
    if reserved_concurrency >= limits.MAX_CONCURRENCY_MIN:
        fix = (
            "set ScalingConfig.MaximumConcurrency to at most"
            f" {min(reserved_concurrency, limits.MAX_CONCURRENCY_MAX)}."
        )
    else:
        fix = (
            "raise ReservedConcurrentExecutions to at least"
            f" {limits.MAX_CONCURRENCY_MIN} (MaximumConcurrency's minimum) and set"
            " MaximumConcurrency to at most that."
        )
    return Violation(
        f"The function has ReservedConcurrentExecutions {reserved_concurrency} and the mapping"
        " has no ScalingConfig.MaximumConcurrency: the SQS poller takes more messages than"
        " the function may run, throttled messages return to the queue and count as"
        " receives, and healthy messages get dead-lettered.",
        fix,
    )


RULE = Rule(
    id="safe-queue:reserved-concurrency-without-max-concurrency",
    levels=(Level.WARNING,),
    kind="guidance",
    summary="The function has ReservedConcurrentExecutions and the mapping no"
    " ScalingConfig.MaximumConcurrency.",
    why="Event source mappings do not account for reserved concurrency: the poller takes more"
    " messages than the function may run, throttled messages come back and burn receives,"
    " and healthy ones get dead-lettered.",
    fix="Set ScalingConfig.MaximumConcurrency <= ReservedConcurrentExecutions.",
    source_url=LAMBDA_SQS_SCALING,
    compliant=example(
        "Reserved concurrency 10, MaximumConcurrency 10.",
        function={"reserved_concurrency": 10},
        mapping={"max_concurrency": 10},
    ),
    non_compliant=example(
        "Reserved concurrency 10, no MaximumConcurrency.", function={"reserved_concurrency": 10}
    ),
    check=check,
    properties=(
        ("mapping", "Properties/ScalingConfig"),
        ("function", "Properties/ReservedConcurrentExecutions"),
    ),
)
