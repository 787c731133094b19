"""``safe-queue:queue-name-invalid``: a QueueName SQS rejects."""

from __future__ import annotations

import re

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import SQS_CREATE_QUEUE_API

__all__ = ["RULE"]

_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
_SUFFIX = limits.FIFO_SUFFIX
_LONGEST = limits.QUEUE_NAME_MAX_LENGTH


def _problem(name: str, fifo: bool) -> tuple[str, str] | None:
    """Say what is wrong with ``name``, and the fix (``${...}`` parts are not judged)."""
    literal = _PLACEHOLDER.sub("", name)
    base = name.removesuffix(_SUFFIX)
    if fifo and not name.endswith(_SUFFIX):
        return f"a FIFO queue's name must end with {_SUFFIX}", f"add {_SUFFIX} to the name"
    if not fifo and name.endswith(_SUFFIX):
        return (
            f"only FIFO queue names end with {_SUFFIX}",
            f"drop {_SUFFIX}, or make the queue FIFO (FifoQueue true)",
        )
    bad = sorted(set(literal.removesuffix(_SUFFIX)) - limits.QUEUE_NAME_CHARACTERS)
    if bad:
        return (
            f"it has characters SQS refuses ({''.join(bad)!r})",
            "use only letters, digits, - and _",
        )
    if not base:
        return "it is empty", "give the queue a name, or omit QueueName"
    if literal == name and len(name) > _LONGEST:
        return (
            f"it is {len(name)} characters long",
            f"use at most {_LONGEST} characters" + (f", {_SUFFIX} included" if fifo else ""),
        )
    return None


def check(
    *,
    queue_name: str | None,
    fifo: bool,
    dead_letter_queue_name: str | None,
    dead_letter_fifo: bool | None,
) -> Violation | None:
    """Error for a queue name SQS rejects (characters, length, the ``.fifo`` suffix)."""
    for what, name, is_fifo in (
        ("QueueName", queue_name, fifo),
        ("The dead-letter queue's QueueName", dead_letter_queue_name, bool(dead_letter_fifo)),
    ):
        if name is None:
            continue
        problem = _problem(name, is_fifo)
        if problem is not None:
            return Violation(
                f"{what} is {name!r}: {problem[0]}; SQS allows 1..{_LONGEST} letters, digits,"
                f" - and _ (a FIFO queue's ending in {_SUFFIX}), so it rejects the queue.",
                f"{problem[1]}, or omit QueueName to let CloudFormation name the queue.",
            )
    return None


RULE = Rule(
    id="safe-queue:queue-name-invalid",
    levels=(Level.ERROR,),
    kind="aws-limit",
    summary="A QueueName SQS rejects: characters other than letters, digits, - and _, more"
    f" than {limits.QUEUE_NAME_MAX_LENGTH} characters, or a {limits.FIFO_SUFFIX} suffix that does"
    " not match the queue type.",
    why="SQS rejects the queue, so the deployment fails.",
    fix=f"1..{limits.QUEUE_NAME_MAX_LENGTH} letters, digits, - and _; {limits.FIFO_SUFFIX} at the"
    " end of FIFO queue names only.",
    source_url=SQS_CREATE_QUEUE_API,
    compliant=example("QueueName invoices.", queue={"queue_name": "invoices"}),
    non_compliant=example(
        "A standard queue named invoices.fifo.", queue={"queue_name": "invoices.fifo"}
    ),
    check=check,
    properties=(
        ("queue", "Properties/QueueName"),
        ("dead_letter_queue", "Properties/QueueName"),
    ),
)
