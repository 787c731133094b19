"""Render invoices from SQS, reporting partial batch failures (Powertools ``BatchProcessor``).

Each record's body is ``{"invoiceId": "..."}``. A record that raises is reported in
``batchItemFailures``; only it returns to the queue (the event source mapping has
``ReportBatchItemFailures``), the others are deleted.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

processor = BatchProcessor(event_type=EventType.SQS)


def render_invoice(invoice_id: str) -> str:
    """Render the invoice's PDF and e-mail it; return the PDF's key (stands in for real work)."""
    if not invoice_id:
        raise ValueError("invoiceId is empty")
    return f"invoices/{invoice_id}.pdf"


def record_handler(record: SQSRecord) -> str:
    """Process one SQS record; an exception marks only this record as failed."""
    invoice_id = record.json_body["invoiceId"]
    return render_invoice(invoice_id)


def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    """Lambda entry point: ``{"batchItemFailures": [{"itemIdentifier": messageId}, ...]}``."""
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
