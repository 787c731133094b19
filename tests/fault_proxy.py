"""An HTTP proxy that fails a seeded share of AWS API requests, in front of a moto server.

Point boto3 at it (``AWS_ENDPOINT_URL``) and every request goes through real sockets, so
botocore's retries, timeouts and error parsing run exactly as against AWS: the faults come
from outside the process's AWS stack, not from a stub or an event hook.

- ``rate``: each request fails with ``503 Service Unavailable`` (an empty body, as a load
  balancer in front of AWS answers) with this probability; the rest go to moto.
- ``html``: operations (``GetQueueAttributes``, ``StartMessageMoveTask``...) that always
  fail with ``500`` and an HTML error page as their body.
- ``only``: limit ``rate`` to these operations.

The draw is deterministic for a seed: the n-th time the proxy sees the same request (the
same method, path and body, i.e. botocore's retries of one call) it fails iff
``Random(f"{seed}|{request}|{n}").random() < rate``, whatever order the client's threads
send requests in. So a test is as repeatable as its seed, and a run with another seed is
another sample.

Examples
--------
>>> operation_of("POST", "/", {"X-Amz-Target": "AmazonSQS.GetQueueAttributes"}, b"{}")
'GetQueueAttributes'
>>> operation_of("GET", "/2015-03-31/functions/render%3Alive/configuration", {}, b"")
'GetFunctionConfiguration'
>>> operation_of("GET", "/2015-03-31/event-source-mappings/?MaxItems=100", {}, b"")
'ListEventSourceMappings'
"""

from __future__ import annotations

import http.client
import random
import re
import threading
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

__all__ = ["HTML_PAGE", "FaultProxy", "Faults", "operation_of", "proxy"]

HTML_PAGE = (
    b"<!doctype html>\n<html><head><title>500 Internal Server Error</title></head>\n"
    b"<body><h1>Internal Server Error</h1><p>The server encountered an internal error and"
    b" was unable to complete your request.</p></body></html>\n"
)
"""The body of an HTML fault: what a proxy or load balancer answers, not an AWS error."""

# Lambda's REST operations the audit calls (the JSON-protocol services name theirs in
# X-Amz-Target, the query-protocol ones in Action=).
_REST = (
    ("GET", re.compile(r"^/2015-03-31/event-source-mappings/?$"), "ListEventSourceMappings"),
    ("GET", re.compile(r"^/2015-03-31/functions/[^/]+/configuration$"), "GetFunctionConfiguration"),
    ("GET", re.compile(r"^/2019-09-30/functions/[^/]+/concurrency$"), "GetFunctionConcurrency"),
)
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "proxy-connection"})


def operation_of(method: str, path: str, headers: Mapping[str, str], body: bytes) -> str:
    """Name the AWS operation of a request (``METHOD path`` when it is not one known here)."""
    target = {k.lower(): v for k, v in headers.items()}.get("x-amz-target")
    if target:
        return target.rsplit(".", 1)[-1]
    route = urlsplit(path).path
    for verb, pattern, name in _REST:
        if method == verb and pattern.match(route):
            return name
    action = parse_qs(body.decode("latin-1")).get("Action") or parse_qs(urlsplit(path).query).get(
        "Action"
    )
    if action:
        return action[0]
    return f"{method} {route}"


@dataclass
class Faults:
    """What the proxy fails: see the module's docstring."""

    rate: float = 0.0
    seed: int = 0
    html: Collection[str] = ()
    only: Collection[str] | None = None


@dataclass
class FaultProxy:
    """A running proxy: its URL, what it injects, and what it saw."""

    url: str
    faults: Faults
    requests: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    _seen: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def decide(self, operation: str, method: str, path: str, body: bytes) -> int | None:
        """Return the status to fail this request with, or ``None`` to forward it."""
        key = f"{method} {path} {body.decode('latin-1')}"
        with self._lock:
            self.requests[operation] += 1
            self._seen[key] += 1
            attempt = self._seen[key]
        status: int | None = None
        if operation in self.faults.html:
            status = 500
        elif self.faults.only is None or operation in self.faults.only:
            draw = random.Random(f"{self.faults.seed}|{key}|{attempt}").random()
            status = 503 if draw < self.faults.rate else None
        if status is not None:
            with self._lock:
                self.failed[operation] += 1
        return status


def _handler(state: FaultProxy, upstream: str) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)
    host, port = target.hostname or "127.0.0.1", target.port

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return  # quiet: the test reads the counters instead

        def _relay(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items()}
            operation = operation_of(self.command, self.path, headers, body)
            status = state.decide(operation, self.command, self.path, body)
            if status is not None:
                page = HTML_PAGE if status == 500 else b""
                self.send_response(status)
                self.send_header("Content-Type", "text/html" if page else "text/plain")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            connection = http.client.HTTPConnection(host, port, timeout=30)
            try:
                forwarded = {k: v for k, v in headers.items() if k.lower() not in _HOP_BY_HOP}
                connection.request(self.command, self.path, body=body, headers=forwarded)
                response = connection.getresponse()
                payload = response.read()
                self.send_response(response.status, response.reason)
                for name, value in response.getheaders():
                    if name.lower() not in _HOP_BY_HOP | {"content-length"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            finally:
                connection.close()

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _relay  # noqa: N815

    return Handler


@contextmanager
def proxy(upstream: str, faults: Faults) -> Iterator[FaultProxy]:
    """Run a proxy to ``upstream`` (a moto server's URL) on 127.0.0.1 for the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    host, port = server.server_address[:2]
    state = FaultProxy(url=f"http://{host!s}:{port}", faults=faults)
    server.RequestHandlerClass = _handler(state, upstream)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fault-proxy", daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
