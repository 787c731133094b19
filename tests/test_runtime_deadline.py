"""stop_before_deadline inside real Powertools processors, with a context whose time runs down."""

from __future__ import annotations

import asyncio
import logging
import math
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest
from aws_lambda_powertools.utilities.batch import (
    AsyncBatchProcessor,
    BatchProcessor,
    EventType,
    SqsFifoPartialProcessor,
    async_process_partial_response,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

from safe_queue.runtime import DeadlineReached, stop_before_deadline

from .sqs_events import sqs_record


@dataclass
class RunningDownContext:
    """A Lambda context of a `timeout`-second function; work moves its clock on."""

    timeout: float = 180.0
    elapsed: float = 0.0
    function_name: str = "render"
    aws_request_id: str = "request"
    memory_limit_in_mb: int = 128

    def get_remaining_time_in_millis(self) -> int:
        return int((self.timeout - self.elapsed) * 1000)


@dataclass
class Work:
    """A record handler taking `seconds` of the context's time per record."""

    context: RunningDownContext
    seconds: float = 30.0
    started: list[str] = field(default_factory=list)

    def __call__(self, record: Any) -> str:
        self.started.append(record.message_id)
        self.context.elapsed += self.seconds
        return "done"


def batch(count: int, *, groups: str = "") -> dict[str, Any]:
    """`count` records; with `groups` ("AB"), FIFO records cycling through those groups."""
    records = []
    for n in range(count):
        made = sqs_record({"n": n})
        made["messageId"] = f"m-{n + 1}"
        if groups:
            made["attributes"]["MessageGroupId"] = groups[n % len(groups)]
        records.append(made)
    return {"Records": records}


def failed_ids(response: dict[str, Any]) -> list[str]:
    return [f["itemIdentifier"] for f in response["batchItemFailures"]]


def test_records_that_would_start_too_late_are_reported_failed_never_started():
    # GIVEN 10 records of 30 s each on a 180 s function, with a 35 s margin
    context = RunningDownContext(timeout=180)
    work = Work(context, seconds=30)
    processor = BatchProcessor(event_type=EventType.SQS)
    event = batch(10)
    # WHEN Powertools processes the batch
    response = process_partial_response(
        event=event,
        record_handler=stop_before_deadline(work, context=context, margin=35),
        processor=processor,
        context=context,
    )
    # THEN records 1-5 ran (the 6th would start with 30 s left), 6-10 were reported failed
    assert work.started == ["m-1", "m-2", "m-3", "m-4", "m-5"]
    assert failed_ids(response) == ["m-6", "m-7", "m-8", "m-9", "m-10"]
    # AND the invocation ended 30 s before the timeout, so Lambda deletes the five done
    assert context.get_remaining_time_in_millis() == 30_000
    reasons = [exception[1] for exception in processor.exceptions]
    assert all(isinstance(reason, DeadlineReached) for reason in reasons)
    assert [reason.message_id for reason in reasons] == failed_ids(response)  # type: ignore[union-attr]


def test_without_it_the_batch_runs_past_the_timeout():
    # The contrast: the same batch, unguarded, needs 300 s of a 180 s function.
    context = RunningDownContext(timeout=180)
    work = Work(context, seconds=30)
    process_partial_response(
        event=batch(10),
        record_handler=work,
        processor=BatchProcessor(event_type=EventType.SQS),
        context=context,
    )
    assert context.get_remaining_time_in_millis() < 0  # Lambda would have killed it at 180 s


def test_the_record_handler_keeps_its_lambda_context_argument():
    # GIVEN a record handler that asks Powertools for the Lambda context
    context = RunningDownContext()
    seen: list[Any] = []

    def record_handler(record: Any, lambda_context: Any) -> None:
        seen.append(lambda_context)

    # WHEN wrapped  THEN Powertools still passes it (the wrapper keeps the signature)
    process_partial_response(
        event=batch(2),
        record_handler=stop_before_deadline(record_handler, context=context, margin=10),
        processor=BatchProcessor(event_type=EventType.SQS),
        context=context,
    )
    assert seen == [context, context]


def test_fifo_the_rest_of_the_batch_stops_at_the_first_record_not_started():
    # GIVEN a FIFO batch of groups A and B interleaved, 40 s per record, 180 s function
    context = RunningDownContext(timeout=180)
    work = Work(context, seconds=40)
    event = batch(8, groups="AB")
    # WHEN SqsFifoPartialProcessor runs it with a 50 s margin
    response = process_partial_response(
        event=event,
        record_handler=stop_before_deadline(work, context=context, margin=50),
        processor=SqsFifoPartialProcessor(),
        context=context,
    )
    # THEN 4 records ran (the 4th started with 60 s left; the 5th would start with 20 s)
    assert work.started == ["m-1", "m-2", "m-3", "m-4"]
    # AND from the first one not started on, every record is reported, in order
    assert failed_ids(response) == ["m-5", "m-6", "m-7", "m-8"]


def test_fifo_skip_group_on_error_stops_every_group_once_time_is_up():
    # GIVEN skip_group_on_error=True: a failure skips only its own group's records
    context = RunningDownContext(timeout=180)
    work = Work(context, seconds=40)
    response = process_partial_response(
        event=batch(8, groups="AB"),
        record_handler=stop_before_deadline(work, context=context, margin=50),
        processor=SqsFifoPartialProcessor(skip_group_on_error=True),
        context=context,
    )
    # THEN the other group is not processed on borrowed time either: each group keeps a
    # prefix processed and the rest reported, so no group loses its order
    assert work.started == ["m-1", "m-2", "m-3", "m-4"]
    assert failed_ids(response) == ["m-5", "m-6", "m-7", "m-8"]


def test_once_stopped_it_stays_stopped():
    context = RunningDownContext(timeout=100, elapsed=80)
    handle = stop_before_deadline(lambda record: "ran", context=context, margin=30)
    with pytest.raises(DeadlineReached):
        handle({"messageId": "m-1"})
    context.elapsed = 0  # a context that says otherwise afterwards
    with pytest.raises(DeadlineReached, match="record m-2 not started"):
        handle({"messageId": "m-2"})


def test_one_warning_when_it_first_stops(caplog: pytest.LogCaptureFixture):
    context = RunningDownContext(timeout=180, elapsed=170)
    with caplog.at_level(logging.WARNING):
        process_partial_response(
            event=batch(3),
            record_handler=stop_before_deadline(Work(context), context=context, margin=35),
            processor=BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False),
            context=context,
        )
    warnings = [r.getMessage() for r in caplog.records if r.name == "safe_queue.runtime.deadline"]
    assert warnings == [
        "safe_queue deadline: 10.0 s left, below the margin of 35 s: record m-1 and every "
        "record after it are reported failed without being started"
    ]


def test_a_batch_with_no_time_at_all_fails_whole_and_nothing_runs():
    # Every record refused: Powertools raises (its default), Lambda returns the whole batch.
    context = RunningDownContext(timeout=180, elapsed=170)
    work = Work(context)
    with pytest.raises(BatchProcessingError):
        process_partial_response(
            event=batch(3),
            record_handler=stop_before_deadline(work, context=context, margin=35),
            processor=BatchProcessor(event_type=EventType.SQS),
            context=context,
        )
    assert work.started == []


def test_an_async_record_handler_is_guarded_too():
    context = RunningDownContext(timeout=180)
    started: list[str] = []

    async def record_handler(record: Any) -> str:
        started.append(record.message_id)
        context.elapsed += 100
        await asyncio.sleep(0)
        return "done"

    guarded = stop_before_deadline(record_handler, context=context, margin=50)
    assert asyncio.iscoroutinefunction(guarded)
    response = async_process_partial_response(
        event=batch(3),
        record_handler=guarded,
        processor=AsyncBatchProcessor(event_type=EventType.SQS),
        context=context,
    )
    # m-1 starts with 180 s left, m-2 with 80 s; m-3 would start with none
    assert started == ["m-1", "m-2"]
    assert failed_ids(response) == ["m-3"]


def test_deadline_reached_carries_its_numbers_and_pickles():
    error = DeadlineReached("m-9", 12.34, 35)
    assert (error.message_id, error.remaining, error.margin) == ("m-9", 12.34, 35)
    assert str(error) == (
        "record m-9 not started: 12.3 s left before the function times out, below the margin "
        "of 35 s; reported failed, it comes back to be processed by a later invocation"
    )
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


@pytest.mark.parametrize("margin", [0, -1, math.nan, math.inf, True, "35", None])
def test_a_margin_that_is_not_a_positive_number_is_refused(margin: Any):
    with pytest.raises(
        ValueError, match=r"^margin: got .*; allowed: a number of seconds greater than 0\. Fix: "
    ):
        stop_before_deadline(lambda record: None, context=RunningDownContext(), margin=margin)


def test_a_missing_context_or_handler_is_refused():
    with pytest.raises(
        TypeError, match="context: got a NoneType without get_remaining_time_in_millis"
    ):
        stop_before_deadline(lambda record: None, context=None, margin=35)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="record_handler: got a str; expected the function"):
        stop_before_deadline("handler", context=RunningDownContext(), margin=35)


def test_inside_the_guard_the_diagnosis_sees_only_the_records_that_run(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
):
    # GIVEN redelivered records, a RedeliveryDiagnosis wrapped inside the deadline guard
    from safe_queue.runtime import RedeliveryDiagnosis

    context = RunningDownContext(timeout=180)
    event = batch(4)
    for made in event["Records"]:
        made["attributes"]["ApproximateReceiveCount"] = "2"
    diagnosis = RedeliveryDiagnosis(visibility_timeout=60, logger=logging.getLogger("diagnosis"))
    work = Work(context, seconds=60)
    # WHEN two records of 60 s fit before the 70 s margin of the 180 s function
    with caplog.at_level(logging.WARNING, logger="diagnosis"):
        response = process_partial_response(
            event=event,
            record_handler=stop_before_deadline(diagnosis(work), context=context, margin=70),
            processor=BatchProcessor(event_type=EventType.SQS),
            context=context,
        )
    # THEN only those two were diagnosed; the two not started will be when they run
    diagnosed = [r.getMessage() for r in caplog.records if r.name == "diagnosis"]
    assert len(diagnosed) == 2
    assert '"message_id": "m-1"' in diagnosed[0]
    assert '"message_id": "m-2"' in diagnosed[1]
    assert failed_ids(response) == ["m-3", "m-4"]
    assert len(capsys.readouterr().out.splitlines()) == 2  # one EMF metric line each
