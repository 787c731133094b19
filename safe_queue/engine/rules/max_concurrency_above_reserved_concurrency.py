"""``safe-queue:max-concurrency-above-reserved-concurrency``: invokes that must throttle."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS_SCALING

__all__ = ["RULE"]


def check(*, reserved_concurrency: int | None, max_concurrency: int | None) -> Violation | None:
    """Warn when the mapping's maximum concurrency exceeds the function's reserved one."""
    if reserved_concurrency is None or max_concurrency is None:
        return None
    if max_concurrency <= reserved_concurrency:
        return None
    if reserved_concurrency >= limits.MAX_CONCURRENCY_MIN:
        fix = (
            f"set MaximumConcurrency to at most {reserved_concurrency}, or raise the reserved"
            " concurrency."
        )
    else:  # MaximumConcurrency cannot go below 2
        fix = (
            f"raise ReservedConcurrentExecutions to at least {max_concurrency}"
            f" (MaximumConcurrency cannot be below {limits.MAX_CONCURRENCY_MIN})."
        )
    return Violation(
        f"ScalingConfig.MaximumConcurrency {max_concurrency} is above the function's"
        f" ReservedConcurrentExecutions {reserved_concurrency}: the poller invokes more"
        " often than the function may run, throttled messages return to the queue and count"
        " as receives.",
        fix,
    )


RULE = Rule(
    id="safe-queue:max-concurrency-above-reserved-concurrency",
    levels=(Level.WARNING,),
    kind="guidance",
    summary="ScalingConfig.MaximumConcurrency is above the function's"
    " ReservedConcurrentExecutions.",
    why="The poller invokes more often than the function may run; throttled messages return"
    " to the queue and count as receives.",
    fix="MaximumConcurrency <= ReservedConcurrentExecutions.",
    source_url=LAMBDA_SQS_SCALING,
    compliant=example(
        "Reserved concurrency 10, MaximumConcurrency 10.",
        function={"reserved_concurrency": 10},
        mapping={"max_concurrency": 10},
    ),
    non_compliant=example(
        "Reserved concurrency 10, MaximumConcurrency 20.",
        function={"reserved_concurrency": 10},
        mapping={"max_concurrency": 20},
    ),
    check=check,
    properties=(
        ("mapping", "Properties/ScalingConfig"),
        ("function", "Properties/ReservedConcurrentExecutions"),
    ),
)
