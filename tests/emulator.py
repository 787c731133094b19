"""Deploy synthesized templates to moto, and drive the queues like Lambda's SQS poller.

moto's SQS implements visibility timeouts, receive counts and redrive with wall-clock
time. `VirtualClock` replaces that clock, so minutes of queue time pass instantly and the
tests are deterministic. Lambda does not run here (no Docker), so `SimulatedSqsPoller`
plays its SQS poller: several concurrent pollers, each receiving up to the batch size,
holding a partial batch for the batching window, invoking the handler (whose records take
a simulated time each, one after the other) within a concurrency limit, retrying throttled
invokes while the batch's lease runs (`assumed_throttle_backoff`: an assumption, not AWS's
schedule), then deleting what succeeded.

From moto: visibility timeouts, receive counts, redrive to the dead-letter queue, and FIFO
message groups (a group is held while one of its messages is in flight; a group's messages
come in the order sent). Modelled here: everything Lambda does, and one FIFO correction
(`release_expired_leases`: moto holds a group on an expired lease until a receive reaches
it, and would then hand out the group's later messages first).
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


class FunctionTimedOut(BaseException):
    """Lambda killing the invocation at its timeout (a BaseException: no handler catches it)."""


@dataclass
class VirtualLambdaContext:
    """A Lambda context whose remaining time runs down as the handler's work runs.

    The handler's work calls `spend(seconds)`: the invocation's elapsed time and the
    virtual clock move on by that much, so SQS calls the handler makes afterwards happen
    at the right virtual time. Work that would end past `function_timeout` is cut off
    there with `FunctionTimedOut`, as Lambda kills the invocation.
    """

    clock: VirtualClock
    function_timeout: float
    elapsed: float = 0.0
    function_name: str = "consumer"
    aws_request_id: str = "request"
    memory_limit_in_mb: int = 128

    def get_remaining_time_in_millis(self) -> int:
        return int(max(0.0, self.function_timeout - self.elapsed) * 1000)

    def spend(self, seconds: float) -> None:
        """Do `seconds` of work; raise FunctionTimedOut when the timeout comes first."""
        step = min(seconds, self.function_timeout - self.elapsed)
        self.elapsed += step
        self.clock.now += step
        if step < seconds:
            raise FunctionTimedOut(f"timed out after {self.function_timeout:g} s")


Handler = Callable[[dict[str, Any], Any], Any]


def assumed_throttle_backoff(attempt: int) -> float:
    """Seconds before retrying an invoke that was throttled `attempt` times in a row.

    **An assumption, not AWS's schedule.** AWS documents that a throttled SQS batch is
    retried "with backoff" until the messages' visibility timeout runs out, then dropped
    (they reappear in the queue); it does not publish the delays. This model waits 1 s,
    2 s, 4 s, then 5 s between attempts.

    >>> [assumed_throttle_backoff(n) for n in range(1, 6)]
    [1.0, 2.0, 4.0, 5.0, 5.0]
    """
    return float(min(2 ** (attempt - 1), 5))


@dataclass
class Invocation:
    """One invocation of the handler: when it ran, and what it was given."""

    received: float
    """When its poller received the batch (its lease started)."""
    start: float
    end: float
    message_ids: list[str]
    groups: frozenset[str]
    """The FIFO message group ids of its records (empty on standard queues)."""


@dataclass
class _Batch:
    records: list[dict[str, Any]]
    received_at: float
    throttled: int = 0
    to_delete: list[dict[str, Any]] | None = None
    """With `timed_handler`: what the invocation deletes when it ends (decided as it ran)."""


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

    Batching window: a poller that received fewer than `batch_size` messages holds them for
    `batching_window` seconds before invoking (the window's worst case for the lease; the
    model does not top the batch up).

    Throttling: with `concurrency_limit`, at most that many invocations run at once (the
    function's reserved concurrency). An invoke beyond it is throttled and retried after
    `throttle_backoff(n)` seconds (n: throttles of this batch so far), as long as the
    batch's lease (receipt + the queue's visibility timeout) runs; once it has run out the
    batch is dropped without an invocation (AWS: "Lambda continues to retry the message
    until the message's timestamp exceeds your queue's visibility timeout, at which point
    Lambda drops the message") and its messages, visible again, go to the next receive. A
    throttled retry is not a receive: only receives raise ``ApproximateReceiveCount``.

    FIFO queues: moto's SQS holds a message group while one of its messages is in flight
    (received, not deleted, lease running) and returns a group's messages in the order
    they were sent; the poller relies on both. (`Invocation.groups` lets tests check it.)
    Where moto is not faithful, the poller models SQS: moto releases a message whose lease
    ran out only when a receive reaches it, and until then its group stays held. When
    several messages of a group expire together (a2..a5 reported failed in one batch),
    the receive skips a2, a3 and a4 and hands out a5 first. Before each receive the
    poller therefore releases every expired lease (`release_expired_leases`), as SQS does.
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
    batching_window: float = 0.0
    concurrency_limit: int | None = None
    throttle_backoff: Callable[[int], float] = assumed_throttle_backoff
    invocations: list[list[str]] = field(default_factory=list)
    """The message ids of each invocation, in order."""
    timeline: list[Invocation] = field(default_factory=list)
    """Each invocation with its start, end and message groups, in order of start."""
    receives: list[tuple[str, int]] = field(default_factory=list)
    """(message id, its ApproximateReceiveCount) for each time a message was received."""
    throttles: list[tuple[float, list[str]]] = field(default_factory=list)
    """(time, message ids) for each throttled invoke."""
    dropped: list[list[str]] = field(default_factory=list)
    """The message ids of each batch dropped because its lease ran out while throttled."""
    timed_handler: bool = False
    """Run the handler as the invocation starts, with a `VirtualLambdaContext`.

    The handler's work takes the time it `spend`s (`record_seconds` is not used), so the
    handler can watch its remaining time; the invocation lasts that long, and is cut off
    at `function_timeout` (nothing deleted). Otherwise the handler runs in no time when
    the invocation ends, and the invocation lasts the sum of `record_seconds`.
    """
    timed_out: list[list[str]] = field(default_factory=list)
    """With `timed_handler`: the message ids of each invocation cut off at its timeout."""

    def run(self, seconds: float) -> None:
        """Simulate `seconds` of queue time, then stop (in-flight invocations are dropped)."""
        sqs = boto3.client("sqs", region_name=REGION)
        attributes = queue_attributes(self.queue_url)
        queue_arn = attributes["QueueArn"]
        lease = float(attributes["VisibilityTimeout"])
        end = self.clock.now + seconds
        sequence = itertools.count()
        running = 0
        # (time, tie-break, poller, what happens, the poller's batch)
        events: list[tuple[float, int, int, str, _Batch | None]] = [
            (self.clock.now, next(sequence), poller, "poll", None) for poller in range(self.pollers)
        ]

        def schedule(at: float, poller: int, what: str, batch: _Batch | None = None) -> None:
            heapq.heappush(events, (at, next(sequence), poller, what, batch))

        while events:
            at, _, poller, what, batch = heapq.heappop(events)
            if at > end:
                break
            self.clock.now = at
            if what == "poll":
                release_expired_leases(self.queue_url)
                messages = sqs.receive_message(
                    QueueUrl=self.queue_url,
                    MaxNumberOfMessages=self.batch_size,
                    AttributeNames=["All"],
                ).get("Messages", [])
                if not messages:
                    schedule(at + self.poll_interval, poller, "poll")
                    continue
                self.receives.extend(
                    (m["MessageId"], int(m["Attributes"]["ApproximateReceiveCount"]))
                    for m in messages
                )
                received = _Batch([lambda_record(m, queue_arn) for m in messages], at)
                full = len(messages) >= self.batch_size
                schedule(at if full else at + self.batching_window, poller, "invoke", received)
                continue
            assert batch is not None
            message_ids = [r["messageId"] for r in batch.records]
            if what == "invoke":
                if at >= batch.received_at + lease:  # dropped: the messages are visible again
                    self.dropped.append(message_ids)
                    schedule(at, poller, "poll")
                elif self.concurrency_limit is not None and running >= self.concurrency_limit:
                    self.throttles.append((at, message_ids))
                    batch.throttled += 1
                    schedule(at + self.throttle_backoff(batch.throttled), poller, "invoke", batch)
                else:
                    running += 1
                    if self.timed_handler:
                        busy = self._run_timed(batch)
                    else:
                        busy = sum(self.record_seconds(r) for r in batch.records)
                    finish = at + min(busy, self.function_timeout)
                    self.invocations.append(message_ids)
                    self.timeline.append(
                        Invocation(
                            batch.received_at, at, finish, message_ids, _groups(batch.records)
                        )
                    )
                    schedule(finish, poller, "end", batch)
            else:  # the invocation ends
                running -= 1
                if batch.to_delete is not None:  # timed_handler: decided when it ran
                    delete = batch.to_delete
                else:
                    timed_out = sum(self.record_seconds(r) for r in batch.records) > (
                        self.function_timeout
                    )
                    delete = [] if timed_out else self._succeeded(batch.records)
                for record in delete:
                    sqs.delete_message(
                        QueueUrl=self.queue_url, ReceiptHandle=record["receiptHandle"]
                    )
                schedule(at, poller, "poll")

    def _run_timed(self, batch: _Batch) -> float:
        """Run the handler now in virtual time; return how long the invocation lasted."""
        started = self.clock.now
        context = VirtualLambdaContext(self.clock, self.function_timeout)
        try:
            response = self.handler({"Records": batch.records}, context)
        except FunctionTimedOut:
            self.timed_out.append([r["messageId"] for r in batch.records])
            batch.to_delete = []
        except Exception:
            batch.to_delete = []
        else:
            batch.to_delete = self._kept(batch.records, response)
        finally:
            self.clock.now = started  # the event loop goes on from the start
        return context.elapsed

    def _kept(self, records: list[dict[str, Any]], response: Any) -> list[dict[str, Any]]:
        """The records a returned invocation deletes (all, or all but the reported ones)."""
        if not self.report_batch_item_failures:
            return records
        failed = {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}
        return [r for r in records if r["messageId"] not in failed]

    def _succeeded(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # The handler sees the invocation's full time left, as its first record does.
        context = FakeLambdaContext(remaining_millis=int(self.function_timeout * 1000))
        try:
            response = self.handler({"Records": records}, context)
        except Exception:
            return []
        return self._kept(records, response)

    def deliveries(self) -> dict[str, int]:
        """How many invocations each message id was given to."""
        counts: dict[str, int] = {}
        for invocation in self.invocations:
            for message_id in invocation:
                counts[message_id] = counts.get(message_id, 0) + 1
        return counts

    def receive_counts(self) -> dict[str, int]:
        """Each message id's highest ``ApproximateReceiveCount`` seen (times received)."""
        counts: dict[str, int] = {}
        for message_id, count in self.receives:
            counts[message_id] = max(counts.get(message_id, 0), count)
        return counts


def release_expired_leases(queue_url: str) -> None:
    """Release the message groups held by messages whose lease has run out (FIFO queues).

    moto keeps a received message in its queue's in-flight set until a receive reaches it
    again, even after its visibility timeout has passed, and a FIFO message group with a
    message in that set is skipped. On SQS an expired lease holds nothing. This is the one
    place the emulator reaches into moto's SQS state.
    """
    queue = moto.sqs.models.sqs_backends[ACCOUNT][REGION].get_queue(queue_url.rsplit("/", 1)[1])
    if queue.fifo_queue:
        queue.pending_messages.difference_update(
            {message for message in queue.pending_messages if message.visible}
        )


def _groups(records: list[dict[str, Any]]) -> frozenset[str]:
    return frozenset(
        r["attributes"]["MessageGroupId"] for r in records if "MessageGroupId" in r["attributes"]
    )
