"""A generator of SQS events in the shape Lambda's SQS poller delivers them."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

QUEUE_ARN = "arn:aws:sqs:eu-west-1:123456789012:invoice-render"


def sqs_record(body: Any, *, receive_count: int = 1) -> dict[str, Any]:
    text = body if isinstance(body, str) else json.dumps(body)
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": f"AQEB{uuid.uuid4().hex}",
        "body": text,
        "attributes": {
            "ApproximateReceiveCount": str(receive_count),
            "SentTimestamp": "1764495000000",
            "SenderId": "AIDAEXAMPLE",
            "ApproximateFirstReceiveTimestamp": "1764495000100",
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(text.encode()).hexdigest(),  # SQS's own checksum
        "eventSource": "aws:sqs",
        "eventSourceARN": QUEUE_ARN,
        "awsRegion": "eu-west-1",
    }


def sqs_event(*bodies: Any) -> dict[str, Any]:
    return {"Records": [sqs_record(body) for body in bodies]}
