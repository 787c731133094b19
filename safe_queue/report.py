"""Findings located in a template or an account, and the run's summary: what every CLI prints.

The template adapter (``safe-queue check``), the CDK plugin, the live audit
(``safe-queue audit``) and the AWS Config rule turn engine findings into these, so every
output format has one shape to render.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from safe_queue.engine.rule import Finding, Level

__all__ = ["Report", "ReportedFinding"]


@dataclass(frozen=True)
class ReportedFinding:
    """An engine finding, with where it was found.

    Attributes
    ----------
    finding
        The engine's :class:`~safe_queue.engine.Finding`.
    resource
        The event source mapping: its logical id in a template, its UUID in an account.
    template
        The template file's path (``safe-queue check``); ``None`` for a live account.
    line
        1-based line of the mapping in the template, where known.
    extra
        More fields for JSON output (``queue_arn``, ``function_arn``, ``stack``,
        ``construct_path``...).
    """

    finding: Finding
    resource: str
    template: str | None = None
    line: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rule_id(self) -> str:
        """The finding's rule id."""
        return self.finding.rule_id

    @property
    def level(self) -> Level:
        """The finding's level."""
        return self.finding.level

    @property
    def message(self) -> str:
        """The finding's message."""
        return self.finding.message

    @property
    def acknowledged(self) -> bool:
        """True when an acknowledgement covers it (reported, but never fails a run)."""
        return self.finding.acknowledged is not None


@dataclass
class Report:
    """Everything one run found.

    Attributes
    ----------
    findings
        Every finding, in the order found.
    mappings_checked
        SQS event source mappings evaluated.
    sources
        The templates (or regions) read.
    """

    findings: list[ReportedFinding] = field(default_factory=list)
    mappings_checked: int = 0
    sources: list[str] = field(default_factory=list)

    @property
    def open_findings(self) -> list[ReportedFinding]:
        """The findings no acknowledgement covers: the ones that can fail a run."""
        return [f for f in self.findings if not f.acknowledged]

    def worst(self) -> Level | None:
        """Return the most serious level not acknowledged, or ``None`` without such findings."""
        return max(
            (f.level for f in self.open_findings), key=lambda level: level.rank, default=None
        )
