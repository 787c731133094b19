"""``safe-queue:filter-deletes-unmatched``: Lambda deletes what no filter matches."""

from __future__ import annotations

from safe_queue.engine.example import example
from safe_queue.engine.rule import Level, Rule, Violation

__all__ = ["RULE"]


def check(*, has_filters: bool) -> Violation | None:
    """Warn that an SQS mapping with filter criteria deletes the messages that match none."""
    if not has_filters:
        return None
    return Violation(
        "The event source mapping has FilterCriteria: for SQS, Lambda deletes every message"
        " that matches no filter, without invoking the function and without dead-lettering"
        " it.",
        "make sure no other consumer needs those messages (send them to another queue"
        " instead), or acknowledge this finding.",
    )


RULE = Rule(
    id="safe-queue:filter-deletes-unmatched",
    levels=(Level.WARNING,),
    kind="guidance",
    summary="The SQS event source mapping has FilterCriteria.",
    why="For SQS, Lambda deletes every message that matches no filter, without invoking the"
    " function or dead-lettering it.",
    fix="Make sure no one needs the unmatched messages, or route them elsewhere; acknowledge"
    " the finding once that is so.",
    source_url="https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html",
    compliant=example("No FilterCriteria."),
    non_compliant=example("A filter on body.kind.", mapping={"has_filters": True}),
    check=check,
    properties=(("mapping", "Properties/FilterCriteria"),),
)
