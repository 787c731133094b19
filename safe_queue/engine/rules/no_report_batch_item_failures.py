"""``safe-queue:no-report-batch-item-failures``: one failure replays the whole batch."""

from __future__ import annotations

from safe_queue.engine import limits
from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation
from safe_queue.engine.rules._common import LAMBDA_SQS_ERRORS

__all__ = ["RULE"]

_RBIF = limits.REPORT_BATCH_ITEM_FAILURES


def check(*, batch_size: int, report_batch_item_failures: bool) -> Violation | None:
    """Warn when a batch larger than one fails as a whole (no ReportBatchItemFailures)."""
    if batch_size <= 1 or report_batch_item_failures:
        return None
    return Violation(
        f"BatchSize is {batch_size} and FunctionResponseTypes has no {_RBIF}: one failing"
        " message makes the whole batch visible again, so the messages that succeeded are"
        " processed again.",
        f"add {_RBIF} to FunctionResponseTypes and return batchItemFailures from the handler"
        " (Powertools BatchProcessor), or use BatchSize 1.",
    )


RULE = Rule(
    id="safe-queue:no-report-batch-item-failures",
    levels=(Level.WARNING,),
    kind="guidance",
    summary=f"BatchSize > 1 without {_RBIF} in FunctionResponseTypes.",
    why="One failing message makes the whole batch visible again; the ones that succeeded"
    " are processed again.",
    fix=f"Turn on {_RBIF} and return batchItemFailures (Powertools BatchProcessor), or"
    " BatchSize 1.",
    source_url=LAMBDA_SQS_ERRORS,
    compliant=example(f"Batches of 5 with {_RBIF}."),
    non_compliant=example(
        f"Batches of 5 without {_RBIF}.", mapping={"report_batch_item_failures": False}
    ),
    check=check,
    properties=(
        ("mapping", "Properties/FunctionResponseTypes"),
        ("mapping", "Properties/BatchSize"),
    ),
)
