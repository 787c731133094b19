"""The one SQS call the handler helpers make: ``ChangeMessageVisibilityBatch``, 10 at a time.

:class:`~safe_queue.runtime.VisibilityHeartbeat` extends messages with it and
:class:`~safe_queue.runtime.FailureBackoff` delays failed ones; both take their client from
:func:`sqs_client` (one per region, endpoint and caller, with the caller's retry settings
from :mod:`safe_queue.retries`) and send their entries with :func:`change_visibility`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from safe_queue.retries import Caller

__all__ = ["BATCH_MAX", "Refused", "change_visibility", "chunks", "sqs_client"]

BATCH_MAX: Final = 10
"""SQS API Reference, ChangeMessageVisibilityBatch: at most 10 entries per call."""

_clients: dict[tuple[str, str | None, str], Any] = {}
_clients_lock = threading.Lock()


def sqs_client(region: str, caller: Caller) -> Any:
    """Return the boto3 SQS client for ``region`` and ``caller``, made once per process.

    Kept per region, caller and endpoint override (``AWS_ENDPOINT_URL_SQS`` /
    ``AWS_ENDPOINT_URL``), so the invocations of one Lambda process share it.
    """
    endpoint = os.environ.get("AWS_ENDPOINT_URL_SQS") or os.environ.get("AWS_ENDPOINT_URL")
    key = (region, endpoint, caller)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            import boto3

            from safe_queue.retries import client_config

            client = boto3.client("sqs", region_name=region, config=client_config(caller))
            _clients[key] = client
        return client


def chunks(items: Sequence[Any], size: int = BATCH_MAX) -> Iterator[Sequence[Any]]:
    """Yield ``items`` in slices of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass(frozen=True)
class Refused:
    """One entry SQS refused: its index in the call, the code, the message, whose fault."""

    index: int
    code: str
    message: str
    sender_fault: bool


def change_visibility(
    client: Any, queue_url: str, entries: Sequence[tuple[str, int]]
) -> list[Refused]:
    """Set each ``(receipt handle, seconds)``'s visibility in one call (at most 10 entries).

    Returns the entries SQS refused. A failed call (after botocore's retries) raises, for
    the caller to say what that means for its messages.
    """
    response = client.change_message_visibility_batch(
        QueueUrl=queue_url,
        Entries=[
            {"Id": str(index), "ReceiptHandle": receipt, "VisibilityTimeout": seconds}
            for index, (receipt, seconds) in enumerate(entries)
        ],
    )
    refused = []
    for failure in response.get("Failed", []):
        try:
            index = int(failure["Id"])
        except (KeyError, ValueError):
            index = -1
        refused.append(
            Refused(
                index,
                str(failure.get("Code", "?")),
                str(failure.get("Message", "")),
                bool(failure.get("SenderFault", True)),
            )
        )
    return refused
