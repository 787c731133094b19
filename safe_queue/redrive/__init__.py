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

import sys
from collections.abc import Sequence
from typing import Any, TextIO

from safe_queue.redrive._args import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    WARNING,
    StopError,
    build_parser,
)
from safe_queue.redrive._task import Progress, Redrive, region_of, sentence

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "main", "main_entry"]

# Names the tests use.
_Progress = Progress
_region_of = region_of


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
    except StopError as stop:
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
    redrive: Redrive | None = None
    try:
        client = sqs_client or _make_client(args.region or region_of(queue))
        redrive = Redrive(client, out, err)
        dlq, sources, messages = redrive.resolve(queue, args.all_sources)
        earlier = redrive.refuse_if_running(dlq)
        names = ", ".join(sorted(s.rsplit("/", 1)[-1] for s in sources))
        print(f"{PROG}: " + WARNING.format(dlq=repr(dlq.name), sources=names), file=err)
        handle = redrive.start(dlq, args.max_per_second)
        print(
            f"started a move task of ~{messages} messages from {dlq.name!r} back to {names} "
            f"(task handle {handle})",
            file=out,
        )
        if not args.wait:
            return EXIT_OK
        return redrive.wait(dlq, handle, args.poll_interval, earlier)
    except StopError as stop:
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
        said = sentence(error, started.name if started else queue)
        if said is None:  # not an AWS answer nor a connection error: a bug, said as one
            raise
        if started is not None:  # --wait: following the task failed, the task goes on
            print(
                f"{PROG}: stopped following the move task: {said} The task goes on; see it"
                f" with: aws sqs list-message-move-tasks --source-arn {started.arn}",
                file=err,
            )
            return EXIT_FAILED
        print(f"{PROG}: {said}", file=err)
        return EXIT_USAGE


def main_entry() -> None:
    """Console-script entry point: exit with ``main()``'s code."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    main_entry()
