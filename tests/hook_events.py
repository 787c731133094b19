"""CloudFormation Lambda hook requests shaped as the CloudFormation Hooks User Guide documents
them, and a local HTTP server (127.0.0.1) that serves stack payloads as S3 would.

The shapes follow "Create Lambda functions to evaluate resources for Lambda Hooks"
(https://docs.aws.amazon.com/cloudformation-cli/latest/hooks-userguide/lambda-hooks-create-lambda-function.html):
its stack, change-set and resource examples, field for field.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

ACCOUNT = "123456789012"
HOOK_FUNCTION = f"arn:aws:lambda:eu-west-1:{ACCOUNT}:function:safe-queue-hook"


def stack_id(name: str, region: str = "eu-west-1") -> str:
    return f"arn:aws:cloudformation:{region}:{ACCOUNT}:stack/{name}/1a2345b6-0000-00a0-a123-00abc0abc000"


def stack_event(
    payload_url: str,
    *,
    stack: str = "orders",
    action: str = "UPDATE",
    region: str = "eu-west-1",
    token: str | None = None,
) -> dict[str, Any]:
    """A stack target's request (the guide's "Example Lambda Hook stack change input")."""
    return {
        "clientRequestToken": token or str(uuid.uuid4()),
        "awsAccountId": ACCOUNT,
        "stackId": stack_id(stack, region),
        "changeSetId": None,
        "hookTypeName": "Private::SafeQueue::Hook",
        "hookTypeVersion": "00000001",
        "hookModel": {"LambdaFunction": HOOK_FUNCTION},
        "actionInvocationPoint": f"{action}_PRE_PROVISION",
        "requestData": {
            "targetName": "STACK",
            "targetType": "STACK",
            "targetLogicalId": stack,
            "payload": payload_url,
        },
        "requestContext": {"invocation": 1, "callbackContext": None},
    }


def change_set_event(payload_url: str, *, stack: str = "orders") -> dict[str, Any]:
    """A change-set target's request (the guide's "Example Lambda Hook change set change input")."""
    change_set = (
        f"arn:aws:cloudformation:eu-west-1:{ACCOUNT}:changeSet/SampleChangeSet/"
        "1a2345b6-0000-00a0-a123-00abc0abc000"
    )
    return {
        "clientRequestToken": str(uuid.uuid4()),
        "awsAccountId": ACCOUNT,
        "stackId": stack_id(stack),
        "changeSetId": change_set,
        "hookTypeName": "Private::SafeQueue::Hook",
        "hookTypeVersion": "00000001",
        "hookModel": {"LambdaFunction": HOOK_FUNCTION},
        "actionInvocationPoint": "CREATE_PRE_PROVISION",
        "requestData": {
            "targetName": "CHANGE_SET",
            "targetType": "CHANGE_SET",
            "targetLogicalId": change_set,
            "payload": payload_url,
        },
        "requestContext": {"invocation": 1, "callbackContext": None},
    }


def resource_event(
    resource_type: str,
    logical_id: str,
    properties: dict[str, Any],
    previous: dict[str, Any] | None = None,
    *,
    action: str = "UPDATE",
    stack: str | None = None,
    region: str = "eu-west-1",
) -> dict[str, Any]:
    """A resource target's request (the guide's "Example Lambda Hook resource change input")."""
    return {
        "clientRequestToken": str(uuid.uuid4()),
        "awsAccountId": ACCOUNT,
        "stackId": stack or stack_id("orders", region),
        "hookTypeName": "Private::SafeQueue::Hook",
        "hookTypeVersion": "00000001",
        "hookModel": {"LambdaFunction": HOOK_FUNCTION},
        "actionInvocationPoint": f"{action}_PRE_PROVISION",
        "requestData": {
            "targetName": resource_type,
            "targetType": resource_type,
            "targetLogicalId": logical_id,
            "targetModel": {
                "resourceProperties": properties,
                "previousResourceProperties": previous or {},
            },
        },
        "requestContext": {"invocation": 1, "callbackContext": None},
    }


class PayloadServer:
    """Serves JSON payloads at unguessable paths, as S3 serves a presigned URL."""

    def __init__(self) -> None:
        self.bodies: dict[str, bytes] = {}
        self.delays: dict[str, float] = {}
        self.requests: list[str] = []
        bodies, delays, requests = self.bodies, self.delays, self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                requests.append(path)
                time.sleep(delays.get(path, 0))
                body = bodies.get(path)
                if body is None:
                    self.send_response(403)
                    self.end_headers()
                    self.wfile.write(b"<Error><Code>AccessDenied</Code></Error>")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def serve(self, payload: Any, *, delay: float = 0.0) -> str:
        """Serve ``payload`` (a dict, as JSON; bytes as they are); return its presigned URL."""
        path = f"/hooks/{uuid.uuid4()}.json"
        self.bodies[path] = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.delays[path] = delay
        return f"{self.base}{path}?X-Amz-Signature=0123456789abcdef&X-Amz-Expires=300"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def payloads() -> Iterator[PayloadServer]:
    server = PayloadServer()
    yield server
    server.close()


class Context:
    """The Lambda context's one method the handler reads."""

    def __init__(self, remaining_ms: int = 30_000) -> None:
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms
