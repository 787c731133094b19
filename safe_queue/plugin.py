"""``SafeQueueChecks``: a CDK policy-validation plugin that checks every SQS -> Lambda mapping.

The CDK synth surface of the template adapter (:mod:`safe_queue.template`), beside the
constructs of :mod:`safe_queue.cdk`, which need no template reader.

Registered with ``Validations.of(app).add_plugins(SafeQueueChecks())``, it is called once per
app after synthesis with the paths of every template, nested ``Stage`` assemblies included.
It reads them with the same template adapter as ``safe-queue check`` (so values set with
``add_property_override`` and L1 escape hatches are seen, and acknowledgements are honoured
the same way) and reports the engine's findings: errors fail ``cdk synth``; warnings and
infos are reported and the synth passes. Findings are acknowledged the CDK way,
``Validations.of(construct).acknowledge(Acknowledgment(id="SafeQueue::safe-queue:<rule>",
reason=...))`` on the mapping, its queue, its function, or an ancestor.

How a finding reaches the CDK CLI's output. The CLI judges only the stacks it selected
(by default the app's top-level stacks) and drops the violations of constructs outside
them, but keeps a violation that names no construct. So:

- a finding in a top-level stack names its resource (the mapping, or a
  ``SafeQueueConsumer``'s queue), with the property paths the rule reads;
- a finding in a stack inside a ``Stage`` (every CDK Pipelines app) names no construct, and
  says where it is in its description: plain ``cdk synth`` fails on it, and with ``'**'``
  it is still reported once;
- an acknowledged finding is an ``info`` violation naming the resource its acknowledgement
  covers, so the CDK records it as acknowledged, and it never fails the synth.
"""

from __future__ import annotations

import json
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

from safe_queue._version import __version__
from safe_queue.engine import RULES, Finding, Level, Role, rule
from safe_queue.engine.acknowledge import CDK_NAMESPACES
from safe_queue.template import CheckedMapping, judge

__all__ = ["PLUGIN_NAME", "SafeQueueChecks"]

PLUGIN_NAME = CDK_NAMESPACES[0]
"""The plugin's name: acknowledgement ids are ``SafeQueue::<rule id>``."""

_NEW_FORM = (
    "SafeQueueChecks is a CDK policy-validation plugin since safe-queue 0.2: replace"
    " `Aspects.of(app).add(SafeQueueChecks())` with"
    " `Validations.of(app).add_plugins(SafeQueueChecks())` (it then also checks mappings"
    " inside Stages and values set with add_property_override)."
)


def _resource(
    role: Role, logical_id: str, template: str, finding: Finding
) -> PolicyViolatingResource:
    paths = [path for owner, path in rule(finding.rule_id).properties if owner == role]
    return PolicyViolatingResource(
        resource_logical_id=logical_id, template_path=template, locations=paths
    )


def _named(checked: CheckedMapping, finding: Finding) -> PolicyViolatingResource:
    """Return the resource a finding is shown on: where its acknowledgement is, else the mapping.

    A ``SafeQueueConsumer``'s mapping is its function's child, possibly in another stack;
    its source queue is the consumer's child, so naming the queue lets an acknowledgement
    on the consumer cover the finding, as it covers the consumer's own warnings.
    """
    source = checked.source
    covering = checked.acknowledged_by.get(finding.rule_id)
    if finding.acknowledged is not None and covering is not None:
        logical_id, template = covering
        queue, function = checked.queue, checked.function
        role: Role = (
            "queue"
            if queue is not None and queue.logical_id == logical_id and queue.template is template
            else "function"
            if function is not None
            and function.logical_id == logical_id
            and function.template is template
            else "mapping"
        )
        return _resource(role, logical_id, template.path, finding)
    if checked.construct_metadata and checked.queue is not None:
        return _resource("queue", checked.queue.logical_id, checked.queue.template.path, finding)
    return _resource("mapping", source.logical_id, source.template.path, finding)


def _violation(checked: CheckedMapping, finding: Finding, top_level: bool) -> PolicyViolation:
    acknowledged = finding.acknowledged
    description = finding.message
    fix = (
        description.split(" Fix: ", 1)[1] if " Fix: " in description else rule(finding.rule_id).fix
    )
    if acknowledged is not None:
        description = f"{description} Acknowledged: {acknowledged.reason}"
    named = _named(checked, finding)
    if not top_level and acknowledged is None:
        # A CDK CLI that did not select the Stage's stacks drops the findings of constructs
        # there, but keeps (and prints) a resource it cannot map to a construct: one without
        # a template path. The description says where the resource is instead.
        source = checked.source
        where = checked.construct_path or source.logical_id
        description = f"[{where} in {os.path.basename(source.template.path)}] {description}"
        named = PolicyViolatingResource(
            resource_logical_id=named.resource_logical_id,
            template_path="",
            locations=named.locations,
        )
    return PolicyViolation(
        rule_name=finding.rule_id,
        description=description,
        fix=fix,
        severity="info" if acknowledged is not None else finding.level.value,
        violating_resources=[named],
    )


def _assembly_or_templates(template_paths: list[str]) -> list[str]:
    """Return the cloud assembly holding every template, else the templates themselves.

    Read through its ``manifest.json``, the assembly gives each template its stack name,
    which CDK's cross-stack references (``Fn::GetStackOutput``) name, and its metadata
    (acknowledgements, construct paths).
    """
    if not template_paths:
        return []
    root = os.path.commonpath([os.path.dirname(path) for path in template_paths])
    if not os.path.isfile(os.path.join(root, "manifest.json")):
        return template_paths
    # An app whose only stacks are in a Stage: its templates are all in the Stage's nested
    # assembly; the app's own assembly is the directory above that lists it.
    while _lists_nested_assembly(os.path.dirname(root), os.path.basename(root)):
        root = os.path.dirname(root)
    return [root]


def _lists_nested_assembly(parent: str, name: str) -> bool:
    try:
        with open(os.path.join(parent, "manifest.json"), encoding="utf-8") as manifest:
            artifacts = json.load(manifest).get("artifacts") or {}
    except (OSError, ValueError, AttributeError):
        return False
    return any(
        isinstance(artifact, dict)
        and artifact.get("type") == "cdk:cloud-assembly"
        and (artifact.get("properties") or {}).get("directoryName") == name
        for artifact in artifacts.values()
    )


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
        return __version__

    @property
    def rule_ids(self) -> list[str]:
        """Every rule id of the engine's registry."""
        return [entry.id for entry in RULES]

    def validate(self, context: IPolicyValidationContext) -> PolicyValidationPluginReport:
        """Check every template of the app (CDK calls this once, after synthesis)."""
        paths = _assembly_or_templates(list(context.template_paths))
        root = paths[0] if len(paths) == 1 and os.path.isdir(paths[0]) else None
        judged = judge(paths, self._parameters)
        violations = []
        failed = False
        for checked, findings in judged.mappings:
            reported = checked.reported_by_construct  # the consumer said these: one verdict
            top_level = root is None or checked.source.template.scope == root
            for finding in findings:
                if finding.rule_id in reported:
                    continue
                failed |= finding.level is Level.ERROR and finding.acknowledged is None
                violations.append(_violation(checked, finding, top_level))
        return PolicyValidationPluginReport(
            success=not failed, violations=violations, plugin_version=self.version
        )

    def visit(self, node: IConstruct) -> None:
        """Refuse the pre-0.2 form ``Aspects.of(app).add(SafeQueueChecks())`` clearly."""
        root: Any = node.node.root
        path = root.node.path or "<app>"
        if path not in self._told:
            self._told.add(path)
            Annotations.of(root).add_error(_NEW_FORM)
