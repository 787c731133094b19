"""Render a :class:`~safe_queue.report.Report` (MINIMAL stand-in, replaced on merge).

The template/CLI branch owns the real module (text, JSON and SARIF); this one implements
the same two functions for JSON and plain text, so that ``safe-queue audit`` runs and is
tested in this branch. Keep callers to ``render`` and ``exit_code``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from safe_queue.engine import Level
from safe_queue.report import Report

__all__ = ["exit_code", "render"]

Format = Literal["text", "json", "sarif"]
FailOn = Literal["error", "warning", "never"]


def _finding(finding: Any) -> dict[str, Any]:
    return {
        "rule_id": finding.rule_id,
        "level": finding.level.value,
        "message": finding.message,
        "resource": finding.resource,
        "template": finding.template,
        "line": finding.line,
        **finding.extra,
    }


def render(report: Report, fmt: Format) -> str:
    """Return ``report`` as ``fmt`` (``text``, ``json``; a bare ``sarif`` until the merge)."""
    if fmt == "json":
        counts = {level.value: 0 for level in Level}
        for finding in report.findings:
            counts[finding.level.value] += 1
        return json.dumps(
            {
                "findings": [_finding(f) for f in report.findings],
                "summary": {
                    "mappings_checked": report.mappings_checked,
                    "sources": report.sources,
                    "errors": counts["error"],
                    "warnings": counts["warning"],
                    "infos": counts["info"],
                },
            },
            indent=2,
        )
    if fmt == "text":
        lines = [f"{f.resource}: {f.level.value} {f.rule_id}: {f.message}" for f in report.findings]
        lines.append(f"{report.mappings_checked} mappings checked, {len(report.findings)} findings")
        return "\n".join(lines)
    levels = {"error": "error", "warning": "warning", "info": "note"}
    results = [
        {
            "ruleId": f.rule_id,
            "level": levels[f.level.value],
            "message": {"text": f.message},
            "locations": [{"logicalLocations": [{"name": f.resource}]}],
        }
        for f in report.findings
    ]
    return json.dumps(
        {
            "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "safe-queue"}}, "results": results}],
        },
        indent=2,
    )


def exit_code(report: Report, fail_on: FailOn) -> int:
    """Return 1 if a finding is at or above ``fail_on``, else 0 (``never``: always 0)."""
    if fail_on == "never":
        return 0
    threshold = Level(fail_on).rank
    return int(any(f.level.rank >= threshold for f in report.findings))
