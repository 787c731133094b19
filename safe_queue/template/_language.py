"""Expand ``AWS::LanguageExtensions``: ``Fn::ForEach`` loops, resolved attribute intrinsics.

As the AWS CloudFormation User Guide describes the transform ("AWS::LanguageExtensions
transform", "Fn::ForEach"): a key ``Fn::ForEach::<LoopName>`` in ``Resources``,
``Conditions`` or ``Outputs`` (or inside a resource's properties) holds
``[Identifier, Collection, {OutputKey: OutputValue}]``. For each item of the collection (a
list, or a ``Ref`` to a ``CommaDelimitedList`` parameter, ``Fn::FindInMap``...), the fragment
is copied with ``${Identifier}`` replaced by the item and ``&{Identifier}`` by the item
without its non-alphanumeric characters, in keys and ``Fn::Sub`` strings, and
``{"Ref": Identifier}`` replaced by the item. Loops nest. Then the copies' ``Fn::Sub`` without
variables become plain strings, so ``!Ref {Fn::Sub: "Queue${Tenant}"}`` names a resource. A
resource's ``Condition``, ``DeletionPolicy`` and ``UpdateReplacePolicy`` may be intrinsic
functions (``Fn::FindInMap`` with a ``DefaultValue`` of ``AWS::NoValue`` removes them).
``Fn::Length`` and ``Fn::ToJsonString`` are evaluated with the other intrinsics
(:mod:`safe_queue.template._resolve`).

A loop whose collection is not known (a parameter without a value, an SSM parameter) cannot
be expanded: its resources stay under the ids as written (``Queue${Tenant}``), recorded in
:attr:`TemplateFile.unexpanded <safe_queue.template._load.TemplateFile.unexpanded>`, and
their mappings are reported as unchecked, never dropped. An expansion that writes a logical
id twice, or that grows past :data:`MAX_EXPANDED_RESOURCES` resources, is an input error.

Examples
--------
>>> from safe_queue.template._load import TemplateFile
>>> from safe_queue.template._deployment import Deployment
>>> template = TemplateFile("t.yaml", {
...     "Transform": "AWS::LanguageExtensions",
...     "Resources": {"Fn::ForEach::Tenants": ["Tenant", ["acme", "globex-eu"], {
...         "Queue&{Tenant}": {"Type": "AWS::SQS::Queue",
...                            "Properties": {"QueueName": {"Fn::Sub": "${Tenant}-jobs"}}}}]}})
>>> expand(Deployment([template]), template)
>>> template.resources
{'Queueacme': {'Type': 'AWS::SQS::Queue', 'Properties': {'QueueName': 'acme-jobs'}}, \
'Queueglobexeu': {'Type': 'AWS::SQS::Queue', 'Properties': {'QueueName': 'globex-eu-jobs'}}}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from safe_queue.template._deployment import Deployment
from safe_queue.template._file import (
    LOOP_PREFIX,
    MAX_RESOURCES,
    MAX_VALUES,
    TemplateError,
    TemplateFile,
)
from safe_queue.template._values import ABSENT as _ABSENT
from safe_queue.template._values import Trace, Unresolved

__all__ = ["MAX_EXPANDED_RESOURCES", "expand", "uses_language_extensions"]

MAX_EXPANDED_RESOURCES = 10 * MAX_RESOURCES
"""Resources a template may expand to: 10 x CloudFormation's 500 per stack. Past it the
expansion stops (bounded time and memory) and the file is refused."""
_TRANSFORM = "AWS::LanguageExtensions"
_SECTIONS = ("Conditions", "Resources", "Outputs")
_POLICIES = ("Condition", "DeletionPolicy", "UpdateReplacePolicy")
_NON_ALPHANUMERIC = re.compile(r"[^0-9A-Za-z]+")


def uses_language_extensions(template: TemplateFile) -> bool:
    """Return whether the template declares the transform or has a top-level loop."""
    transform = template.body.get("Transform")
    names = transform if isinstance(transform, list) else [transform]
    if _TRANSFORM in names:
        return True
    return any(
        isinstance(section, dict) and any(str(key).startswith(LOOP_PREFIX) for key in section)
        for section in (template.body.get(name) for name in _SECTIONS)
    )


@dataclass
class _Expansion:
    deployment: Deployment
    template: TemplateFile
    values: int = 0
    resources: int = 0
    lines: dict[str, int] = field(default_factory=dict)
    traces: dict[str, Trace] = field(default_factory=dict)

    def error(self, loop: str, line: int | None, message: str) -> TemplateError:
        return TemplateError(self.template.path, line, f"{loop}: {message}")

    # --- walking -----------------------------------------------------------------------

    def node(self, node: Any, bindings: dict[str, str]) -> Any:
        """Return a copy of ``node`` with ``bindings`` substituted and inner loops expanded."""
        self.values += 1
        if self.values > MAX_VALUES:
            raise TemplateError(
                self.template.path,
                None,
                f"its Fn::ForEach loops expand to more than {MAX_VALUES:,} values; safe-queue"
                " does not read it. Fix: use smaller collections.",
            )
        if isinstance(node, list):
            return [self.node(item, bindings) for item in node]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, argument),) = node.items()
            if key == "Ref":
                return self.ref(argument, bindings)
            if key == "Fn::Sub":
                return self.sub(argument, bindings)
            if key == "Fn::GetAtt" and isinstance(argument, str):
                return {key: _substitute(argument, bindings)}
        return self.mapping(node, bindings, None)

    def ref(self, argument: Any, bindings: dict[str, str]) -> Any:
        argument = self.node(argument, bindings) if isinstance(argument, dict) else argument
        if isinstance(argument, str) and argument in bindings:
            return bindings[argument]
        return {"Ref": argument}

    def sub(self, argument: Any, bindings: dict[str, str]) -> Any:
        if isinstance(argument, str):
            text = _substitute(argument, bindings)
            return text if "${" not in text else {"Fn::Sub": text}
        if isinstance(argument, list) and argument and isinstance(argument[0], str):
            rest = [self.node(item, bindings) for item in argument[1:]]
            return {"Fn::Sub": [_substitute(argument[0], bindings), *rest]}
        return {"Fn::Sub": self.node(argument, bindings)}

    def collection(
        self, loop: str, value: Any, bindings: dict[str, str], trace: Trace
    ) -> list[str] | Unresolved:
        """Return the loop's items as strings, or why they are not known."""
        collection = value[1]
        items = self.deployment.resolve(self.template, self.node(collection, bindings), trace)
        if isinstance(items, Unresolved):
            return Unresolved(f"its collection {items.why}")
        if isinstance(items, str):
            items = items.split(",")
        if not isinstance(items, list):
            return Unresolved(f"its collection is {items!r}, not a list")
        names: list[str] = []
        for item in items:
            if isinstance(item, Unresolved):
                return Unresolved(f"an item of its collection {item.why}")
            if isinstance(item, bool):
                names.append(str(item).lower())
            elif isinstance(item, str | int | float):
                names.append(str(item))
            else:
                return Unresolved(f"an item of its collection is {item}, not a string")
        return names

    def mapping(
        self, node: dict[Any, Any], bindings: dict[str, str], path: str | None
    ) -> dict[str, Any]:
        """Expand a dict's loops and substitute its keys; ``path`` is set in ``Resources``."""
        out: dict[str, Any] = {}
        written: dict[str, str] = {}
        for key, value in node.items():
            key = str(key)
            if not key.startswith(LOOP_PREFIX):
                name = _substitute(key, bindings)
                self.add(out, written, name, self.node(value, bindings), key, path, bindings)
                continue
            loop_path = f"{path}/{key}" if path else key
            line = self.template.lines.get(loop_path) if path is not None else None
            if not (
                isinstance(value, list)
                and len(value) == 3
                and isinstance(value[0], str)
                and isinstance(value[2], dict)
            ):
                raise self.error(key, line, "is not [Identifier, Collection, {OutputKey: Value}]")
            trace = Trace()
            items = self.collection(key, value, bindings, trace)
            if isinstance(items, Unresolved):
                if path is not None:  # Resources; elsewhere what it writes stays undefined
                    self.unexpanded(out, written, value, items.why, loop_path, key, bindings)
                continue
            identifier, _, fragment = value
            for item in items:
                expanded = self.mapping(
                    fragment,
                    {**bindings, identifier: item},
                    loop_path if path is not None else None,
                )
                for name, copy in expanded.items():
                    self.add(out, written, name, copy, key, None, bindings)
                    if path is not None:
                        merged = self.traces.setdefault(name, Trace())
                        merged.parameters.update(trace.parameters)
                        merged.notes.update(trace.notes)
        return out

    def add(
        self,
        out: dict[str, Any],
        written: dict[str, str],
        name: str,
        value: Any,
        origin: str,
        path: str | None,
        bindings: dict[str, str],
    ) -> None:
        """Write one key (a resource when ``path`` is set: counted, its line recorded)."""
        if name in out:
            raise self.error(
                origin,
                None,
                f"writes the key {name} twice (also from {written[name]}), which CloudFormation"
                " refuses. Fix: make the OutputKey unique for each item.",
            )
        out[name] = value
        written[name] = origin
        if path is None:
            return
        self.count(origin, None)
        source = f"{path}/{origin}" if path else origin
        line = self.template.lines.get(source)
        if line is None:
            return
        self.lines[name] = line
        events = f"{source}/Events/"
        for key, event_line in list(self.template.lines.items()):
            if key.startswith(events):
                event = _substitute(key[len(events) :], bindings)
                self.lines[f"{name}/Events/{event}"] = event_line

    def count(self, loop: str, line: int | None) -> None:
        self.resources += 1
        if self.resources > MAX_EXPANDED_RESOURCES:
            raise self.error(
                loop,
                line,
                f"expands to more than {MAX_EXPANDED_RESOURCES:,} resources (CloudFormation's"
                f" limit is {MAX_RESOURCES} for each stack); safe-queue stops expanding. Fix: use"
                " smaller collections.",
            )

    def unexpanded(
        self,
        out: dict[str, Any],
        written: dict[str, str],
        value: list[Any],
        why: str,
        loop_path: str,
        key: str,
        bindings: dict[str, str],
    ) -> None:
        """Keep a loop that cannot be expanded: its resources under the ids as written."""
        for name, resource in value[2].items():
            name = str(name)
            if name.startswith(LOOP_PREFIX):
                if (
                    isinstance(resource, list)
                    and len(resource) == 3
                    and isinstance(resource[2], dict)
                ):
                    self.unexpanded(
                        out, written, resource, why, f"{loop_path}/{name}", key, bindings
                    )
                continue
            written_name = _substitute(name, bindings)
            copy = self.node(resource, bindings)
            self.add(out, written, written_name, copy, name, loop_path, bindings)
            self.template.unexpanded[written_name] = (
                f"is made by the AWS::LanguageExtensions loop {key}, which cannot be expanded:"
                f" {why}"
            )


def _substitute(text: str, bindings: dict[str, str]) -> str:
    for identifier, item in bindings.items():
        text = text.replace(f"${{{identifier}}}", item)
        text = text.replace(f"&{{{identifier}}}", _NON_ALPHANUMERIC.sub("", item))
    return text


def expand(deployment: Deployment, template: TemplateFile) -> None:
    """Expand the template's ``Fn::ForEach`` loops and attribute intrinsics, in place.

    Raises
    ------
    TemplateError
        A loop writes a key twice, or the loops expand past :data:`MAX_EXPANDED_RESOURCES`
        resources or :data:`~safe_queue.template._load.MAX_VALUES` values.
    """
    if not uses_language_extensions(template):
        return
    expansion = _Expansion(deployment, template)
    for section in _SECTIONS:
        value = template.body.get(section)
        if isinstance(value, dict):
            template.body[section] = expansion.mapping(
                value, {}, "" if section == "Resources" else None
            )
    template.lines.update(expansion.lines)
    template.loops.update(expansion.traces)
    for logical_id, resource in list(template.resources.items()):
        if not isinstance(resource, dict):
            raise TemplateError(
                template.path,
                template.lines.get(logical_id),
                f"resource {logical_id} is not a mapping",
            )
        for attribute in _POLICIES:
            value = resource.get(attribute)
            if not isinstance(value, dict):
                continue
            resolved = deployment.resolve(template, value, Trace())
            if resolved is _ABSENT:
                del resource[attribute]
            elif isinstance(resolved, str):
                resource[attribute] = resolved
    deployment.forget()
