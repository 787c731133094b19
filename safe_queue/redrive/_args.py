"""``safe-queue redrive``'s arguments, exit codes and the error that stops it."""

from __future__ import annotations

import argparse
from typing import Final, NoReturn

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "MAX_PER_SECOND",
    "PROG",
    "WARNING",
    "StopError",
    "build_parser",
]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130

PROG: Final = "safe-queue redrive"
MAX_PER_SECOND: Final = 500  # SQS API Reference, StartMessageMoveTask: at most 500.
WARNING: Final = (
    "warning: redrive replays every message of {dlq} into {sources}; the consumer runs "
    "each of them again. This is safe only if the consumer is idempotent, keyed on the "
    "payload: redriven messages get new message ids."
)


class StopError(Exception):
    """End the command with a one-line message on stderr and an exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise StopError(EXIT_USAGE, f"{message} (see {PROG} --help)")


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
