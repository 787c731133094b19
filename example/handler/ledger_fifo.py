"""Post ledger entries from a FIFO queue, in order per account.

Each record's body is ``{"account": "...", "entryId": "...", "amount": 0}``, sent with the
account as its ``MessageGroupId``, so the entries of one account are delivered in the
order they were sent. Powertools' `SqsFifoPartialProcessor` keeps that order through
failures: when a record fails, it reports it **and every later record of its message
group** in ``batchItemFailures`` without processing them. Those records return to the
queue together and are delivered again in their order, so entry 3 is never posted before
a failed entry 2 has been posted. (Powertools' `BatchProcessor` would go on with entry 3:
right for a standard queue, wrong here.)

``skip_group_on_error=True`` confines a failure to its own message group: the batch's
other accounts go on. Without it the processor stops the whole batch, and a message that
never succeeds takes every record behind it, of any account, to the dead-letter queue
with it (README: "FIFO consumers").
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    SqsFifoPartialProcessor,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

__all__ = ["handler", "post_entry", "processor", "record_handler"]

processor = SqsFifoPartialProcessor(skip_group_on_error=True)


def post_entry(account: str, entry_id: str, amount: int) -> None:
    """Post one entry to the account's ledger (stands in for real work)."""
    if not account or not entry_id:
        raise ValueError(
            f"ledger entry needs an account and an entryId, got {account!r}, {entry_id!r}"
        )


def record_handler(record: SQSRecord) -> None:
    """Post one record's entry; an exception fails it and its group's later records."""
    entry: dict[str, Any] = record.json_body
    post_entry(entry["account"], entry["entryId"], int(entry["amount"]))


def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    """Lambda entry point: ``{"batchItemFailures": [{"itemIdentifier": messageId}, ...]}``."""
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
