"""``safe-queue redrive``: move the messages of a dead-letter queue back to their source.

Give a source queue (its dead-letter queue is read from its ``RedrivePolicy``) or the
dead-letter queue itself, by URL, ARN or name. The command starts an SQS message move
task (``StartMessageMoveTask``) without a destination, so every message goes back to the
queue it came from; with ``--wait`` it follows the task (``ListMessageMoveTasks``) with a
progress bar on stderr and prints how many messages moved.

Redrive replays messages: it is safe only when the consumer is idempotent.

Exit codes
----------
0
    The task was started (or, with ``--wait``, completed).
1
    A move task is already running on the dead-letter queue, the task could not be
    started (SQS refused it, or an AWS error after the retries), the task failed or was
    cancelled, or following it with ``--wait`` failed (the task goes on).
2
    Usage error, queue not found, not a dead-letter queue or source queue, several source
    queues without ``--all-sources``, no credentials or region, or an AWS error (access
    denied, throttled or a server error after the retries, an unreachable endpoint) while
    reading the queues, before anything was started.
130
    Interrupted while waiting (the task goes on).

Every AWS error is one line on stderr: the operation, the queue, the AWS error code and
message (an HTML error page is described, never printed) and what to do. The SQS client
retries as :mod:`safe_queue.retries` sets it for ``redrive``.

Nothing here imports aws-cdk-lib: the command needs boto3 only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn, TextIO
from urllib.parse import urlparse

from safe_queue.arn import Arn, queue_arn

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "main", "main_entry"]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130

PROG: Final = "safe-queue redrive"
MAX_PER_SECOND: Final = 500  # SQS API Reference, StartMessageMoveTask: at most 500.
_WARNING: Final = (
    "warning: redrive replays every message of {dlq} into {sources}; the consumer runs "
    "each of them again. This is safe only if the consumer is idempotent, keyed on the "
    "payload: redriven messages get new message ids."
)


class _StopError(Exception):
    """End the command with a one-line message on stderr and an exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _StopError(EXIT_USAGE, f"{message} (see {PROG} --help)")


def _rate(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_PER_SECOND:
        raise argparse.ArgumentTypeError(
            f"got {text!r}; expected a whole number of messages per second from 1 to "
            f"{MAX_PER_SECOND} (the SQS maximum)"
        )
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected seconds, 0 or more")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``safe-queue redrive``."""
    parser = _Parser(
        prog=PROG,
        description=(
            "Move the messages of a dead-letter queue back to their source queue(s) with an "
            "SQS message move task. Redrive replays messages: safe only with an idempotent "
            "consumer."
        ),
        epilog=(
            "exit codes: 0 started (with --wait: completed); 1 a move task is already running, "
            "or the task was refused, failed or was cancelled; 2 usage error, queue not found, "
            "no credentials or region, access denied; 130 interrupted while waiting."
        ),
    )
    parser.add_argument(
        "queue",
        metavar="QUEUE",
        help="a source queue (its dead-letter queue is read from its RedrivePolicy) or a "
        "dead-letter queue, as a URL, an ARN or a name",
    )
    parser.add_argument(
        "--max-per-second",
        type=_rate,
        metavar="N",
        help=f"move at most N messages per second (1..{MAX_PER_SECOND}); default: SQS "
        "chooses the rate from the backlog",
    )
    parser.add_argument(
        "--wait", action="store_true", help="follow the task until it ends, with a progress bar"
    )
    parser.add_argument(
        "--all-sources",
        action="store_true",
        help="allow a dead-letter queue shared by several source queues (each message goes "
        "back to its own source)",
    )
    parser.add_argument("--region", help="AWS region (default: from QUEUE, else the AWS config)")
    parser.add_argument(
        "--poll-interval",
        type=_seconds,
        default=5.0,
        metavar="SECONDS",
        help="seconds between two progress checks with --wait (default: 5)",
    )
    return parser


@dataclass(frozen=True)
class _Queue:
    url: str
    arn: str

    @property
    def name(self) -> str:
        parsed = Arn.parse(self.arn)
        return self.arn if parsed is None else parsed.name


def _region_of(queue: str) -> str | None:
    """Return the region named by a queue ARN or URL, if any."""
    if queue.startswith("arn:"):
        parsed = Arn.parse(queue)
        return parsed.region if parsed is not None and parsed.region else None
    if "://" in queue:
        host = urlparse(queue).hostname or ""
        labels = host.split(".")
        if len(labels) >= 3 and labels[0] == "sqs":  # sqs.REGION.amazonaws.com
            return labels[1]
        if len(labels) >= 3 and labels[1] == "queue":  # legacy REGION.queue.amazonaws.com
            return labels[0]
    return None


class _Redrive:
    def __init__(self, client: Any, out: TextIO, err: TextIO) -> None:
        self.client = client
        self.out = out
        self.err = err
        self.started: _Queue | None = None  # the dead-letter queue, once a task is started

    # -- resolving the queues ---------------------------------------------------------

    def _url_of(self, queue: str) -> str:
        if "://" in queue:
            return queue
        if queue.startswith("arn:"):
            try:
                arn = queue_arn(queue)
            except ValueError:
                raise _StopError(
                    EXIT_USAGE,
                    f"QUEUE: got {queue!r}; expected an SQS queue ARN "
                    "(arn:aws:sqs:REGION:ACCOUNT:NAME), a queue URL or a queue name",
                ) from None
            response = self.client.get_queue_url(
                QueueName=arn.resource, QueueOwnerAWSAccountId=arn.account
            )
        else:
            response = self.client.get_queue_url(QueueName=queue)
        return str(response["QueueUrl"])

    def _attributes(self, url: str, *names: str) -> dict[str, str]:
        response = self.client.get_queue_attributes(
            QueueUrl=url, AttributeNames=["QueueArn", *names]
        )
        return dict(response.get("Attributes", {}))

    def _sources_of(self, dlq_url: str) -> list[str]:
        paginator = self.client.get_paginator("list_dead_letter_source_queues")
        return [url for page in paginator.paginate(QueueUrl=dlq_url) for url in page["queueUrls"]]

    def resolve(self, queue: str, all_sources: bool) -> tuple[_Queue, list[str], int]:
        """Return the dead-letter queue, its source queue URLs and its message count."""
        url = self._url_of(queue)
        attributes = self._attributes(url, "RedrivePolicy", "ApproximateNumberOfMessages")
        policy = attributes.get("RedrivePolicy")
        if policy:
            dlq_arn = str(json.loads(policy)["deadLetterTargetArn"])
            dlq_url = self._url_of(dlq_arn)
            count = self._attributes(dlq_url, "ApproximateNumberOfMessages")
            dlq = _Queue(url=dlq_url, arn=dlq_arn)
            messages = int(count.get("ApproximateNumberOfMessages", "0"))
        else:
            dlq = _Queue(url=url, arn=attributes["QueueArn"])
            messages = int(attributes.get("ApproximateNumberOfMessages", "0"))
        sources = self._sources_of(dlq.url)
        if not sources:
            raise _StopError(
                EXIT_USAGE,
                f"queue {dlq.name!r} has no RedrivePolicy and no queue names it as its "
                "dead-letter queue; give a source queue or its dead-letter queue",
            )
        if len(sources) > 1 and not all_sources:
            names = ", ".join(sorted(s.rsplit("/", 1)[-1] for s in sources))
            raise _StopError(
                EXIT_USAGE,
                f"dead-letter queue {dlq.name!r} serves {len(sources)} source queues ({names}); "
                "a move task sends each message back to its own source. Pass --all-sources "
                "to redrive them all",
            )
        return dlq, sources, messages

    # -- the move task ----------------------------------------------------------------

    def refuse_if_running(self, dlq: _Queue) -> int:
        """Stop with exit 1 when a move task is already running on the dead-letter queue.

        Returns the latest ``StartedTimestamp`` of the earlier tasks (0 if none), so that
        ``wait`` can tell the new task from them once it has ended and lost its handle.
        """
        tasks = self.client.list_message_move_tasks(SourceArn=dlq.arn, MaxResults=10)
        results = tasks.get("Results", [])
        for task in results:
            if task.get("Status") == "RUNNING":
                moved = task.get("ApproximateNumberOfMessagesMoved", 0)
                handle = task.get("TaskHandle", "?")
                raise _StopError(
                    EXIT_FAILED,
                    f"a move task is already running on {dlq.name!r} ({moved} messages moved "
                    f"so far); wait for it, or cancel it with: aws sqs cancel-message-move-task "
                    f"--task-handle {handle}",
                )
        return max((int(task.get("StartedTimestamp", 0)) for task in results), default=0)

    def start(self, dlq: _Queue, max_per_second: int | None) -> str:
        """Start the move task back to the source queues; return its handle."""
        request: dict[str, Any] = {"SourceArn": dlq.arn}
        if max_per_second is not None:
            request["MaxNumberOfMessagesPerSecond"] = max_per_second
        try:
            response = self.client.start_message_move_task(**request)
        except Exception as error:
            sentence = _sentence(error, dlq.name)
            if sentence is None:
                raise
            raise _StopError(EXIT_FAILED, f"no move task was started: {sentence}") from None
        self.started = dlq
        return str(response["TaskHandle"])

    def wait(self, dlq: _Queue, handle: str, poll_interval: float, earlier: int) -> int:
        """Follow the task until it ends; return the exit code.

        A running task is found by its handle; an ended one (SQS drops the handle) as the
        task started after ``earlier``, the latest start among the tasks before it.
        """
        bar = _Progress(self.err)
        while True:
            results = self.client.list_message_move_tasks(SourceArn=dlq.arn, MaxResults=10)
            task = None
            for candidate in results.get("Results", []):
                if candidate.get("TaskHandle") == handle or (
                    int(candidate.get("StartedTimestamp", 0)) > earlier
                ):
                    task = candidate
                    break
            if task is not None:
                moved = int(task.get("ApproximateNumberOfMessagesMoved", 0))
                total = task.get("ApproximateNumberOfMessagesToMove")
                status = str(task.get("Status", "RUNNING"))
                bar.show(moved, None if total is None else int(total))
                if status == "COMPLETED":
                    bar.close()
                    print(f"moved {moved} messages out of {dlq.name!r}", file=self.out)
                    return EXIT_OK
                if status in {"FAILED", "CANCELLED"}:
                    bar.close()
                    reason = task.get("FailureReason") or "no reason given"
                    print(
                        f"{PROG}: the move task on {dlq.name!r} {status.lower()} after moving "
                        f"{moved} messages: {reason}",
                        file=self.err,
                    )
                    return EXIT_FAILED
            time.sleep(poll_interval)


class _Progress:
    """A progress bar on stderr: redrawn in place on a terminal, one line per change otherwise."""

    WIDTH: Final = 30

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.last: tuple[int, int | None] | None = None

    def show(self, moved: int, total: int | None) -> None:
        if (moved, total) == self.last:
            return
        self.last = (moved, total)
        if total:
            filled = min(self.WIDTH, self.WIDTH * moved // total)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            text = f"[{bar}] {moved}/{total} messages moved"
        else:
            text = f"{moved} messages moved"
        if self.tty:
            self.stream.write("\r" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.last is not None:
            self.stream.write("\n")
            self.stream.flush()


_FIXES: Final = {
    "not-found": "check the queue's name or URL, the account and the region (--region)",
    "denied": (
        "grant it to these credentials (redrive needs sqs:GetQueueUrl, sqs:GetQueueAttributes,"
        " sqs:ListDeadLetterSourceQueues, sqs:ListMessageMoveTasks, sqs:StartMessageMoveTask;"
        " the move itself sqs:ReceiveMessage and sqs:DeleteMessage on the dead-letter queue,"
        " sqs:SendMessage on the source queues)"
    ),
}


def _sentence(error: BaseException, queue: str) -> str | None:
    """One line for an AWS error: operation, queue, code, message, fix (``None``: not AWS's)."""
    from safe_queue.live.aws_errors import describe

    operation = getattr(error, "operation_name", None)
    failure = describe(
        error,
        f"sqs:{operation}" if operation else "SQS",
        repr(queue),
        fixes=_FIXES,
        expected_only=False,
    )
    return None if failure is None else failure.sentence()


def _make_client(region: str | None) -> Any:
    import boto3

    from safe_queue.retries import client_config

    return boto3.client("sqs", region_name=region, config=client_config("redrive"))


def main(
    argv: Sequence[str] | None = None,
    *,
    sqs_client: Any | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run ``safe-queue redrive`` and return its exit code (never raises for bad input).

    Parameters
    ----------
    argv
        The arguments after ``redrive``; default ``sys.argv[1:]``.
    sqs_client
        A boto3 SQS client; default: one for ``--region``, the queue's region or the AWS
        config.
    out, err
        Where results and messages go; default stdout and stderr.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        args = build_parser().parse_args(argv)
    except _StopError as stop:
        print(f"{PROG}: {stop}", file=err)
        return stop.code
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    try:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            NoCredentialsError,
            NoRegionError,
        )
    except ImportError:  # pragma: no cover - boto3 is in Lambda and in the dev extra
        print(f"{PROG}: boto3 is not installed; pip install boto3", file=err)
        return EXIT_USAGE

    queue = str(args.queue)
    redrive: _Redrive | None = None
    try:
        client = sqs_client or _make_client(args.region or _region_of(queue))
        redrive = _Redrive(client, out, err)
        dlq, sources, messages = redrive.resolve(queue, args.all_sources)
        earlier = redrive.refuse_if_running(dlq)
        names = ", ".join(sorted(s.rsplit("/", 1)[-1] for s in sources))
        print(f"{PROG}: " + _WARNING.format(dlq=repr(dlq.name), sources=names), file=err)
        handle = redrive.start(dlq, args.max_per_second)
        print(
            f"started a move task of ~{messages} messages from {dlq.name!r} back to {names} "
            f"(task handle {handle})",
            file=out,
        )
        if not args.wait:
            return EXIT_OK
        return redrive.wait(dlq, handle, args.poll_interval, earlier)
    except _StopError as stop:
        print(f"{PROG}: {stop}", file=err)
        return stop.code
    except KeyboardInterrupt:
        print(f"{PROG}: stopped waiting; the move task goes on", file=err)
        return EXIT_INTERRUPTED
    except NoCredentialsError:
        print(
            f"{PROG}: no AWS credentials found; configure them (aws configure, AWS_PROFILE or "
            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)",
            file=err,
        )
        return EXIT_USAGE
    except NoRegionError:
        print(f"{PROG}: no AWS region; pass --region or set AWS_REGION", file=err)
        return EXIT_USAGE
    except (ClientError, BotoCoreError) as error:
        started = redrive.started if redrive is not None else None
        sentence = _sentence(error, started.name if started else queue)
        if sentence is None:  # not an AWS answer nor a connection error: a bug, said as one
            raise
        if started is not None:  # --wait: following the task failed, the task goes on
            print(
                f"{PROG}: stopped following the move task: {sentence} The task goes on; see it"
                f" with: aws sqs list-message-move-tasks --source-arn {started.arn}",
                file=err,
            )
            return EXIT_FAILED
        print(f"{PROG}: {sentence}", file=err)
        return EXIT_USAGE


def main_entry() -> None:
    """Console-script entry point: exit with ``main()``'s code."""
    sys.exit(main())


if __name__ == "__main__":  # python -m safe_queue.redrive QUEUE ...
    main_entry()
