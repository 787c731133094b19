"""Fetch a stack or change-set target's payload: the presigned S3 URL CloudFormation gives.

The payload is a JSON object: for a stack, ``template`` and ``previousTemplate``; for a
change set, ``template`` and ``changedResources`` (each template as JSON or YAML text,
as given to CloudFormation; ``template`` is empty when a stack is deleted). It is read
with urllib3 (botocore's own HTTP client, in every Lambda Python runtime) with short
timeouts and two retries of a connection error or a server error, so that a payload that
cannot be read is known well inside the hook's 30 seconds.

Examples
--------
>>> fetch_payload("file:///etc/passwd")
Traceback (most recent call last):
...
safe_queue.hook.payload.PayloadError: the payload URL is not HTTP(S): 'file:///etc/passwd'
"""

from __future__ import annotations

import json
from typing import Any, Final
from urllib.parse import urlsplit

import urllib3

__all__ = ["MAX_PAYLOAD_BYTES", "PayloadError", "fetch_payload"]

MAX_PAYLOAD_BYTES: Final = 8 * 1024 * 1024
"""Two templates of CloudFormation's largest (1 MB from S3), escaped as JSON strings, fit."""
CONNECT_TIMEOUT: Final = 2.0
READ_TIMEOUT: Final = 5.0
RETRIES: Final = 2

_POOL = urllib3.PoolManager(
    retries=urllib3.Retry(
        total=RETRIES,
        connect=RETRIES,
        read=RETRIES,
        status=RETRIES,
        backoff_factor=0.2,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
    ),
    timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT, read=READ_TIMEOUT),
)


class PayloadError(Exception):
    """The payload could not be fetched or is not what CloudFormation documents."""


def _shown(url: str) -> str:
    """Return the URL without its query (a presigned URL's signature stays out of logs)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def fetch_payload(url: str) -> dict[str, Any]:
    """Fetch and parse the payload.

    Raises
    ------
    PayloadError
        No URL, not HTTP(S), no answer after the retries, an HTTP error status, more than
        :data:`MAX_PAYLOAD_BYTES`, or not a JSON object; the message is one line.
    """
    if not url:
        raise PayloadError("the request has no requestData.payload URL")
    if urlsplit(url).scheme not in ("https", "http"):
        raise PayloadError(f"the payload URL is not HTTP(S): {url!r}")
    try:
        response = _POOL.request("GET", url, preload_content=False)
    except urllib3.exceptions.HTTPError as error:
        reason = getattr(error, "reason", None) or error
        raise PayloadError(
            f"the payload at {_shown(url)} could not be read after {RETRIES + 1} attempts:"
            f" {type(reason).__name__}: {' '.join(str(reason).split())}"
        ) from None
    try:
        if response.status != 200:
            raise PayloadError(
                f"the payload at {_shown(url)} answered HTTP {response.status}"
                " (a presigned URL expires; CloudFormation gives a new one on the next call)"
            )
        body = response.read(MAX_PAYLOAD_BYTES + 1)
    except urllib3.exceptions.HTTPError as error:
        raise PayloadError(f"the payload at {_shown(url)} broke off: {error}") from None
    finally:
        response.release_conn()
    if len(body) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"the payload at {_shown(url)} is over {MAX_PAYLOAD_BYTES} bytes")
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise PayloadError(f"the payload at {_shown(url)} is not JSON: {error}") from None
    if not isinstance(payload, dict):
        raise PayloadError(f"the payload at {_shown(url)} is not a JSON object")
    return payload
