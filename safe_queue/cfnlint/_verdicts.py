"""One template's findings, as ``safe-queue check`` gives them, ready to become cfn-lint matches.

No cfn-lint import here: this is the template adapter's walk (read -> facts -> engine), and
the choice of cfn-lint id and message per finding.

- With a file (``cfn-lint template.yaml``), the file is read again by the template adapter,
  as ``safe-queue check template.yaml`` reads it: the same SAM events, logical ids, lines,
  parameter defaults and acknowledgements, so the verdicts are ``check``'s by construction.
- Without one (a template piped to cfn-lint, or ``cfnlint.api.lint`` on a string), the
  template cfn-lint decoded is written to a temporary JSON file and read from there; its
  lines are then not the source's, so cfn-lint places the match by its path instead.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from safe_queue.cfnlint._ids import ACKNOWLEDGED, UNREADABLE, cfn_lint_id
from safe_queue.template import TemplateError, judge

__all__ = ["Verdict", "judge_body", "judge_file"]


@dataclass(frozen=True)
class Verdict:
    """One cfn-lint match to report.

    Attributes
    ----------
    cfn_lint_id
        The cfn-lint rule id it is reported under.
    message
        ``<engine rule id> <mapping's logical id> <finding>``, as ``safe-queue check`` prints
        it; an acknowledged finding ends with ``[acknowledged: <reason>]``.
    logical_id
        The mapping's logical id (for SAM, the generated one); ``None`` for a template that
        could not be read.
    line
        1-based line in the file (the mapping's, or the SAM event's), where known; ``None``
        when the template was not read from its file.
    """

    cfn_lint_id: str
    message: str
    logical_id: str | None
    line: int | None


def _same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return Path(first).resolve() == Path(second).resolve()


def judge_file(path: str, *, lines: bool = True) -> list[Verdict]:
    """Judge the template at ``path`` alone, as ``safe-queue check <path>`` does.

    Only mappings defined in that file are reported (a ``manifest.json`` would bring in a
    whole cloud assembly). A template the adapter refuses gives one :data:`UNREADABLE`
    verdict with the reason, never silence.

    Parameters
    ----------
    path
        The template file.
    lines
        False when the file is a copy whose lines are not the source's.
    """
    try:
        judged = judge([path])
    except TemplateError as error:
        line = error.line if lines else None
        return [Verdict(UNREADABLE, f"safe-queue could not check it: {error.message}", None, line)]
    verdicts = []
    for mapping, findings in judged.mappings:
        source = mapping.source
        if not _same_file(source.template.path, path):
            continue
        for finding in findings:
            message = f"{finding.rule_id} {source.logical_id} {finding.message}"
            if finding.acknowledged is not None:
                verdict_id = ACKNOWLEDGED
                message = f"{message} [acknowledged: {finding.acknowledged.reason}]"
            else:
                verdict_id = cfn_lint_id(finding.rule_id, finding.level)
            verdicts.append(
                Verdict(verdict_id, message, source.logical_id, source.line if lines else None)
            )
    return verdicts


def judge_body(body: Mapping[str, Any]) -> list[Verdict]:
    """Judge a decoded template that has no file of its own (written to a temporary copy)."""
    with tempfile.TemporaryDirectory(prefix="safe-queue-cfnlint-") as directory:
        path = Path(directory, "template.json")
        path.write_text(json.dumps(body, default=str), encoding="utf-8")
        return judge_file(str(path), lines=False)
