"""``safe-queue:provisioned-mode-with-max-concurrency``: two ways to bound, one allowed."""

from __future__ import annotations

from safe_queue.engine.example import example
from safe_queue.engine.facts import ProvisionedFacts
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS_SCALING

__all__ = ["RULE"]


def check(*, provisioned: bool, max_concurrency: int | None) -> Violation | None:
    """Error for ScalingConfig.MaximumConcurrency on a mapping in provisioned mode."""
    if not provisioned or max_concurrency is None:
        return None
    return Violation(
        f"The mapping is in provisioned mode (ProvisionedPollerConfig) and has"
        f" ScalingConfig.MaximumConcurrency {max_concurrency}; Lambda takes one or the"
        " other, so it rejects the mapping.",
        "remove ScalingConfig (bound the concurrency with MaximumPollers), or remove"
        " ProvisionedPollerConfig.",
    )


RULE = Rule(
    id="safe-queue:provisioned-mode-with-max-concurrency",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary="A mapping in provisioned mode also has ScalingConfig.MaximumConcurrency.",
    why="Provisioned mode and MaximumConcurrency are mutually exclusive; Lambda rejects the"
    " mapping.",
    fix="One of ProvisionedPollerConfig and ScalingConfig.MaximumConcurrency.",
    source_url=LAMBDA_SQS_SCALING,
    compliant=example(
        "Provisioned mode, no MaximumConcurrency.",
        mapping={"provisioned": ProvisionedFacts(minimum_pollers=2, maximum_pollers=10)},
    ),
    non_compliant=example(
        "Provisioned mode and MaximumConcurrency 5.",
        mapping={
            "provisioned": ProvisionedFacts(minimum_pollers=2, maximum_pollers=10),
            "max_concurrency": 5,
        },
    ),
    check=check,
    properties=(
        ("mapping", "Properties/ProvisionedPollerConfig"),
        ("mapping", "Properties/ScalingConfig"),
    ),
)
