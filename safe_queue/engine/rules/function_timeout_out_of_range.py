"""``safe-queue:function-timeout-out-of-range``: a Timeout Lambda rejects."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import out_of_range

__all__ = ["RULE"]


def check(*, function_timeout: int, capacity_provider: bool) -> Violation | None:
    """Error for a function timeout outside 1..900 s (Lambda Managed Instances: see limits)."""
    if capacity_provider:
        return out_of_range(
            "The function's Timeout",
            function_timeout,
            limits.FUNCTION_TIMEOUT_MIN,
            limits.FUNCTION_TIMEOUT_MAX_MANAGED_INSTANCES,
            "s",
            " for a function on Lambda Managed Instances (CapacityProviderConfig)",
            setting="the function's Timeout",
        )
    return out_of_range(
        "The function's Timeout",
        function_timeout,
        limits.FUNCTION_TIMEOUT_MIN,
        limits.FUNCTION_TIMEOUT_MAX,
        "s",
        setting="the function's Timeout",
    )


_RANGE = f"{limits.FUNCTION_TIMEOUT_MIN}..{limits.FUNCTION_TIMEOUT_MAX}"
_MANAGED = f"{limits.FUNCTION_TIMEOUT_MIN}..{limits.FUNCTION_TIMEOUT_MAX_MANAGED_INSTANCES:,}"


RULE = Rule(
    id="safe-queue:function-timeout-out-of-range",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary=f"The function's Timeout is outside {_RANGE} s ({_MANAGED} s on Lambda Managed"
    " Instances).",
    why="Lambda rejects the function, so the deployment fails.",
    fix="A Timeout within Lambda's range.",
    source_url="https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html",
    compliant=example(
        "A 900 s function (visibility 6 x 900 s + 2 s).",
        queue={"visibility_timeout": 5402},
        function={"timeout": 900},
    ),
    non_compliant=example(
        "A 901 s function (visibility 6 x 901 s + 2 s).",
        queue={"visibility_timeout": 5408},
        function={"timeout": 901},
    ),
    check=check,
    properties=(("function", "Properties/Timeout"),),
)
