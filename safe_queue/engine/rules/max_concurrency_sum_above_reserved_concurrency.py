"""``safe-queue:max-concurrency-sum-above-reserved-concurrency``: mappings share a function."""

from __future__ import annotations

import dataclasses

from safe_queue.engine import limits
from safe_queue.engine.example import Example, example
from safe_queue.engine.facts import QueueFacts, RedriveFacts
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS_SCALING

__all__ = ["RULE"]


def check(
    *,
    reserved_concurrency: int | None,
    function_sqs_mappings: int,
    function_max_concurrency_total: int | None,
) -> Violation | None:
    """Warn when the SQS mappings of one function may together run more than it may.

    ``function_sqs_mappings`` counts the function's SQS mappings in the run (this one
    included); ``function_max_concurrency_total`` sums their MaximumConcurrency (``None``
    when one of them has none: ``reserved-concurrency-without-max-concurrency`` covers it).
    One mapping alone is judged by ``max-concurrency-above-reserved-concurrency``.
    """
    if reserved_concurrency is None or function_max_concurrency_total is None:
        return None
    if function_sqs_mappings < 2 or function_max_concurrency_total <= reserved_concurrency:
        return None
    lowest = function_sqs_mappings * limits.MAX_CONCURRENCY_MIN
    fix = f"raise ReservedConcurrentExecutions to at least {function_max_concurrency_total}"
    if lowest <= reserved_concurrency:
        fix += (
            f", or lower the mappings' MaximumConcurrency so that they add up to at most"
            f" {reserved_concurrency}"
        )
    return Violation(
        f"The function's {function_sqs_mappings} SQS event source mappings have"
        f" ScalingConfig.MaximumConcurrency adding up to {function_max_concurrency_total},"
        f" above its ReservedConcurrentExecutions {reserved_concurrency}: together they"
        " invoke more often than the function may run, and throttled messages return to"
        " their queues and count as receives.",
        f"{fix}.",
    )


def _two_mappings(description: str, each: int) -> Example:
    first = example(
        description, function={"reserved_concurrency": 10}, mapping={"max_concurrency": each}
    ).mappings[0]
    queue = first.queue
    assert isinstance(queue, QueueFacts)
    assert isinstance(queue.redrive, RedriveFacts)
    assert isinstance(queue.redrive.dead_letter_queue, QueueFacts)
    second = dataclasses.replace(
        first,
        name="OtherMapping",
        queue=dataclasses.replace(
            queue,
            name="OtherQueue",
            redrive=RedriveFacts(
                queue.redrive.max_receive_count,
                dataclasses.replace(queue.redrive.dead_letter_queue, name="OtherDeadLetterQueue"),
            ),
        ),
    )
    return Example(description, (first, second))


RULE = Rule(
    id="safe-queue:max-concurrency-sum-above-reserved-concurrency",
    levels=(Level.WARNING,),
    kind="guidance",
    summary="The MaximumConcurrency of a function's SQS mappings adds up to more than its"
    " ReservedConcurrentExecutions.",
    why="AWS: set the function's reserved concurrency to at least the sum of the maximum"
    " concurrency of its SQS event sources, otherwise Lambda may throttle the messages;"
    " throttled messages return to their queues and burn receives.",
    fix="ReservedConcurrentExecutions >= the sum of the mappings' MaximumConcurrency.",
    source_url=LAMBDA_SQS_SCALING,
    compliant=_two_mappings("Two queues, MaximumConcurrency 5 each, reserved 10.", 5),
    non_compliant=_two_mappings("Two queues, MaximumConcurrency 6 each, reserved 10.", 6),
    check=check,
    properties=(
        ("mapping", "Properties/ScalingConfig"),
        ("function", "Properties/ReservedConcurrentExecutions"),
    ),
)
