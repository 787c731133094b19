"""What the queues then do, on moto's SQS: no duplicates, nothing lost.

Templates synthesized from the example app and from SafeQueueConsumer are created through
moto's CloudFormation. The poller tests leave the event source mappings out of the
emulator (moto's own would try to run the function in Docker and consume the messages)
and drive the queues with `SimulatedSqsPoller` in virtual time instead.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import boto3
import pytest
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from example.handler import render_invoices
from example.stack import InvoiceRenderingStack
from safe_queue import SafeQueueConsumer

from .conftest import make_app, make_function
from .emulator import (
    REGION,
    SimulatedSqsPoller,
    VirtualClock,
    deploy,
    drain,
    emulated_aws,
    queue_attributes,
    without_mappings,
)


@dataclass
class Synthesized:
    stack: cdk.Stack
    template: dict[str, Any]
    consumer: SafeQueueConsumer | None = None

    def logical_id(self, construct: Any) -> str:
        return self.stack.get_logical_id(construct.node.default_child)

    def deploy(self, *, mappings: bool = False) -> dict[str, str]:
        """Create the stack in moto; {logical id: physical id}. Mappings only on request."""
        template = self.template if mappings else without_mappings(self.template)
        return deploy(self.stack.stack_name, template)

    def deploy_queues(self, *, mappings: bool = False) -> tuple[str, str]:
        """Create the consumer's stack in moto; return its queue's and DLQ's URLs."""
        assert self.consumer is not None
        physical = self.deploy(mappings=mappings)
        return (
            physical[self.logical_id(self.consumer.queue)],
            physical[self.logical_id(self.consumer.dead_letter_queue)],
        )

    def deploy_broken_queue(self) -> str:
        """Create the seed's broken stack in moto; return its queue's URL."""
        return self.deploy()[self.logical_id(self.stack.node.find_child("Work"))]


def mapping_of(queue_arn: str) -> dict[str, Any]:
    """The one event source mapping moto holds for the queue."""
    client = boto3.client("lambda", region_name=REGION)
    (mapping,) = client.list_event_source_mappings(EventSourceArn=queue_arn)["EventSourceMappings"]
    result: dict[str, Any] = mapping
    return result


@pytest.fixture(scope="module")
def synthesized() -> dict[str, Synthesized]:
    app = make_app()
    example = InvoiceRenderingStack(app, "InvoiceRendering")

    fifo_stack = cdk.Stack(app, "Fifo")
    fifo = SafeQueueConsumer(
        fifo_stack,
        "Orders",
        function=make_function(fifo_stack, "Fn", cdk.Duration.seconds(30)),
        fifo=True,
        content_based_deduplication=True,
    )

    # The seed's broken pair: the function timeout raised to 180 s, the queue left at 60 s.
    broken = cdk.Stack(app, "SeedBroken")
    dead_letter = sqs.Queue(broken, "Dlq", retention_period=cdk.Duration.days(14))
    sqs.Queue(
        broken,
        "Work",
        visibility_timeout=cdk.Duration.seconds(60),
        dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letter, max_receive_count=5),
    )

    # Scaled down for the retry tests: a 2 s function gives a 12 s visibility timeout.
    scaled = {}
    for name, report in (("Partial", True), ("WholeBatch", False)):
        stack = cdk.Stack(app, name)
        scaled[name] = (
            stack,
            SafeQueueConsumer(
                stack,
                "Consumer",
                function=make_function(stack, "Fn", cdk.Duration.seconds(2)),
                report_batch_item_failures=report,
                batch_size=10,
            ),
        )

    # every stack is built before the first synthesis
    built: dict[str, tuple[cdk.Stack, SafeQueueConsumer | None]] = {
        "example": (example, example.consumer),
        "fifo": (fifo_stack, fifo),
        "broken": (broken, None),
        **scaled,
    }
    return {
        name: Synthesized(stack, Template.from_stack(stack).to_json(), consumer)
        for name, (stack, consumer) in built.items()
    }


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[VirtualClock]:
    with emulated_aws(monkeypatch) as virtual_clock:
        yield virtual_clock


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Invoice ids the example handler rendered (the side effect that must not repeat)."""
    counts: Counter[str] = Counter()
    real = render_invoices.render_invoice

    def spy(invoice_id: str) -> str:
        result = real(invoice_id)  # raises for the poison invoice, before counting
        counts[invoice_id] += 1
        return result

    monkeypatch.setattr(render_invoices, "render_invoice", spy)
    return counts


def plain_handler(event: dict[str, Any], context: Any) -> Any:
    """The example handler without its idempotency layer (the seed's state before fix 3).

    The queue-behaviour tests use it so that what they count is what the queue delivers,
    not what idempotency then absorbs.
    """
    return process_partial_response(
        event=event,
        record_handler=lambda record: render_invoices.render_invoice(record.json_body["invoiceId"]),
        processor=BatchProcessor(event_type=EventType.SQS),
        context=context,
    )


def whole_batch_handler(event: dict[str, Any], context: Any) -> None:
    """A handler without partial batch responses: any failure fails the whole batch."""
    for record in event["Records"]:
        render_invoices.render_invoice(SQSRecord(record).json_body["invoiceId"])


def send_invoices(queue_url: str, invoice_ids: list[str]) -> dict[str, str]:
    """Send one message per invoice; return {message id: invoice id}."""
    client = boto3.client("sqs", region_name=REGION)
    return {
        client.send_message(QueueUrl=queue_url, MessageBody=json.dumps({"invoiceId": i}))[
            "MessageId"
        ]: i
        for i in invoice_ids
    }


def in_queue(queue_url: str) -> int:
    attributes = queue_attributes(queue_url)
    return sum(
        int(attributes[k])
        for k in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")
    )


# 1. Deployment ---------------------------------------------------------------------------


def test_example_stack_deploys_with_the_derived_attributes(
    clock: VirtualClock, synthesized: dict[str, Synthesized]
):
    # GIVEN the example app's template, mapping included
    example = synthesized["example"]
    consumer = example.consumer
    assert consumer is not None
    # WHEN moto's CloudFormation creates it
    queue_url, dead_letter_url = example.deploy_queues(mappings=True)
    queue, dead_letter = queue_attributes(queue_url), queue_attributes(dead_letter_url)
    # THEN the live queues carry what the construct derived
    assert int(queue["VisibilityTimeout"]) == consumer.visibility_timeout.to_seconds() == 1082
    assert int(queue["MessageRetentionPeriod"]) == 4 * 86_400
    assert int(dead_letter["MessageRetentionPeriod"]) == 14 * 86_400
    assert json.loads(queue["RedrivePolicy"]) == {
        "deadLetterTargetArn": dead_letter["QueueArn"],
        "maxReceiveCount": 7,  # the example's, with its failure backoff
    }
    assert "FifoQueue" not in queue
    # AND the mapping, as created, has the batch settings and partial batch failures
    mapping = mapping_of(queue["QueueArn"])
    assert mapping["EventSourceArn"] == queue["QueueArn"]
    assert mapping["BatchSize"] == 5
    assert mapping["MaximumBatchingWindowInSeconds"] == 2
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_fifo_consumer_deploys_as_two_fifo_queues(
    clock: VirtualClock, synthesized: dict[str, Synthesized]
):
    fifo = synthesized["fifo"]
    consumer = fifo.consumer
    assert consumer is not None
    queue_url, dead_letter_url = fifo.deploy_queues(mappings=True)
    queue, dead_letter = queue_attributes(queue_url), queue_attributes(dead_letter_url)
    assert queue["FifoQueue"] == "true"
    assert queue["ContentBasedDeduplication"] == "true"
    assert dead_letter["FifoQueue"] == "true"
    assert queue["QueueArn"].endswith(".fifo")
    assert int(queue["VisibilityTimeout"]) == 180
    assert json.loads(queue["RedrivePolicy"])["deadLetterTargetArn"] == dead_letter["QueueArn"]
    mapping = mapping_of(queue["QueueArn"])
    assert mapping["BatchSize"] == 10
    assert "MaximumBatchingWindowInSeconds" not in mapping or (
        mapping["MaximumBatchingWindowInSeconds"] == 0
    )


# 2. The seed incident, reproduced and fixed ------------------------------------------------

SEED_SCENARIOS = {
    # one large invoice rendering for 90 s (the seed's reproduction)
    "one slow invoice": (["inv_4000_lines"], 90.0),
    # a full batch of 5 processed serially, 35 s each: the last starts 140 s after receipt
    "full batch processed serially": ([f"inv_{n}" for n in range(5)], 35.0),
}


def seed_poller(
    clock: VirtualClock, queue_url: str, seconds_per_invoice: float, handler: Any = plain_handler
) -> SimulatedSqsPoller:
    return SimulatedSqsPoller(
        clock=clock,
        queue_url=queue_url,
        handler=handler,
        batch_size=5,
        report_batch_item_failures=True,
        function_timeout=180,
        record_seconds=lambda _record: seconds_per_invoice,
    )


@pytest.mark.parametrize(("invoices", "seconds"), SEED_SCENARIOS.values(), ids=SEED_SCENARIOS)
def test_broken_visibility_gives_a_slow_successful_message_twice(
    clock: VirtualClock,
    synthesized: dict[str, Synthesized],
    rendered: Counter[str],
    invoices: list[str],
    seconds: float,
):
    # GIVEN the broken pair: visibility 60 s, function timeout 180 s, a handler that succeeds
    broken = synthesized["broken"]
    queue_url = broken.deploy_broken_queue()
    sent = send_invoices(queue_url, invoices)
    # WHEN Lambda's pollers work the queue for 10 minutes
    poller = seed_poller(clock, queue_url, seconds)
    poller.run(600)
    # THEN the last invoice was given to a second invocation while the first still ran
    last = list(sent)[-1]
    assert poller.deliveries()[last] >= 2
    assert rendered[sent[last]] >= 2


@pytest.mark.parametrize(("invoices", "seconds"), SEED_SCENARIOS.values(), ids=SEED_SCENARIOS)
def test_derived_visibility_processes_every_message_exactly_once(
    clock: VirtualClock,
    synthesized: dict[str, Synthesized],
    rendered: Counter[str],
    invoices: list[str],
    seconds: float,
):
    # GIVEN the example app: the same 180 s function, visibility derived as 1082 s
    example = synthesized["example"]
    assert example.consumer is not None
    queue_url, dead_letter_url = example.deploy_queues()
    sent = send_invoices(queue_url, invoices)
    # WHEN the same pollers work the queue for 10 minutes
    poller = seed_poller(clock, queue_url, seconds)
    poller.run(600)
    # THEN each message went to exactly one invocation, each invoice was rendered once
    assert poller.deliveries() == dict.fromkeys(sent, 1)
    assert rendered == Counter(invoices)
    assert in_queue(queue_url) == 0
    assert in_queue(dead_letter_url) == 0


def test_idempotent_handler_absorbs_the_duplicate_delivery(
    clock: VirtualClock,
    synthesized: dict[str, Synthesized],
    rendered: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
):
    # GIVEN the broken queue, but the example's idempotent handler and its table
    example = synthesized["example"]
    assert example.consumer is not None
    assert example.consumer.idempotency_table is not None
    tables = example.deploy()
    table_name = tables[example.logical_id(example.consumer.idempotency_table)]
    monkeypatch.setenv("IDEMPOTENCY_TABLE_NAME", table_name)
    render_invoices._idempotent_render.cache_clear()
    broken = synthesized["broken"]
    queue_url = broken.deploy_broken_queue()
    (message_id,) = send_invoices(queue_url, ["inv_4000_lines"])
    # WHEN the slow invoice is delivered twice
    poller = seed_poller(clock, queue_url, 90.0, handler=render_invoices.handler)
    poller.run(600)
    # THEN it was rendered (and e-mailed) once: the seed's third fix
    assert poller.deliveries()[message_id] >= 2
    assert rendered == Counter({"inv_4000_lines": 1})
    render_invoices._idempotent_render.cache_clear()


# 3. and 4. A poison message among good ones ----------------------------------------------

GOOD = [f"inv_{n}" for n in range(9)]
POISON = ""  # an empty invoice id: render_invoice raises on every attempt


def run_poison_scenario(
    clock: VirtualClock, synthesized: Synthesized, handler: Any
) -> tuple[SimulatedSqsPoller, dict[str, str], str, str]:
    consumer = synthesized.consumer
    assert consumer is not None
    queue_url, dead_letter_url = synthesized.deploy_queues()
    sent = send_invoices(queue_url, [*GOOD[:4], POISON, *GOOD[4:]])
    poller = SimulatedSqsPoller(
        clock=clock,
        queue_url=queue_url,
        handler=handler,
        batch_size=10,
        report_batch_item_failures="ReportBatchItemFailures" in json.dumps(synthesized.template),
        function_timeout=consumer.function_timeout.to_seconds(),
        record_seconds=lambda _record: 0.1,
    )
    # enough for max_receive_count leases of 12 s and the move to the dead-letter queue
    poller.run(consumer.max_time_to_dead_letter.to_seconds() + 60)
    return poller, sent, queue_url, dead_letter_url


def test_poison_message_alone_is_retried_then_dead_lettered(
    clock: VirtualClock, synthesized: dict[str, Synthesized], rendered: Counter[str]
):
    # GIVEN partial batch failures (the default) and one poison message among nine good ones
    poller, sent, queue_url, dead_letter_url = run_poison_scenario(
        clock, synthesized["Partial"], plain_handler
    )
    poison_id = next(m for m, invoice in sent.items() if invoice == POISON)
    deliveries = poller.deliveries()
    # THEN only the poison message was received again, exactly max_receive_count times
    assert deliveries[poison_id] == 5
    assert {m: n for m, n in deliveries.items() if m != poison_id} == dict.fromkeys(
        set(sent) - {poison_id}, 1
    )
    # AND every good invoice was processed once, the poison one landed in the DLQ
    assert rendered == Counter(GOOD)
    dead_lettered = drain(dead_letter_url)
    assert [m["MessageId"] for m in dead_lettered] == [poison_id]
    # AND nothing was lost: sent = processed + dead-lettered, the source queue is empty
    assert len(sent) == sum(rendered.values()) + len(dead_lettered)
    assert in_queue(queue_url) == 0


def test_without_partial_failures_good_messages_are_redelivered(
    clock: VirtualClock, synthesized: dict[str, Synthesized], rendered: Counter[str]
):
    # GIVEN report_batch_item_failures=False and a handler that fails the whole batch
    poller, sent, _, dead_letter_url = run_poison_scenario(
        clock, synthesized["WholeBatch"], whole_batch_handler
    )
    deliveries = poller.deliveries()
    good_ids = [m for m, invoice in sent.items() if invoice != POISON]
    # THEN the good messages of the batch came back with the poison one, again and again
    assert all(deliveries[m] == 5 for m in good_ids)
    # AND those before the poison message in the batch were processed five times each
    assert rendered == Counter({invoice: 5 for invoice in GOOD[:4]})
    # AND in the end the good messages were dead-lettered with it
    assert len(drain(dead_letter_url)) == len(sent)
