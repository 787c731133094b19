"""Finding the dead-letter queue and its sources, and starting and following a move task."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Final, TextIO
from urllib.parse import urlparse

from safe_queue.arn import Arn, queue_arn
from safe_queue.redrive._args import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    StopError,
)

__all__ = ["Progress", "Queue", "Redrive", "region_of", "sentence"]


@dataclass(frozen=True)
class Queue:
    url: str
    arn: str

    @property
    def name(self) -> str:
        parsed = Arn.parse(self.arn)
        return self.arn if parsed is None else parsed.name


def region_of(queue: str) -> str | None:
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


class Redrive:
    def __init__(self, client: Any, out: TextIO, err: TextIO) -> None:
        self.client = client
        self.out = out
        self.err = err
        self.started: Queue | None = None  # the dead-letter queue, once a task is started

    # -- resolving the queues ---------------------------------------------------------

    def _url_of(self, queue: str) -> str:
        if "://" in queue:
            return queue
        if queue.startswith("arn:"):
            try:
                arn = queue_arn(queue)
            except ValueError:
                raise StopError(
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

    def resolve(self, queue: str, all_sources: bool) -> tuple[Queue, list[str], int]:
        """Return the dead-letter queue, its source queue URLs and its message count."""
        url = self._url_of(queue)
        attributes = self._attributes(url, "RedrivePolicy", "ApproximateNumberOfMessages")
        policy = attributes.get("RedrivePolicy")
        if policy:
            dlq_arn = str(json.loads(policy)["deadLetterTargetArn"])
            dlq_url = self._url_of(dlq_arn)
            count = self._attributes(dlq_url, "ApproximateNumberOfMessages")
            dlq = Queue(url=dlq_url, arn=dlq_arn)
            messages = int(count.get("ApproximateNumberOfMessages", "0"))
        else:
            dlq = Queue(url=url, arn=attributes["QueueArn"])
            messages = int(attributes.get("ApproximateNumberOfMessages", "0"))
        sources = self._sources_of(dlq.url)
        if not sources:
            raise StopError(
                EXIT_USAGE,
                f"queue {dlq.name!r} has no RedrivePolicy and no queue names it as its "
                "dead-letter queue; give a source queue or its dead-letter queue",
            )
        if len(sources) > 1 and not all_sources:
            names = ", ".join(sorted(s.rsplit("/", 1)[-1] for s in sources))
            raise StopError(
                EXIT_USAGE,
                f"dead-letter queue {dlq.name!r} serves {len(sources)} source queues ({names}); "
                "a move task sends each message back to its own source. Pass --all-sources "
                "to redrive them all",
            )
        return dlq, sources, messages

    # -- the move task ----------------------------------------------------------------

    def refuse_if_running(self, dlq: Queue) -> int:
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
                raise StopError(
                    EXIT_FAILED,
                    f"a move task is already running on {dlq.name!r} ({moved} messages moved "
                    f"so far); wait for it, or cancel it with: aws sqs cancel-message-move-task "
                    f"--task-handle {handle}",
                )
        return max((int(task.get("StartedTimestamp", 0)) for task in results), default=0)

    def start(self, dlq: Queue, max_per_second: int | None) -> str:
        """Start the move task back to the source queues; return its handle."""
        request: dict[str, Any] = {"SourceArn": dlq.arn}
        if max_per_second is not None:
            request["MaxNumberOfMessagesPerSecond"] = max_per_second
        try:
            response = self.client.start_message_move_task(**request)
        except Exception as error:
            said = sentence(error, dlq.name)
            if said is None:
                raise
            raise StopError(EXIT_FAILED, f"no move task was started: {said}") from None
        self.started = dlq
        return str(response["TaskHandle"])

    def wait(self, dlq: Queue, handle: str, poll_interval: float, earlier: int) -> int:
        """Follow the task until it ends; return the exit code.

        A running task is found by its handle; an ended one (SQS drops the handle) as the
        task started after ``earlier``, the latest start among the tasks before it.
        """
        bar = Progress(self.err)
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


class Progress:
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


def sentence(error: BaseException, queue: str) -> str | None:
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
