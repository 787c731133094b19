"""``safe-queue:provisioned-pollers-out-of-range``: ProvisionedPollerConfig Lambda rejects."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.facts import ProvisionedFacts
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import out_of_range

__all__ = ["RULE"]


def check(*, minimum_pollers: int | None, maximum_pollers: int | None) -> Violation | None:
    """Error for provisioned pollers outside AWS's ranges for SQS (see ``limits``)."""
    if minimum_pollers is None or maximum_pollers is None:  # not in provisioned mode
        return None
    for what, value, high in (
        ("ProvisionedPollerConfig.MinimumPollers", minimum_pollers, limits.MINIMUM_POLLERS_MAX),
        ("ProvisionedPollerConfig.MaximumPollers", maximum_pollers, limits.MAXIMUM_POLLERS_MAX),
    ):
        violation = out_of_range(what, value, limits.POLLERS_MIN, high)
        if violation is not None:
            return violation
    return None


_MINIMUM = f"{limits.POLLERS_MIN}..{limits.MINIMUM_POLLERS_MAX}"
_MAXIMUM = f"{limits.POLLERS_MIN}..{limits.MAXIMUM_POLLERS_MAX:,}"


RULE = Rule(
    id="safe-queue:provisioned-pollers-out-of-range",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary=f"ProvisionedPollerConfig's MinimumPollers ({_MINIMUM}) or MaximumPollers ({_MAXIMUM})"
    " is outside AWS's range for SQS.",
    why="Lambda rejects the event source mapping, so the deployment fails.",
    fix=f"MinimumPollers within {_MINIMUM}, MaximumPollers within {_MAXIMUM}.",
    source_url="https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html",
    compliant=example(
        "Provisioned mode with 2..10 pollers.",
        mapping={"provisioned": ProvisionedFacts(minimum_pollers=2, maximum_pollers=10)},
    ),
    non_compliant=example(
        "Provisioned mode with 1..10 pollers.",
        mapping={"provisioned": ProvisionedFacts(minimum_pollers=1, maximum_pollers=10)},
    ),
    check=check,
    properties=(("mapping", "Properties/ProvisionedPollerConfig"),),
)
