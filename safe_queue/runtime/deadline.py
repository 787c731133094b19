"""Start no record the function has no time left to finish: stop before the deadline.

When a batch outruns the function's timeout, Lambda kills the invocation in the middle of
a record and the whole batch comes back, the records that had succeeded included: they
are processed again. :func:`stop_before_deadline` wraps a Powertools record handler so that
once the function has less than ``margin`` seconds left, every record not started yet
raises :class:`DeadlineReached` instead of running. Powertools reports those records in
``batchItemFailures``; the invocation ends in time, Lambda deletes the records that
succeeded, and only the ones never started come back. None is processed twice.

Standard library only.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from safe_queue.runtime._records import raw_record
from safe_queue.runtime._settings import positive_seconds
from safe_queue.runtime.heartbeat import LambdaContextLike

__all__ = ["DeadlineReached", "stop_before_deadline"]

_log = logging.getLogger(__name__)

_F = TypeVar("_F", bound=Callable[..., Any])


class DeadlineReached(Exception):  # noqa: N818 - named for what happened, as the issue asks
    """A record was not started: the function had less than ``margin`` seconds left.

    Attributes
    ----------
    message_id
        The record's ``messageId`` (``None`` when it has none).
    remaining
        Seconds the function had left when the record's turn came.
    margin
        The margin of :func:`stop_before_deadline`.
    """

    def __init__(self, message_id: str | None, remaining: float, margin: float) -> None:
        self.message_id = message_id
        self.remaining = remaining
        self.margin = margin
        super().__init__(
            f"record {message_id or '?'} not started: {remaining:.1f} s left before the "
            f"function times out, below the margin of {margin:g} s; reported failed, it "
            "comes back to be processed by a later invocation"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message_id, self.remaining, self.margin))


def _message_id(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    record = kwargs.get("record", args[0] if args else None)
    try:
        message_id = raw_record(record).get("messageId")
    except TypeError:
        message_id = getattr(record, "message_id", None) or getattr(record, "messageId", None)
    return str(message_id) if message_id else None


def stop_before_deadline(record_handler: _F, *, context: LambdaContextLike, margin: float) -> _F:
    """Return a record handler that starts no record with less than ``margin`` seconds left.

    Parameters
    ----------
    record_handler
        The record handler given to Powertools' ``process_partial_response`` (a
        coroutine function works too, for ``AsyncBatchProcessor``). The wrapper keeps its
        signature, so Powertools still passes ``lambda_context`` when it asks for it.
    context
        This invocation's Lambda context: make the wrapper inside the handler, once per
        invocation.
    margin
        Seconds. A record starts only while ``context.get_remaining_time_in_millis()`` is
        at least ``margin`` seconds: set it above your slowest record's duration (plus what
        the handler does after the records), so a record that starts can finish.

    Returns
    -------
    Callable
        The guarded record handler. Once it has refused a record it refuses every later
        one, even if the clock says otherwise.

    Raises
    ------
    ValueError
        ``margin`` is not a number greater than 0.
    TypeError
        ``context`` has no ``get_remaining_time_in_millis``, or ``record_handler`` is not
        callable.

    Notes
    -----
    With ``BatchProcessor`` the refused records are reported failed and come back after
    the queue's visibility timeout (or after a :class:`FailureBackoff` delay). With
    ``SqsFifoPartialProcessor`` the first refused record stops the rest of the batch
    (``skip_group_on_error=True``: the rest of its group; the other groups' records are
    refused too, since the time is up), so order is kept. When every record of a batch is
    refused, Powertools raises ``BatchProcessingError`` (unless
    ``raise_on_entire_batch_failure=False``): the whole batch comes back, none processed.
    One warning is logged when the wrapper first stops.

    Examples
    --------
    >>> class Context:
    ...     remaining_ms = 40_000
    ...     def get_remaining_time_in_millis(self):
    ...         return self.remaining_ms
    >>> context = Context()
    >>> handle = stop_before_deadline(lambda record: "done", context=context, margin=35)
    >>> handle({"messageId": "m-1"})
    'done'
    >>> context.remaining_ms = 30_000
    >>> handle({"messageId": "m-2"})
    Traceback (most recent call last):
    ...
    safe_queue.runtime.deadline.DeadlineReached: record m-2 not started: 30.0 s left ...
    """
    seconds = positive_seconds(
        "margin",
        margin,
        "set margin above your slowest record's duration, e.g. margin=35 for records that"
        " take up to 30 s.",
    )
    if not callable(getattr(context, "get_remaining_time_in_millis", None)):
        raise TypeError(
            f"context: got a {type(context).__name__} without get_remaining_time_in_millis(); "
            "expected the Lambda context. Pass the handler's second argument (context)."
        )
    if not callable(record_handler):
        raise TypeError(
            f"record_handler: got a {type(record_handler).__name__}; expected the function "
            "that processes one record. Pass the record handler."
        )
    stopped = False

    def check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        nonlocal stopped
        remaining = context.get_remaining_time_in_millis() / 1000
        if stopped or remaining < seconds:
            error = DeadlineReached(_message_id(args, kwargs), remaining, seconds)
            if not stopped:
                stopped = True
                _log.warning(
                    "safe_queue deadline: %.1f s left, below the margin of %g s: record %s "
                    "and every record after it are reported failed without being started",
                    remaining,
                    seconds,
                    error.message_id or "?",
                )
            raise error

    if inspect.iscoroutinefunction(record_handler):

        @functools.wraps(record_handler)
        async def guarded_async(*args: Any, **kwargs: Any) -> Any:
            check(args, kwargs)
            return await record_handler(*args, **kwargs)

        return guarded_async  # type: ignore[return-value]

    @functools.wraps(record_handler)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        check(args, kwargs)
        return record_handler(*args, **kwargs)

    return guarded  # type: ignore[return-value]
