"""Name the cause of every SQS redelivery from the gap between receives.

A record with ``ApproximateReceiveCount > 1`` was received before. The average gap
between its receives, compared with the queue's visibility timeout, names the cause:

======================  ==================  ================================================
gap / visibility        cause               what happened
======================  ==================  ================================================
below ``low`` (0.5)     ``released-early``  released before its lease ended: the consumer
                                            crashed, or set the visibility to 0 on error
``low`` .. ``high``     ``lease-expired``   the lease ran out: the handler ran past it, or
                                            failed and the message came back when it ended
above ``high`` (1.5)    ``extended``        held longer than one lease: extended by a
                                            heartbeat, or waited in a backlog
======================  ==================  ================================================

``RedeliveryDiagnosis`` wraps a Powertools ``BatchProcessor`` record handler: for every
redelivered record it writes one JSON log line and one CloudWatch EMF metric
``Redeliveries`` with the dimensions ``QueueName`` and ``Cause``. Importing this module
needs only the standard library; the wrapper imports Powertools when it is made.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, TypeVar

from safe_queue.engine.limits import VISIBILITY_TIMEOUT_MAX
from safe_queue.keys import VISIBILITY_TIMEOUT_ENV
from safe_queue.runtime._records import QueueArn, raw_record

__all__ = [
    "DEFAULT_METRICS_NAMESPACE",
    "VISIBILITY_TIMEOUT_ENV",
    "Redelivery",
    "RedeliveryCause",
    "RedeliveryDiagnosis",
    "diagnose_redelivery",
    "visibility_timeout_from_env",
]

DEFAULT_METRICS_NAMESPACE: Final = "SafeQueue"
"""CloudWatch namespace of ``Redeliveries`` unless ``POWERTOOLS_METRICS_NAMESPACE`` is set."""

METRIC_NAME: Final = "Redeliveries"

_F = TypeVar("_F", bound=Callable[..., Any])


class RedeliveryCause(StrEnum):
    """The cause class of a redelivery, read from the gap between receives."""

    RELEASED_EARLY = "released-early"
    """gap << visibility: the consumer crashed, or set the visibility to 0."""
    LEASE_EXPIRED = "lease-expired"
    """gap ~ visibility: the handler ran past the lease, or failed and was retried."""
    EXTENDED = "extended"
    """gap >> visibility: a heartbeat extended the lease, or the message waited in a backlog."""

    @property
    def explanation(self) -> str:
        """One sentence on what the gap means and what to look at."""
        return _EXPLANATIONS[self]


_EXPLANATIONS: Final = {
    RedeliveryCause.RELEASED_EARLY: (
        "released before its lease ended: a consumer crashed or set the visibility to 0"
    ),
    RedeliveryCause.LEASE_EXPIRED: (
        "the lease ran out: the handler ran past the visibility timeout, or failed and "
        "the message came back when the lease ended"
    ),
    RedeliveryCause.EXTENDED: (
        "held longer than one lease: a heartbeat extended it, or it waited in a backlog"
    ),
}


@dataclass(frozen=True)
class Redelivery:
    """What one redelivered record tells: counts, timestamps, the gap and its cause."""

    message_id: str
    queue_name: str
    receive_count: int
    sent_timestamp: int
    """Epoch milliseconds (``SentTimestamp``)."""
    first_receive_timestamp: int
    """Epoch milliseconds (``ApproximateFirstReceiveTimestamp``)."""
    average_gap_seconds: float
    """Seconds from the first receive to now, divided by the number of receives since."""
    visibility_timeout: int
    cause: RedeliveryCause

    def as_log(self) -> dict[str, Any]:
        """Return the fields of the log line, JSON-ready."""
        return {
            "message_id": self.message_id,
            "queue_name": self.queue_name,
            "receive_count": self.receive_count,
            "sent_timestamp": self.sent_timestamp,
            "first_receive_timestamp": self.first_receive_timestamp,
            "average_gap_seconds": round(self.average_gap_seconds, 3),
            "visibility_timeout": self.visibility_timeout,
            "cause": self.cause.value,
            "explanation": self.cause.explanation,
        }


def visibility_timeout_from_env(environ: Mapping[str, str] | None = None) -> int | None:
    """Read ``SAFE_QUEUE_VISIBILITY_TIMEOUT``; None when unset.

    Raises
    ------
    ValueError
        When it is set but not a whole number of seconds from 0 to 43,200.

    Examples
    --------
    >>> visibility_timeout_from_env({"SAFE_QUEUE_VISIBILITY_TIMEOUT": "1110"})
    1110
    >>> visibility_timeout_from_env({}) is None
    True
    """
    env = os.environ if environ is None else environ
    text = env.get(VISIBILITY_TIMEOUT_ENV)
    if text is None or text.strip() == "":
        return None
    try:
        return _check_visibility(int(text.strip()), f"{VISIBILITY_TIMEOUT_ENV}={text!r}")
    except ValueError:
        raise ValueError(
            f"{VISIBILITY_TIMEOUT_ENV}: got {text!r}; expected the queue's visibility timeout "
            f"in whole seconds (0..{VISIBILITY_TIMEOUT_MAX}). Set it to the queue's"
            " VisibilityTimeout."
        ) from None


def _check_visibility(value: object, name: str = "visibility_timeout") -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 0 <= value <= VISIBILITY_TIMEOUT_MAX
    ):
        raise ValueError(
            f"{name}: got {value!r}; expected the queue's visibility timeout in whole seconds "
            f"(0..{VISIBILITY_TIMEOUT_MAX}). Pass the queue's VisibilityTimeout."
        )
    return value


def diagnose_redelivery(
    record: object,
    *,
    visibility_timeout: int,
    now: float | None = None,
    low: float = 0.5,
    high: float = 1.5,
) -> Redelivery | None:
    """Diagnose one SQS record; None when it is a first delivery.

    Parameters
    ----------
    record
        A record of ``event["Records"]`` (or a Powertools ``SQSRecord``/``SqsRecordModel``).
    visibility_timeout
        The queue's visibility timeout in seconds.
    now
        The time of the current receive, epoch seconds; default ``time.time()`` (a handler
        runs within moments of its receive).
    low, high
        Bounds on ``gap / visibility_timeout`` between the three causes.

    Examples
    --------
    >>> record = {"messageId": "m-1", "eventSourceARN": "arn:aws:sqs:eu-west-1:1:q",
    ...           "attributes": {"ApproximateReceiveCount": "3", "SentTimestamp": "1000000",
    ...                          "ApproximateFirstReceiveTimestamp": "1000000"}}
    >>> d = diagnose_redelivery(record, visibility_timeout=60, now=1000 + 120)
    >>> d.average_gap_seconds, d.cause.value
    (60.0, 'lease-expired')
    """
    raw = raw_record(record)
    attributes = raw.get("attributes") or {}
    count = int(attributes.get("ApproximateReceiveCount", "1"))
    if count <= 1:
        return None
    visibility = _check_visibility(visibility_timeout)
    sent = int(attributes.get("SentTimestamp", "0"))
    first = int(attributes.get("ApproximateFirstReceiveTimestamp", sent) or sent)
    current = time.time() if now is None else now
    gap = max(0.0, current - first / 1000) / (count - 1)
    ratio = gap / visibility if visibility else float("inf")
    if ratio < low:
        cause = RedeliveryCause.RELEASED_EARLY
    elif ratio <= high:
        cause = RedeliveryCause.LEASE_EXPIRED
    else:
        cause = RedeliveryCause.EXTENDED
    arn = str(raw.get("eventSourceARN", ""))
    try:
        queue_name = QueueArn.parse(arn).name
    except ValueError:
        queue_name = arn or "unknown"
    return Redelivery(
        message_id=str(raw.get("messageId", "")),
        queue_name=queue_name,
        receive_count=count,
        sent_timestamp=sent,
        first_receive_timestamp=first,
        average_gap_seconds=gap,
        visibility_timeout=visibility,
        cause=cause,
    )


class RedeliveryDiagnosis:
    """Log and count every redelivered record a Powertools record handler sees.

    Parameters
    ----------
    visibility_timeout
        The queue's visibility timeout in seconds. Default: the environment variable
        ``SAFE_QUEUE_VISIBILITY_TIMEOUT``, which ``SafeQueueConsumer`` sets.
    logger
        A Powertools ``Logger`` (the fields go in as keys of its JSON line) or a
        ``logging.Logger`` (the message is the JSON object). Default: a Powertools
        ``Logger`` for ``POWERTOOLS_SERVICE_NAME`` (or ``safe_queue``).
    namespace
        CloudWatch namespace of the metric. Default: ``POWERTOOLS_METRICS_NAMESPACE``, else
        ``SafeQueue``.
    clock, low, high
        See ``diagnose_redelivery``.

    Raises
    ------
    ValueError
        When no visibility timeout is given and the environment variable is unset or bad.
    ImportError
        When ``aws-lambda-powertools`` is not installed.

    Examples
    --------
    ::

        from aws_lambda_powertools.utilities.batch import (
            BatchProcessor, EventType, process_partial_response)
        from safe_queue.runtime import RedeliveryDiagnosis

        processor = BatchProcessor(event_type=EventType.SQS)

        @RedeliveryDiagnosis()
        def record_handler(record):
            ...

        def handler(event, context):
            return process_partial_response(
                event=event, record_handler=record_handler, processor=processor,
                context=context)
    """

    def __init__(
        self,
        *,
        visibility_timeout: int | None = None,
        logger: Any | None = None,
        namespace: str | None = None,
        clock: Callable[[], float] = time.time,
        low: float = 0.5,
        high: float = 1.5,
    ) -> None:
        if visibility_timeout is None:
            visibility_timeout = visibility_timeout_from_env()
            if visibility_timeout is None:
                raise ValueError(
                    f"visibility_timeout: not given, and {VISIBILITY_TIMEOUT_ENV} is not set. "
                    "Pass visibility_timeout=<the queue's VisibilityTimeout in seconds>, or set "
                    f"{VISIBILITY_TIMEOUT_ENV} (SafeQueueConsumer sets it on its function)."
                )
        if not 0 < low < high:
            raise ValueError(f"low, high: got {low!r}, {high!r}; expected 0 < low < high.")
        self.visibility_timeout = _check_visibility(visibility_timeout)
        try:
            from aws_lambda_powertools import Logger
            from aws_lambda_powertools.metrics import MetricUnit, single_metric
        except ImportError as error:  # pragma: no cover - Powertools is a dev dependency
            raise ImportError(
                "RedeliveryDiagnosis needs aws-lambda-powertools: add it to the function's "
                "requirements (or use the Powertools Lambda layer)."
            ) from error
        self._single_metric = single_metric
        self._unit = MetricUnit.Count
        self.namespace = (
            namespace or os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or DEFAULT_METRICS_NAMESPACE
        )
        self.logger = logger or Logger(
            service=os.environ.get("POWERTOOLS_SERVICE_NAME") or "safe_queue"
        )
        self._clock = clock
        self.low = low
        self.high = high

    def __call__(self, record_handler: _F) -> _F:
        """Wrap a record handler; the wrapper keeps its signature (``lambda_context`` too)."""

        @functools.wraps(record_handler)
        def wrapper(record: Any, *args: Any, **kwargs: Any) -> Any:
            self.observe(record)
            return record_handler(record, *args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def observe(self, record: object) -> Redelivery | None:
        """Diagnose one record; for a redelivery, write the log line and the metric."""
        redelivery = diagnose_redelivery(
            record,
            visibility_timeout=self.visibility_timeout,
            now=self._clock(),
            low=self.low,
            high=self.high,
        )
        if redelivery is None:
            return None
        fields = redelivery.as_log()
        if isinstance(self.logger, logging.Logger):
            self.logger.warning(json.dumps({"message": "redelivery", **fields}))
        else:
            self.logger.warning("redelivery", extra=fields)
        with self._single_metric(
            name=METRIC_NAME,
            unit=self._unit,
            value=1,
            namespace=self.namespace,
            default_dimensions={
                "QueueName": redelivery.queue_name,
                "Cause": redelivery.cause.value,
            },
        ):
            pass
        return redelivery
