"""The AWS errors safe-queue expects after botocore's retries, each as one sentence with a fix.

Every AWS client safe-queue makes retries as :mod:`safe_queue.retries` sets it for its
caller. What is still an error after those retries falls in one of these kinds:

``denied``
    ``AccessDenied`` and its spellings: grant the action.
``throttled``
    ``ThrottlingException``, ``TooManyRequestsException``... or HTTP 429, on every attempt.
``not-found``
    The queue or function does not exist (deleted?).
``unavailable``
    A server error (HTTP 5xx, ``ServiceUnavailable``, ``InternalError``...) on every attempt,
    from AWS or from a proxy in between.
``unreachable``
    No answer at all: connection refused, DNS, TLS, connect or read timeouts.
``refused``
    The credentials themselves were refused (expired, or a region not enabled).

:func:`describe` turns such an error into a :class:`~safe_queue.report.Unreadable`, whose
:meth:`~safe_queue.report.Unreadable.sentence` names the operation, the resource, the
error code and message (an HTML error page is described, never printed) and the fix. Any
other exception is **not** expected: :func:`describe` returns ``None`` and the caller lets
it propagate. It is a bug to fix, not a value to guess.

Examples
--------
>>> from botocore.exceptions import ClientError
>>> denied = ClientError({"Error": {"Code": "AccessDenied", "Message": "not allowed"}},
...     "GetQueueAttributes")
>>> print(describe(denied, "sqs:GetQueueAttributes", "arn:aws:sqs:eu-west-1:1:q").sentence())
sqs:GetQueueAttributes on arn:aws:sqs:eu-west-1:1:q failed: AccessDenied: not allowed.
Fix: grant sqs:GetQueueAttributes on arn:aws:sqs:eu-west-1:1:q to these credentials
(for a resource of another account, also in its resource policy).
>>> html = ClientError({"Error": {"Code": "500", "Message": "<!doctype html><html><head>"
...     "<title>502 Bad Gateway</title></head></html>"},
...     "ResponseMetadata": {"HTTPStatusCode": 500, "RetryAttempts": 4}}, "StartMessageMoveTask")
>>> failure = describe(html, "sqs:StartMessageMoveTask", "orders-dlq")
>>> failure.kind, failure.code, failure.attempts
('unavailable', 'HTTP 500', 5)
>>> print(failure.message)
an HTML page ('502 Bad Gateway') instead of an AWS error response: a proxy, a load balancer
or an outage is in between
>>> describe(ValueError("a bug"), "sqs:GetQueueAttributes", "q") is None
True
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Final, Literal

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from safe_queue.report import Unreadable

__all__ = ["DENIED", "NOT_FOUND", "REFUSED", "THROTTLED", "UNAVAILABLE", "Kind", "describe"]

Kind = Literal["denied", "throttled", "not-found", "unavailable", "unreachable", "refused"]

DENIED: Final = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "AuthorizationError",
        "AuthorizationErrorException",
        "UnauthorizedOperation",
    }
)
"""Access denied; any code containing ``AccessDenied`` is one too."""

NOT_FOUND: Final = frozenset(
    {
        "AWS.SimpleQueueService.NonExistentQueue",
        "NonExistentQueue",
        "QueueDoesNotExist",
        "ResourceNotFoundException",
    }
)
"""The queue (SQS, both protocols) or the function, alias or version (Lambda) does not exist."""

THROTTLED: Final = frozenset(
    {
        "RequestLimitExceeded",
        "RequestThrottled",
        "RequestThrottledException",
        "SlowDown",
        "ThrottledException",
        "Throttling",
        "ThrottlingException",
        "TooManyRequestsException",
    }
)
"""Throttling codes (the SQS, Lambda and Config ones among botocore's retryable list)."""

UNAVAILABLE: Final = frozenset(
    {
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "RequestTimeout",
        "RequestTimeoutException",
        "ServiceException",
        "ServiceUnavailable",
        "ServiceUnavailableException",
    }
)
"""Server-side failures; any HTTP status of 500 or more is one too."""

REFUSED: Final = frozenset(
    {
        "AuthFailure",
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "InvalidSignatureException",
        "SignatureDoesNotMatch",
        "UnrecognizedClientException",
    }
)
"""The credentials were refused: expired, or an opt-in region that is not enabled (it
answers every call with ``UnrecognizedClientException``)."""

MESSAGE_MAX: Final = 200
"""Characters of an AWS error message kept in a sentence."""

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _kind_of(code: str, status: int | None) -> Kind | None:
    if code in DENIED or "AccessDenied" in code:
        return "denied"
    if code in THROTTLED or status == 429:
        return "throttled"
    if code in NOT_FOUND:
        return "not-found"
    if code in REFUSED:
        return "refused"
    if code in UNAVAILABLE or (status is not None and status >= 500):
        return "unavailable"
    return None


def _one_line(text: str) -> str:
    """Return a message as one line of at most :data:`MESSAGE_MAX` characters; HTML described."""
    stripped = text.strip()
    if stripped[:1] == "<" and re.search(r"<(!doctype|html|head|body)", stripped, re.IGNORECASE):
        title = _TITLE.search(stripped)
        named = f" ({' '.join(html.unescape(title.group(1)).split())!r})" if title else ""
        return (
            f"an HTML page{named} instead of an AWS error response: a proxy, a load balancer"
            " or an outage is in between"
        )
    line = " ".join(stripped.split()).rstrip(".")
    return line if len(line) <= MESSAGE_MAX else line[: MESSAGE_MAX - 1] + "…"


def _fix(kind: Kind, operation: str, resource: str) -> str:
    return {
        "denied": (
            f"grant {operation} on {resource} to these credentials (for a resource of"
            " another account, also in its resource policy)"
        ),
        "throttled": (
            "AWS throttled every attempt; run again later, when fewer callers share the"
            " account's API rate, or ask for a higher quota (Service Quotas)"
        ),
        "not-found": f"check that {resource} exists in this account and region",
        "unavailable": (
            "AWS, or a proxy in between, answered every attempt with a server error; run"
            " again later, and check the AWS Health Dashboard or the proxy"
        ),
        "unreachable": (
            "check the network, the region, and AWS_ENDPOINT_URL or the HTTPS_PROXY"
            " settings, then run again"
        ),
        "refused": (
            "refresh the credentials (aws sso login, new keys) and check that the region"
            " is enabled for the account"
        ),
    }[kind]


def describe(
    error: BaseException,
    operation: str,
    resource: str,
    *,
    fixes: Mapping[str, str] | None = None,
    region: str | None = None,
    expected_only: bool = True,
) -> Unreadable | None:
    """Describe an AWS error the caller expects; ``None`` for anything else (a bug).

    Parameters
    ----------
    error
        What the call raised (after botocore's retries).
    operation
        The API action, as IAM names it (``sqs:GetQueueAttributes``).
    resource
        What the call asked about (an ARN, a queue, a region).
    fixes
        The caller's own fix for some kinds (``{"not-found": "..."}``), instead of the
        general one.
    region
        Where the call went.
    expected_only
        ``False``: describe any AWS error answer (``ClientError``) too, as kind ``error``
        with its own message as the fix (a command that only reports it, such as
        ``safe-queue redrive``); other exceptions still give ``None``.

    Returns
    -------
    Unreadable or None
        The error's kind, code, one-line message, attempts and fix; ``None`` when the
        error is not one of the expected kinds (see the module's docstring).
    """
    kind: Kind | None
    attempts: int | None = None
    notes: list[str] = []
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        metadata = error.response.get("ResponseMetadata", {})
        status = metadata.get("HTTPStatusCode")
        raw_code = str(details.get("Code") or "")
        kind = _kind_of(raw_code, status)
        if kind is None and expected_only:
            return None
        code = f"HTTP {raw_code}" if raw_code.isdigit() else raw_code or f"HTTP {status}"
        message = _one_line(str(details.get("Message") or ""))
        if "RetryAttempts" in metadata:
            attempts = int(metadata["RetryAttempts"]) + 1
        if metadata.get("RetryQuotaReached"):
            notes.append("botocore stopped retrying: this client's retry quota is spent")
    elif isinstance(error, BotoConnectionError | HTTPClientError):
        kind = "unreachable"
        code = type(error).__name__
        message = _one_line(str(error))
    else:
        return None
    if notes:
        message = "; ".join([message, *notes]) if message else "; ".join(notes)
    if kind is None:
        fix = "AWS's message says what it refused; check the arguments"
    else:
        fix = (fixes or {}).get(kind) or _fix(kind, operation, resource)
    return Unreadable(
        operation=operation,
        resource=resource,
        kind=kind or "error",
        code=code,
        message=message,
        fix=fix,
        attempts=attempts,
        region=region,
    )
