"""The example handler reports partial batch failures through Powertools' BatchProcessor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from example.handler import render_invoices

from .sqs_events import sqs_event


@dataclass
class FakeContext:
    function_name: str = "render-invoice"
    aws_request_id: str = "req-1"

    def get_remaining_time_in_millis(self) -> int:
        return 180_000


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = render_invoices.render_invoice

    def spy(invoice_id: str) -> str:
        calls.append(invoice_id)
        return real(invoice_id)

    monkeypatch.setattr(render_invoices, "render_invoice", spy)
    return calls


def run(event: dict[str, Any]) -> Any:
    return render_invoices.handler(event, FakeContext())  # type: ignore[arg-type]


def test_a_good_batch_reports_no_failures(rendered: list[str]):
    # GIVEN three valid invoices  WHEN the batch is handled
    response = run(
        sqs_event({"invoiceId": "inv_1"}, {"invoiceId": "inv_2"}, {"invoiceId": "inv_3"})
    )
    # THEN each is rendered once and nothing is reported failed
    assert response == {"batchItemFailures": []}
    assert rendered == ["inv_1", "inv_2", "inv_3"]


def test_only_the_bad_records_are_reported(rendered: list[str]):
    # GIVEN a batch with a malformed body and an empty invoice id among good records
    event = sqs_event({"invoiceId": "inv_1"}, "not json", {"invoiceId": "inv_2"}, {"invoiceId": ""})
    bad_ids = [event["Records"][1]["messageId"], event["Records"][3]["messageId"]]
    # WHEN it is handled
    response = run(event)
    # THEN exactly those two are returned for retry; the good ones were rendered
    assert sorted(f["itemIdentifier"] for f in response["batchItemFailures"]) == sorted(bad_ids)
    assert rendered == ["inv_1", "inv_2", ""]


def test_a_batch_where_everything_fails_raises_so_lambda_retries_it():
    # Powertools raises when every record failed, so the whole batch returns to the queue.
    from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

    with pytest.raises(BatchProcessingError):
        run(sqs_event("not json", {"invoiceId": ""}))


def test_render_invoice_returns_the_pdf_key():
    assert render_invoices.render_invoice("inv_9") == "invoices/inv_9.pdf"
