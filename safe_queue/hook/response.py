"""The hook's answer: ``hookStatus``, ``errorCode``, ``message`` and ``annotations``.

As the CloudFormation Hooks User Guide documents the response
(https://docs.aws.amazon.com/cloudformation-cli/latest/hooks-userguide/lambda-hooks-create-lambda-function.html):
``hookStatus`` (``SUCCESS``, ``FAILED`` or ``IN_PROGRESS``; this hook never answers
``IN_PROGRESS``), ``errorCode`` (required on failure: ``NonCompliant`` or
``InternalFailure``), ``message`` (truncated by CloudFormation at 4,096 characters, at
1,024 for Cloud Control API), ``clientRequestToken`` (required, echoed) and
``annotations`` (``annotationName``, ``status`` ``PASSED``/``FAILED``/``SKIPPED``,
``statusMessage``, ``remediationMessage``, ``remediationLink``, ``severityLevel``
``INFORMATIONAL``/``LOW``/``MEDIUM``/``HIGH``/``CRITICAL``; the CloudFormation API's
``Annotation`` allows 1,024 characters of name and 16,384 of each message).

The verdict: an error-level finding that no acknowledgement covers fails the operation
(``NonCompliant``); a read that failed (the payload, an AWS error after the retries) with
no such error fails it as ``InternalFailure``, in one line; anything else succeeds, the
warnings listed in the message. The message always fits: counts first, then as many
findings as fit, then how many more the annotations hold.

Examples
--------
>>> from safe_queue.engine import Finding, Level
>>> from safe_queue.report import ReportedFinding
>>> found = ReportedFinding(Finding("safe-queue:no-dead-letter-queue", Level.WARNING,
...     "Queue has no RedrivePolicy. Fix: add a dead-letter queue."), "Mapping")
>>> answer = respond("t-1", Outcome("stack orders", checked=1, findings=[found]))
>>> answer["hookStatus"], answer["clientRequestToken"]
('SUCCESS', 't-1')
>>> print(answer["message"])
safe-queue passed with 1 warning on 1 of 1 SQS event source mapping in stack orders.
WARNING safe-queue:no-dead-letter-queue at Mapping: Queue has no RedrivePolicy. Fix: add a
dead-letter queue.
>>> answer["annotations"][0]["severityLevel"], answer["annotations"][0]["remediationMessage"]
('MEDIUM', 'add a dead-letter queue.')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from safe_queue.engine import Level, rule
from safe_queue.report import ReportedFinding, Unreadable

__all__ = [
    "ANNOTATION_MESSAGE_MAX",
    "ANNOTATION_NAME_MAX",
    "CLOUD_CONTROL_MESSAGE_MAX",
    "MESSAGE_MAX",
    "Outcome",
    "failure",
    "respond",
]

MESSAGE_MAX: Final = 4096
"""CloudFormation truncates a hook's ``message`` at this many characters."""
CLOUD_CONTROL_MESSAGE_MAX: Final = 1024
"""... and at this many for a Cloud Control API operation."""
ANNOTATION_NAME_MAX: Final = 1024
ANNOTATION_MESSAGE_MAX: Final = 16384
LINE_MAX: Final = 600
"""A finding's line in the message is cut here, so that one long finding leaves room."""
_SEVERITY: Final = {Level.ERROR: "HIGH", Level.WARNING: "MEDIUM", Level.INFO: "INFORMATIONAL"}


@dataclass
class Outcome:
    """What one invocation found.

    Attributes
    ----------
    subject
        What was evaluated, in words that end a sentence (``stack orders``,
        ``the update of AWS::SQS::Queue Queue``).
    checked
        SQS event source mappings evaluated.
    findings
        Every finding, located at its mapping (logical id, or UUID for a live one).
    unreadable
        Reads that failed after the retries (the evaluation is then incomplete).
    note
        Said after the counts when nothing was evaluated (``a deleted stack has no
        template``).
    """

    subject: str
    checked: int = 0
    findings: list[ReportedFinding] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    note: str = ""

    @property
    def errors(self) -> list[ReportedFinding]:
        """The errors that fail the operation: error level, not acknowledged."""
        return [f for f in self.findings if f.level is Level.ERROR and not f.acknowledged]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _fix(finding: ReportedFinding) -> str:
    _, found, fix = finding.message.partition(" Fix: ")
    return fix if found else rule(finding.rule_id).fix


def _line(finding: ReportedFinding) -> str:
    level = "ACKNOWLEDGED " if finding.acknowledged else ""
    text = f"{level}{finding.level.name} {finding.rule_id} at {finding.resource}: {finding.message}"
    text = " ".join(text.split())
    return text if len(text) <= LINE_MAX else text[: LINE_MAX - 1] + "…"


def _order(finding: ReportedFinding) -> tuple[bool, int]:
    return (finding.acknowledged, -finding.level.rank)


def _annotation(finding: ReportedFinding) -> dict[str, Any]:
    acknowledged = finding.finding.acknowledged
    status_message = f"{finding.resource}: {finding.message}"
    if acknowledged is not None:
        where = f" ({acknowledged.source})" if acknowledged.source else ""
        status_message += f" Acknowledged{where}: {acknowledged.reason}"
    failed = finding.level.rank >= Level.WARNING.rank and acknowledged is None
    return {
        "annotationName": finding.rule_id[:ANNOTATION_NAME_MAX],
        "status": "FAILED" if failed else "SKIPPED",
        "statusMessage": status_message[:ANNOTATION_MESSAGE_MAX],
        "remediationMessage": _fix(finding)[:ANNOTATION_MESSAGE_MAX],
        "remediationLink": rule(finding.rule_id).docs_url,
        "severityLevel": _SEVERITY[finding.level],
    }


def _counts(outcome: Outcome) -> str:
    levels = [f.level for f in outcome.findings if not f.acknowledged]
    parts = [
        _plural(levels.count(Level.ERROR), "error") if Level.ERROR in levels else "",
        _plural(levels.count(Level.WARNING), "warning") if Level.WARNING in levels else "",
        _plural(levels.count(Level.INFO), "note") if Level.INFO in levels else "",
    ]
    acknowledged = sum(1 for f in outcome.findings if f.acknowledged)
    if acknowledged:
        parts.append(f"{acknowledged} acknowledged")
    words = [p for p in parts if p]
    return ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1] if words else ""


def _summary(outcome: Outcome) -> str:
    mappings = _plural(outcome.checked, "SQS event source mapping")
    if not outcome.findings:
        tail = f" {outcome.note}" if outcome.note else ""
        return f"safe-queue passed: {mappings} in {outcome.subject}, no finding.{tail}"
    broken = len({f.resource for f in outcome.findings})
    where = f"on {broken} of {mappings} in {outcome.subject}"
    if outcome.errors:
        return (
            f"safe-queue refused: {_counts(outcome)} {where}. Fix the errors, or acknowledge"
            " them in the resource's Metadata (see the remediation link)."
        )
    return f"safe-queue passed with {_counts(outcome)} {where}."


def _fit(head: Sequence[str], lines: Sequence[str], limit: int) -> str:
    """Join ``head`` and as many ``lines`` as fit in ``limit``; say how many are left out."""
    text = "\n".join(head)
    for index, line in enumerate(lines):
        left = len(lines) - index
        more = (
            f"\n... and {_plural(left, 'more finding')}: see this hook invocation's"
            " annotations, or run safe-queue check."
        )
        candidate = f"{text}\n{line}"
        last = index == len(lines) - 1
        if len(candidate) + (0 if last else len(more)) > limit:
            text += more
            break
        text = candidate
    return text if len(text) <= limit else text[: limit - 1] + "…"


def respond(token: str, outcome: Outcome, *, limit: int = MESSAGE_MAX) -> dict[str, Any]:
    """Return the hook's response for ``outcome`` (see the module's docstring)."""
    findings = sorted(outcome.findings, key=_order)
    annotations = [_annotation(f) for f in findings]
    if outcome.unreadable and not outcome.errors:
        answer = failure(token, _unread(outcome), limit=limit)
        answer["annotations"] = annotations
        return answer
    head = [_summary(outcome)]
    if outcome.unreadable:
        head.append(f"Also not read: {outcome.unreadable[0].sentence()}")
    message = _fit(head, [_line(f) for f in findings], limit)
    response: dict[str, Any] = {
        "hookStatus": "FAILED" if outcome.errors else "SUCCESS",
        "message": message,
        "clientRequestToken": token,
        "annotations": annotations,
    }
    if outcome.errors:
        response["errorCode"] = "NonCompliant"
    return response


def _unread(outcome: Outcome) -> str:
    first = outcome.unreadable[0]
    others = len(outcome.unreadable) - 1
    more = f" ({_plural(others, 'more read')} failed too)" if others else ""
    found = _counts(outcome)
    also = f"; found so far: {found}" if found else ""
    return f"{outcome.subject}: {first.sentence()}{more}{also}"


def failure(token: str, reason: str, *, limit: int = MESSAGE_MAX) -> dict[str, Any]:
    """Return ``FAILED`` with ``InternalFailure``: the evaluation could not be done, and why.

    The message is one line: ``safe-queue could not evaluate <reason>``.
    """
    line = " ".join(f"safe-queue could not evaluate {reason}".split())
    return {
        "hookStatus": "FAILED",
        "errorCode": "InternalFailure",
        "message": line if len(line) <= limit else line[: limit - 1] + "…",
        "clientRequestToken": token,
    }
