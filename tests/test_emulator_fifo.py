"""FIFO consumers on moto's SQS: a message group keeps its order through a failure.

The example app's ledger consumer (``LedgerEntries``: FIFO, batch 10, 30 s function, so a
180 s visibility timeout) is created through moto's CloudFormation and worked by
`SimulatedSqsPoller` in virtual time. Message groups are accounts; each entry's body
names it (``a2`` is account ``a``'s second entry).

What comes from moto and what from the poller: moto's SQS holds a message group while one
of its messages is in flight and returns a group's messages in the order they were sent
(checked directly in the first test, since the rest relies on it). Where moto is not
faithful, the poller models SQS: moto keeps holding a group on a lease that has run out
until a receive reaches that message, and would then hand out the group's later messages
first; the poller releases expired leases before each receive (`release_expired_leases`;
the second test pins moto's behaviour, so it fails when moto changes).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from aws_cdk.assertions import Template
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    SqsFifoPartialProcessor,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.base import BasePartialBatchProcessor

from example.handler import ledger_fifo
from example.stack import InvoiceRenderingStack

from .conftest import make_app
from .emulator import (
    REGION,
    SimulatedSqsPoller,
    VirtualClock,
    deploy,
    drain,
    emulated_aws,
    queue_attributes,
    release_expired_leases,
    without_mappings,
)


@dataclass(frozen=True)
class Ledger:
    template: dict[str, Any]
    queue_id: str
    dead_letter_id: str
    function_timeout: float
    batch_size: int


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    stack = InvoiceRenderingStack(make_app(), "InvoiceRendering")
    consumer = stack.ledger_consumer

    def logical_id(construct: Any) -> str:
        return stack.get_logical_id(construct.node.default_child)

    return Ledger(
        template=without_mappings(Template.from_stack(stack).to_json()),
        queue_id=logical_id(consumer.queue),
        dead_letter_id=logical_id(consumer.dead_letter_queue),
        function_timeout=consumer.function_timeout.to_seconds(),
        batch_size=10,  # the example's batch size (asserted on the template elsewhere)
    )


@dataclass
class Queues:
    clock: VirtualClock
    queue_url: str
    dead_letter_url: str


@pytest.fixture
def queues(monkeypatch: pytest.MonkeyPatch, ledger: Ledger) -> Iterator[Queues]:
    with emulated_aws(monkeypatch) as clock:
        physical = deploy("InvoiceRendering", ledger.template)
        yield Queues(clock, physical[ledger.queue_id], physical[ledger.dead_letter_id])


def send_entries(queue_url: str, entry_ids: list[str]) -> dict[str, str]:
    """Send each entry to its account's message group (``a2`` -> group ``a``).

    Returns {message id: entry id}.
    """
    sqs = boto3.client("sqs", region_name=REGION)
    sent = {}
    for entry_id in entry_ids:
        response = sqs.send_message(
            QueueUrl=queue_url,
            MessageBody=json.dumps({"account": entry_id[0], "entryId": entry_id, "amount": 1}),
            MessageGroupId=entry_id[0],
            MessageDeduplicationId=entry_id,
        )
        sent[response["MessageId"]] = entry_id
    return sent


@dataclass
class LedgerLog:
    """What `post_entry` saw: every attempt, and the entries posted, in order."""

    attempts: list[str]
    posted: list[str]

    def posted_in(self, account: str) -> list[str]:
        return [e for e in self.posted if e[0] == account]


def ledger_log(monkeypatch: pytest.MonkeyPatch, fails: Callable[[str, int], bool]) -> LedgerLog:
    """Replace `post_entry`; it raises when ``fails(entry_id, attempt_number)``."""
    log = LedgerLog([], [])

    def post_entry(account: str, entry_id: str, amount: int) -> None:
        log.attempts.append(entry_id)
        if fails(entry_id, log.attempts.count(entry_id)):
            raise ConnectionError(f"ledger unavailable for {entry_id}")
        log.posted.append(entry_id)

    monkeypatch.setattr(ledger_fifo, "post_entry", post_entry)
    return log


def handler_with(processor: BasePartialBatchProcessor) -> Callable[[dict[str, Any], Any], Any]:
    """The example's record handler, run by another Powertools processor."""

    def handler(event: dict[str, Any], context: Any) -> Any:
        return process_partial_response(
            event=event,
            record_handler=ledger_fifo.record_handler,
            processor=processor,
            context=context,
        )

    return handler


def poller_for(
    queues: Queues, ledger: Ledger, handler: Callable[[dict[str, Any], Any], Any]
) -> SimulatedSqsPoller:
    return SimulatedSqsPoller(
        clock=queues.clock,
        queue_url=queues.queue_url,
        handler=handler,
        batch_size=ledger.batch_size,
        report_batch_item_failures=True,
        function_timeout=ledger.function_timeout,
        record_seconds=lambda _record: 1.0,
        poll_interval=5.0,
    )


def in_queue(queue_url: str) -> int:
    attributes = queue_attributes(queue_url)
    return sum(
        int(attributes[k])
        for k in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
    )


def fails_once(entry_id: str) -> Callable[[str, int], bool]:
    return lambda entry, attempt: entry == entry_id and attempt == 1


# Account a's five entries and account b's three, interleaved as they were sent.
ENTRIES = ["a1", "b1", "a2", "b2", "a3", "b3", "a4", "a5"]


# 1. What moto does on its own ------------------------------------------------------------


def test_moto_holds_a_message_group_while_one_of_its_messages_is_in_flight(queues: Queues):
    # GIVEN a1, a2 in group a and b1 in group b
    send_entries(queues.queue_url, ["a1", "a2", "b1"])
    sqs = boto3.client("sqs", region_name=REGION)

    def receive(count: int) -> list[str]:
        messages = sqs.receive_message(
            QueueUrl=queues.queue_url, MaxNumberOfMessages=count, AttributeNames=["All"]
        ).get("Messages", [])
        return [json.loads(m["Body"])["entryId"] for m in messages]

    # WHEN a1 is received (in flight)
    (a1,) = sqs.receive_message(QueueUrl=queues.queue_url, MaxNumberOfMessages=1)["Messages"]
    assert json.loads(a1["Body"])["entryId"] == "a1"
    # THEN the next receives get b1, then nothing: a2 waits behind a1
    assert receive(10) == ["b1"]
    assert receive(10) == []
    # AND once a1 is deleted, a2 is next
    sqs.delete_message(QueueUrl=queues.queue_url, ReceiptHandle=a1["ReceiptHandle"])
    assert receive(10) == ["a2"]
    # AND messages whose lease ran out undeleted are received again
    queues.clock.now += 181  # moto: visible once strictly past the lease
    assert receive(10) == ["a2", "b1"]


def test_moto_alone_hands_out_a_group_out_of_order_after_leases_expire_together(
    queues: Queues,
):
    """Why the poller calls `release_expired_leases` (if this fails, moto was fixed)."""
    # GIVEN a1..a3 received in one batch and not deleted (all reported failed)
    send_entries(queues.queue_url, ["a1", "a2", "a3"])
    sqs = boto3.client("sqs", region_name=REGION)

    def receive() -> list[str]:
        messages = sqs.receive_message(QueueUrl=queues.queue_url, MaxNumberOfMessages=10)
        return [json.loads(m["Body"])["entryId"] for m in messages.get("Messages", [])]

    assert receive() == ["a1", "a2", "a3"]
    queues.clock.now += 181
    # WHEN their leases have run out: moto alone gives a3 first (SQS would give a1..a3)
    assert receive() == ["a3"]
    # AND with the expired leases released first, as the poller does, each group comes
    # back whole and in order
    send_entries(queues.queue_url, ["b1", "b2", "b3"])
    assert receive() == ["b1", "b2", "b3"]
    queues.clock.now += 181
    release_expired_leases(queues.queue_url)
    assert receive() == ["a1", "a2", "a3", "b1", "b2", "b3"]


# 2. Order through a failure ----------------------------------------------------------------

FIFO_PROCESSORS = {
    # (processor, how often b2 and b3 were received): the plain form reports the whole
    # rest of the batch failed with a2, so b2 and b3 come back with it
    "stop at first failure": (SqsFifoPartialProcessor(), (2, 2)),
    # skip_group_on_error (the example's) posts them in the first invocation
    "skip the failed group": (SqsFifoPartialProcessor(skip_group_on_error=True), (1, 1)),
}


@pytest.mark.parametrize(("processor", "b_receives"), FIFO_PROCESSORS.values(), ids=FIFO_PROCESSORS)
def test_fifo_processor_keeps_each_group_in_order_through_a_failure(
    queues: Queues,
    ledger: Ledger,
    monkeypatch: pytest.MonkeyPatch,
    processor: SqsFifoPartialProcessor,
    b_receives: tuple[int, int],
):
    # GIVEN a1..a5 and b1..b3, where posting a2 fails once
    sent = send_entries(queues.queue_url, ENTRIES)
    log = ledger_log(monkeypatch, fails_once("a2"))
    # WHEN the example's FIFO handler works the queue for two leases
    monkeypatch.setattr(ledger_fifo, "processor", processor)
    poller = poller_for(queues, ledger, ledger_fifo.handler)
    poller.run(2 * 180 + 60)
    # THEN each account's entries were posted in the order they were sent
    assert log.posted_in("a") == ["a1", "a2", "a3", "a4", "a5"]
    assert log.posted_in("b") == ["b1", "b2", "b3"]
    # AND a3 was not even attempted before a2 had been posted
    assert log.attempts.index("a3") > log.posted.index("a2")
    # AND nothing was lost or posted twice; both queues are empty
    assert sorted(log.posted) == sorted(ENTRIES)
    assert in_queue(queues.queue_url) == 0
    assert drain(queues.dead_letter_url) == []
    # AND a2 and the rest of group a were received twice: once with the failure, once after
    counts = {sent[m]: n for m, n in poller.receive_counts().items()}
    assert {e: counts[e] for e in ["a1", "a2", "a3", "a4", "a5"]} == {
        "a1": 1,
        "a2": 2,
        "a3": 2,
        "a4": 2,
        "a5": 2,
    }
    assert (counts["b2"], counts["b3"]) == b_receives


def test_batch_processor_on_a_fifo_queue_breaks_the_order(
    queues: Queues, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN the same entries and the same failure, but Powertools' BatchProcessor
    send_entries(queues.queue_url, ENTRIES)
    log = ledger_log(monkeypatch, fails_once("a2"))
    poller = poller_for(queues, ledger, handler_with(BatchProcessor(event_type=EventType.SQS)))
    # WHEN it works the queue the same way
    poller.run(2 * 180 + 60)
    # THEN a3, a4 and a5 were posted in the batch where a2 failed, and a2 a lease later
    assert log.posted_in("a") == ["a1", "a3", "a4", "a5", "a2"]
    assert log.posted.index("a3") < log.posted.index("a2")
    # (nothing is lost: the damage is the order, not the count)
    assert sorted(log.posted) == sorted(ENTRIES)


def test_a_group_is_never_in_two_invocations_at_once(
    queues: Queues, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN three accounts of four entries, small batches and three pollers
    entries = [f"{account}{n}" for n in range(1, 5) for account in "abc"]
    send_entries(queues.queue_url, entries)
    log = ledger_log(monkeypatch, fails_once("b2"))
    poller = poller_for(queues, ledger, ledger_fifo.handler)
    poller.batch_size, poller.pollers = 2, 3
    # WHEN they work the queue
    poller.run(2 * 180 + 60)
    # THEN invocations did run side by side (so the check below is not vacuous) ...
    overlapping = [
        (x, y)
        for i, x in enumerate(poller.timeline)
        for y in poller.timeline[i + 1 :]
        if x.start < y.end and y.start < x.end
    ]
    assert overlapping
    # ... but never two with the same message group
    assert all(not (x.groups & y.groups) for x, y in overlapping)
    # AND every account's entries were posted once, in order
    for account in "abc":
        assert log.posted_in(account) == [f"{account}{n}" for n in range(1, 5)]


# 3. A message that never succeeds ------------------------------------------------------

POISON_CASES = {
    # the whole rest of the batch is reported failed with a2, other groups included
    "stop at first failure": (SqsFifoPartialProcessor(), ["a2", "b2", "a3", "b3", "a4", "a5"]),
    # only the rest of group a is
    "skip the failed group": (
        SqsFifoPartialProcessor(skip_group_on_error=True),
        ["a2", "a3", "a4", "a5"],
    ),
}


@pytest.mark.parametrize(("processor", "dead_lettered"), POISON_CASES.values(), ids=POISON_CASES)
def test_a_poison_entry_takes_the_rest_of_its_batch_to_the_dead_letter_queue(
    queues: Queues,
    ledger: Ledger,
    monkeypatch: pytest.MonkeyPatch,
    processor: SqsFifoPartialProcessor,
    dead_lettered: list[str],
):
    # GIVEN a2 fails on every attempt; maxReceiveCount is 5
    send_entries(queues.queue_url, ENTRIES)
    log = ledger_log(monkeypatch, lambda entry, _attempt: entry == "a2")
    monkeypatch.setattr(ledger_fifo, "processor", processor)
    poller = poller_for(queues, ledger, ledger_fifo.handler)
    # WHEN the queue is worked for five leases and the move to the dead-letter queue
    poller.run(5 * 180 + 60)
    # THEN a2 was attempted five times, and nothing of group a after it ever ran
    assert log.attempts.count("a2") == 5
    assert log.posted_in("a") == ["a1"]
    # AND the records reported failed with a2 each time reached maxReceiveCount with it:
    # they were dead-lettered with it, in order, and the source queue is empty
    dead = [json.loads(m["Body"])["entryId"] for m in drain(queues.dead_letter_url)]
    assert dead == dead_lettered
    assert sorted(log.posted + dead) == sorted(ENTRIES)
    assert in_queue(queues.queue_url) == 0
