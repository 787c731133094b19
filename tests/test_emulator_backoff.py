"""The handler helpers on moto's SQS, in virtual time: an outage, a batch past the deadline.

Consumers synthesized with ``SafeQueueConsumer`` (derived visibility timeouts; one small
stack each) are created through moto's CloudFormation and worked by `SimulatedSqsPoller`.
Every number below comes from the run; the tests assert the contrast between the runs
with and without a helper, and the arithmetic that predicts it
(`FailureBackoff.outage_ridden_out`).

1. A 10-minute downstream outage on a 10 s function (visibility 6 x 10 = 60 s): without a
   backoff the healthy messages use up their receives and are dead-lettered; with
   ``FailureBackoff(base=30, cap=900)`` none is, each processed exactly once after the
   outage. It needs enough receives: the shortest delays (jitter draws the shortest half)
   of the receives before the last one must add up to the outage, 915 s with
   ``max_receive_count=7``; the construct's default of 5 gives 225 s, and the same outage
   dead-letters messages (third test).
2. A batch of 10 records of 30 s each on a 180 s function (`timed_handler`: the handler's
   context runs down as the records take their time): unguarded, the invocation is killed
   at 180 s and the whole batch comes back, the records already processed included;
   with ``stop_before_deadline(margin=35)`` five records run, five are reported failed
   without being started, and every record is processed exactly once.
3. FIFO: a failed record holds its message group for the backoff, the group's later
   records with it, then the group resumes in order, long before the visibility timeout.
4. The example's invoice handler, both helpers together, on a consumer configured as the
   example's (with its idempotency table).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import aws_cdk as cdk
import boto3
import pytest
from aws_cdk.assertions import Template
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    SqsFifoPartialProcessor,
    process_partial_response,
)

from example.handler import render_invoices
from safe_queue import SafeQueueConsumer
from safe_queue.runtime import FailureBackoff, stop_before_deadline
from safe_queue.runtime import _sqs as sqs_module

from .conftest import make_app, make_function
from .emulator import (
    REGION,
    SimulatedSqsPoller,
    VirtualClock,
    VirtualLambdaContext,
    deploy,
    drain,
    emulated_aws,
    queue_attributes,
    without_mappings,
)

OUTAGE = 600.0  # seconds: the downstream fails for the first 10 minutes
POLL_INTERVAL = 10.0  # an idle poller polls again 10 s later (fewer moto calls; a model)


@dataclass(frozen=True)
class Consumer:
    stack_name: str
    template: dict[str, Any]
    queue_id: str
    dead_letter_id: str
    table_id: str | None
    function_timeout: float
    max_receive_count: int
    batch_size: int
    batching_window: float


@pytest.fixture(scope="module")
def consumers() -> dict[str, Consumer]:
    app = make_app()
    settings: dict[str, tuple[cdk.Stack, SafeQueueConsumer, int, float]] = {}

    def alone(
        name: str, key: str, timeout: int, batch_size: int, window: int = 0, **props: Any
    ) -> None:
        """A stack of one consumer (moto then creates only what the test uses)."""
        stack = cdk.Stack(app, f"Proof{name}")
        function = make_function(stack, "Fn", cdk.Duration.seconds(timeout))
        if window:
            props["max_batching_window"] = cdk.Duration.seconds(window)
        consumer = SafeQueueConsumer(stack, name, function=function, batch_size=batch_size, **props)
        settings[key] = (stack, consumer, batch_size, float(window))

    # a 10 s function: visibility 60 s; 7 receives (enough for the backoff to ride out
    # the outage), and the construct's default of 5
    alone("Outage", "outage", 10, 10, max_receive_count=7)
    alone("OutageDefault", "outage-default-receives", 10, 10)
    # the deadline case: a 180 s function, batches of 10
    alone("Deadline", "deadline", 180, 10)
    # a FIFO consumer like the example's ledger: 30 s function, visibility 180 s
    alone("Ledger", "ledger", 30, 10, fifo=True, content_based_deduplication=True)
    # the example's invoice consumer, configured as in example/stack.py
    alone(
        "Invoices",
        "invoices",
        180,
        5,
        window=2,
        idempotency=True,
        failure_backoff=FailureBackoff(base=30, cap=900),
        max_receive_count=7,
    )

    def logical_id(stack: cdk.Stack, construct: Any) -> str:
        return stack.get_logical_id(construct.node.default_child)

    made = {}
    for key, (stack, consumer, batch_size, window) in settings.items():
        template = without_mappings(Template.from_stack(stack).to_json())
        queue_id = logical_id(stack, consumer.queue)
        table = consumer.idempotency_table
        made[key] = Consumer(
            stack_name=stack.stack_name,
            template=template,
            queue_id=queue_id,
            dead_letter_id=logical_id(stack, consumer.dead_letter_queue),
            table_id=logical_id(stack, table) if table is not None else None,
            function_timeout=consumer.function_timeout.to_seconds(),
            max_receive_count=template["Resources"][queue_id]["Properties"]["RedrivePolicy"][
                "maxReceiveCount"
            ],
            batch_size=batch_size,
            batching_window=window,
        )
    return made


@dataclass
class World:
    clock: VirtualClock
    physical: dict[str, dict[str, str]] = field(default_factory=dict)

    def queues(self, consumer: Consumer) -> tuple[str, str]:
        if consumer.stack_name not in self.physical:
            self.physical[consumer.stack_name] = deploy(consumer.stack_name, consumer.template)
        ids = self.physical[consumer.stack_name]
        return ids[consumer.queue_id], ids[consumer.dead_letter_id]


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    # the backoff's default clients are made inside this test's moto, and dropped after it
    monkeypatch.setattr(sqs_module, "_clients", {})
    with emulated_aws(monkeypatch) as clock:
        yield World(clock)


class LowestDraw(random.Random):
    """Always draws the shortest jittered delay: the worst case for riding out an outage."""

    def randint(self, a: int, b: int) -> int:
        return a


def send(queue_url: str, bodies: list[dict[str, Any]], *, fifo: bool = False) -> dict[str, str]:
    """Send the bodies; return {message id: body's "id"}."""
    sqs = boto3.client("sqs", region_name=REGION)
    sent = {}
    for body in bodies:
        extra = (
            {"MessageGroupId": body["group"], "MessageDeduplicationId": body["id"]} if fifo else {}
        )
        response = sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps(body), **extra)
        sent[response["MessageId"]] = body["id"]
    return sent


def in_queue(queue_url: str) -> int:
    attributes = queue_attributes(queue_url)
    return sum(
        int(attributes[k])
        for k in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
    )


# 1. A 10-minute outage ----------------------------------------------------------------------


@dataclass
class OutageRun:
    poller: SimulatedSqsPoller
    sent: dict[str, str]
    processed: list[tuple[str, float]]  # (message id, virtual time), each time it succeeded
    dead_lettered: list[str]
    left_in_queue: int

    def processed_count(self) -> Counter[str]:
        return Counter(message_id for message_id, _ in self.processed)


def run_outage(
    world: World, consumer: Consumer, backoff: FailureBackoff | None, seconds: float
) -> OutageRun:
    """Send 10 messages as a 10-minute outage of the downstream starts; work the queue."""
    queue_url, dead_letter_url = world.queues(consumer)
    started = world.clock.now
    sent = send(queue_url, [{"id": f"inv_{n}"} for n in range(10)])
    processed: list[tuple[str, float]] = []

    def record_handler(record: Any) -> None:
        if world.clock.now < started + OUTAGE:
            raise ConnectionError("the invoice service is down")
        processed.append((record.message_id, world.clock.now))

    def handler(event: dict[str, Any], context: Any) -> Any:
        return process_partial_response(
            event=event,
            record_handler=record_handler,
            processor=BatchProcessor(event_type=EventType.SQS),  # raises when all fail
            context=context,
        )

    poller = SimulatedSqsPoller(
        clock=world.clock,
        queue_url=queue_url,
        handler=backoff.wrap(handler) if backoff else handler,
        batch_size=consumer.batch_size,
        report_batch_item_failures=True,
        function_timeout=consumer.function_timeout,
        record_seconds=lambda _record: 0.5,  # a failing call to the service takes 0.5 s
        poll_interval=POLL_INTERVAL,
        pollers=1,  # the messages fit in one batch: a second poller would only poll
    )
    poller.run(seconds)
    return OutageRun(
        poller=poller,
        sent=sent,
        processed=processed,
        dead_lettered=[m["MessageId"] for m in drain(dead_letter_url)],
        left_in_queue=in_queue(queue_url),
    )


def test_without_a_backoff_an_outage_dead_letters_healthy_messages(
    world: World, consumers: dict[str, Consumer]
):
    # GIVEN the derived 60 s visibility timeout and 7 receives, no backoff
    consumer = consumers["outage"]
    assert queue_attributes(world.queues(consumer)[0])["VisibilityTimeout"] == "60"
    # WHEN the downstream is down for 10 minutes
    run = run_outage(world, consumer, backoff=None, seconds=900)
    # THEN the messages used their receives during the outage and were dead-lettered
    assert len(run.dead_lettered) > 0
    assert max(run.poller.receive_counts().values()) == consumer.max_receive_count
    # AND nothing was lost: each message was processed or dead-lettered, exactly once
    assert Counter(run.dead_lettered) + run.processed_count() == Counter(list(run.sent))
    assert run.left_in_queue == 0


def test_with_a_backoff_none_is_dead_lettered_and_each_is_processed_once_after_the_outage(
    world: World, consumers: dict[str, Consumer]
):
    # GIVEN the same consumer, the handler wrapped in FailureBackoff(base=30, cap=900),
    # its jitter drawing the shortest delays every time (the worst case for an outage)
    consumer = consumers["outage"]
    backoff = FailureBackoff(base=30, cap=900, rng=LowestDraw())
    assert backoff.outage_ridden_out(consumer.max_receive_count) >= OUTAGE  # 915 s
    # WHEN the downstream is down for 10 minutes (the run: 15 + 30 + ... + 450 s and more)
    run = run_outage(world, consumer, backoff, seconds=1300)
    # THEN no message was dead-lettered
    assert run.dead_lettered == []
    # AND each was processed exactly once, after the outage, and the queue is empty
    assert run.processed_count() == Counter(list(run.sent))
    outage_end = min(t for _, t in run.processed)
    assert outage_end >= run.poller.timeline[0].received + OUTAGE
    assert run.left_in_queue == 0
    # AND it spent receives slowly: the first retries came soon, the later ones apart
    assert max(run.poller.receive_counts().values()) <= consumer.max_receive_count


def test_the_default_five_receives_do_not_ride_out_ten_minutes_even_with_the_backoff(
    world: World, consumers: dict[str, Consumer]
):
    # GIVEN the construct's default max_receive_count (5) and the shortest jitter draws
    consumer = consumers["outage-default-receives"]
    assert consumer.max_receive_count == 5
    backoff = FailureBackoff(base=30, cap=900, rng=LowestDraw())
    assert backoff.outage_ridden_out(5) < OUTAGE  # 15 + 30 + 60 + 120 = 225 s
    # WHEN the same outage happens  THEN messages are dead-lettered, as the sum predicts
    run = run_outage(world, consumer, backoff, seconds=900)
    assert len(run.dead_lettered) > 0
    assert Counter(run.dead_lettered) + run.processed_count() == Counter(list(run.sent))


# 2. A batch past the deadline -----------------------------------------------------------------


@dataclass
class DeadlineRun:
    poller: SimulatedSqsPoller
    sent: dict[str, str]
    processed: list[tuple[str, float]]  # (message id, virtual time), each time it was done
    dead_lettered: list[str]
    left_in_queue: int

    def processed_count(self) -> Counter[str]:
        return Counter(message_id for message_id, _ in self.processed)

    def duplicates(self) -> int:
        """Times a record was processed beyond its first."""
        return sum(count - 1 for count in self.processed_count().values())


def run_deadline(world: World, consumer: Consumer, margin: float | None) -> DeadlineRun:
    """10 records of 30 s each on the 180 s function, in one batch; 40 minutes of queue time."""
    queue_url, dead_letter_url = world.queues(consumer)
    sent = send(queue_url, [{"id": f"inv_{n}"} for n in range(10)])
    processed: list[tuple[str, float]] = []

    def handler(event: dict[str, Any], context: VirtualLambdaContext) -> Any:
        def work(record: Any) -> None:
            context.spend(30)  # Lambda kills the invocation here at 180 s
            processed.append((record.message_id, world.clock.now))

        record_handler = (
            work if margin is None else stop_before_deadline(work, context=context, margin=margin)
        )
        return process_partial_response(
            event=event,
            record_handler=record_handler,
            processor=BatchProcessor(event_type=EventType.SQS),
            context=context,
        )

    poller = SimulatedSqsPoller(
        clock=world.clock,
        queue_url=queue_url,
        handler=handler,
        batch_size=consumer.batch_size,
        report_batch_item_failures=True,
        function_timeout=consumer.function_timeout,
        timed_handler=True,
        poll_interval=POLL_INTERVAL,
        pollers=1,  # the messages fit in one batch: a second poller would only poll
    )
    poller.run(1300)  # the visibility timeout (1080 s) and one more invocation
    return DeadlineRun(
        poller=poller,
        sent=sent,
        processed=processed,
        dead_lettered=[m["MessageId"] for m in drain(dead_letter_url)],
        left_in_queue=in_queue(queue_url),
    )


def test_without_the_deadline_guard_the_timeout_replays_the_whole_batch(
    world: World, consumers: dict[str, Consumer]
):
    # GIVEN 10 records of 30 s in one batch of the 180 s function, no guard
    run = run_deadline(world, consumers["deadline"], margin=None)
    # THEN the first invocation was killed at its timeout, after processing some records
    first = run.poller.timeline[0]
    assert first.message_ids == list(run.sent)
    assert run.poller.timed_out[0] == first.message_ids
    assert first.end - first.start == 180
    assert 0 < len([m for m, t in run.processed if t <= first.end]) < len(run.sent)
    # AND the whole batch came back: every record was given to a second invocation
    assert all(count >= 2 for count in run.poller.deliveries().values())
    # AND the records processed before the kill were processed again: duplicates
    assert run.duplicates() > 0


def test_with_stop_before_deadline_each_record_is_processed_exactly_once(
    world: World, consumers: dict[str, Consumer]
):
    # GIVEN the same batch, the record handler guarded with a 35 s margin
    run = run_deadline(world, consumers["deadline"], margin=35)
    # THEN no invocation ran into the timeout
    assert run.poller.timed_out == []
    # AND the first invocation processed the records that fit and ended in time
    first, *later = run.poller.timeline
    assert first.message_ids == list(run.sent)
    assert first.end - first.start < 180
    done_first = {m for m, t in run.processed if t <= first.end}
    assert 0 < len(done_first) < len(run.sent)
    # AND only the others came back, to be processed by later invocations
    assert {m for invocation in later for m in invocation.message_ids} == set(run.sent) - done_first
    # AND every record was processed exactly once: no duplicates, nothing left
    assert run.processed_count() == Counter(list(run.sent))
    assert run.duplicates() == 0
    assert run.dead_lettered == []
    assert run.left_in_queue == 0


# 3. FIFO: the group waits for the backoff, then resumes in order ---------------------------------


def run_fifo(world: World, consumer: Consumer, backoff: FailureBackoff | None) -> dict[str, Any]:
    """Account a's a1..a4 and account b's b1..b3; a2 fails on its first attempt only."""
    queue_url, dead_letter_url = world.queues(consumer)
    entries = ["a1", "b1", "a2", "b2", "a3", "b3", "a4"]
    send(queue_url, [{"id": e, "group": e[0]} for e in entries], fifo=True)
    posted: list[tuple[str, float]] = []
    attempts: list[tuple[str, float]] = []

    def record_handler(record: Any) -> None:
        entry = record.json_body["id"]
        attempts.append((entry, world.clock.now))
        if entry == "a2" and len([a for a in attempts if a[0] == "a2"]) == 1:
            raise ConnectionError("ledger busy")
        posted.append((entry, world.clock.now))

    def handler(event: dict[str, Any], context: Any) -> Any:
        return process_partial_response(
            event=event,
            record_handler=record_handler,
            processor=SqsFifoPartialProcessor(skip_group_on_error=True),
            context=context,
        )

    poller = SimulatedSqsPoller(
        clock=world.clock,
        queue_url=queue_url,
        handler=backoff.wrap(handler) if backoff else handler,
        batch_size=consumer.batch_size,
        report_batch_item_failures=True,
        function_timeout=consumer.function_timeout,
        record_seconds=lambda _record: 1.0,
        poll_interval=5,
    )
    poller.run(300)
    failed_at = next(t for e, t in attempts if e == "a2")
    resumed_at = next(t for e, t in posted if e == "a2")
    return {
        "posted": [e for e, _ in posted],
        "wait": resumed_at - failed_at,
        "poller": poller,
        "dead_lettered": drain(dead_letter_url),
        "left": in_queue(queue_url),
    }


@pytest.mark.parametrize(
    "backoff", [None, FailureBackoff(base=10, cap=100, jitter=False)], ids=["no backoff", "backoff"]
)
def test_fifo_a_failed_record_holds_its_group_for_the_backoff_then_the_group_resumes_in_order(
    world: World, consumers: dict[str, Consumer], backoff: FailureBackoff | None
):
    # GIVEN the example's ledger queue (FIFO, visibility 180 s), SqsFifoPartialProcessor
    consumer = consumers["ledger"]
    visibility = float(queue_attributes(world.queues(consumer)[0])["VisibilityTimeout"])
    # WHEN a2 fails once
    run = run_fifo(world, consumer, backoff)
    # THEN each account's entries were posted once each, in order, nothing lost
    posted = run["posted"]
    assert [e for e in posted if e[0] == "a"] == ["a1", "a2", "a3", "a4"]
    assert [e for e in posted if e[0] == "b"] == ["b1", "b2", "b3"]
    assert run["dead_lettered"] == []
    assert run["left"] == 0
    # AND no message group was in two invocations at once
    timeline = run["poller"].timeline
    for one in timeline:
        for other in timeline:
            if one is not other and one.groups & other.groups:
                assert one.end <= other.start or other.end <= one.start
    # AND account a waited for the backoff, not for the visibility timeout (which counts
    # from the receive; the failure is reported when the invocation ends)
    if backoff is None:
        assert run["wait"] >= visibility - consumer.function_timeout
    else:
        assert backoff.delay_range(1)[1] <= run["wait"] < visibility / 4


# 4. The example's invoice handler: both helpers ----------------------------------------------------


@pytest.fixture
def fresh_idempotency() -> Iterator[None]:
    """The example builds its idempotent renderer once: rebuild it inside this test's moto."""
    render_invoices._idempotent_render.cache_clear()
    yield
    render_invoices._idempotent_render.cache_clear()


def test_the_example_handler_stops_before_the_deadline_and_backs_off_what_it_did_not_start(
    world: World,
    consumers: dict[str, Consumer],
    monkeypatch: pytest.MonkeyPatch,
    fresh_idempotency: None,
):
    # GIVEN a consumer configured as the example's invoice consumer (180 s function, batch
    # 5, 2 s window, idempotency table), the example's real handler, and invoices that
    # take 50 s each: a batch of 5 needs 250 s of the 180 s function
    consumer = consumers["invoices"]
    queue_url, dead_letter_url = world.queues(consumer)
    assert consumer.table_id is not None
    monkeypatch.setenv(
        "IDEMPOTENCY_TABLE_NAME", world.physical[consumer.stack_name][consumer.table_id]
    )
    current: list[VirtualLambdaContext] = []
    rendered: Counter[str] = Counter()

    def slow_render(invoice_id: str) -> str:
        current[-1].spend(50)
        rendered[invoice_id] += 1
        return f"invoices/{invoice_id}.pdf"

    monkeypatch.setattr(render_invoices, "render_invoice", slow_render)

    def handler(event: dict[str, Any], context: VirtualLambdaContext) -> Any:
        current.append(context)
        return render_invoices.handler(event, context)  # type: ignore[arg-type]

    invoices = [f"inv_{n}" for n in range(5)]
    sent = send(queue_url, [{"id": i, "invoiceId": i} for i in invoices])
    poller = SimulatedSqsPoller(
        clock=world.clock,
        queue_url=queue_url,
        handler=handler,
        batch_size=consumer.batch_size,
        report_batch_item_failures=True,
        function_timeout=consumer.function_timeout,
        batching_window=consumer.batching_window,
        timed_handler=True,
        poll_interval=POLL_INTERVAL,
        pollers=1,  # the messages fit in one batch: a second poller would only poll
    )
    visibility = float(queue_attributes(queue_url)["VisibilityTimeout"])  # 1082 s
    # WHEN Lambda's pollers work the queue for less than one visibility timeout
    poller.run(visibility - 60)
    # THEN no invocation timed out, and every invoice was rendered exactly once
    assert poller.timed_out == []
    assert rendered == Counter(invoices)
    # AND the first invocation stopped early: some invoices were not started, and came
    # back (after the backoff: every invocation ended before one visibility timeout)
    first, *later = poller.timeline
    assert first.message_ids == list(sent)
    assert later
    assert {m for i in later for m in i.message_ids} < set(first.message_ids)
    assert max(i.end for i in poller.timeline) - first.received < visibility
    assert in_queue(queue_url) == 0
    assert drain(dead_letter_url) == []
