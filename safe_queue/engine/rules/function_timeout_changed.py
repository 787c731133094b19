"""``safe-queue:function-timeout-changed``: the drift a SafeQueueConsumer exists to stop."""

from __future__ import annotations

from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS

__all__ = ["RULE"]


def check(*, function_timeout: int, derived_function_timeout: int | None) -> Violation | None:
    """Error when a SafeQueueConsumer's function timeout changed after the queue was derived."""
    if derived_function_timeout is None or function_timeout == derived_function_timeout:
        return None
    return Violation(
        f"The function's Timeout is now {function_timeout} s, but SafeQueueConsumer derived"
        f" the queue from {derived_function_timeout} s (the timeout was changed after the"
        " consumer was built, e.g. with an escape hatch or a property override): the drift"
        " this library exists to stop.",
        "set the timeout on the Function before creating the consumer, so the visibility"
        " timeout is derived from it.",
    )


RULE = Rule(
    id="safe-queue:function-timeout-changed",
    levels=(Level.ERROR,),
    kind="drift",
    summary="A SafeQueueConsumer's function now has another Timeout than the one its queue"
    " was derived from.",
    why="The timeout was changed after the consumer was built (an escape hatch, a property"
    " override): the queue no longer fits the function, the drift of the seed incident.",
    fix="Set the timeout on the Function before creating the consumer.",
    source_url=LAMBDA_SQS,
    compliant=example(
        "Derived from 180 s; the function's Timeout is 180 s.",
        mapping={"derived_function_timeout": 180},
    ),
    non_compliant=example(
        "Derived from 60 s; the function's Timeout is now 180 s.",
        mapping={"derived_function_timeout": 60},
    ),
    check=check,
    properties=(("function", "Properties/Timeout"),),
)
