"""safe-queue redrive, against botocore's Stubber: the exact requests and the handling of responses.

moto has no StartMessageMoveTask, so each test lists the calls the command must make, in
order, with their exact parameters, and the responses SQS gives.
"""

from __future__ import annotations

import io
import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from safe_queue.redrive import _Progress, _region_of, main

REGION = "eu-west-1"
ACCOUNT = "123456789012"
SOURCE_URL = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/orders"
SOURCE_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT}:orders"
DLQ_URL = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/orders-dlq"
DLQ_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT}:orders-dlq"
OTHER_URL = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/payments"
HANDLE = "eyJ0YXNrSWQiOiJkYjM2In0="
STARTED = 1_764_495_000_000


class Run:
    """A stubbed client, and the command's exit code and output once run."""

    def __init__(self) -> None:
        self.client = boto3.client(
            "sqs",
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        self.stub = Stubber(self.client)
        self.out = io.StringIO()
        self.err = io.StringIO()

    def expect(self, method: str, params: dict[str, Any], response: dict[str, Any]) -> Run:
        self.stub.add_response(method, response, params)
        return self

    def fail(self, method: str, params: dict[str, Any], code: str, status: int = 400) -> Run:
        self.stub.add_client_error(method, code, f"{code} message", status, expected_params=params)
        return self

    def __call__(self, *argv: str) -> int:
        with self.stub:
            code = main(list(argv), sqs_client=self.client, out=self.out, err=self.err)
        self.stub.assert_no_pending_responses()
        return code


@pytest.fixture
def run() -> Run:
    return Run()


def dlq_by_name(run: Run, sources: list[str] | None = None) -> Run:
    """The calls that resolve the DLQ given by its name."""
    return (
        run.expect("get_queue_url", {"QueueName": "orders-dlq"}, {"QueueUrl": DLQ_URL})
        .expect(
            "get_queue_attributes",
            {
                "QueueUrl": DLQ_URL,
                "AttributeNames": ["QueueArn", "RedrivePolicy", "ApproximateNumberOfMessages"],
            },
            {"Attributes": {"QueueArn": DLQ_ARN, "ApproximateNumberOfMessages": "42"}},
        )
        .expect(
            "list_dead_letter_source_queues",
            {"QueueUrl": DLQ_URL},
            {"queueUrls": [SOURCE_URL] if sources is None else sources},
        )
    )


def no_task_running(run: Run) -> Run:
    return run.expect(
        "list_message_move_tasks",
        {"SourceArn": DLQ_ARN, "MaxResults": 10},
        {"Results": [{"Status": "COMPLETED", "SourceArn": DLQ_ARN, "StartedTimestamp": 1}]},
    )


def started(run: Run, **params: Any) -> Run:
    return run.expect(
        "start_message_move_task", {"SourceArn": DLQ_ARN, **params}, {"TaskHandle": HANDLE}
    )


def task(status: str, moved: int, total: int = 42, **extra: Any) -> dict[str, Any]:
    result = {
        "Status": status,
        "SourceArn": DLQ_ARN,
        "ApproximateNumberOfMessagesMoved": moved,
        "ApproximateNumberOfMessagesToMove": total,
        "StartedTimestamp": STARTED,
        **extra,
    }
    if status == "RUNNING":
        result["TaskHandle"] = HANDLE
    return result


def tasks(run: Run, *results: dict[str, Any]) -> Run:
    return run.expect(
        "list_message_move_tasks",
        {"SourceArn": DLQ_ARN, "MaxResults": 10},
        {"Results": list(results)},
    )


def test_a_dlq_by_name_is_moved_back_to_its_sources_with_the_rate_asked(run: Run):
    # GIVEN a DLQ with one source and no task running
    started(no_task_running(dlq_by_name(run)), MaxNumberOfMessagesPerSecond=50)
    # WHEN it is redriven at 50 messages per second
    code = run("orders-dlq", "--max-per-second", "50")
    # THEN a move task starts without a destination (each message goes back to its source)
    assert code == 0
    assert run.out.getvalue() == (
        f"started a move task of ~42 messages from 'orders-dlq' back to orders "
        f"(task handle {HANDLE})\n"
    )
    # AND it warned that redrive replays messages
    assert "replays every message of 'orders-dlq' into orders" in run.err.getvalue()
    assert "safe only if the consumer is idempotent" in run.err.getvalue()


def test_a_source_queue_by_url_is_redriven_from_its_redrive_policy(run: Run):
    policy = json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 5})
    run.expect(
        "get_queue_attributes",
        {
            "QueueUrl": SOURCE_URL,
            "AttributeNames": ["QueueArn", "RedrivePolicy", "ApproximateNumberOfMessages"],
        },
        {"Attributes": {"QueueArn": SOURCE_ARN, "RedrivePolicy": policy}},
    ).expect(
        "get_queue_url",
        {"QueueName": "orders-dlq", "QueueOwnerAWSAccountId": ACCOUNT},
        {"QueueUrl": DLQ_URL},
    ).expect(
        "get_queue_attributes",
        {"QueueUrl": DLQ_URL, "AttributeNames": ["QueueArn", "ApproximateNumberOfMessages"]},
        {"Attributes": {"QueueArn": DLQ_ARN, "ApproximateNumberOfMessages": "7"}},
    ).expect(  # two pages of sources
        "list_dead_letter_source_queues",
        {"QueueUrl": DLQ_URL},
        {"queueUrls": [SOURCE_URL], "NextToken": "page-2"},
    ).expect(
        "list_dead_letter_source_queues",
        {"QueueUrl": DLQ_URL, "NextToken": "page-2"},
        {"queueUrls": []},
    )
    started(no_task_running(run))
    assert run(SOURCE_URL) == 0
    assert "~7 messages from 'orders-dlq' back to orders" in run.out.getvalue()


def test_a_dlq_by_arn_is_looked_up_in_its_account(run: Run):
    run.expect(
        "get_queue_url",
        {"QueueName": "orders-dlq", "QueueOwnerAWSAccountId": ACCOUNT},
        {"QueueUrl": DLQ_URL},
    ).expect(
        "get_queue_attributes",
        {
            "QueueUrl": DLQ_URL,
            "AttributeNames": ["QueueArn", "RedrivePolicy", "ApproximateNumberOfMessages"],
        },
        {"Attributes": {"QueueArn": DLQ_ARN, "ApproximateNumberOfMessages": "1"}},
    ).expect("list_dead_letter_source_queues", {"QueueUrl": DLQ_URL}, {"queueUrls": [SOURCE_URL]})
    started(no_task_running(run))
    assert run(DLQ_ARN) == 0


def test_it_refuses_when_a_move_task_is_already_running(run: Run):
    # GIVEN a task running on the DLQ  WHEN redrive is asked  THEN no task is started, exit 1
    tasks(dlq_by_name(run), task("RUNNING", 10))
    assert run("orders-dlq") == 1
    assert run.err.getvalue() == (
        "safe-queue redrive: a move task is already running on 'orders-dlq' (10 messages moved "
        "so far); wait for it, or cancel it with: aws sqs cancel-message-move-task "
        f"--task-handle {HANDLE}\n"
    )
    assert run.out.getvalue() == ""


def test_wait_shows_progress_and_prints_how_many_moved(run: Run):
    # GIVEN a task that runs two polls and completes (a finished task has no handle)
    started(no_task_running(dlq_by_name(run)))
    tasks(run, task("RUNNING", 0))
    tasks(run, task("RUNNING", 21))
    tasks(
        run,
        task("COMPLETED", 42),
        {"Status": "COMPLETED", "SourceArn": DLQ_ARN, "StartedTimestamp": 1},
    )
    # WHEN redrive waits
    code = run("orders-dlq", "--wait", "--poll-interval", "0")
    # THEN the progress is drawn on stderr and the count printed on stdout
    assert code == 0
    progress = [line for line in run.err.getvalue().splitlines() if "moved" in line]
    assert progress == [
        "[------------------------------] 0/42 messages moved",
        "[###############---------------] 21/42 messages moved",
        "[##############################] 42/42 messages moved",
    ]
    assert run.out.getvalue().splitlines()[-1] == "moved 42 messages out of 'orders-dlq'"


def test_wait_reports_a_failed_task(run: Run):
    started(no_task_running(dlq_by_name(run)))
    tasks(run, task("FAILED", 3, FailureReason="AWS.SimpleQueueService.NonExistentQueue"))
    code = run("orders-dlq", "--wait", "--poll-interval", "0")
    assert code == 1
    assert run.err.getvalue().splitlines()[-1] == (
        "safe-queue redrive: the move task on 'orders-dlq' failed after moving 3 messages: "
        "AWS.SimpleQueueService.NonExistentQueue"
    )


def test_sqs_refusing_to_start_exits_1(run: Run):
    no_task_running(dlq_by_name(run)).fail(
        "start_message_move_task",
        {"SourceArn": DLQ_ARN},
        "AWS.SimpleQueueService.UnsupportedOperation",
    )
    assert run("orders-dlq") == 1
    assert run.err.getvalue().splitlines()[-1] == (
        "safe-queue redrive: no move task was started: sqs:StartMessageMoveTask on 'orders-dlq'"
        " failed: AWS.SimpleQueueService.UnsupportedOperation:"
        " AWS.SimpleQueueService.UnsupportedOperation message. Fix: AWS's message says what it"
        " refused; check the arguments."
    )


def test_a_server_error_page_on_start_is_one_line_without_the_page(run: Run):
    # GIVEN StartMessageMoveTask answered by a 502 HTML page (after the client's retries)
    page = (
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>...</body></html>"
    )
    no_task_running(dlq_by_name(run))
    run.stub.add_client_error(
        "start_message_move_task",
        "502",
        page,
        502,
        expected_params={"SourceArn": DLQ_ARN},
    )
    # WHEN redriven  THEN exit 1 and one line: operation, queue, status, what the body was, fix
    assert run("orders-dlq") == 1
    last = run.err.getvalue().splitlines()[-1]
    assert last == (
        "safe-queue redrive: no move task was started: sqs:StartMessageMoveTask on 'orders-dlq'"
        " failed: HTTP 502: an HTML page ('502 Bad Gateway') instead of an AWS error response:"
        " a proxy, a load balancer or an outage is in between. Fix: AWS, or a proxy in between,"
        " answered every attempt with a server error; run again later, and check the AWS Health"
        " Dashboard or the proxy."
    )
    assert "<" not in run.err.getvalue()


def test_an_error_while_following_the_task_says_the_task_goes_on(run: Run):
    # GIVEN a started task, and ListMessageMoveTasks throttled (after retries) while waiting
    started(no_task_running(dlq_by_name(run)))
    run.stub.add_client_error(
        "list_message_move_tasks",
        "ThrottlingException",
        "Rate exceeded",
        400,
        expected_params={"SourceArn": DLQ_ARN, "MaxResults": 10},
    )
    assert run("orders-dlq", "--wait", "--poll-interval", "0") == 1
    assert run.err.getvalue().splitlines()[-1] == (
        "safe-queue redrive: stopped following the move task: sqs:ListMessageMoveTasks on"
        " 'orders-dlq' failed: ThrottlingException: Rate exceeded. Fix: AWS throttled every"
        " attempt; run again later, when fewer callers share the account's API rate, or ask for"
        " a higher quota (Service Quotas). The task goes on; see it with: aws sqs"
        f" list-message-move-tasks --source-arn {DLQ_ARN}"
    )


def test_a_missing_queue_exits_2_with_one_line(run: Run):
    run.fail("get_queue_url", {"QueueName": "nope"}, "AWS.SimpleQueueService.NonExistentQueue")
    assert run("nope") == 2
    assert run.err.getvalue() == (
        "safe-queue redrive: sqs:GetQueueUrl on 'nope' failed:"
        " AWS.SimpleQueueService.NonExistentQueue: AWS.SimpleQueueService.NonExistentQueue"
        " message. Fix: check the queue's name or URL, the account and the region (--region).\n"
    )


def test_a_queue_that_is_neither_source_nor_dlq_exits_2(run: Run):
    dlq_by_name(run, sources=[])
    assert run("orders-dlq") == 2
    assert (
        "has no RedrivePolicy and no queue names it as its dead-letter queue" in run.err.getvalue()
    )


def test_a_shared_dlq_needs_all_sources(run: Run):
    dlq_by_name(run, sources=[SOURCE_URL, OTHER_URL])
    assert run("orders-dlq") == 2
    assert "serves 2 source queues (orders, payments)" in run.err.getvalue()
    assert "--all-sources" in run.err.getvalue()


def test_a_shared_dlq_with_all_sources_goes_back_to_each_source(run: Run):
    started(no_task_running(dlq_by_name(run, sources=[SOURCE_URL, OTHER_URL])))
    assert run("orders-dlq", "--all-sources") == 0
    assert "back to orders, payments" in run.out.getvalue()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["orders-dlq", "--max-per-second", "0"], "argument --max-per-second: got '0'"),
        (["orders-dlq", "--max-per-second", "501"], "from 1 to 500 (the SQS maximum)"),
        ([], "the following arguments are required: QUEUE"),
        (["arn:aws:sns:eu-west-1:1:topic"], "QUEUE: got 'arn:aws:sns:eu-west-1:1:topic'"),
    ],
)
def test_usage_errors_exit_2_without_calling_aws(run: Run, argv: list[str], message: str):
    assert run(*argv) == 2
    assert message in run.err.getvalue()
    assert len(run.err.getvalue().splitlines()) == 1


def test_help_exits_0(capsys: pytest.CaptureFixture[str]):
    assert main(["--help"]) == 0
    assert "exit codes: 0 started" in capsys.readouterr().out


def test_no_credentials_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    # a fresh default session: not one an earlier test of the process made with credentials
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    assert main([DLQ_URL]) == 2
    assert capsys.readouterr().err.startswith("safe-queue redrive: no AWS credentials found")


def test_on_a_terminal_the_bar_is_redrawn_in_place():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = _Progress(stream)
    bar.show(0, 4)
    bar.show(0, 4)  # unchanged: not redrawn
    bar.show(4, 4)
    bar.close()
    assert stream.getvalue() == (
        "\r[------------------------------] 0/4 messages moved"
        "\r[##############################] 4/4 messages moved\n"
    )


@pytest.mark.parametrize(
    ("queue", "region"),
    [
        (DLQ_URL, "eu-west-1"),
        (DLQ_ARN, "eu-west-1"),
        ("https://us-east-2.queue.amazonaws.com/123456789012/q", "us-east-2"),
        ("http://localhost:4566/000000000000/q", None),
        ("orders-dlq", None),
    ],
)
def test_the_client_region_comes_from_the_queue(queue: str, region: str | None):
    assert _region_of(queue) == region
