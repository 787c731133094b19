"""``safe-queue:unchecked``: the engine's own finding for values it could not know."""

from __future__ import annotations

from collections.abc import Iterable

from safe_queue.engine.facts import Unknown
from safe_queue.engine.rule import UNCHECKED, Finding, Level, Rule, Violation

__all__ = ["RULE", "unchecked"]

RULE = Rule(
    id=UNCHECKED,
    levels=(Level.INFO,),
    kind="engine",
    summary="A value the rules need is not known from this source (an imported queue or"
    " function, a parameter without a value, a denied API call, a deleted resource).",
    why="The rules that need it are skipped rather than guessed; this finding lists them.",
    fix="Define the resource where it can be read, give the parameter a value, grant the"
    " read action, or check those settings by hand.",
    source_url="https://safe-queue.github.io/safe_queue/checks/",
)


def unchecked(skipped: Iterable[tuple[Unknown, Iterable[str]]]) -> Finding:
    """Return the one ``unchecked`` finding: each unknown value and the rules it skipped.

    Every surface that cannot know a value (an adapter, the audit for a whole region) says
    so with this, so the words are the same everywhere.

    Examples
    --------
    >>> print(unchecked([(Unknown("the queue", "is imported"), ["safe-queue:a"])]).message)
    Not checked, because a value is not known: the queue is imported (skipped: \
safe-queue:a). Fix: make the resource readable from here (define it in the template or \
app, give the parameter a value, grant the read action), or check these settings by hand.
    """
    details = "; ".join(
        f"{value.what} {value.why}" + (f" (skipped: {', '.join(ids)})" if ids else "")
        for value, ids in ((value, list(ids)) for value, ids in skipped)
    )
    return RULE.finding(
        Violation(
            f"Not checked, because a value is not known: {details}.",
            "make the resource readable from here (define it in the template or app, give the"
            " parameter a value, grant the read action), or check these settings by hand.",
        )
    )
