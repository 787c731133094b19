"""Output formats of the CLIs: text, JSON and SARIF 2.1.0, and the exit code of ``--fail-on``.

Every CLI (``safe-queue check``, ``safe-queue audit``) builds a :class:`~safe_queue.report.Report`
and renders it here, so each format has one shape.

Examples
--------
>>> from safe_queue.engine import Finding, Level
>>> from safe_queue.report import Report, ReportedFinding
>>> report = Report([ReportedFinding(Finding("safe-queue:no-dead-letter-queue", Level.WARNING,
...     "No RedrivePolicy."), "Mapping", "template.yaml", 12)],
...     mappings_checked=1, sources=["template.yaml"])
>>> print(render(report, "text"))
template.yaml
  template.yaml:12: warning safe-queue:no-dead-letter-queue Mapping No RedrivePolicy.
<BLANKLINE>
0 errors, 1 warning, 0 infos in 1 mapping (1 template)
>>> [exit_code(report, fail_on) for fail_on in ("error", "warning", "info", "never")]
[0, 1, 1, 0]

An audit's report (``source_kind="region"``) names each mapping's queue and function, counts
regions, and says when it is incomplete:

>>> from safe_queue.report import Unreadable, Where
>>> arn = "arn:aws:sqs:eu-west-1:123456789012:"
>>> audit = Report([ReportedFinding(Finding("safe-queue:no-dead-letter-queue", Level.WARNING,
...     "No RedrivePolicy."), "6f1c", where=Where(region="eu-west-1", queue_name="orders",
...     function_name="render:live"))], mappings_checked=2, sources=["eu-west-1"],
...     source_kind="region", unreadable=[Unreadable("sqs:GetQueueAttributes", arn + "refunds",
...     "denied", "AccessDenied", "", "grant it", mappings=("9a2b",))])
>>> print(render(audit, "text"))
eu-west-1
  eu-west-1: warning safe-queue:no-dead-letter-queue orders -> render:live (mapping 6f1c)
  No RedrivePolicy.
<BLANKLINE>
0 errors, 1 warning, 0 infos in 2 mappings in 1 region; incomplete: 1 of 2 mappings could
not be read
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path, PurePath
from typing import Any, Literal

from safe_queue.engine import RULES, Level
from safe_queue.report import Report, ReportedFinding

__all__ = ["FAIL_ON", "FORMATS", "FailOn", "Format", "exit_code", "render"]

Format = Literal["text", "json", "sarif"]
FailOn = Literal["error", "warning", "info", "never"]
FORMATS: tuple[Format, ...] = ("text", "json", "sarif")
FAIL_ON: tuple[FailOn, ...] = ("error", "warning", "info", "never")

_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Level.ERROR: "error", Level.WARNING: "warning", Level.INFO: "note"}
# GitHub code scanning rejects a run with more results ("SARIF support for code scanning",
# its limits table) and shows only the 5,000 most severe; the most severe are kept.
_SARIF_MAX_RESULTS = 25_000


def exit_code(report: Report, fail_on: FailOn) -> int:
    """Return 1 when the report has a finding at or above ``fail_on``, else 0.

    ``info`` fails on any finding at all, ``safe-queue:unchecked`` included (a mapping that
    could not be fully checked); ``never`` never fails. Acknowledged findings never count.

    Raises
    ------
    ValueError
        ``fail_on`` is not one of ``error``, ``warning``, ``info``, ``never``.
    """
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on={fail_on!r} is not one of {', '.join(FAIL_ON)}")
    if fail_on == "never":
        return 0
    threshold = Level(fail_on).rank
    return int(any(finding.level.rank >= threshold for finding in report.open_findings))


def render(report: Report, fmt: Format) -> str:
    """Render ``report`` as ``text`` (cfn-lint style), ``json`` or ``sarif`` (2.1.0).

    Raises
    ------
    ValueError
        ``fmt`` is not a known format.
    """
    if fmt == "text":
        return _text(report)
    if fmt == "json":
        return json.dumps(_json(report), indent=2, default=str)
    if fmt == "sarif":
        return json.dumps(_sarif(report), indent=2, default=str)
    raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _counts(report: Report) -> dict[str, int]:
    """Count the findings by level (not acknowledged), and ``acknowledged``."""
    counts = {level.value: 0 for level in Level} | {"acknowledged": 0}
    for finding in report.findings:
        counts["acknowledged" if finding.acknowledged else finding.level.value] += 1
    return counts


def _where(finding: ReportedFinding) -> str:
    """Return the heading a finding is grouped under: its template, else its region."""
    if finding.template is not None:
        return finding.template
    return finding.where.region or "account"


def _label(finding: ReportedFinding) -> str:
    """Name the mapping: its id, or for an account its queue and function and its UUID."""
    queue, function = finding.where.queue_name, finding.where.function_name
    if queue and function:
        return f"{queue} -> {function} (mapping {finding.resource})"
    return finding.resource


def _unread(report: Report) -> str:
    """Say how much of an incomplete run could not be read (empty when it is complete)."""
    if report.complete:
        return ""
    mappings = {uuid for failure in report.unreadable for uuid in failure.mappings}
    regions = [failure.resource for failure in report.unreadable if not failure.mappings]
    parts = []
    if mappings:
        parts.append(f"{len(mappings)} of {_plural(report.mappings_checked, 'mapping')}")
    if regions:
        parts.append(f"the mappings of {_plural(len(regions), 'region')} ({', '.join(regions)})")
    return f"; incomplete: {' and '.join(parts)} could not be read"


def _text(report: Report) -> str:
    groups: dict[str, list[ReportedFinding]] = {}
    for finding in report.findings:
        groups.setdefault(_where(finding), []).append(finding)
    lines: list[str] = []
    for heading, findings in groups.items():
        lines.append(heading)
        for finding in findings:
            location = heading if finding.line is None else f"{heading}:{finding.line}"
            covered = finding.finding.acknowledged
            mark = f" [acknowledged: {covered.reason}]" if covered is not None else ""
            lines.append(
                f"  {location}: {finding.level.value} {finding.rule_id} {_label(finding)}"
                f" {finding.message}{mark}"
            )
        lines.append("")
    counts = _counts(report)
    sources = _plural(len(report.sources), report.source_kind)
    where = f"in {sources}" if report.source_kind == "region" else f"({sources})"
    acknowledged = f", {counts['acknowledged']} acknowledged" if counts["acknowledged"] else ""
    lines.append(
        f"{_plural(counts['error'], 'error')}, {_plural(counts['warning'], 'warning')},"
        f" {_plural(counts['info'], 'info')}{acknowledged} in"
        f" {_plural(report.mappings_checked, 'mapping')} {where}{_unread(report)}"
    )
    return "\n".join(lines)


def _json(report: Report) -> dict[str, Any]:
    findings = []
    for finding in report.findings:
        entry: dict[str, Any] = {
            "rule_id": finding.rule_id,
            "level": finding.level.value,
            "message": finding.message,
            "template": finding.template,
            "resource": finding.resource,
            "line": finding.line,
            "acknowledged": _acknowledged(finding),
        }
        if finding.template is not None:  # a template's mapping: both named, null if unknown
            entry.update(queue=None, function=None)
        entry.update(finding.where.fields())
        findings.append(entry)
    counts = _counts(report)
    worst = report.worst()
    document: dict[str, Any] = {
        "findings": findings,
        "summary": {
            "errors": counts["error"],
            "warnings": counts["warning"],
            "infos": counts["info"],
            "acknowledged": counts["acknowledged"],
            "worst": worst.value if worst is not None else None,
            "mappings_checked": report.mappings_checked,
            "sources": list(report.sources),
        },
    }
    if report.source_kind == "region":  # an audit: complete, or what it could not read
        document["summary"]["complete"] = report.complete
        document["summary"]["unreadable"] = [
            dataclasses.asdict(failure) for failure in report.unreadable
        ]
    return document


def _acknowledged(finding: ReportedFinding) -> dict[str, str] | None:
    acknowledgement = finding.finding.acknowledged
    if acknowledgement is None:
        return None
    return {"reason": acknowledgement.reason, "source": acknowledgement.source}


def _uri(template: str) -> str:
    """Return a SARIF artifact URI: relative paths as they are (POSIX), others as file URIs."""
    path = PurePath(template)
    if not path.is_absolute():
        return path.as_posix()
    try:
        return Path(template).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(template).resolve().as_uri()


def _severity(finding: ReportedFinding) -> tuple[int, bool]:
    """Sort key: the most severe first, acknowledged ones after the others of their level."""
    return -finding.level.rank, finding.finding.acknowledged is not None


def _sarif(report: Report) -> dict[str, Any]:
    from safe_queue._version import __version__

    index = {entry.id: position for position, entry in enumerate(RULES)}
    rules = [
        {
            "id": entry.id,
            "name": entry.id.split(":", 1)[-1],
            "shortDescription": {"text": entry.summary},
            "fullDescription": {"text": f"{entry.summary} {entry.why}"},
            "help": {
                "text": f"{entry.why} Fix: {entry.fix}",
                "markdown": f"{entry.summary}\n\n**Why:** {entry.why}\n\n**Fix:** {entry.fix}",
            },
            "helpUri": entry.docs_url,
            "defaultConfiguration": {"level": _SARIF_LEVEL[entry.level]},
            "properties": {"tags": list(entry.tags)},
        }
        for entry in RULES
    ]
    results = []
    kept = report.findings
    if len(kept) > _SARIF_MAX_RESULTS:
        kept = sorted(kept, key=_severity)[:_SARIF_MAX_RESULTS]
    for finding in kept:
        result: dict[str, Any] = {
            "ruleId": finding.rule_id,
            "level": _SARIF_LEVEL[finding.level],
            "message": {"text": f"{finding.resource}: {finding.message}"},
        }
        if finding.rule_id in index:
            result["ruleIndex"] = index[finding.rule_id]
        logical = [{"name": finding.resource, "kind": "resource"}]
        if finding.template is not None:
            physical: dict[str, Any] = {
                "artifactLocation": {"uri": _uri(finding.template)},
            }
            # GitHub code scanning requires a startLine: the file's first line when unknown.
            physical["region"] = {"startLine": finding.line or 1}
            result["locations"] = [{"physicalLocation": physical, "logicalLocations": logical}]
        else:
            result["locations"] = [{"logicalLocations": logical}]
        # the template as the location names it: the same wherever the repository is checked
        # out, and whether the path was given relative or absolute
        where = None if finding.template is None else _uri(finding.template)
        key = f"{finding.rule_id}|{where}|{finding.resource}"
        result["partialFingerprints"] = {
            "safeQueueFinding/v1": hashlib.sha256(key.encode()).hexdigest()[:32]
        }
        acknowledgement = finding.finding.acknowledged
        if acknowledgement is not None:
            result["suppressions"] = [{"kind": "inSource", "justification": acknowledgement.reason}]
        properties = finding.where.fields()
        if properties:
            result["properties"] = properties
        results.append(result)
    log: dict[str, Any] = {
        "$schema": _SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "safe-queue",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    if report.source_kind == "region":  # an audit: did it read everything?
        log["runs"][0]["invocations"] = [
            {
                "executionSuccessful": report.complete,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": failure.sentence()}}
                    for failure in report.unreadable
                ],
            }
        ]
    if len(kept) < len(report.findings):
        left_out = len(report.findings) - len(kept)
        text = (
            f"{left_out} of {len(report.findings)} findings are not in this file: code scanning"
            f" takes at most {_SARIF_MAX_RESULTS} results per run (the most severe are here)."
            " Fix: check fewer templates per run, or see all with --format text or json."
        )
        notification = {"level": "warning", "message": {"text": text}}
        invocations = log["runs"][0].setdefault(
            "invocations", [{"executionSuccessful": True, "toolExecutionNotifications": []}]
        )
        invocations[0]["toolExecutionNotifications"].append(notification)
    return log
