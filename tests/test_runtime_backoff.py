"""FailureBackoff: the exact requests (botocore Stubber), refusals, the environment, Powertools.

The last test runs in real time against a moto server on 127.0.0.1, with delays of 1-2 s.
"""

from __future__ import annotations

import doctest
import json
import logging
import math
import random
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    SqsFifoPartialProcessor,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from botocore.stub import Stubber
from hypothesis import given
from hypothesis import strategies as st

from safe_queue.engine.budget import backoff_delay
from safe_queue.engine.limits import VISIBILITY_TIMEOUT_MAX
from safe_queue.retries import settings
from safe_queue.runtime import (
    BACKOFF_BASE_ENV,
    BACKOFF_CAP_ENV,
    BACKOFF_JITTER_ENV,
    FailureBackoff,
)
from safe_queue.runtime import _sqs as sqs_module

from . import moto_world
from .conftest import ROOT
from .sqs_events import QUEUE_ARN, sqs_record

moto_endpoint = moto_world.moto_endpoint
aws_environment = moto_world.aws_environment

REGION = "eu-west-1"
OTHER_ARN = "arn:aws:sqs:eu-west-1:123456789012:invoice-render-eu"
URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/invoice-render"
OTHER_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/invoice-render-eu"


@pytest.fixture(autouse=True)
def own_default_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """boto3's default session caches the credentials it found: keep this module's to itself."""
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)


def stubbed_client() -> tuple[Any, Stubber]:
    client = boto3.client(
        "sqs",
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    return client, Stubber(client)


def record(
    receive_count: int = 1, *, arn: str = QUEUE_ARN, group: str | None = None
) -> dict[str, Any]:
    made = sqs_record({"invoiceId": "inv"}, receive_count=receive_count)
    made["eventSourceARN"] = arn
    if group is not None:
        made["attributes"]["MessageGroupId"] = group
    return made


def failures(*records: dict[str, Any]) -> dict[str, Any]:
    return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records]}


def entries(*asks: tuple[dict[str, Any], int]) -> list[dict[str, Any]]:
    return [
        {"Id": str(i), "ReceiptHandle": r["receiptHandle"], "VisibilityTimeout": seconds}
        for i, (r, seconds) in enumerate(asks)
    ]


def ok(asks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"Successful": [{"Id": e["Id"]} for e in asks], "Failed": []}


class LowestDraw(random.Random):
    """Always draws the shortest delay (the worst case for riding out an outage)."""

    def randint(self, a: int, b: int) -> int:
        return a


# 1. The requests ---------------------------------------------------------------------------


def test_failed_records_get_the_ceiling_for_their_receive_count_ten_per_call():
    # GIVEN 23 failed records (receive counts 1..23) and 4 that succeeded, no jitter
    failed = [record(receive_count=n) for n in range(1, 24)]
    succeeded = [record(), record(receive_count=5), record(), record()]
    event = {"Records": [*succeeded[:2], *failed, *succeeded[2:]]}
    response = failures(*failed)
    client, stubber = stubbed_client()
    # THEN three calls, 10 + 10 + 3 entries in batch order, each min(900, 30 x 2^(n-1))
    asks = [(r, min(900, 30 * 2 ** (n - 1))) for n, r in enumerate(failed, start=1)]
    for start in (0, 10, 20):
        expected = entries(*asks[start : start + 10])
        stubber.add_response(
            "change_message_visibility_batch", ok(expected), {"QueueUrl": URL, "Entries": expected}
        )
    # WHEN the backoff is applied
    with stubber:
        returned = FailureBackoff(base=30, cap=900, jitter=False, sqs_client=client).apply(
            event, response
        )
        stubber.assert_no_pending_responses()
    # AND the response is returned as it was, the very object
    assert returned is response
    assert returned == failures(*failed)
    # AND the formula is the engine's, not a copy
    assert [seconds for _, seconds in asks] == [backoff_delay(30, 900, n) for n in range(1, 24)]


def test_records_are_grouped_by_queue():
    # GIVEN failures on two queues, interleaved
    a1, b1, a2, b2 = record(1), record(2, arn=OTHER_ARN), record(3), record(1, arn=OTHER_ARN)
    client, stubber = stubbed_client()
    first = entries((a1, 5), (a2, 20))
    second = entries((b1, 10), (b2, 5))
    stubber.add_response(
        "change_message_visibility_batch", ok(first), {"QueueUrl": URL, "Entries": first}
    )
    stubber.add_response(
        "change_message_visibility_batch", ok(second), {"QueueUrl": OTHER_URL, "Entries": second}
    )
    # WHEN applied  THEN one call per queue, with that queue's URL (from its ARN)
    with stubber:
        FailureBackoff(base=5, cap=60, jitter=False, sqs_client=client).apply(
            {"Records": [a1, b1, a2, b2]}, failures(a1, b1, a2, b2)
        )
        stubber.assert_no_pending_responses()


def test_nothing_is_called_without_failures():
    client, stubber = stubbed_client()
    backoff = FailureBackoff(base=5, cap=60, sqs_client=client)
    event = {"Records": [record()]}
    with stubber:  # no response queued: any call would raise
        assert backoff.apply(event, {"batchItemFailures": []}) == {"batchItemFailures": []}
        assert backoff.apply(event, None) is None
        assert backoff.apply(event, {}) == {}


def test_an_identifier_not_in_the_event_is_logged_and_skipped(caplog: pytest.LogCaptureFixture):
    known = record()
    client, stubber = stubbed_client()
    expected = entries((known, 5))
    stubber.add_response(
        "change_message_visibility_batch", ok(expected), {"QueueUrl": URL, "Entries": expected}
    )
    response = {
        "batchItemFailures": [
            {"itemIdentifier": "stranger"},
            {"itemIdentifier": known["messageId"]},
        ]
    }
    with stubber, caplog.at_level(logging.WARNING):
        FailureBackoff(base=5, cap=60, jitter=False, sqs_client=client).apply(
            {"Records": [known]}, response
        )
        stubber.assert_no_pending_responses()
    assert "failed item stranger is not a record of the event" in caplog.text


# 2. Failures are logged, never raised -----------------------------------------------------


def test_refused_entries_are_logged_and_the_rest_goes_on(caplog: pytest.LogCaptureFixture):
    # GIVEN 12 failed records; SQS refuses two handles of the first call, then the
    # second call fails altogether (after botocore's retries)
    failed = [record() for _ in range(12)]
    client, stubber = stubbed_client()
    first = entries(*[(r, 5) for r in failed[:10]])
    stubber.add_response(
        "change_message_visibility_batch",
        {
            "Successful": [{"Id": e["Id"]} for e in first[2:]],
            "Failed": [
                {
                    "Id": "0",
                    "SenderFault": True,
                    "Code": "ReceiptHandleIsInvalid",
                    "Message": "expired",
                },
                {"Id": "1", "SenderFault": True, "Code": "MessageNotInflight", "Message": ""},
            ],
        },
        {"QueueUrl": URL, "Entries": first},
    )
    stubber.add_client_error(
        "change_message_visibility_batch", "ServiceUnavailable", "try later", 503
    )
    event = {"Records": failed}
    # WHEN applied
    with stubber, caplog.at_level(logging.WARNING):
        returned = FailureBackoff(base=5, cap=60, jitter=False, sqs_client=client).apply(
            event, failures(*failed)
        )
        stubber.assert_no_pending_responses()
    # THEN nothing was raised, the response is unchanged, and each failure named
    assert returned == failures(*failed)
    assert (
        f"message {failed[0]['messageId']} on invoice-render not delayed: ReceiptHandleIsInvalid"
        in caplog.text
    )
    assert (
        f"message {failed[1]['messageId']} on invoice-render not delayed: MessageNotInflight"
        in caplog.text
    )
    assert "ChangeMessageVisibilityBatch on invoice-render failed" in caplog.text
    assert failed[10]["messageId"] in caplog.text
    assert failed[11]["messageId"] in caplog.text
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_a_record_without_arn_or_handle_is_logged_and_the_others_delayed(
    caplog: pytest.LogCaptureFixture,
):
    good, no_arn, no_handle = record(), record(), record()
    no_arn["eventSourceARN"] = "not-an-arn"
    del no_handle["receiptHandle"]
    client, stubber = stubbed_client()
    expected = entries((good, 5))
    stubber.add_response(
        "change_message_visibility_batch", ok(expected), {"QueueUrl": URL, "Entries": expected}
    )
    with stubber, caplog.at_level(logging.WARNING):
        FailureBackoff(base=5, cap=60, jitter=False, sqs_client=client).apply(
            {"Records": [good, no_arn, no_handle]}, failures(good, no_arn, no_handle)
        )
        stubber.assert_no_pending_responses()
    assert f"message {no_arn['messageId']} not delayed" in caplog.text
    assert f"message {no_handle['messageId']} not delayed" in caplog.text


@pytest.mark.parametrize(
    ("event", "response", "match"),
    [
        ({"Records": [record()]}, [], "response: got a list"),
        ({"Records": [record()]}, {"batchItemFailures": "m-1"}, r"response\['batchItemFailures'\]"),
        ([record()], {"batchItemFailures": [{"itemIdentifier": "m-1"}]}, "event: got a list"),
    ],
    ids=["response not a mapping", "failures not a list", "records instead of the event"],
)
def test_wrong_arguments_are_refused_clearly(event: Any, response: Any, match: str):
    with pytest.raises(TypeError, match=match):
        FailureBackoff(base=5, cap=60).apply(event, response)


# 3. Refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"base": 0, "cap": 60}, "base: got 0; allowed: a number of seconds greater than 0. Fix:"),
        ({"base": -1, "cap": 60}, "base: got -1; allowed"),
        ({"base": math.nan, "cap": 60}, "base: got nan; allowed"),
        ({"base": True, "cap": 60}, "base: got True; allowed"),
        ({"base": "30", "cap": 60}, "base: got '30'; allowed"),
        ({"base": 30, "cap": math.inf}, "cap: got inf; allowed"),
        (
            {"base": 30, "cap": 29.5},
            "cap: got 29.5 s, below base (30 s); allowed: base..43200 s. Fix: set cap to at least 30",
        ),
        (
            {"base": 30, "cap": 43_201},
            "cap: got 43201 s; allowed: at most 43200 s (12 hours, the SQS visibility timeout maximum). Fix: set cap to 43200 or less.",
        ),
        (
            {"base": 30, "cap": 900, "jitter": "yes"},
            "jitter: got 'yes'; allowed: True or False. Fix:",
        ),
    ],
)
def test_bad_settings_are_refused_with_setting_value_allowed_and_fix(
    kwargs: dict[str, Any], expected: str
):
    with pytest.raises(ValueError, match=r"allowed: .* Fix: ") as refused:
        FailureBackoff(**kwargs)
    assert str(refused.value).startswith(expected)


def test_the_boundaries_are_accepted():
    # GIVEN the smallest base, cap equal to base, and cap at the 12-hour maximum
    assert FailureBackoff(base=0.001, cap=0.001).delay_range(1) == (1, 1)
    assert FailureBackoff(base=30, cap=30, jitter=False).delay_range(9) == (30, 30)
    assert FailureBackoff(base=1, cap=VISIBILITY_TIMEOUT_MAX).delay_range(100) == (21_600, 43_200)


# 4. The environment ---------------------------------------------------------------------------


def test_from_env_reads_the_three_variables():
    backoff = FailureBackoff.from_env(
        {BACKOFF_BASE_ENV: "2.5", BACKOFF_CAP_ENV: " 600 ", BACKOFF_JITTER_ENV: "false"}
    )
    assert (backoff.base, backoff.cap, backoff.jitter) == (2.5, 600.0, False)
    assert FailureBackoff.from_env({BACKOFF_BASE_ENV: "30", BACKOFF_CAP_ENV: "900"}).jitter is True
    assert (BACKOFF_BASE_ENV, BACKOFF_CAP_ENV, BACKOFF_JITTER_ENV) == (
        "SAFE_QUEUE_BACKOFF_BASE",
        "SAFE_QUEUE_BACKOFF_CAP",
        "SAFE_QUEUE_BACKOFF_JITTER",
    )


def test_from_env_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(BACKOFF_BASE_ENV, "10")
    monkeypatch.setenv(BACKOFF_CAP_ENV, "100")
    assert repr(FailureBackoff.from_env()) == "FailureBackoff(base=10, cap=100, jitter=True)"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        (
            {},
            "SAFE_QUEUE_BACKOFF_BASE, SAFE_QUEUE_BACKOFF_CAP: not set; allowed: a number of seconds greater than 0 (the failure backoff's base and cap). Fix: Set it on the function",
        ),
        ({BACKOFF_BASE_ENV: "30", BACKOFF_CAP_ENV: " "}, "SAFE_QUEUE_BACKOFF_CAP: not set;"),
        (
            {BACKOFF_BASE_ENV: "thirty", BACKOFF_CAP_ENV: "900"},
            "SAFE_QUEUE_BACKOFF_BASE: got 'thirty'; allowed: a number of seconds greater than 0, such as '30'. Fix:",
        ),
        (
            {BACKOFF_BASE_ENV: "30", BACKOFF_CAP_ENV: "nan"},
            "SAFE_QUEUE_BACKOFF_CAP: got 'nan'; allowed",
        ),
        (
            {BACKOFF_BASE_ENV: "0", BACKOFF_CAP_ENV: "900"},
            "SAFE_QUEUE_BACKOFF_BASE: got 0.0; allowed: a number of seconds greater than 0",
        ),
        (
            {BACKOFF_BASE_ENV: "30", BACKOFF_CAP_ENV: "10"},
            "SAFE_QUEUE_BACKOFF_CAP: got 10 s, below SAFE_QUEUE_BACKOFF_BASE (30 s)",
        ),
        (
            {BACKOFF_BASE_ENV: "30", BACKOFF_CAP_ENV: "86400"},
            "SAFE_QUEUE_BACKOFF_CAP: got 86400 s; allowed: at most 43200 s",
        ),
        (
            {BACKOFF_BASE_ENV: "30", BACKOFF_CAP_ENV: "900", BACKOFF_JITTER_ENV: "maybe"},
            "SAFE_QUEUE_BACKOFF_JITTER: got 'maybe'; allowed: 'true' or 'false' (unset means true).",
        ),
    ],
)
def test_from_env_refuses_missing_or_bad_variables_naming_them(
    environ: dict[str, str], expected: str
):
    with pytest.raises(ValueError, match=r"allowed: .* Fix: ") as refused:
        FailureBackoff.from_env(environ)
    assert str(refused.value).startswith(expected)


# 5. Jitter --------------------------------------------------------------------------------------


@given(
    base=st.floats(min_value=0.01, max_value=3600),
    factor=st.floats(min_value=1, max_value=100),
    receive_count=st.integers(min_value=-2, max_value=200),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_a_jittered_delay_lies_between_half_the_ceiling_and_the_ceiling(
    base: float, factor: float, receive_count: int, seed: int
):
    cap = min(base * factor, VISIBILITY_TIMEOUT_MAX)
    backoff = FailureBackoff(base=base, cap=cap, rng=random.Random(seed))
    ceiling = backoff_delay(base, cap, receive_count)
    assert math.ceil(ceiling / 2) <= backoff.delay(receive_count) <= ceiling <= math.ceil(cap)
    assert FailureBackoff(base=base, cap=cap, jitter=False).delay(receive_count) == ceiling


def test_jitter_spreads_records_that_failed_together():
    backoff = FailureBackoff(base=30, cap=900, rng=random.Random(7))
    draws = [backoff.delay(6) for _ in range(50)]
    assert len(set(draws)) > 10
    assert min(draws) >= 450


def test_outage_ridden_out_sums_the_shortest_delays_before_the_last_receive():
    assert (
        FailureBackoff(base=30, cap=900, jitter=False).outage_ridden_out(5) == 30 + 60 + 120 + 240
    )
    assert FailureBackoff(base=30, cap=900).outage_ridden_out(7) == 15 + 30 + 60 + 120 + 240 + 450
    assert FailureBackoff(base=30, cap=900).outage_ridden_out(1) == 0


# 6. FIFO ------------------------------------------------------------------------------------------


def test_fifo_a_group_gets_the_delay_of_its_first_reported_record():
    # GIVEN a FIFO batch: group A's a1 failed on its 3rd receive; a2 and a3 (never started)
    # and group B's b1 were reported too, as SqsFifoPartialProcessor does
    a1, a2, a3 = record(3, group="A"), record(3, group="A"), record(2, group="A")
    b1 = record(1, group="B")
    client, stubber = stubbed_client()
    calls: list[dict[str, Any]] = []
    client.meta.events.register(
        "provide-client-params.sqs.ChangeMessageVisibilityBatch",
        lambda params, **_: calls.append(params),
    )
    stubber.add_response("change_message_visibility_batch", {"Successful": [], "Failed": []})
    backoff = FailureBackoff(base=10, cap=600, sqs_client=client, rng=random.Random(3))
    # WHEN applied
    with stubber:
        backoff.apply({"Records": [a1, a2, a3, b1]}, failures(a1, a2, a3, b1))
    # THEN the group's records share one delay, drawn for a1's receive count (3: 20..40 s)
    (call,) = calls
    delays = {e["ReceiptHandle"]: e["VisibilityTimeout"] for e in call["Entries"]}
    assert delays[a1["receiptHandle"]] == delays[a2["receiptHandle"]] == delays[a3["receiptHandle"]]
    assert 20 <= delays[a1["receiptHandle"]] <= 40
    # AND group B has its own, for its own receive count (1: 5..10 s)
    assert 5 <= delays[b1["receiptHandle"]] <= 10


# 7. With Powertools --------------------------------------------------------------------------------


def failing_on(bad: set[str]) -> Any:
    def record_handler(record: Any) -> str:  # Powertools passes record=
        if record.json_body["invoiceId"] in bad:
            raise ValueError("bad invoice")
        return "done"

    return record_handler


def invoice_event(*invoice_ids: str, group: str | None = None) -> dict[str, Any]:
    records = []
    for invoice_id in invoice_ids:
        made = record(2, group=group)
        made["body"] = json.dumps({"invoiceId": invoice_id})
        records.append(made)
    return {"Records": records}


def test_with_batch_processor_only_the_failed_records_are_delayed():
    # GIVEN a BatchProcessor handler wrapped by the backoff; inv_2 fails
    client, stubber = stubbed_client()
    backoff = FailureBackoff(base=5, cap=60, jitter=False, sqs_client=client)
    processor = BatchProcessor(event_type=EventType.SQS)
    event = invoice_event("inv_1", "inv_2", "inv_3")
    bad = event["Records"][1]

    @backoff.wrap
    def handler(event: dict[str, Any], context: Any) -> Any:
        return process_partial_response(
            event=event, record_handler=failing_on({"inv_2"}), processor=processor, context=context
        )

    expected = entries((bad, 10))  # receive count 2 -> 5 x 2
    stubber.add_response(
        "change_message_visibility_batch", ok(expected), {"QueueUrl": URL, "Entries": expected}
    )
    # WHEN it handles the batch  THEN Powertools' response is returned, inv_2 alone delayed
    with stubber:
        assert handler(event, None) == failures(bad)
        stubber.assert_no_pending_responses()


@pytest.mark.parametrize(
    "processor",
    [BatchProcessor(event_type=EventType.SQS), SqsFifoPartialProcessor()],
    ids=["BatchProcessor, all failed", "SqsFifoPartialProcessor, first failed"],
)
def test_when_powertools_raises_every_record_is_delayed_and_the_error_goes_on(processor: Any):
    # GIVEN a batch Powertools fails entirely: every record bad (BatchProcessor), or the
    # first of a FIFO batch bad (the rest are then skipped)
    client, stubber = stubbed_client()
    backoff = FailureBackoff(base=5, cap=60, jitter=False, sqs_client=client)
    fifo = isinstance(processor, SqsFifoPartialProcessor)
    event = invoice_event("inv_1", "inv_2", group="acct-1" if fifo else None)

    @backoff.wrap
    def handler(event: dict[str, Any], context: Any) -> Any:
        return process_partial_response(
            event=event,
            record_handler=failing_on({"inv_1"} if fifo else {"inv_1", "inv_2"}),
            processor=processor,
            context=context,
        )

    expected = entries(*[(r, 10) for r in event["Records"]])
    stubber.add_response(
        "change_message_visibility_batch", ok(expected), {"QueueUrl": URL, "Entries": expected}
    )
    # WHEN it handles the batch  THEN Lambda still sees the error, and all were delayed
    with stubber, pytest.raises(BatchProcessingError):
        handler(event, None)
    stubber.assert_no_pending_responses()


def test_with_raise_on_entire_batch_failure_off_apply_sees_every_failure():
    client, stubber = stubbed_client()
    backoff = FailureBackoff(base=5, cap=60, jitter=False, sqs_client=client)
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    event = invoice_event("inv_1", "inv_2")
    expected = entries(*[(r, 10) for r in event["Records"]])
    stubber.add_response(
        "change_message_visibility_batch", ok(expected), {"QueueUrl": URL, "Entries": expected}
    )
    with stubber:
        response = process_partial_response(
            event=event, record_handler=failing_on({"inv_1", "inv_2"}), processor=processor
        )
        assert backoff.apply(event, response) == failures(*event["Records"])
        stubber.assert_no_pending_responses()


# 8. The default client ---------------------------------------------------------------------------


def test_the_default_client_uses_the_backoff_retry_settings(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sqs_module, "_clients", {})
    for name, value in moto_world.CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_SQS", raising=False)
    client = sqs_module.sqs_client("eu-west-2", "backoff")
    chosen = settings("backoff")
    assert client.meta.region_name == "eu-west-2"
    assert client.meta.config.user_agent_extra == "safe-queue-backoff"
    assert client.meta.config.retries == {
        "mode": chosen.mode,
        "total_max_attempts": chosen.max_attempts,
    }
    assert (client.meta.config.connect_timeout, client.meta.config.read_timeout) == (
        chosen.connect_timeout,
        chosen.read_timeout,
    )
    assert sqs_module.sqs_client("eu-west-2", "backoff") is client  # made once per process
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    assert sqs_module.sqs_client("eu-west-2", "backoff") is not client  # another endpoint


# 9. On a moto server, in real time ----------------------------------------------------------------


@pytest.fixture
def server_queue(
    aws_environment: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Any, str, str]]:
    monkeypatch.setattr(sqs_module, "_clients", {})
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(
        QueueName=f"backoff-{time.monotonic_ns()}", Attributes={"VisibilityTimeout": "30"}
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    yield sqs, url, arn
    sqs.delete_queue(QueueUrl=url)


def receive_records(sqs: Any, url: str, arn: str) -> list[dict[str, Any]]:
    messages = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    ).get("Messages", [])
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


def wait_for(
    sqs: Any, url: str, arn: str, count: int, within: float
) -> tuple[list[dict[str, Any]], float]:
    started = time.monotonic()
    seen: list[dict[str, Any]] = []
    while len(seen) < count and time.monotonic() - started < within:
        seen += receive_records(sqs, url, arn)
        time.sleep(0.05)
    return seen, time.monotonic() - started


def test_on_moto_failed_messages_return_after_the_backoff_not_the_visibility_timeout(
    server_queue: tuple[Any, str, str], caplog: pytest.LogCaptureFixture
):
    # GIVEN three messages received from a queue with a 30 s visibility timeout
    sqs, url, arn = server_queue
    for body in ("ok", "bad-1", "bad-2"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    records, _ = wait_for(sqs, url, arn, 3, within=2)
    by_body = {r["body"]: r for r in records}
    bad = [by_body["bad-1"], by_body["bad-2"]]
    backoff = FailureBackoff(
        base=1, cap=2, jitter=False
    )  # the default client, via AWS_ENDPOINT_URL
    # WHEN the two bad ones are reported failed on their first receive
    backoff.apply({"Records": records}, failures(*bad))
    # THEN they come back after about 1 s, long before 30 s; the good one does not
    back, waited = wait_for(sqs, url, arn, 2, within=5)
    assert sorted(r["body"] for r in back) == ["bad-1", "bad-2"]
    assert 0.5 <= waited < 5
    assert {r["attributes"]["ApproximateReceiveCount"] for r in back} == {"2"}
    # WHEN they fail again (2nd receive: 2 s)  THEN they stay hidden for more than 1 s
    backoff.apply({"Records": back}, failures(*back))
    assert wait_for(sqs, url, arn, 1, within=1.2)[0] == []
    # AND a stale receipt handle (the message deleted since) is logged, not raised
    sqs.delete_message(QueueUrl=url, ReceiptHandle=back[0]["receiptHandle"])
    with caplog.at_level(logging.WARNING):
        assert backoff.apply({"Records": back}, failures(*back)) == failures(*back)
    assert (
        f"message {back[0]['messageId']} on {arn.rsplit(':', 1)[1]} not delayed: ReceiptHandleIsInvalid"
        in caplog.text
    )


# 10. The docs show what runs ------------------------------------------------------------------


def test_the_runtime_page_examples_run():
    # GIVEN docs/runtime.md  WHEN its >>> examples run  THEN they give what the page says
    result = doctest.testfile(str(ROOT / "docs" / "runtime.md"), module_relative=False)
    assert result.attempted >= 4
    assert result.failed == 0


def test_the_readme_shows_the_example_handler_as_it_is():
    # GIVEN the handler shown in the README's "In the handler" section
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## In the handler", 1)[1].split("\n## ", 1)[0]
    shown = section.split("```python\n", 1)[1].split("```", 1)[0]
    # THEN each of its lines is a line of the example's handler, in the same order
    source = iter((ROOT / "example" / "handler" / "render_invoices.py").read_text().splitlines())
    missing = [line for line in shown.splitlines() if line.strip() and line not in source]
    assert missing == []
