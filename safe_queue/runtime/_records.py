"""Reading SQS records in the shapes a handler meets them, with the standard library only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["QueueArn", "raw_record", "records_of"]


def raw_record(record: object) -> Mapping[str, Any]:
    """Return the plain dict behind an SQS record.

    Accepts the dicts of ``event["Records"]``, Powertools' ``SQSRecord`` (its
    ``raw_event``) and Powertools' parser model ``SqsRecordModel`` (``model_dump``).

    Examples
    --------
    >>> raw_record({"messageId": "m-1"})["messageId"]
    'm-1'
    """
    if isinstance(record, Mapping):
        return record
    raw = getattr(record, "raw_event", None)
    if isinstance(raw, Mapping):
        return raw
    dump = getattr(record, "model_dump", None)
    if callable(dump):
        dumped = dump()
        if isinstance(dumped, Mapping):
            return _from_model(dumped)
    raise TypeError(
        f"record: got a {type(record).__name__}; expected an SQS record from event['Records'] "
        "(a dict), a Powertools SQSRecord or an SqsRecordModel. Pass the records of the event."
    )


def _from_model(dumped: Mapping[str, Any]) -> dict[str, Any]:
    """Turn a dumped SqsRecordModel back into the wire shape (timestamps as epoch ms)."""
    record = dict(dumped)
    attributes: dict[str, Any] = {}
    for key, value in dict(record.get("attributes") or {}).items():
        if isinstance(value, datetime):
            value = str(int(value.timestamp() * 1000))
        attributes[key] = value
    record["attributes"] = attributes
    return record


@dataclass(frozen=True)
class QueueArn:
    """The parts of an SQS queue ARN.

    Examples
    --------
    >>> arn = QueueArn.parse("arn:aws:sqs:eu-west-1:123456789012:invoice-render")
    >>> arn.region, arn.account, arn.name
    ('eu-west-1', '123456789012', 'invoice-render')
    """

    partition: str
    region: str
    account: str
    name: str

    @classmethod
    def parse(cls, arn: str) -> QueueArn:
        """Split ``arn:<partition>:sqs:<region>:<account>:<name>``; raise ValueError otherwise."""
        parts = arn.split(":")
        if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs" or not all(parts[3:]):
            raise ValueError(
                f"eventSourceARN: got {arn!r}; expected an SQS queue ARN such as "
                "'arn:aws:sqs:eu-west-1:123456789012:my-queue'. Pass records of an SQS event."
            )
        return cls(partition=parts[1], region=parts[3], account=parts[4], name=parts[5])

    def __str__(self) -> str:
        return f"arn:{self.partition}:sqs:{self.region}:{self.account}:{self.name}"


def records_of(event: Any) -> list[Mapping[str, Any]]:
    raw_event = event if isinstance(event, Mapping) else getattr(event, "raw_event", None)
    records = raw_event.get("Records") if isinstance(raw_event, Mapping) else None
    if not isinstance(records, list):
        raise TypeError(
            f"event: got a {type(event).__name__} without a 'Records' list; expected the "
            "Lambda SQS event. Pass the handler's event."
        )
    return [raw_record(record) for record in records]
