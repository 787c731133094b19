"""Keep SQS messages invisible while a handler works on them: a visibility heartbeat.

``VisibilityHeartbeat`` is a context manager. While its block runs, one background
thread calls ``ChangeMessageVisibilityBatch`` every ``interval`` seconds so that each
record's message stays hidden for ``extension`` more seconds. When the block ends, however
it ends, the thread is stopped and joined before the block's exception (if any) goes on.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Protocol

from safe_queue.engine.limits import VISIBILITY_TIMEOUT_MAX
from safe_queue.runtime._records import QueueArn, raw_record
from safe_queue.runtime._sqs import change_visibility, chunks, sqs_client

__all__ = ["HEARTBEAT_THREAD_NAME", "LambdaContextLike", "VisibilityHeartbeat"]

HEARTBEAT_THREAD_NAME: Final = "safe-queue-heartbeat"
"""The name of every heartbeat thread (find it with ``threading.enumerate()``)."""


_log = logging.getLogger(__name__)


class LambdaContextLike(Protocol):
    """The one method of a Lambda context object the heartbeat reads."""

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the function times out."""
        ...


@dataclass
class _Lease:
    message_id: str
    receipt_handle: str
    queue: QueueArn
    first_receive: float | None  # epoch seconds, from ApproximateFirstReceiveTimestamp
    active: bool = True


def _check_seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name}: got {value!r}; expected a number of seconds greater than 0.")
    if value <= 0:
        raise ValueError(
            f"{name}: got {value!r}; expected a number of seconds greater than 0. "
            f"Pass a positive {name}."
        )
    return float(value)


class VisibilityHeartbeat:
    """Extend the visibility of a batch of SQS messages while a block of work runs.

    Parameters
    ----------
    records
        The records being worked on: ``event["Records"]``, or Powertools ``SQSRecord`` /
        ``SqsRecordModel`` objects. Each needs ``receiptHandle`` and ``eventSourceARN``.
    interval
        Seconds between two extensions (a float is fine, e.g. ``0.5``).
    extension
        Seconds of invisibility each extension gives, counted from the call. SQS takes
        whole seconds, so a fraction is rounded up (``2.5`` asks for 3 s).
    context
        The Lambda context. With it, the heartbeat never asks for more than the function's
        remaining time plus one extension, and stops once that time is up.
    sqs_client
        A boto3 SQS client. Default: one client per region of the records, made once per
        process (short timeouts, standard retries).
    clock
        Returns the current epoch time in seconds; for tests.

    Raises
    ------
    ValueError
        If ``interval >= extension`` (the lease would lapse between two beats), if
        ``extension`` is above the 43,200 s (12 h) SQS cap, or if a record is not from SQS.

    Notes
    -----
    Each extension asks for at most what is left of the 12 hours since the message was
    first received (``ApproximateFirstReceiveTimestamp``); SQS refuses anything beyond.
    A record whose receipt handle is refused (deleted, expired, not in flight) is dropped
    from the heartbeat with one warning; the others go on. Failed calls are logged and
    tried again on the next beat. The queue URL is derived from ``eventSourceARN`` and the
    client's endpoint, without an API call. The function needs
    ``sqs:ChangeMessageVisibility`` on the queue.

    Examples
    --------
    >>> from safe_queue.runtime import VisibilityHeartbeat
    >>> VisibilityHeartbeat([], interval=60, extension=60)
    Traceback (most recent call last):
    ...
    ValueError: interval: got 60.0 s, not below extension (60.0 s): the lease would lapse ...

    In a handler::

        with VisibilityHeartbeat(event["Records"], interval=20, extension=60, context=context):
            do_the_long_work()
    """

    def __init__(
        self,
        records: Iterable[object],
        *,
        interval: float,
        extension: float,
        context: LambdaContextLike | None = None,
        sqs_client: Any | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.interval = _check_seconds("interval", interval)
        self.extension = _check_seconds("extension", extension)
        if self.interval >= self.extension:
            raise ValueError(
                f"interval: got {self.interval} s, not below extension ({self.extension} s): "
                "the lease would lapse between two beats. Use an interval of at most a third "
                f"of the extension, e.g. interval={self.extension / 3:g}."
            )
        if math.ceil(self.extension) > VISIBILITY_TIMEOUT_MAX:
            raise ValueError(
                f"extension: got {self.extension} s; SQS allows at most {VISIBILITY_TIMEOUT_MAX} s "
                "(12 hours) of visibility. Use a shorter extension and let the heartbeat renew it."
            )
        self._context = context
        self._client = sqs_client
        self._clock = clock
        self._leases = [self._lease(record) for record in records]
        self._urls: dict[QueueArn, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._deadline_logged = False

    @staticmethod
    def _lease(record: object) -> _Lease:
        raw = raw_record(record)
        attributes = raw.get("attributes") or {}
        first = attributes.get("ApproximateFirstReceiveTimestamp")
        return _Lease(
            message_id=str(raw.get("messageId", "")),
            receipt_handle=str(raw["receiptHandle"]),
            queue=QueueArn.parse(str(raw.get("eventSourceARN", ""))),
            first_receive=int(first) / 1000 if first else None,
        )

    # -- context manager -------------------------------------------------------------

    def __enter__(self) -> VisibilityHeartbeat:
        """Start the heartbeat thread (none if there are no records)."""
        if self._thread is not None:
            raise RuntimeError("This VisibilityHeartbeat was already started; make a new one.")
        self._thread = threading.Thread(target=self._run, name=HEARTBEAT_THREAD_NAME, daemon=True)
        if self._leases:
            self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the thread and wait for it, so it cannot outlive the block."""
        self.stop()

    def stop(self) -> None:
        """Stop extending and join the thread; safe to call more than once."""
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join()

    # -- the beat --------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.beat()
            except Exception:  # never let the thread die silently; try again next beat
                _log.exception("safe_queue heartbeat: an extension failed; retrying next beat")
            if not any(lease.active for lease in self._leases):
                return

    def _seconds_to_ask(self, lease: _Lease, now: float) -> int:
        """Seconds of visibility to ask for now (0: stop this lease)."""
        ask = math.ceil(self.extension)
        if lease.first_receive is not None:
            left = math.floor(lease.first_receive + VISIBILITY_TIMEOUT_MAX - now)
            if left <= 0:
                _log.warning(
                    "safe_queue heartbeat: message %s reached the 12-hour visibility cap since "
                    "its first receive; no further extension is possible",
                    lease.message_id,
                )
                return 0
            ask = min(ask, left)
        if self._context is not None:
            remaining = self._context.get_remaining_time_in_millis() / 1000
            if remaining <= 0:
                if not self._deadline_logged:
                    self._deadline_logged = True
                    _log.warning("safe_queue heartbeat: the function is out of time; stopping")
                return 0
            ask = min(ask, math.floor(remaining + self.extension))
        return ask

    def beat(self) -> None:
        """Extend every active lease once (the thread calls this every ``interval``)."""
        now = self._clock()
        by_queue: dict[QueueArn, list[tuple[_Lease, int]]] = {}
        for lease in self._leases:
            if not lease.active:
                continue
            seconds = self._seconds_to_ask(lease, now)
            if seconds <= 0:
                lease.active = False
                continue
            by_queue.setdefault(lease.queue, []).append((lease, seconds))
        for queue, asks in by_queue.items():
            for chunk in chunks(asks):
                if self._stop.is_set():
                    return
                self._extend(queue, chunk)

    def _extend(self, queue: QueueArn, asks: Sequence[tuple[_Lease, int]]) -> None:
        client = self._client or sqs_client(queue.region, "heartbeat")
        try:
            refused = change_visibility(
                client,
                self._queue_url(client, queue),
                [(lease.receipt_handle, seconds) for lease, seconds in asks],
            )
        except Exception as error:  # botocore already retried; try again next beat
            _log.warning(
                "safe_queue heartbeat: ChangeMessageVisibilityBatch on %s failed (%s); "
                "retrying next beat",
                queue.name,
                error,
            )
            return
        for failure in refused:
            if not 0 <= failure.index < len(asks):
                continue
            lease = asks[failure.index][0]
            if failure.sender_fault:
                lease.active = False
                _log.warning(
                    "safe_queue heartbeat: stopped extending message %s on %s: %s (%s). "
                    "Its receipt handle is no longer valid (deleted, expired or received again).",
                    lease.message_id,
                    queue.name,
                    failure.code,
                    failure.message,
                )
            else:
                _log.warning(
                    "safe_queue heartbeat: extending message %s failed on the SQS side: %s; "
                    "retrying next beat",
                    lease.message_id,
                    failure.code,
                )

    def _queue_url(self, client: Any, queue: QueueArn) -> str:
        url = self._urls.get(queue)
        if url is None:
            endpoint = str(client.meta.endpoint_url).rstrip("/")
            url = self._urls[queue] = f"{endpoint}/{queue.account}/{queue.name}"
        return url
