"""A moto server on 127.0.0.1 (free port) and helpers to build SQS -> Lambda mappings on it.

The audit and the Config rule's handler are reached through AWS_ENDPOINT_URL, as a user
would point them at an emulator. Import the fixtures into a test module with
``moto_endpoint = moto_world.moto_endpoint`` (an assignment, so ruff sees no redefinition).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto.awslambda.responses import LambdaResponse
from moto.server import ThreadedMotoServer

ACCOUNT = "123456789012"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
DLQ_RETENTION = 1_209_600  # 14 days


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """Start one moto server for the test session; yield its URL."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="module")
def aws_environment(moto_endpoint: str) -> Iterator[str]:
    """AWS_ENDPOINT_URL and fake credentials for a whole module; yields the endpoint."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
        for name, value in CREDENTIALS.items():
            patch.setenv(name, value)
        patch.delenv("AWS_PROFILE", raising=False)
        yield moto_endpoint


class World:
    """Queues, functions and mappings of one region of the moto server."""

    def __init__(self, region: str) -> None:
        self.region = region
        session = boto3.Session(region_name=region)
        self.sqs = session.client("sqs")
        self.lambda_ = session.client("lambda")
        iam = session.client("iam")
        try:
            self.role = iam.create_role(RoleName="safe-queue-test", AssumeRolePolicyDocument="{}")[
                "Role"
            ]["Arn"]
        except iam.exceptions.EntityAlreadyExistsException:
            self.role = iam.get_role(RoleName="safe-queue-test")["Role"]["Arn"]
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zipped:
            zipped.writestr("index.py", "def handler(event, context):\n    return None\n")
        self.code = archive.getvalue()

    def function(self, name: str, timeout: int, *, publish: bool = False) -> str:
        return str(
            self.lambda_.create_function(
                FunctionName=name,
                Runtime="python3.13",
                Role=self.role,
                Handler="index.handler",
                Code={"ZipFile": self.code},
                Timeout=timeout,
                Publish=publish,
            )["FunctionArn"]
        )

    def queue(self, name: str, **attributes: Any) -> str:
        """Create a queue with attributes (numbers, or a redrive dict); return its ARN."""
        attrs = {
            key: json.dumps(value) if isinstance(value, dict) else str(value)
            for key, value in attributes.items()
        }
        self.sqs.create_queue(QueueName=name, Attributes=attrs)
        return f"arn:aws:sqs:{self.region}:{ACCOUNT}:{name}"

    def redrive(self, dead_letter_arn: str, max_receive_count: int = 5) -> dict[str, Any]:
        return {"deadLetterTargetArn": dead_letter_arn, "maxReceiveCount": max_receive_count}

    def mapping(self, queue_arn: str, function: str, **settings: Any) -> str:
        return str(
            self.lambda_.create_event_source_mapping(
                EventSourceArn=queue_arn, FunctionName=function, **settings
            )["UUID"]
        )

    def delete_queue(self, queue_arn: str) -> None:
        name = queue_arn.rsplit(":", 1)[1]
        self.sqs.delete_queue(QueueUrl=self.sqs.get_queue_url(QueueName=name)["QueueUrl"])


class Calls:
    """Every API operation a session's clients call (botocore ``provide-client-params``)."""

    def __init__(self, session: boto3.Session) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        session.events.register("provide-client-params", self._record)

    def _record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        self.calls.append((f"{model.service_model.signing_name}:{model.name}", dict(params)))

    @property
    def actions(self) -> Counter[str]:
        return Counter(action for action, _ in self.calls)

    def params(self, action: str) -> list[dict[str, Any]]:
        return [params for name, params in self.calls if name == action]


def deny(
    session: boto3.Session, operation: str, when: str = "", code: str = "AccessDenied"
) -> None:
    """Make ``session`` see ``code`` for ``operation`` (event ``service.Operation``) whose
    request contains ``when``: moto does not enforce IAM, so the denial is injected before
    the request is sent, exactly as botocore would raise it."""

    def short_circuit(
        params: dict[str, Any], **_: Any
    ) -> tuple[AWSResponse, dict[str, Any]] | None:
        request = json.dumps(params, default=str)
        if when not in request:
            return None
        response = AWSResponse("https://denied.invalid", 403, {}, None)
        parsed = {"Error": {"Code": code, "Message": f"injected {code}"}, "ResponseMetadata": {}}
        return response, parsed

    session.events.register(f"before-call.{operation}", short_circuit)


def paginate_like_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make moto's ListEventSourceMappings honour MaxItems and Marker, as AWS does.

    moto 5.2.5 returns every mapping in one page and ignores both, so a paginator never
    sees a second page; this gives its server AWS's paging (NextMarker while more remain).
    """

    def list_event_source_mappings(self: LambdaResponse) -> str:
        arn = self.querystring.get("EventSourceArn", [None])[0]
        function = self.querystring.get("FunctionName", [None])[0]
        mappings = list(self.backend.list_event_source_mappings(arn, function))
        start = int(self.querystring.get("Marker", ["0"])[0])
        size = int(self.querystring.get("MaxItems", ["100"])[0])
        result: dict[str, Any] = {
            "EventSourceMappings": [m.get_configuration() for m in mappings[start : start + size]]
        }
        if start + size < len(mappings):
            result["NextMarker"] = str(start + size)
        return json.dumps(result, default=str)

    monkeypatch.setattr(LambdaResponse, "list_event_source_mappings", list_event_source_mappings)
