"""Deploy synthesized templates to moto, and drive the queues like Lambda's SQS poller.

moto's SQS implements visibility timeouts, receive counts and redrive with wall-clock
time. `VirtualClock` replaces that clock, so minutes of queue time pass instantly and the
tests are deterministic. Lambda does not run here (no Docker), so `SimulatedSqsPoller`
plays its SQS poller: several concurrent pollers, each receiving up to the batch size,
invoking the handler (whose records take a simulated time each, one after the other),
then deleting what succeeded.
"""

from __future__ import annotations

import heapq
import io
import itertools
import json
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import moto.sqs.models
import pytest
from moto import mock_aws

REGION = "eu-west-1"
ACCOUNT = "123456789012"
BOOTSTRAP_VERSION_PARAMETER = "/cdk-bootstrap/hnb659fds/version"


class VirtualClock:
    """The time moto's SQS sees; advanced by the simulation, never by waiting."""

    def __init__(self) -> None:
        self.now = time.time()

    def unix_time(self, dt: Any = None) -> float:
        assert dt is None
        return self.now

    def unix_time_millis(self, dt: Any = None) -> float:
        return self.unix_time(dt) * 1000.0


@contextmanager
def emulated_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[VirtualClock]:
    """moto in-process, with fake credentials, the CDK bootstrap parameter and a virtual clock."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    clock = VirtualClock()
    monkeypatch.setattr(moto.sqs.models, "unix_time", clock.unix_time)
    monkeypatch.setattr(moto.sqs.models, "unix_time_millis", clock.unix_time_millis)
    with mock_aws():
        boto3.client("ssm", region_name=REGION).put_parameter(
            Name=BOOTSTRAP_VERSION_PARAMETER, Value="30", Type="String"
        )
        yield clock


def upload_assets(template: dict[str, Any]) -> None:
    """Put a placeholder zip where each S3-hosted Lambda function's code is expected."""
    s3 = boto3.client("s3", region_name=REGION)
    bucket = f"cdk-hnb659fds-assets-{ACCOUNT}-{REGION}"
    if bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    for resource in template["Resources"].values():
        code = resource["Properties"].get("Code", {}) if "Properties" in resource else {}
        if resource["Type"] == "AWS::Lambda::Function" and "S3Key" in code:
            archive = io.BytesIO()
            with zipfile.ZipFile(archive, "w") as zipped:
                zipped.writestr("index.py", "def handler(event, context):\n    return None\n")
            s3.put_object(Bucket=bucket, Key=code["S3Key"], Body=archive.getvalue())


def without_mappings(template: dict[str, Any]) -> dict[str, Any]:
    """The template minus its event source mappings: moto's would consume the messages."""
    stripped = json.loads(json.dumps(template))
    stripped["Resources"] = {
        logical_id: resource
        for logical_id, resource in stripped["Resources"].items()
        if resource["Type"] != "AWS::Lambda::EventSourceMapping"
    }
    return stripped


def with_fifo_queue_names(template: dict[str, Any]) -> dict[str, Any]:
    """Name unnamed FIFO queues ``<logical id>.fifo``.

    CloudFormation appends ``.fifo`` to the names it generates for FIFO queues; moto's
    CloudFormation does not, and SQS refuses the name. This stands in for CloudFormation.
    """
    named = json.loads(json.dumps(template))
    for logical_id, resource in named["Resources"].items():
        properties = resource.get("Properties", {})
        if resource["Type"] == "AWS::SQS::Queue" and properties.get("FifoQueue"):
            properties.setdefault("QueueName", f"{logical_id}.fifo")
    return named


def deploy(name: str, template: dict[str, Any]) -> dict[str, str]:
    """Create the stack through moto's CloudFormation; return {logical id: physical id}."""
    template = with_fifo_queue_names(template)
    upload_assets(template)
    cloudformation = boto3.client("cloudformation", region_name=REGION)
    cloudformation.create_stack(
        StackName=name, TemplateBody=json.dumps(template), Capabilities=["CAPABILITY_IAM"]
    )
    (stack,) = cloudformation.describe_stacks(StackName=name)["Stacks"]
    assert stack["StackStatus"] == "CREATE_COMPLETE", stack.get("StackStatusReason")
    resources = cloudformation.list_stack_resources(StackName=name)["StackResourceSummaries"]
    return {r["LogicalResourceId"]: r.get("PhysicalResourceId", "") for r in resources}


def queue_attributes(queue_url: str) -> dict[str, str]:
    sqs = boto3.client("sqs", region_name=REGION)
    attributes: dict[str, str] = sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["All"]
    )["Attributes"]
    return attributes


def drain(queue_url: str) -> list[dict[str, Any]]:
    """Receive every visible message of a queue (used on the dead-letter queue)."""
    sqs = boto3.client("sqs", region_name=REGION)
    messages: list[dict[str, Any]] = []
    while batch := sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"]
    ).get("Messages", []):
        messages.extend(batch)
    return messages


def lambda_record(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    """An SQS message as Lambda puts it in the event's Records."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {},
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": REGION,
    }


@dataclass
class FakeLambdaContext:
    function_name: str = "consumer"
    aws_request_id: str = "request"
    memory_limit_in_mb: int = 128
    remaining_millis: int = 1000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_millis


Handler = Callable[[dict[str, Any], Any], Any]


@dataclass
class SimulatedSqsPoller:
    """Lambda's SQS poller, in virtual time.

    Each of `pollers` concurrent pollers receives up to `batch_size` messages, invokes
    `handler` with them, and is busy for the sum of `record_seconds(record)` over the batch
    (records are processed one after the other). When the invocation ends:

    - it ran past `function_timeout` or raised: nothing is deleted (the whole batch returns);
    - with `report_batch_item_failures`: all but the returned ``batchItemFailures`` are deleted;
    - otherwise: the whole batch is deleted.

    A poller that receives nothing polls again `poll_interval` seconds later.
    """

    clock: VirtualClock
    queue_url: str
    handler: Handler
    batch_size: int
    report_batch_item_failures: bool
    function_timeout: float
    record_seconds: Callable[[dict[str, Any]], float] = lambda _record: 0.0
    pollers: int = 2
    poll_interval: float = 1.0
    invocations: list[list[str]] = field(default_factory=list)
    """The message ids of each invocation, in order."""

    def run(self, seconds: float) -> None:
        """Simulate `seconds` of queue time, then stop (in-flight invocations are dropped)."""
        sqs = boto3.client("sqs", region_name=REGION)
        queue_arn = queue_attributes(self.queue_url)["QueueArn"]
        end = self.clock.now + seconds
        sequence = itertools.count()
        events: list[tuple[float, int, int, list[dict[str, Any]] | None]] = [
            (self.clock.now, next(sequence), poller, None) for poller in range(self.pollers)
        ]
        while events:
            at, _, poller, batch = heapq.heappop(events)
            if at > end:
                break
            self.clock.now = at
            if batch is None:  # an idle poller polls
                messages = sqs.receive_message(
                    QueueUrl=self.queue_url,
                    MaxNumberOfMessages=self.batch_size,
                    AttributeNames=["All"],
                ).get("Messages", [])
                if not messages:
                    heapq.heappush(events, (at + self.poll_interval, next(sequence), poller, None))
                    continue
                records = [lambda_record(m, queue_arn) for m in messages]
                self.invocations.append([r["messageId"] for r in records])
                busy = sum(self.record_seconds(r) for r in records)
                finish = at + min(busy, self.function_timeout)
                heapq.heappush(events, (finish, next(sequence), poller, records))
            else:  # the poller's invocation ends
                timed_out = sum(self.record_seconds(r) for r in batch) > self.function_timeout
                delete = [] if timed_out else self._succeeded(batch)
                for record in delete:
                    sqs.delete_message(
                        QueueUrl=self.queue_url, ReceiptHandle=record["receiptHandle"]
                    )
                heapq.heappush(events, (at, next(sequence), poller, None))

    def _succeeded(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        try:
            response = self.handler({"Records": records}, FakeLambdaContext())
        except Exception:
            return []
        if not self.report_batch_item_failures:
            return records
        failed = {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}
        return [r for r in records if r["messageId"] not in failed]

    def deliveries(self) -> dict[str, int]:
        """How many invocations each message id was given to."""
        counts: dict[str, int] = {}
        for invocation in self.invocations:
            for message_id in invocation:
                counts[message_id] = counts.get(message_id, 0) + 1
        return counts
