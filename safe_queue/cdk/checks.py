"""``SafeQueueChecks``: a CDK policy-validation plugin that checks every SQS -> Lambda mapping.

Registered with ``Validations.of(app).add_plugins(SafeQueueChecks())``, it is called once per
app after synthesis with the paths of every template, nested ``Stage`` assemblies included.
It reads them with the same template adapter as ``safe-queue check`` (so values set with
``add_property_override`` and L1 escape hatches are seen) and reports the engine's findings:
errors fail ``cdk synth``; warnings and infos are reported and the synth passes. Findings are
acknowledged the CDK way, ``Validations.of(construct).acknowledge(Acknowledgment(
id="SafeQueue::safe-queue:<rule>", reason=...))``.
"""

from __future__ import annotations

import os
from typing import Any

import jsii
from aws_cdk import (
    Annotations,
    IAspect,
    IPolicyValidationContext,
    IPolicyValidationPlugin,
    PolicyValidationPluginReport,
    PolicyViolatingResource,
    PolicyViolation,
)
from constructs import IConstruct

import safe_queue
from safe_queue.engine import RULES, Level, rule
from safe_queue.report import ReportedFinding
from safe_queue.template import check_paths

__all__ = ["PLUGIN_NAME", "SafeQueueChecks"]

PLUGIN_NAME = "SafeQueue"
"""The plugin's name: acknowledgement ids are ``SafeQueue::<rule id>``."""

_NEW_FORM = (
    "SafeQueueChecks is a CDK policy-validation plugin since safe-queue 0.2: replace"
    " `Aspects.of(app).add(SafeQueueChecks())` with"
    " `Validations.of(app).add_plugins(SafeQueueChecks())` (it then also checks mappings"
    " inside Stages and values set with add_property_override)."
)


def _violation(found: ReportedFinding) -> PolicyViolation:
    # The source queue of a SafeQueueConsumer's mapping is the consumer's child: naming it
    # lets an acknowledgement on the consumer cover the finding, as for the consumer's own
    # warnings. Other mappings are named themselves.
    resource = found.extra.get("construct_resource") or found.resource
    template = found.extra.get("construct_template") or found.template
    return PolicyViolation(
        rule_name=found.rule_id,
        description=found.message,
        fix=rule(found.rule_id).fix,
        severity=found.level.value,
        violating_resources=[
            PolicyViolatingResource(
                resource_logical_id=resource,
                template_path=template,
                locations=[f"line {found.line}"] if found.line else [],
            )
        ],
    )


def _assembly_or_templates(template_paths: list[str]) -> list[str]:
    """Return the cloud assembly holding every template, else the templates themselves.

    Read through its ``manifest.json``, the assembly gives each template its stack name,
    which CDK's cross-stack references (``Fn::GetStackOutput``) name.
    """
    if not template_paths:
        return []
    root = os.path.commonpath([os.path.dirname(path) for path in template_paths])
    return [root] if os.path.isfile(os.path.join(root, "manifest.json")) else template_paths


@jsii.implements(IPolicyValidationPlugin, IAspect)
class SafeQueueChecks:
    """Check every SQS -> Lambda event source mapping of a CDK app at synth time.

    Parameters
    ----------
    parameters
        Values for CloudFormation parameters the templates read (``CfnParameter``), by
        name; a parameter without a value here or a default makes the rules that need it
        give ``safe-queue:unchecked`` instead of a guess. Default: none.

    Examples
    --------
    >>> from aws_cdk import App, Validations
    >>> app = App()
    >>> Validations.of(app).add_plugins(SafeQueueChecks())
    """

    def __init__(self, *, parameters: dict[str, str] | None = None) -> None:
        self._parameters = dict(parameters or {})
        self._told: set[str] = set()

    @property
    def name(self) -> str:
        """``SafeQueue``: the prefix of acknowledgement ids."""
        return PLUGIN_NAME

    @property
    def version(self) -> str:
        """The safe-queue version."""
        return safe_queue.__version__

    @property
    def rule_ids(self) -> list[str]:
        """Every rule id of the engine's registry."""
        return [entry.id for entry in RULES]

    def validate(self, context: IPolicyValidationContext) -> PolicyValidationPluginReport:
        """Check every template of the app (CDK calls this once, after synthesis)."""
        report = check_paths(
            _assembly_or_templates(list(context.template_paths)),
            self._parameters,
            skip_reported_by_construct=True,
        )
        return PolicyValidationPluginReport(
            success=not any(f.level is Level.ERROR for f in report.findings),
            violations=[_violation(found) for found in report.findings],
            plugin_version=self.version,
        )

    def visit(self, node: IConstruct) -> None:
        """Refuse the pre-0.2 form ``Aspects.of(app).add(SafeQueueChecks())`` clearly."""
        root: Any = node.node.root
        path = root.node.path or "<app>"
        if path not in self._told:
            self._told.add(path)
            Annotations.of(root).add_error(_NEW_FORM)
