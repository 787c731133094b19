"""Findings located in a template or an account, and the run's summary: what every CLI prints.

The template adapter (``safe-queue check``), the CDK plugin, the live audit
(``safe-queue audit``) and the AWS Config rule turn engine findings into these, so every
output format has one shape to render. A run that could not read part of what it was
asked to check (an AWS error after retries) lists it in :attr:`Report.unreadable`: the
report is then incomplete, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from safe_queue.engine.rule import Finding, Level

__all__ = ["Report", "ReportedFinding", "Unreadable", "Where"]


@dataclass(frozen=True)
class Where:
    """How a surface names a mapping's surroundings: the fields shown beside each finding.

    Every field is optional; the JSON output and SARIF ``properties`` carry the ones set.

    Attributes
    ----------
    queue, function
        The source queue and the function as the template or plan names them: logical
        ids, Terraform addresses, or the queue's ARN when the run does not define it.
    stack
        The cloud assembly's stack artifact id (``cdk.out``).
    parameters
        The template parameter values assumed (``--parameter`` or their ``Default``).
    terraform
        ``plan`` or ``state``, for a Terraform document.
    queue_arn, function_arn, queue_name, function_name, region
        A live account's mapping (audit, Config rule, hook): the ARNs, the names (the
        function's with its alias or version) and the region.

    Examples
    --------
    >>> Where(queue="Orders", region="eu-west-1").fields()
    {'queue': 'Orders', 'region': 'eu-west-1'}
    """

    queue: str | None = None
    function: str | None = None
    stack: str | None = None
    parameters: Mapping[str, str] | None = None
    terraform: str | None = None
    queue_arn: str | None = None
    function_arn: str | None = None
    queue_name: str | None = None
    function_name: str | None = None
    region: str | None = None

    def fields(self) -> dict[str, Any]:
        """Return the fields that are set, in declaration order (``parameters`` as a dict)."""
        found: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None:
                found[item.name] = dict(value) if item.name == "parameters" else value
        return found


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
    where
        The mapping's queue, function, stack... as this surface names them (:class:`Where`).
    """

    finding: Finding
    resource: str
    template: str | None = None
    line: int | None = None
    where: Where = field(default_factory=Where)

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


@dataclass(frozen=True)
class Unreadable:
    """Something a run could not read (an AWS error after retries): what, why, and the fix.

    Attributes
    ----------
    operation
        The API action that failed, as IAM names it (``sqs:GetQueueAttributes``).
    resource
        What it was asked about: an ARN, a queue, a region.
    kind
        Why, in one word: ``denied``, ``throttled``, ``not-found``, ``unavailable`` (a
        server error), ``unreachable`` (no connection) or ``refused`` (credentials).
    code
        The AWS error code (``AccessDenied``, ``ThrottlingException``); ``HTTP 503`` when
        the answer carried none; the exception's name for a connection error.
    message
        The error's message on one line; an HTML page is described, never quoted.
    fix
        What to do.
    attempts
        How many times it was tried, retries included (``None``: not known).
    mappings
        The event source mappings it leaves unchecked (UUIDs); empty when a region's
        mappings could not be listed at all.
    region
        The region asked.

    Examples
    --------
    >>> print(Unreadable("sqs:GetQueueAttributes", "arn:aws:sqs:eu-west-1:1:q", "unavailable",
    ...     "HTTP 503", "Service Unavailable", "audit again later", attempts=10).sentence())
    sqs:GetQueueAttributes on arn:aws:sqs:eu-west-1:1:q failed after 10 attempts:
    HTTP 503: Service Unavailable. Fix: audit again later.
    """

    operation: str
    resource: str
    kind: str
    code: str
    message: str
    fix: str
    attempts: int | None = None
    mappings: tuple[str, ...] = ()
    region: str | None = None

    def sentence(self) -> str:
        """Say it in one line: the operation, the resource, the error code and message, the fix."""
        tried = f" after {self.attempts} attempts" if self.attempts and self.attempts > 1 else ""
        message = f": {self.message}" if self.message else ""
        return (
            f"{self.operation} on {self.resource} failed{tried}: {self.code}{message}."
            f" Fix: {self.fix}."
        )


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
    source_kind
        What :attr:`sources` are: template files (``template``) or account regions (``region``).
    unreadable
        What could not be read (an AWS error after retries): the run is incomplete, and
        the findings of what it names are unknown.
    """

    findings: list[ReportedFinding] = field(default_factory=list)
    mappings_checked: int = 0
    sources: list[str] = field(default_factory=list)
    source_kind: Literal["template", "region"] = "template"
    unreadable: list[Unreadable] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """``True`` when everything the run was asked to check was read."""
        return not self.unreadable

    @property
    def open_findings(self) -> list[ReportedFinding]:
        """The findings no acknowledgement covers: the ones that can fail a run."""
        return [f for f in self.findings if not f.acknowledged]

    def worst(self) -> Level | None:
        """Return the most serious level not acknowledged, or ``None`` without such findings."""
        return max(
            (f.level for f in self.open_findings), key=lambda level: level.rank, default=None
        )
