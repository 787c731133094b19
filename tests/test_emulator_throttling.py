"""Why 6 x T + W: throttled invokes wait inside the lease, on moto's SQS.

Two consumers, built with `SafeQueueConsumer`, differ only in the visibility timeout:

- ``Tight``: T + W = 12 s (an explicit ``visibility_timeout``; the construct warns);
- ``Derived``: 6 x T + W = 62 s (the default).

T is a 10 s function timeout and W a 2 s batching window. Each gets the same ten messages
and the same throttling: five pollers take them in batches of 2, the function's
concurrency is limited to 2, and each batch works 7 s of its 10 s. So two batches run and
three are throttled and retried on `assumed_throttle_backoff` (1 s, 2 s, 4 s, then 5 s; an
assumption, see its docstring) while their leases run.

Everything runs on the virtual clock: the numbers below are exact and the same every run.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import boto3
import pytest
from aws_cdk.assertions import Template

from safe_queue import SafeQueueConsumer

from .conftest import make_app, make_function
from .emulator import (
    REGION,
    SimulatedSqsPoller,
    VirtualClock,
    assumed_throttle_backoff,
    deploy,
    emulated_aws,
    queue_attributes,
    without_mappings,
)

FUNCTION_TIMEOUT = 10  # T
BATCHING_WINDOW = 2  # W
BATCH_SIZE = 2
MESSAGES = 10
POLLERS = 5
CONCURRENCY_LIMIT = 2
SECONDS_PER_RECORD = 3.5  # a batch of 2 works 7 s of its 10 s timeout
RUN_SECONDS = 60  # both runs are done by 33 s (asserted: the queues end empty)


@dataclass(frozen=True)
class Consumer:
    name: str
    template: dict[str, Any]
    queue_id: str
    visibility_timeout: int


@pytest.fixture(scope="module")
def consumers() -> dict[str, Consumer]:
    app = make_app()
    built = {}
    for name, visibility in (("Tight", FUNCTION_TIMEOUT + BATCHING_WINDOW), ("Derived", None)):
        stack = cdk.Stack(app, name)
        consumer = SafeQueueConsumer(
            stack,
            "Consumer",
            function=make_function(stack, "Fn", cdk.Duration.seconds(FUNCTION_TIMEOUT)),
            batch_size=BATCH_SIZE,
            max_batching_window=cdk.Duration.seconds(BATCHING_WINDOW),
            **({"visibility_timeout": cdk.Duration.seconds(visibility)} if visibility else {}),
        )
        built[name] = (stack, consumer)
    return {
        name: Consumer(
            name,
            without_mappings(Template.from_stack(stack).to_json()),
            stack.get_logical_id(consumer.queue.node.default_child),  # type: ignore[arg-type]
            int(consumer.visibility_timeout.to_seconds()),
        )
        for name, (stack, consumer) in built.items()
    }


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[VirtualClock]:
    with emulated_aws(monkeypatch) as virtual_clock:
        yield virtual_clock


@dataclass
class Run:
    poller: SimulatedSqsPoller
    processed: Counter[int]
    """How many times the handler processed each message (by its number, 0..9)."""
    numbers: dict[str, int]
    """{message id: message number}"""
    started: float

    def receive_counts(self) -> Counter[int]:
        """How many messages were received once, twice, three times..."""
        return Counter(self.poller.receive_counts().values())

    def processed_twice(self) -> list[int]:
        return sorted(n for n, times in self.processed.items() if times > 1)

    def throttled_before(self, seconds: float) -> list[float]:
        """When invokes were throttled, in seconds since the start, up to `seconds`."""
        return [at - self.started for at, _ in self.poller.throttles if at - self.started < seconds]


def run(
    clock: VirtualClock,
    consumer: Consumer,
    backoff: Callable[[int], float] = assumed_throttle_backoff,
) -> Run:
    """Deploy the consumer's queue, send the ten messages, and let the pollers work."""
    queue_url = deploy(consumer.name, consumer.template)[consumer.queue_id]
    assert int(queue_attributes(queue_url)["VisibilityTimeout"]) == consumer.visibility_timeout
    sqs = boto3.client("sqs", region_name=REGION)
    numbers = {
        sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps({"n": n}))["MessageId"]: n
        for n in range(MESSAGES)
    }
    processed: Counter[int] = Counter()

    def handler(event: dict[str, Any], context: Any) -> dict[str, list[Any]]:
        for record in event["Records"]:
            processed[json.loads(record["body"])["n"]] += 1
        return {"batchItemFailures": []}

    poller = SimulatedSqsPoller(
        clock=clock,
        queue_url=queue_url,
        handler=handler,
        batch_size=BATCH_SIZE,
        report_batch_item_failures=True,
        function_timeout=FUNCTION_TIMEOUT,
        record_seconds=lambda _record: SECONDS_PER_RECORD,
        pollers=POLLERS,
        batching_window=BATCHING_WINDOW,
        concurrency_limit=CONCURRENCY_LIMIT,
        throttle_backoff=backoff,
    )
    started = clock.now
    poller.run(RUN_SECONDS)
    attributes = queue_attributes(queue_url)
    assert attributes["ApproximateNumberOfMessages"] == "0"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
    return Run(poller, processed, numbers, started)


def test_visibility_of_t_plus_w_lets_throttling_cause_duplicates(
    clock: VirtualClock, consumers: dict[str, Consumer]
):
    tight, derived = consumers["Tight"], consumers["Derived"]
    assert (tight.visibility_timeout, derived.visibility_timeout) == (12, 62)
    # GIVEN the same messages and the same throttling, WHEN the pollers work each queue
    short, long = run(clock, tight), run(clock, derived)
    # THEN the throttling was the same while both leases ran: three batches throttled at
    # 0 s, retried at 1 s, 3 s and 7 s (two of them got in at 7 s when the first two ended)
    assert short.throttled_before(12) == long.throttled_before(12) == [0, 0, 0, 1, 1, 1, 3, 3, 3, 7]
    # AND with T + W = 12 s: messages 4..7, invoked at 7 s with 5 s of lease left for 7 s
    # of work, reappeared at 12 s while still being processed: they were received again
    # at 13 s and processed a second time from 14 s
    assert short.processed_twice() == [4, 5, 6, 7]
    # AND messages 8, 9, still throttled when their lease ran out, were dropped, received
    # again, dropped again and processed on their third receive: throttling alone used up
    # three of their five receives (maxReceiveCount) without a single failure
    assert [sorted(short.numbers[m] for m in batch) for batch in short.poller.dropped] == [
        [8, 9],
        [8, 9],
    ]
    assert short.processed[8] == short.processed[9] == 1
    assert short.receive_counts() == Counter({1: 4, 2: 4, 3: 2})
    # AND with 6 x T + W = 62 s: the last batch waited 17 s for a free slot, well inside
    # its lease; every message was received once and processed once, nothing was dropped
    assert max(i.start - i.received for i in long.poller.timeline) == 17
    assert long.processed == Counter(range(MESSAGES))
    assert long.receive_counts() == Counter({1: MESSAGES})
    assert long.poller.dropped == []
    # (the throttled retries themselves are not receives: the counts only rise when a
    # lease runs out)
    assert len(long.poller.throttles) > MESSAGES // BATCH_SIZE


OTHER_SCHEDULES: dict[str, Callable[[int], float]] = {
    "every 1 s": lambda _attempt: 1.0,
    "every 2 s": lambda _attempt: 2.0,
}


@pytest.mark.parametrize("backoff", OTHER_SCHEDULES.values(), ids=OTHER_SCHEDULES)
def test_the_contrast_does_not_hinge_on_the_assumed_schedule(
    clock: VirtualClock, consumers: dict[str, Consumer], backoff: Callable[[int], float]
):
    # GIVEN another retry schedule for throttled invokes
    short, long = run(clock, consumers["Tight"], backoff), run(clock, consumers["Derived"], backoff)
    # THEN T + W still gives messages received and processed twice, 6 x T + W none
    assert short.processed_twice()
    assert max(short.poller.receive_counts().values()) > 1
    assert long.processed == Counter(range(MESSAGES))
    assert set(long.poller.receive_counts().values()) == {1}
