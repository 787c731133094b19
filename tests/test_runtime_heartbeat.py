"""VisibilityHeartbeat: on moto in real time (small numbers), and beat by beat with a fake client."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from moto import mock_aws

from safe_queue.runtime import HEARTBEAT_THREAD_NAME, VisibilityHeartbeat
from safe_queue.runtime import _sqs as sqs_module

from .emulator import FakeLambdaContext
from .sqs_events import QUEUE_ARN, sqs_record

REGION = "eu-west-1"
NOW = 1_764_495_000.0  # the generated records were first received at NOW + 0.1 s


def heartbeat_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == HEARTBEAT_THREAD_NAME]


@dataclass
class RecordingSqs:
    """Answers ChangeMessageVisibilityBatch; fails the receipt handles listed in `stale`."""

    stale: set[str] = field(default_factory=set)
    calls: list[dict[str, Any]] = field(default_factory=list)
    meta: Any = field(
        default_factory=lambda: SimpleNamespace(endpoint_url="https://sqs.eu-west-1.amazonaws.com")
    )

    def change_message_visibility_batch(self, **request: Any) -> dict[str, Any]:
        self.calls.append(request)
        failed = [
            {"Id": e["Id"], "SenderFault": True, "Code": "ReceiptHandleIsInvalid", "Message": "x"}
            for e in request["Entries"]
            if e["ReceiptHandle"] in self.stale
        ]
        ok = [{"Id": e["Id"]} for e in request["Entries"] if e["ReceiptHandle"] not in self.stale]
        return {"Successful": ok, "Failed": failed}


@pytest.fixture
def sqs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield boto3.client("sqs", region_name=REGION)
    sqs_module._clients.clear()  # a default client made inside the mock stays there


def receive_as_lambda(sqs: Any, url: str, count: int = 1) -> list[dict[str, Any]]:
    """Receive like Lambda's poller and shape the messages as event["Records"]."""
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    messages = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=count, MessageSystemAttributeNames=["All"]
    )["Messages"]
    assert len(messages) == count
    return [
        {
            "messageId": m["MessageId"],
            "receiptHandle": m["ReceiptHandle"],
            "body": m["Body"],
            "attributes": m["Attributes"],
            "eventSourceARN": arn,
            "awsRegion": REGION,
        }
        for m in messages
    ]


def test_a_message_stays_hidden_while_the_block_runs_and_returns_after_it(sqs: Any):
    # GIVEN a message received from a queue with a 2 s visibility timeout
    url = sqs.create_queue(QueueName="jobs", Attributes={"VisibilityTimeout": "2"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="long job")
    records = receive_as_lambda(sqs, url)

    # WHEN 3.5 s of work (longer than the queue's 2 s) run under a heartbeat (no
    # sqs_client: the default one for the region)
    seen_during_work = []
    with VisibilityHeartbeat(records, interval=0.5, extension=2):
        assert len(heartbeat_threads()) == 1
        deadline = time.monotonic() + 3.5
        while time.monotonic() < deadline:
            seen_during_work += sqs.receive_message(QueueUrl=url).get("Messages", [])
            time.sleep(0.25)

    # THEN nobody could receive it during the work, and no heartbeat thread is left
    assert seen_during_work == []
    assert heartbeat_threads() == []
    # AND, not deleted, it comes back within one extension (2 s) after the block
    ended = time.monotonic()
    back = []
    while not back and time.monotonic() - ended < 3:
        back = sqs.receive_message(QueueUrl=url).get("Messages", [])
        time.sleep(0.1)
    assert [m["Body"] for m in back] == ["long job"]


def test_the_thread_is_joined_when_the_block_raises():
    # GIVEN a heartbeat on one record  WHEN the block raises
    with (
        pytest.raises(RuntimeError, match="boom"),
        VisibilityHeartbeat(
            [sqs_record("x")], interval=0.05, extension=1, sqs_client=RecordingSqs()
        ),
    ):
        raise RuntimeError("boom")
    # THEN the exception goes on and the thread is gone
    assert heartbeat_threads() == []


@pytest.mark.parametrize(
    ("interval", "extension", "message"),
    [
        (60, 60, r"interval: got 60.0 s, not below extension \(60.0 s\).*interval=20"),
        (90, 60, r"interval: got 90.0 s, not below extension"),
        (20, 43_201, r"extension: got 43201.0 s; SQS allows at most 43200 s"),
        (0, 60, r"interval: got 0; expected a number of seconds greater than 0"),
        (20, float("nan"), r"extension: got nan"),
    ],
)
def test_bad_settings_are_refused_with_the_fix(interval: float, extension: float, message: str):
    with pytest.raises(ValueError, match=message):
        VisibilityHeartbeat([sqs_record("x")], interval=interval, extension=extension)


def test_records_are_extended_in_batches_of_ten_on_the_url_of_their_queue():
    # GIVEN 23 records of one queue
    client = RecordingSqs()
    records = [sqs_record(i) for i in range(23)]
    heartbeat = VisibilityHeartbeat(
        records, interval=20, extension=60, sqs_client=client, clock=lambda: NOW
    )
    # WHEN it beats once
    heartbeat.beat()
    # THEN three calls of 10, 10 and 3 entries, each asking for 60 s
    assert [len(call["Entries"]) for call in client.calls] == [10, 10, 3]
    assert {call["QueueUrl"] for call in client.calls} == {
        "https://sqs.eu-west-1.amazonaws.com/123456789012/invoice-render"
    }
    entries = [entry for call in client.calls for entry in call["Entries"]]
    assert [e["ReceiptHandle"] for e in entries] == [r["receiptHandle"] for r in records]
    assert {e["VisibilityTimeout"] for e in entries} == {60}


def test_a_fractional_extension_is_rounded_up_to_whole_seconds():
    client = RecordingSqs()
    VisibilityHeartbeat(
        [sqs_record("x")], interval=0.5, extension=2.5, sqs_client=client, clock=lambda: NOW
    ).beat()
    assert client.calls[0]["Entries"][0]["VisibilityTimeout"] == 3


def test_it_never_asks_past_twelve_hours_since_the_first_receive(caplog: pytest.LogCaptureFixture):
    # GIVEN a record first received 100 s short of 12 hours ago
    client = RecordingSqs()
    record = sqs_record("x")
    first = NOW - 43_200 + 100
    record["attributes"]["ApproximateFirstReceiveTimestamp"] = str(int(first * 1000))
    clock = [NOW]
    heartbeat = VisibilityHeartbeat(
        [record], interval=20, extension=600, sqs_client=client, clock=lambda: clock[0]
    )
    # WHEN it beats now  THEN it asks for the 100 s left, not 600
    heartbeat.beat()
    assert client.calls[-1]["Entries"][0]["VisibilityTimeout"] == 100
    # WHEN it beats once the 12 hours are over  THEN it asks nothing and says why, once
    clock[0] = NOW + 100
    with caplog.at_level(logging.WARNING):
        heartbeat.beat()
        heartbeat.beat()
    assert len(client.calls) == 1
    assert [r.getMessage() for r in caplog.records if "12-hour" in r.getMessage()] == [
        f"safe_queue heartbeat: message {record['messageId']} reached the 12-hour visibility "
        "cap since its first receive; no further extension is possible"
    ]


def test_with_a_context_it_asks_no_more_than_the_remaining_time_plus_one_extension(
    caplog: pytest.LogCaptureFixture,
):
    # GIVEN a function with 5 s left and an extension of 60 s
    client = RecordingSqs()
    context = FakeLambdaContext(remaining_millis=5_000)
    heartbeat = VisibilityHeartbeat(
        [sqs_record("x")],
        interval=20,
        extension=60,
        context=context,
        sqs_client=client,
        clock=lambda: NOW,
    )
    # WHEN it beats  THEN the lease asked ends within one extension of the function's end
    heartbeat.beat()
    assert 0 < client.calls[0]["Entries"][0]["VisibilityTimeout"] <= 5 + 60
    # WHEN the function is out of time  THEN it asks nothing more and says so
    context.remaining_millis = 0
    with caplog.at_level(logging.WARNING):
        heartbeat.beat()
    assert len(client.calls) == 1
    assert "the function is out of time" in caplog.text


def test_a_stale_receipt_handle_stops_that_record_with_one_warning(
    caplog: pytest.LogCaptureFixture,
):
    # GIVEN two records whose first handle is no longer valid
    stale, fresh = sqs_record("stale"), sqs_record("fresh")
    client = RecordingSqs(stale={stale["receiptHandle"]})
    heartbeat = VisibilityHeartbeat(
        [stale, fresh], interval=20, extension=60, sqs_client=client, clock=lambda: NOW
    )
    # WHEN it beats three times
    with caplog.at_level(logging.WARNING, logger="safe_queue.runtime.heartbeat"):
        for _ in range(3):
            heartbeat.beat()
    # THEN the stale one is dropped after the first refusal, with one warning naming it
    handles = [[e["ReceiptHandle"] for e in call["Entries"]] for call in client.calls]
    assert handles == [
        [stale["receiptHandle"], fresh["receiptHandle"]],
        [fresh["receiptHandle"]],
        [fresh["receiptHandle"]],
    ]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert stale["messageId"] in warnings[0]
    assert "ReceiptHandleIsInvalid" in warnings[0]


def test_a_deleted_message_on_moto_stops_only_its_own_record(sqs: Any, caplog):
    # GIVEN two received messages, one of them already deleted
    url = sqs.create_queue(QueueName="jobs", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    for body in ("a", "b"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    records = receive_as_lambda(sqs, url, count=2)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=records[0]["receiptHandle"])
    heartbeat = VisibilityHeartbeat(records, interval=20, extension=60, sqs_client=sqs)
    # WHEN it beats twice
    with caplog.at_level(logging.WARNING, logger="safe_queue.runtime.heartbeat"):
        heartbeat.beat()
        heartbeat.beat()
    # THEN one warning for the deleted one; the other is still in flight
    assert len(caplog.records) == 1
    assert records[0]["messageId"] in caplog.records[0].getMessage()
    assert sqs.receive_message(QueueUrl=url).get("Messages", []) == []


def test_a_failed_call_is_logged_and_tried_again(caplog: pytest.LogCaptureFixture):
    class Flaky(RecordingSqs):
        def change_message_visibility_batch(self, **request: Any) -> dict[str, Any]:
            if not self.calls:
                self.calls.append(request)
                raise ConnectionError("network down")
            return super().change_message_visibility_batch(**request)

    client = Flaky()
    heartbeat = VisibilityHeartbeat(
        [sqs_record("x")], interval=20, extension=60, sqs_client=client, clock=lambda: NOW
    )
    with caplog.at_level(logging.WARNING):
        heartbeat.beat()
        heartbeat.beat()
    assert len(client.calls) == 2
    assert "network down" in caplog.text


def test_not_an_sqs_record_is_refused():
    record = sqs_record("x")
    record["eventSourceARN"] = "arn:aws:kinesis:eu-west-1:123456789012:stream/s"
    with pytest.raises(ValueError, match="eventSourceARN: got 'arn:aws:kinesis"):
        VisibilityHeartbeat([record], interval=20, extension=60)


def test_queue_arn_of_the_generated_records_is_the_one_used():
    assert sqs_record("x")["eventSourceARN"] == QUEUE_ARN
