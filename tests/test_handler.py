"""The example handler on generated SQS events, against moto's DynamoDB.

The idempotency table is the one the example stack synthesizes, created through moto's
CloudFormation, so the handler meets the table shape the construct makes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from aws_cdk.assertions import Template
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

from example.handler import ledger_fifo, render_invoices
from example.stack import InvoiceRenderingStack

from .conftest import make_app
from .emulator import REGION, FakeLambdaContext, deploy, emulated_aws, without_mappings
from .sqs_events import sqs_event


@pytest.fixture(scope="module")
def example() -> tuple[dict[str, Any], str]:
    stack = InvoiceRenderingStack(make_app(), "InvoiceRendering")
    table = stack.consumer.idempotency_table
    assert table is not None
    logical_id = stack.get_logical_id(table.node.default_child)  # type: ignore[arg-type]
    return without_mappings(Template.from_stack(stack).to_json()), logical_id


@pytest.fixture
def table_name(
    monkeypatch: pytest.MonkeyPatch, example: tuple[dict[str, Any], str]
) -> Iterator[str]:
    template, logical_id = example
    with emulated_aws(monkeypatch):
        name = deploy("InvoiceRendering", template)[logical_id]
        monkeypatch.setenv("IDEMPOTENCY_TABLE_NAME", name)
        render_invoices._idempotent_render.cache_clear()  # a client inside the mock
        yield name
    render_invoices._idempotent_render.cache_clear()


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    real = render_invoices.render_invoice

    def spy(invoice_id: str) -> str:
        result = real(invoice_id)
        counts[invoice_id] += 1
        return result

    monkeypatch.setattr(render_invoices, "render_invoice", spy)
    return counts


def run(event: dict[str, Any], remaining_millis: int = 180_000) -> Any:
    return render_invoices.handler(event, FakeLambdaContext(remaining_millis=remaining_millis))  # type: ignore[arg-type]


def test_a_good_batch_reports_no_failures(table_name: str, rendered: Counter[str]):
    # GIVEN three valid invoices  WHEN the batch is handled
    response = run(
        sqs_event({"invoiceId": "inv_1"}, {"invoiceId": "inv_2"}, {"invoiceId": "inv_3"})
    )
    # THEN each is rendered once and nothing is reported failed
    assert response == {"batchItemFailures": []}
    assert rendered == Counter(["inv_1", "inv_2", "inv_3"])


def test_only_the_bad_records_are_reported(table_name: str, rendered: Counter[str]):
    # GIVEN a batch with a malformed body and an empty invoice id among good records
    event = sqs_event({"invoiceId": "inv_1"}, "not json", {"invoiceId": "inv_2"}, {"invoiceId": ""})
    bad_ids = [event["Records"][1]["messageId"], event["Records"][3]["messageId"]]
    # WHEN it is handled
    response = run(event)
    # THEN exactly those two are returned for retry; the good ones were rendered
    assert sorted(f["itemIdentifier"] for f in response["batchItemFailures"]) == sorted(bad_ids)
    assert rendered == Counter(["inv_1", "inv_2"])


def test_a_batch_where_everything_fails_raises_so_lambda_retries_it(table_name: str):
    # Powertools raises when every record failed, so the whole batch returns to the queue.
    with pytest.raises(BatchProcessingError):
        run(sqs_event("not json", {"invoiceId": ""}))


def test_the_same_invoice_twice_is_rendered_once(table_name: str, rendered: Counter[str]):
    # GIVEN an invoice delivered, then delivered again (a redelivery or a DLQ redrive)
    first = run(sqs_event({"invoiceId": "inv_7"}))
    second = run(sqs_event({"invoiceId": "inv_7"}))
    # THEN both invocations succeed, and the work was done once
    assert first == second == {"batchItemFailures": []}
    assert rendered == Counter({"inv_7": 1})
    # AND the record is stored under the table's `id` key with its `expiration` TTL
    items = boto3.client("dynamodb", region_name=REGION).scan(TableName=table_name)["Items"]
    assert len(items) == 1
    assert items[0]["status"] == {"S": "COMPLETED"}
    assert int(items[0]["expiration"]["N"]) > time.time() + 23 * 3600


def test_the_same_invoice_twice_in_one_batch_is_rendered_once(
    table_name: str, rendered: Counter[str]
):
    response = run(sqs_event({"invoiceId": "inv_8"}, {"invoiceId": "inv_8"}))
    assert response == {"batchItemFailures": []}
    assert rendered == Counter({"inv_8": 1})


def test_a_failed_attempt_does_not_lock_the_invoice(
    table_name: str, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN a render that fails once (a transient error), then works
    attempts: list[str] = []

    def flaky(invoice_id: str) -> str:
        attempts.append(invoice_id)
        if len(attempts) == 1:
            raise ConnectionError("e-mail service unavailable")
        return f"invoices/{invoice_id}.pdf"

    monkeypatch.setattr(render_invoices, "render_invoice", flaky)
    event = sqs_event({"invoiceId": "inv_9"})
    # WHEN it is delivered, fails, and is delivered again
    with pytest.raises(BatchProcessingError):
        run(event)
    response = run(event)
    # THEN the retry renders it (the failed attempt deleted its in-progress record)
    assert response == {"batchItemFailures": []}
    assert attempts == ["inv_9", "inv_9"]


def test_an_in_progress_record_expires_with_the_function_timeout(
    table_name: str, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN an invocation with 180 s left, observed while it renders
    seen: list[dict[str, Any]] = []

    def observe(invoice_id: str) -> str:
        seen.extend(
            boto3.client("dynamodb", region_name=REGION).scan(TableName=table_name)["Items"]
        )
        return f"invoices/{invoice_id}.pdf"

    monkeypatch.setattr(render_invoices, "render_invoice", observe)
    started_ms = time.time() * 1000
    run(sqs_event({"invoiceId": "inv_10"}), remaining_millis=180_000)
    # THEN its in-progress record expires when the invocation would time out, not in 24 h
    (item,) = seen
    assert item["status"] == {"S": "INPROGRESS"}
    expiry_ms = int(item["in_progress_expiration"]["N"])
    assert started_ms + 180_000 - 5_000 <= expiry_ms <= time.time() * 1000 + 180_000


def test_render_invoice_returns_the_pdf_key():
    assert render_invoices.render_invoice("inv_9") == "invoices/inv_9.pdf"


# The FIFO example handler (example/handler/ledger_fifo.py) --------------------------------


@pytest.fixture
def posted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Entry ids the ledger handler posted, in order; posting ``bad`` raises."""
    entries: list[str] = []

    def post_entry(account: str, entry_id: str, amount: int) -> None:
        if entry_id.startswith("bad"):  # "bada2": account a's entry 2, failing
            raise ConnectionError(f"ledger unavailable for {entry_id}")
        entries.append(entry_id)

    monkeypatch.setattr(ledger_fifo, "post_entry", post_entry)
    return entries


def entries(*entry_ids: str) -> dict[str, Any]:
    """A FIFO event: entry ``a2`` is account ``a``'s, in message group ``a``."""
    event = sqs_event(*({"account": e[-2], "entryId": e, "amount": 1} for e in entry_ids))
    for number, (record, entry_id) in enumerate(zip(event["Records"], entry_ids, strict=True)):
        record["attributes"].update(
            MessageGroupId=entry_id[-2],
            MessageDeduplicationId=entry_id,
            SequenceNumber=str(18_000_000_000_000_000_000 + number),
        )
    return event


def run_ledger(event: dict[str, Any]) -> Any:
    return ledger_fifo.handler(event, FakeLambdaContext())  # type: ignore[arg-type]


def failed_ids(response: Any) -> list[str]:
    return [f["itemIdentifier"] for f in response["batchItemFailures"]]


def test_ledger_posts_a_good_batch_in_order(posted: list[str]):
    response = run_ledger(entries("a1", "b1", "a2", "b2"))
    assert response == {"batchItemFailures": []}
    assert posted == ["a1", "b1", "a2", "b2"]


def test_ledger_stops_a_group_at_its_first_failure_and_reports_the_rest(posted: list[str]):
    # GIVEN account a's a1, a failing a2, then a3; account b's b1, b2 in between
    event = entries("a1", "b1", "bada2", "b2", "a3")
    ids = {r["attributes"]["MessageDeduplicationId"]: r["messageId"] for r in event["Records"]}
    # WHEN the batch is handled
    response = run_ledger(event)
    # THEN a3 was not attempted after a2 failed; account b went on
    assert posted == ["a1", "b1", "b2"]
    # AND the failed record and its group's later records are reported, in order
    assert failed_ids(response) == [ids["bada2"], ids["a3"]]


def test_ledger_without_skip_group_stops_the_whole_batch(
    posted: list[str], monkeypatch: pytest.MonkeyPatch
):
    # GIVEN the processor's plain form
    monkeypatch.setattr(ledger_fifo, "processor", SqsFifoPartialProcessor())
    event = entries("a1", "bada2", "b1")
    # WHEN a2 fails, THEN b1 (another account) is reported failed too, unprocessed
    response = run_ledger(event)
    assert posted == ["a1"]
    assert failed_ids(response) == [r["messageId"] for r in event["Records"][1:]]


def test_ledger_batch_failing_at_its_first_record_raises(posted: list[str]):
    # every record failed (the first one, then all after it): the whole batch is retried
    with pytest.raises(BatchProcessingError):
        run_ledger(entries("bada1", "a2"))
    assert posted == []


def test_post_entry_refuses_an_entry_without_account():
    with pytest.raises(ValueError, match="account"):
        ledger_fifo.post_entry("", "a1", 1)
