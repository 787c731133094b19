"""Redelivery diagnosis on generated SQS events: one per cause class, with its log line and metric."""

from __future__ import annotations

import io
import json
import logging
import uuid
from typing import Any

import pytest
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from safe_queue.runtime import (
    VISIBILITY_TIMEOUT_ENV,
    RedeliveryCause,
    RedeliveryDiagnosis,
    diagnose_redelivery,
)

from .emulator import FakeLambdaContext
from .sqs_events import sqs_record

NOW = 1_764_600_000.0
VISIBILITY = 60


def redelivered(receive_count: int, seconds_since_first_receive: float) -> dict[str, Any]:
    record = sqs_record({"invoiceId": "inv_1"}, receive_count=receive_count)
    first_ms = int((NOW - seconds_since_first_receive) * 1000)
    record["attributes"]["ApproximateFirstReceiveTimestamp"] = str(first_ms)
    record["attributes"]["SentTimestamp"] = str(first_ms - 250)
    return record


def json_logger() -> tuple[Logger, io.StringIO]:
    """A Powertools Logger of its own (a fresh service name) writing into a buffer."""
    buffer = io.StringIO()
    logger = Logger(
        service=f"test-{uuid.uuid4().hex[:8]}", logger_handler=logging.StreamHandler(buffer)
    )
    return logger, buffer


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def emf_metrics(stdout: str) -> list[dict[str, Any]]:
    return [line for line in lines(stdout) if "_aws" in line]


@pytest.mark.parametrize(
    ("receive_count", "elapsed", "average_gap", "cause"),
    [
        (2, 5, 5.0, RedeliveryCause.RELEASED_EARLY),  # crash, or visibility set to 0
        (2, 62, 62.0, RedeliveryCause.LEASE_EXPIRED),  # ran past the 60 s lease
        (4, 183, 61.0, RedeliveryCause.LEASE_EXPIRED),  # three leases ran out, one after another
        (2, 600, 600.0, RedeliveryCause.EXTENDED),  # a heartbeat held it, or a backlog
    ],
)
def test_each_cause_class_gets_its_log_line_and_metric(
    capsys: pytest.CaptureFixture[str],
    receive_count: int,
    elapsed: float,
    average_gap: float,
    cause: RedeliveryCause,
):
    # GIVEN a record received `receive_count` times over `elapsed` seconds, a 60 s lease
    record = redelivered(receive_count, elapsed)
    logger, buffer = json_logger()
    diagnosis = RedeliveryDiagnosis(visibility_timeout=VISIBILITY, logger=logger, clock=lambda: NOW)

    # WHEN the diagnosis observes it
    result = diagnosis.observe(record)

    # THEN one JSON log line names the message, its counts, timestamps, gap and cause
    assert result is not None
    assert result.cause is cause
    [line] = lines(buffer.getvalue())
    assert line["message"] == "redelivery"
    assert line["level"] == "WARNING"
    attributes = record["attributes"]
    assert {k: line[k] for k in list(line) if k in result.as_log()} == {
        "message_id": record["messageId"],
        "queue_name": "invoice-render",
        "receive_count": receive_count,
        "sent_timestamp": int(attributes["SentTimestamp"]),
        "first_receive_timestamp": int(attributes["ApproximateFirstReceiveTimestamp"]),
        "average_gap_seconds": pytest.approx(average_gap, abs=0.01),
        "visibility_timeout": VISIBILITY,
        "cause": cause.value,
        "explanation": cause.explanation,
    }
    # AND one EMF metric Redeliveries = 1 with the cause as a dimension
    [metric] = emf_metrics(capsys.readouterr().out)
    directive = metric["_aws"]["CloudWatchMetrics"][0]
    assert directive["Namespace"] == "SafeQueue"
    assert directive["Metrics"] == [{"Name": "Redeliveries", "Unit": "Count"}]
    assert directive["Dimensions"] == [["QueueName", "Cause"]]
    assert (metric["Cause"], metric["QueueName"], metric["Redeliveries"]) == (
        cause.value,
        "invoice-render",
        [1.0],
    )


def test_a_first_delivery_writes_nothing(capsys: pytest.CaptureFixture[str]):
    logger, buffer = json_logger()
    diagnosis = RedeliveryDiagnosis(visibility_timeout=VISIBILITY, logger=logger, clock=lambda: NOW)
    assert diagnosis.observe(sqs_record("x", receive_count=1)) is None
    assert buffer.getvalue() == ""
    assert emf_metrics(capsys.readouterr().out) == []


def test_it_plugs_into_a_batch_processor(capsys: pytest.CaptureFixture[str]):
    # GIVEN a record handler wrapped by the diagnosis, that takes the Lambda context too
    logger, buffer = json_logger()
    seen: list[tuple[str, Any]] = []

    @RedeliveryDiagnosis(visibility_timeout=VISIBILITY, logger=logger, clock=lambda: NOW)
    def record_handler(record: SQSRecord, lambda_context: Any) -> None:
        seen.append((record.message_id, lambda_context))
        if record.body == "bad":
            raise ValueError("bad record")

    first, again, bad = sqs_record("ok"), redelivered(3, 120), sqs_record("bad")
    context = FakeLambdaContext()

    # WHEN Powertools processes a batch of a first delivery, a redelivery and a failure
    response = process_partial_response(
        event={"Records": [first, again, bad]},
        record_handler=record_handler,
        processor=BatchProcessor(event_type=EventType.SQS),
        context=context,  # type: ignore[arg-type]
    )

    # THEN the handler saw every record with the context, and the failure is still reported
    assert seen == [(r["messageId"], context) for r in (first, again, bad)]
    assert response == {"batchItemFailures": [{"itemIdentifier": bad["messageId"]}]}
    # AND only the redelivery was logged and counted
    assert [line["message_id"] for line in lines(buffer.getvalue())] == [again["messageId"]]
    assert [m["Cause"] for m in emf_metrics(capsys.readouterr().out)] == ["lease-expired"]


def test_the_visibility_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(VISIBILITY_TIMEOUT_ENV, "1110")
    assert RedeliveryDiagnosis(logger=logging.getLogger("x")).visibility_timeout == 1110


def test_without_a_visibility_timeout_it_says_how_to_give_one(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(VISIBILITY_TIMEOUT_ENV, raising=False)
    with pytest.raises(ValueError, match=r"SAFE_QUEUE_VISIBILITY_TIMEOUT is not set.*Pass"):
        RedeliveryDiagnosis()


@pytest.mark.parametrize("value", ["1.5", "soon", "-1", "43201"])
def test_a_bad_environment_value_is_refused(monkeypatch: pytest.MonkeyPatch, value: str):
    monkeypatch.setenv(VISIBILITY_TIMEOUT_ENV, value)
    with pytest.raises(ValueError, match=f"SAFE_QUEUE_VISIBILITY_TIMEOUT: got '{value}'"):
        RedeliveryDiagnosis()


def test_a_standard_logger_gets_the_json_object_as_its_message(caplog: pytest.LogCaptureFixture):
    diagnosis = RedeliveryDiagnosis(
        visibility_timeout=VISIBILITY, logger=logging.getLogger("consumer"), clock=lambda: NOW
    )
    with caplog.at_level(logging.WARNING, logger="consumer"):
        diagnosis.observe(redelivered(2, 5))
    [record] = caplog.records
    assert json.loads(record.getMessage())["cause"] == "released-early"


def test_powertools_records_and_models_are_read_like_dicts():
    record = redelivered(2, 62)
    from_dict = diagnose_redelivery(record, visibility_timeout=VISIBILITY, now=NOW)
    from_data_class = diagnose_redelivery(SQSRecord(record), visibility_timeout=VISIBILITY, now=NOW)
    from aws_lambda_powertools.utilities.parser.models import SqsRecordModel

    from_model = diagnose_redelivery(
        SqsRecordModel.model_validate(record), visibility_timeout=VISIBILITY, now=NOW
    )
    assert from_dict == from_data_class == from_model
    assert from_dict is not None
    assert from_dict.cause is RedeliveryCause.LEASE_EXPIRED
