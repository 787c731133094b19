"""Back off failed SQS records by their receive count, instead of the queue's fixed timeout.

A record reported in ``batchItemFailures`` comes back when the queue's visibility timeout
ends: the same wait after a blip as during an outage. :class:`FailureBackoff` sets each
failed record's visibility to ``min(cap, base x 2^(ApproximateReceiveCount - 1))`` instead
(:func:`safe_queue.engine.budget.backoff_delay`, the formula the retry budget counts), so
a failing message is retried soon at first and less and less often after that: an outage
spends time, not receives.

**Jitter** ("equal jitter", AWS Architecture Blog, "Exponential Backoff And Jitter"): with
``jitter=True`` each delay is drawn uniformly from whole seconds between half that ceiling
(rounded up) and the ceiling. Records that failed together are spread out, and the
shortest delays stay known, so :meth:`FailureBackoff.outage_ridden_out` can say how long an
outage every message rides out whatever the draws. ("Full jitter", 0 to the ceiling, would
give no such floor.)

Importing this module needs only the standard library; the first call to AWS imports boto3.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from safe_queue.arn import queue_url
from safe_queue.engine.budget import backoff_delay
from safe_queue.keys import BACKOFF_BASE_ENV, BACKOFF_CAP_ENV, BACKOFF_JITTER_ENV
from safe_queue.runtime._records import QueueArn, records_of
from safe_queue.runtime._settings import check_base_and_cap
from safe_queue.runtime._sqs import change_visibility, chunks, sqs_client

__all__ = [
    "BACKOFF_BASE_ENV",
    "BACKOFF_CAP_ENV",
    "BACKOFF_JITTER_ENV",
    "FailureBackoff",
]

_TRUE: Final = frozenset({"true", "1", "yes", "on"})
_FALSE: Final = frozenset({"false", "0", "no", "off"})

_log = logging.getLogger(__name__)

_H = TypeVar("_H", bound=Callable[..., Any])


@dataclass(frozen=True)
class _Failed:
    message_id: str
    receipt_handle: str
    queue: QueueArn
    receive_count: int
    group: str | None  # MessageGroupId on FIFO queues


class FailureBackoff:
    """Delay each failed SQS record by ``min(cap, base x 2^(receive count - 1))`` seconds.

    Parameters
    ----------
    base
        Seconds of the first retry's delay (receive count 1). Greater than 0.
    cap
        The longest delay, in seconds: from ``base`` to 43,200 (12 hours, the SQS
        visibility timeout maximum).
    jitter
        Draw each delay from ``[ceil(ceiling / 2), ceiling]`` whole seconds ("equal
        jitter"), so that records which failed together do not all come back at once.
    sqs_client
        A boto3 SQS client. Default: one per region of the records, made once per process
        with ``safe_queue.retries.client_config("backoff")`` (standard retries, 3 attempts,
        2 s connect and 5 s read timeouts).
    rng
        The random source of the jitter; for tests.

    Raises
    ------
    ValueError
        ``base <= 0``, ``cap < base``, ``cap > 43200``, a value that is not a number, or a
        ``jitter`` that is not a bool; the message names the setting, the value, what is
        allowed and the fix.

    Notes
    -----
    :meth:`apply` calls ``ChangeMessageVisibilityBatch`` (10 entries per call, one call per
    queue and chunk) for the records in ``batchItemFailures`` only, and returns the
    response unchanged. The delay counts from the call. A receipt handle SQS refuses
    (expired, the message deleted or received again), or a call that fails after botocore's
    retries, is logged as a warning and never raised: the message then comes back after
    the queue's own visibility timeout. SQS counts a message's total visibility per receive
    (at most 12 hours), so a ``cap`` near 43,200 s can be refused for a record late in a
    long invocation; choose a cap well below it. The function needs
    ``sqs:ChangeMessageVisibility`` (``SafeQueueConsumer``'s grant includes it); the queue
    URL is derived from ``eventSourceARN`` without an API call (``safe_queue.arn.queue_url``).

    **FIFO queues.** A failed record holds its message group while it is invisible: SQS
    gives out no later message of the group before it, which is what ordering needs.
    Powertools' ``SqsFifoPartialProcessor`` also reports the records after the failure
    (never started); they are backed off too, so that the group comes back as a whole. All
    the reported records of one message group get one delay, drawn for the group's first
    reported record (the one that failed), so the group resumes after that one delay, in
    order. Records of other groups that the plain ``SqsFifoPartialProcessor()`` stopped get
    their own group's delay; with ``skip_group_on_error=True`` they are processed instead.

    Examples
    --------
    >>> FailureBackoff(base=30, cap=900, jitter=False).delay_range(receive_count=3)
    (120, 120)
    >>> FailureBackoff(base=30, cap=900).delay_range(receive_count=6)
    (450, 900)
    >>> FailureBackoff(base=30, cap=10)
    Traceback (most recent call last):
    ...
    ValueError: cap: got 10 s, below base (30 s); allowed: base..43200 s. Fix: ...

    In a handler (Powertools reports the failures, the backoff delays them)::

        processor = BatchProcessor(event_type=EventType.SQS)
        backoff = FailureBackoff(base=30, cap=900)

        @backoff.wrap
        def handler(event, context):
            return process_partial_response(
                event=event, record_handler=record_handler, processor=processor,
                context=context)
    """

    def __init__(
        self,
        *,
        base: float,
        cap: float,
        jitter: bool = True,
        sqs_client: Any | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.base, self.cap = check_base_and_cap(base, cap)
        if not isinstance(jitter, bool):
            raise ValueError(
                f"jitter: got {jitter!r}; allowed: True or False. Fix: pass jitter=True "
                "(spread the retries) or jitter=False (exactly the ceiling)."
            )
        self.jitter = jitter
        self._client = sqs_client
        self._rng = rng if rng is not None else random.Random()

    def __repr__(self) -> str:
        return f"FailureBackoff(base={self.base:g}, cap={self.cap:g}, jitter={self.jitter})"

    # -- configuration from the environment ------------------------------------------

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        sqs_client: Any | None = None,
        rng: random.Random | None = None,
    ) -> FailureBackoff:
        """Make a backoff from ``SAFE_QUEUE_BACKOFF_BASE``, ``_CAP`` and ``_JITTER``.

        ``SafeQueueConsumer(failure_backoff=...)`` is to set them on its function, so the
        handler and the construct's retry budget read the same numbers. ``_JITTER`` is
        optional (``true`` when unset).

        Raises
        ------
        ValueError
            A variable is missing or not a number of seconds, or the values are refused
            (see the class); the message names the variable.

        Examples
        --------
        >>> FailureBackoff.from_env({"SAFE_QUEUE_BACKOFF_BASE": "30",
        ...                          "SAFE_QUEUE_BACKOFF_CAP": "900"})
        FailureBackoff(base=30, cap=900, jitter=True)
        >>> FailureBackoff.from_env({"SAFE_QUEUE_BACKOFF_BASE": "30"})
        Traceback (most recent call last):
        ...
        ValueError: SAFE_QUEUE_BACKOFF_CAP: not set; ...
        """
        env = os.environ if environ is None else environ
        fix = (
            "Set it on the function (SafeQueueConsumer(failure_backoff=...) does), or pass "
            "base= and cap= to FailureBackoff."
        )
        missing = [
            name for name in (BACKOFF_BASE_ENV, BACKOFF_CAP_ENV) if not env.get(name, "").strip()
        ]
        if missing:
            what = " and ".join(name.rsplit("_", 1)[1].lower() for name in missing)
            raise ValueError(
                f"{', '.join(missing)}: not set; allowed: a number of seconds greater than 0 "
                f"(the failure backoff's {what}). Fix: {fix}"
            )
        numbers = []
        for name in (BACKOFF_BASE_ENV, BACKOFF_CAP_ENV):
            text = env[name].strip()
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                raise ValueError(
                    f"{name}: got {env[name]!r}; allowed: a number of seconds greater than 0, "
                    f"such as '30'. Fix: {fix}"
                )
            numbers.append(number)
        jitter_text = env.get(BACKOFF_JITTER_ENV, "").strip().lower()
        if jitter_text and jitter_text not in _TRUE | _FALSE:
            raise ValueError(
                f"{BACKOFF_JITTER_ENV}: got {env[BACKOFF_JITTER_ENV]!r}; allowed: 'true' or "
                f"'false' (unset means true). Fix: {fix}"
            )
        base, cap = check_base_and_cap(
            numbers[0], numbers[1], names=(BACKOFF_BASE_ENV, BACKOFF_CAP_ENV)
        )
        return cls(
            base=base,
            cap=cap,
            jitter=jitter_text not in _FALSE,
            sqs_client=sqs_client,
            rng=rng,
        )

    # -- the delays ------------------------------------------------------------------

    def delay_range(self, receive_count: int) -> tuple[int, int]:
        """Return the shortest and longest delay of a record's ``receive_count``-th receive.

        The longest is :func:`safe_queue.engine.budget.backoff_delay`; without jitter both
        are that.
        """
        ceiling = backoff_delay(self.base, self.cap, receive_count)
        return (math.ceil(ceiling / 2) if self.jitter else ceiling), ceiling

    def delay(self, receive_count: int) -> int:
        """Draw the delay, in whole seconds, for a record's ``receive_count``-th receive."""
        shortest, longest = self.delay_range(receive_count)
        return shortest if shortest == longest else self._rng.randint(shortest, longest)

    def outage_ridden_out(self, max_receive_count: int) -> int:
        """Seconds of an outage a message failing on every receive rides out, at least.

        A message is dead-lettered at the receive after its ``max_receive_count``-th. It
        is received for the ``max_receive_count``-th time no sooner than the sum of the
        shortest delays of its first ``max_receive_count - 1`` receives after the first:
        a failure that lasts less than that leaves the last receive to succeed. The time
        the handler spends on each receive only adds to it.

        Examples
        --------
        >>> FailureBackoff(base=30, cap=900, jitter=False).outage_ridden_out(5)
        450
        >>> FailureBackoff(base=30, cap=900).outage_ridden_out(5)
        225
        >>> FailureBackoff(base=30, cap=900).outage_ridden_out(7)
        915
        """
        return sum(self.delay_range(k)[0] for k in range(1, max_receive_count))

    # -- applying it -----------------------------------------------------------------

    def apply(self, event: Any, response: Any) -> Any:
        """Delay the records of ``event`` reported in ``response``; return ``response``.

        Parameters
        ----------
        event
            The Lambda SQS event (``{"Records": [...]}``, or a Powertools ``SQSEvent``).
        response
            The partial batch response, ``{"batchItemFailures": [{"itemIdentifier":
            messageId}, ...]}``, as Powertools' ``process_partial_response`` returns it.
            ``None`` (a handler without partial batch responses that did not raise) means
            no failure.

        Raises
        ------
        TypeError
            ``event`` is not an SQS event, or ``response`` not a partial batch response.
            Failures of SQS itself are logged, never raised.
        """
        if response is None:
            return response
        if not isinstance(response, Mapping):
            raise TypeError(
                f"response: got a {type(response).__name__}; expected the partial batch "
                "response {'batchItemFailures': [...]} that process_partial_response returns. "
                "Pass the handler's return value."
            )
        items = response.get("batchItemFailures") or []
        if not isinstance(items, list):
            raise TypeError(
                f"response['batchItemFailures']: got a {type(items).__name__}; expected a list "
                "of {'itemIdentifier': messageId}. Pass the handler's return value."
            )
        failed_ids: dict[str, None] = {}
        for item in items:
            identifier = item.get("itemIdentifier") if isinstance(item, Mapping) else None
            if isinstance(identifier, str) and identifier:
                failed_ids[identifier] = None
            else:
                _log.warning("safe_queue backoff: ignored a malformed batchItemFailures entry")
        if failed_ids:
            records = records_of(event)  # in the batch's order: FIFO groups need it
            chosen = [r for r in records if str(r.get("messageId", "")) in failed_ids]
            for message_id in failed_ids.keys() - {str(r.get("messageId")) for r in chosen}:
                _log.warning(
                    "safe_queue backoff: failed item %s is not a record of the event; not delayed",
                    message_id,
                )
            self._delay(chosen)
        return response

    def wrap(self, handler: _H) -> _H:
        """Wrap a Lambda handler: apply the backoff to what it returns, or to all on error.

        When the handler returns, :meth:`apply` delays the records in its
        ``batchItemFailures``. When it raises (Powertools raises ``BatchProcessingError``
        when every record failed, and always with ``SqsFifoPartialProcessor`` when the
        first record fails), every record of the batch is delayed and the exception goes
        on: Lambda returns the whole batch to the queue, now after the backoff.
        """

        @functools.wraps(handler)
        def wrapped(event: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                response = handler(event, *args, **kwargs)
            except Exception:
                try:
                    self._delay(records_of(event))
                except Exception:  # never hide the handler's own error
                    _log.exception("safe_queue backoff: could not delay the failed batch")
                raise
            return self.apply(event, response)

        return wrapped  # type: ignore[return-value]

    def _delay(self, records: Iterable[Mapping[str, Any]]) -> None:
        failed: list[_Failed] = []
        for raw in records:
            message_id = str(raw.get("messageId", ""))
            try:
                queue = QueueArn.parse(str(raw.get("eventSourceARN", "")))
                receipt_handle = str(raw["receiptHandle"])
            except (KeyError, ValueError) as error:
                _log.warning(
                    "safe_queue backoff: message %s not delayed: %s", message_id or "?", error
                )
                continue
            attributes = raw.get("attributes") or {}
            try:
                receive_count = int(attributes.get("ApproximateReceiveCount", 1))
            except (TypeError, ValueError):
                receive_count = 1
            group = attributes.get("MessageGroupId")
            failed.append(_Failed(message_id, receipt_handle, queue, receive_count, group or None))
        by_queue: dict[QueueArn, list[tuple[_Failed, int]]] = {}
        group_delays: dict[tuple[QueueArn, str], int] = {}
        for record in failed:
            if record.group is None:
                seconds = self.delay(record.receive_count)
            else:  # FIFO: the group's first reported record sets the group's delay
                key = (record.queue, record.group)
                if key not in group_delays:
                    group_delays[key] = self.delay(record.receive_count)
                seconds = group_delays[key]
            by_queue.setdefault(record.queue, []).append((record, seconds))
        for queue, asks in by_queue.items():
            for chunk in chunks(asks):
                self._change(queue, chunk)

    def _change(self, queue: QueueArn, asks: Sequence[tuple[_Failed, int]]) -> None:
        try:
            client = self._client or sqs_client(queue.region, "backoff")
            refused = change_visibility(
                client,
                queue_url(str(queue)),
                [(record.receipt_handle, seconds) for record, seconds in asks],
            )
        except Exception as error:  # botocore has retried; the queue's own timeout applies
            _log.warning(
                "safe_queue backoff: ChangeMessageVisibilityBatch on %s failed (%s); %d "
                "message(s) come back after the queue's visibility timeout: %s",
                queue.name,
                error,
                len(asks),
                ", ".join(record.message_id for record, _ in asks),
            )
            return
        for failure in refused:
            if not 0 <= failure.index < len(asks):
                _log.warning("safe_queue backoff: SQS reported an unknown entry: %s", failure)
                continue
            _log.warning(
                "safe_queue backoff: message %s on %s not delayed: %s (%s); it comes back "
                "after the queue's visibility timeout",
                asks[failure.index][0].message_id,
                queue.name,
                failure.code,
                failure.message,
            )
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug(
                "safe_queue backoff: delayed %s on %s",
                ", ".join(f"{record.message_id} by {seconds} s" for record, seconds in asks),
                queue.name,
            )
