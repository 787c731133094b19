"""Render invoices from SQS: partial batch failures and idempotency with Powertools.

Each record's body is ``{"invoiceId": "..."}``. A record that raises is reported in
``batchItemFailures``; only it returns to the queue (the event source mapping has
``ReportBatchItemFailures``), the others are deleted. Rendering is idempotent on the
invoice id: a redelivered or redriven message for an invoice already rendered returns the
stored result instead of rendering and e-mailing again. The records live in the DynamoDB
table named by ``IDEMPOTENCY_TABLE_NAME`` (``SafeQueueConsumer(..., idempotency=True)``).

Two helpers of ``safe_queue.runtime`` (boto3 only; the example bundles the CDK-free part
of ``safe_queue`` into the function's code):

- ``stop_before_deadline``: no invoice starts with less than ``DEADLINE_MARGIN`` seconds
  left (the slowest invoice renders in about 90 s), so a slow batch ends in time and
  only the invoices not started come back, instead of the whole batch after a timeout;
- ``FailureBackoff``: a failed (or not started) invoice comes back after
  ``min(900, 30 x 2^(receive count - 1))`` seconds, half to all of it (jitter), instead
  of the queue's 1,082 s every time; when every record fails, Powertools raises and the
  whole batch gets the backoff.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from typing import Any, cast

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.typing import LambdaContext

from safe_queue.runtime import FailureBackoff, stop_before_deadline

DEADLINE_MARGIN = 100
"""Seconds: an invoice starts only while at least this much of the 180 s timeout is left."""

processor = BatchProcessor(event_type=EventType.SQS)
# The backoff SafeQueueConsumer(failure_backoff=...) declared, and counted in its retry budget.
backoff = FailureBackoff.from_env()
# Keyed on the business id, not the message id: a re-sent message is a new message.
idempotency_config = IdempotencyConfig(
    event_key_jmespath="invoiceId",
    expires_after_seconds=24 * 60 * 60,
    raise_on_no_idempotency_key=True,  # a message without an invoice id fails, visibly
)


def render_invoice(invoice_id: str) -> str:
    """Render the invoice's PDF and e-mail it; return the PDF's key (stands in for real work)."""
    if not invoice_id:
        raise ValueError("invoiceId is empty")
    return f"invoices/{invoice_id}.pdf"


def _render(invoice: dict[str, Any]) -> str:
    return render_invoice(invoice["invoiceId"])


@cache
def _idempotent_render() -> Callable[..., str]:
    """Build the idempotent renderer on first use (its DynamoDB client needs the region)."""
    idempotent = idempotent_function(
        data_keyword_argument="invoice",
        persistence_store=DynamoDBPersistenceLayer(table_name=os.environ["IDEMPOTENCY_TABLE_NAME"]),
        config=idempotency_config,
    )
    return cast(Callable[..., str], idempotent(_render))


def record_handler(record: SQSRecord) -> str:
    """Process one SQS record; an exception marks only this record as failed."""
    return _idempotent_render()(invoice=record.json_body)


@backoff.wrap
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    """Lambda entry point: ``{"batchItemFailures": [{"itemIdentifier": messageId}, ...]}``."""
    # An in-progress record expires when this invocation would time out, so a crashed
    # invocation does not lock its invoice until the 24 h expiry.
    idempotency_config.register_lambda_context(context)
    return process_partial_response(
        event=event,
        record_handler=stop_before_deadline(
            record_handler, context=context, margin=DEADLINE_MARGIN
        ),
        processor=processor,
        context=context,
    )
