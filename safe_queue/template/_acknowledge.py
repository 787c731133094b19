"""Acknowledgements written in templates and cloud assemblies, read into the engine's facts.

Two places say that a finding is accepted:

- a resource's ``Metadata`` in any template (CloudFormation or SAM)::

      Metadata:
        safe-queue:
          acknowledge:
            - id: safe-queue:filter-deletes-unmatched
              reason: the queue only ever carries invoices

  on a mapping, its function (for SAM, every SQS event of the function) or its queue;
- ``Validations.of(construct).acknowledge(Acknowledgment(id="SafeQueue::safe-queue:...",
  reason=...))`` in a CDK app, which the CDK records in the cloud assembly's stack metadata
  (``aws:cdk:acknowledged-rules`` at the construct's path); it covers that construct and
  everything under it, and so every mapping whose mapping, queue or function resource is
  there.

Both become :class:`~safe_queue.engine.Acknowledgement` facts; the engine marks the
findings they cover. A malformed acknowledgement, one without a reason, or one naming no
rule is a :class:`~safe_queue.template.TemplateError` naming the resource (exit code 2).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safe_queue import keys
from safe_queue.engine import Acknowledgement, AcknowledgementError, acknowledgement
from safe_queue.engine.acknowledge import is_safe_queue_id
from safe_queue.template._facts import CheckedMapping
from safe_queue.template._load import TemplateError, TemplateFile, _read_json
from safe_queue.template._values import Located

__all__ = ["Acknowledgements", "Covered", "attach_all"]


@dataclass(frozen=True)
class Covered:
    """An acknowledgement, and the resource through which it covers a mapping."""

    acknowledgement: Acknowledgement
    logical_id: str
    template: TemplateFile


@dataclass
class _StackMetadata:
    """A cloud assembly stack's metadata: construct paths by logical id, and CDK acks."""

    paths: dict[str, list[str]] = field(default_factory=dict)
    acknowledged: list[tuple[str, Acknowledgement]] = field(default_factory=list)


def _template_acknowledgements(
    template: TemplateFile, logical_id: str, metadata: Any
) -> list[Acknowledgement]:
    if not isinstance(metadata, dict) or keys.METADATA_SECTION not in metadata:
        return []
    where = f"resource {logical_id}"
    line = template.lines.get(logical_id)
    example = (
        f'Metadata: {{"{keys.METADATA_SECTION}": {{"{keys.ACKNOWLEDGE}": [{{"id":'
        ' "safe-queue:<rule>", "reason": "..."}]}}'
    )

    def refuse(problem: str) -> TemplateError:
        return TemplateError(template.path, line, f"{where}: {problem}. Fix: write {example}.")

    section = metadata[keys.METADATA_SECTION]
    if not isinstance(section, dict) or set(section) - {keys.ACKNOWLEDGE}:
        raise refuse(f"Metadata {keys.METADATA_SECTION!r} is {section!r}")
    items = section.get(keys.ACKNOWLEDGE, [])
    if not isinstance(items, list):
        raise refuse(f"Metadata {keys.METADATA_SECTION}.{keys.ACKNOWLEDGE} is not a list")
    found = []
    for item in items:
        if not isinstance(item, dict) or "id" not in item:
            raise refuse(f"acknowledgement {item!r} has no id")
        try:
            found.append(
                acknowledgement(
                    item["id"],
                    item.get("reason"),
                    source=f"Metadata of {logical_id} in {template.path}",
                )
            )
        except AcknowledgementError as error:
            raise TemplateError(template.path, line, str(error)) from None
    return found


def _read_manifest(scope: str) -> Any:
    """Read a cloud assembly's manifest (bounded as the loader reads it); ``None`` if not."""
    try:
        return _read_json(Path(scope) / "manifest.json")
    except TemplateError:
        return None  # the loader read this manifest already; nothing more to learn here


def _read_stack_metadata(template: TemplateFile, manifest: Any) -> _StackMetadata:
    """Read the CDK metadata of ``template``'s stack artifact (its own file, or the manifest)."""
    found = _StackMetadata()
    try:
        artifact = manifest["artifacts"][template.stack]
    except (KeyError, TypeError):
        return found
    entries = artifact.get("metadata") if isinstance(artifact, dict) else None
    extra = artifact.get("additionalMetadataFile") if isinstance(artifact, dict) else None
    if isinstance(extra, str):
        shown = str(Path(template.scope) / extra)
        try:
            entries = json.loads(Path(shown).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise TemplateError(
                shown, None, f"could not read the stack metadata: {error}"
            ) from None
    if not isinstance(entries, dict):
        return found
    for raw_path, items in entries.items():
        path = str(raw_path).lstrip("/")
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            data = item.get("data")
            if item.get("type") == keys.CDK_LOGICAL_ID and isinstance(data, str):
                found.paths.setdefault(data, []).append(path)
            elif item.get("type") == keys.CDK_ACKNOWLEDGED_RULES and isinstance(data, dict):
                for written, reason in data.items():
                    if not is_safe_queue_id(str(written)):
                        continue  # another plugin's (cdk-nag, CloudFormation-Validate)
                    try:
                        found.acknowledged.append(
                            (
                                path,
                                acknowledgement(
                                    written,
                                    reason,
                                    source=f"{written} acknowledged at {path}",
                                ),
                            )
                        )
                    except AcknowledgementError as error:
                        raise TemplateError(
                            str(Path(template.scope) / str(extra or "manifest.json")),
                            None,
                            f"construct {path}: {error}",
                        ) from None
    return found


def _covers(acknowledged_at: str, path: str) -> bool:
    return path == acknowledged_at or path.startswith(f"{acknowledged_at}/")


class Acknowledgements:
    """Every acknowledgement of a run, checked when read; attached to mappings on request.

    Parameters
    ----------
    templates
        The templates of the run; every resource's ``Metadata`` acknowledgements are
        checked now, so a malformed one fails the run even where no finding needs it.

    Raises
    ------
    TemplateError
        An acknowledgement that is malformed, has no reason, or names no rule.
    """

    def __init__(self, templates: Sequence[TemplateFile]) -> None:
        self._in_templates: dict[tuple[int, str], list[Acknowledgement]] = {}
        self._stacks: dict[tuple[str, str], _StackMetadata] = {}
        self._manifests: dict[str, Any] = {}  # each assembly's manifest, read once
        for template in templates:
            for logical_id, resource in template.resources.items():
                found = _template_acknowledgements(template, logical_id, resource.get("Metadata"))
                if found:
                    self._in_templates[(id(template), logical_id)] = found
            if template.stack is not None:
                self._stack(template)

    def _stack(self, template: TemplateFile) -> _StackMetadata:
        key = (template.scope, str(template.stack))
        if key not in self._stacks:
            if template.scope not in self._manifests:
                self._manifests[template.scope] = _read_manifest(template.scope)
            self._stacks[key] = _read_stack_metadata(template, self._manifests[template.scope])
        return self._stacks[key]

    def of_resource(
        self, template: TemplateFile, logical_id: str, metadata: Any = None
    ) -> list[Acknowledgement]:
        """Return the acknowledgements covering one resource: its Metadata's and the CDK app's.

        ``metadata`` stands in for the resource's own ``Metadata`` when the resource is not
        in the template (a SAM event's generated mapping takes its function's).
        """
        found = list(self._in_templates.get((id(template), logical_id), []))
        if metadata is not None:
            found += _template_acknowledgements(template, logical_id, metadata)
        if template.stack is not None:
            stack = self._stack(template)
            paths = stack.paths.get(logical_id, [])
            found += [
                acknowledged
                for at, acknowledged in stack.acknowledged
                if any(_covers(at, path) for path in paths)
            ]
        return found

    def construct_path(self, template: TemplateFile, logical_id: str) -> str | None:
        """Return a cloud assembly resource's CDK construct path, if known."""
        if template.stack is None:
            return None
        paths = self._stack(template).paths.get(logical_id)
        return paths[0] if paths else None

    def attach(self, checked: CheckedMapping) -> CheckedMapping:
        """Return ``checked`` with the acknowledgements of its mapping, queue and function."""
        source = checked.source
        path = self.construct_path(source.template, source.logical_id)
        if path is not None:
            checked = dataclasses.replace(checked, construct_path=path)
        in_template = source.logical_id in source.template.resources
        resources: list[tuple[TemplateFile, str, Any]] = [
            (source.template, source.logical_id, None if in_template else source.metadata)
        ]
        for located in (checked.queue, checked.function):
            if isinstance(located, Located):
                resources.append((located.template, located.logical_id, None))
        covered: dict[str, Covered] = {}
        for template, logical_id, metadata in resources:
            for found in self.of_resource(template, logical_id, metadata):
                covered.setdefault(found.rule_id, Covered(found, logical_id, template))
        if not covered:
            return checked
        facts = dataclasses.replace(
            checked.facts,
            acknowledgements=tuple(item.acknowledgement for item in covered.values()),
        )
        return dataclasses.replace(
            checked,
            facts=facts,
            acknowledged_by={
                rule_id: (item.logical_id, item.template) for rule_id, item in covered.items()
            },
        )


def attach_all(
    templates: Sequence[TemplateFile], checked: Iterable[CheckedMapping]
) -> list[CheckedMapping]:
    """Read the run's acknowledgements and attach them to every mapping."""
    acknowledgements = Acknowledgements(templates)
    return [acknowledgements.attach(mapping) for mapping in checked]
