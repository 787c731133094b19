"""Reading an account's queues and functions, each once, from any thread, with failures told.

:class:`AccountReader` makes one boto3 client per service and region with its caller's
retry settings (:mod:`safe_queue.retries`), and reads each queue, function (version) and
function's concurrency once however many mappings share it. A read that still fails with
an error :mod:`safe_queue.live.aws_errors` expects (access denied, throttled, not found, a
server error, an unreachable endpoint) is returned as an :class:`~safe_queue.report.Unreadable`;
refused credentials raise :class:`AuditError`; any other exception is a bug and propagates.
The audit, the AWS Config rule and the CloudFormation hook read through it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Final, Generic, TypeVar

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from safe_queue.arn import Arn, queue_url, unqualified_function_arn
from safe_queue.live.actions import QUEUE_ATTRIBUTES
from safe_queue.live.aws_errors import describe
from safe_queue.report import Unreadable
from safe_queue.retries import Caller, client_config

__all__ = ["DEAD_LETTER_GONE_FIX", "AccountReader", "AuditError", "region_of"]

T = TypeVar("T")


class AuditError(Exception):
    """The audit cannot run at all: no credentials, or credentials the account refuses."""


def region_of(arn: str, default: str) -> str:
    """Return the region an ARN names, else ``default``."""
    parsed = Arn.parse(arn)
    return parsed.region if parsed is not None and parsed.region else default


class _Once(Generic[T]):
    """Compute each key's value once, even when several threads ask for it together."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, T] = {}
        self._key_locks: dict[str, threading.Lock] = {}

    def get(self, key: str, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                return self._values[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._values:
                    return self._values[key]
            value = compute()
            with self._lock:
                self._values[key] = value
            return value


def _failure(error: Exception, operation: str, resource: str, region: str) -> Unreadable:
    """Describe an expected AWS error; re-raise anything else (a bug) and refused credentials."""
    fixes = {"denied": _DENIED_FIX, "not-found": _MAPPING_GONE_FIX}
    failure = describe(error, operation, resource, fixes=fixes, region=region)
    if failure is None:
        raise error
    if failure.kind == "refused":
        raise AuditError(
            f"region {region}: the credentials were refused ({failure.code}) on {operation};"
            f" {failure.fix}"
        ) from None
    return failure


_DENIED_FIX: Final = (
    "grant it to the audit's credentials (the IAM policy in docs/audit.md; a queue of another"
    " account must also allow it in its queue policy)"
)
_MAPPING_GONE_FIX: Final = (
    "if it was deleted for good, delete the event source mappings that still name it (aws"
    " lambda delete-event-source-mapping --uuid <mapping UUID>), else audit again once it exists"
)
DEAD_LETTER_GONE_FIX: Final = (
    "a RedrivePolicy names this dead-letter queue: create it, or point the source queue's"
    " deadLetterTargetArn at one that exists"
)


class AccountReader:
    """The account's queues and functions, each read once, from any thread."""

    def __init__(self, session: boto3.Session, caller: Caller, max_workers: int) -> None:
        self._session = session
        self._config = client_config(caller, max_pool_connections=max(10, max_workers))
        self._clients_lock = threading.Lock()
        self._clients: dict[tuple[str, str], Any] = {}
        self._queues: _Once[Mapping[str, str] | Unreadable] = _Once()
        self._functions: _Once[Mapping[str, Any] | Unreadable] = _Once()
        self._concurrency: _Once[int | Unreadable | None] = _Once()

    def client(self, service: str, region: str) -> Any:
        """Return the boto3 client of ``service`` in ``region``, made once (thread-safe)."""
        # Creating a client is not thread-safe; using one is.
        with self._clients_lock:
            key = (service, region)
            if key not in self._clients:
                self._clients[key] = self._session.client(
                    service,  # type: ignore[call-overload]
                    region_name=region,
                    config=self._config,
                )
            return self._clients[key]

    def queue(self, arn: str, region: str) -> Mapping[str, str] | Unreadable:
        """Return the queue's attributes (:data:`QUEUE_ATTRIBUTES`), or why they are unknown."""
        where = region_of(arn, region)

        def read() -> Mapping[str, str] | Unreadable:
            try:
                response = self.client("sqs", where).get_queue_attributes(
                    QueueUrl=queue_url(arn), AttributeNames=list(QUEUE_ATTRIBUTES)
                )
            except (ClientError, BotoCoreError) as error:
                return _failure(error, "sqs:GetQueueAttributes", arn, where)
            attributes: Mapping[str, str] = response.get("Attributes", {})
            return attributes

        return self._queues.get(arn, read)

    def function(self, arn: str, region: str) -> Mapping[str, Any] | Unreadable:
        """Return ``GetFunctionConfiguration`` of the function (version), or why not."""
        where = region_of(arn, region)

        def read() -> Mapping[str, Any] | Unreadable:
            try:
                response = self.client("lambda", where).get_function_configuration(FunctionName=arn)
            except (ClientError, BotoCoreError) as error:
                return _failure(error, "lambda:GetFunctionConfiguration", arn, where)
            configuration: Mapping[str, Any] = response
            return configuration

        return self._functions.get(arn, read)

    def reserved_concurrency(self, arn: str, region: str) -> int | Unreadable | None:
        """Return the function's reserved concurrency (``None`` without one), or why not."""
        function = unqualified_function_arn(arn)
        where = region_of(function, region)

        def read() -> int | Unreadable | None:
            try:
                response = self.client("lambda", where).get_function_concurrency(
                    FunctionName=function
                )
            except (ClientError, BotoCoreError) as error:
                return _failure(error, "lambda:GetFunctionConcurrency", function, where)
            value = response.get("ReservedConcurrentExecutions")
            return None if value is None else int(value)

        return self._concurrency.get(function, read)
