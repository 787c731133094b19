"""``safe-queue:max-concurrency-out-of-range``: ScalingConfig.MaximumConcurrency 2..1,000."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import out_of_range

__all__ = ["RULE"]


def check(*, max_concurrency: int | None) -> Violation | None:
    """Error for a maximum concurrency outside 2..1,000."""
    if max_concurrency is None:
        return None
    return out_of_range(
        "ScalingConfig.MaximumConcurrency",
        max_concurrency,
        limits.MAX_CONCURRENCY_MIN,
        limits.MAX_CONCURRENCY_MAX,
    )


_RANGE = f"{limits.MAX_CONCURRENCY_MIN}..{limits.MAX_CONCURRENCY_MAX:,}"


RULE = Rule(
    id="safe-queue:max-concurrency-out-of-range",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary=f"ScalingConfig.MaximumConcurrency is outside {_RANGE}.",
    why="Lambda rejects the event source mapping, so the deployment fails.",
    fix=f"MaximumConcurrency within {_RANGE}.",
    source_url="https://docs.aws.amazon.com/lambda/latest/api/API_ScalingConfig.html",
    compliant=example("MaximumConcurrency 2.", mapping={"max_concurrency": 2}),
    non_compliant=example("MaximumConcurrency 1.", mapping={"max_concurrency": 1}),
    check=check,
    properties=(("mapping", "Properties/ScalingConfig/MaximumConcurrency"),),
)
