"""Resolve intrinsic functions across the templates of one run.

:class:`Resolver` evaluates ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``, ``Fn::Join``,
``Fn::Select``, ``Fn::Split``, ``Fn::FindInMap``, ``Fn::If`` and conditions, parameters
(``--parameter``, ``Default``, a nested stack's parent), ``Fn::ImportValue`` against every
template's exports and CDK's ``Fn::GetStackOutput``; what it cannot know stays
:class:`~safe_queue.template._values.Unresolved`. The deployment
(:mod:`~safe_queue.template._deployment`) adds the lookups of queues and functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from safe_queue.template._file import TemplateFile
from safe_queue.template._values import (
    ABSENT,
    ALIAS_TYPE,
    FUNCTION_TYPES,
    PSEUDO_PARAMETERS,
    SAM_FUNCTION,
    SUB_VARIABLE,
    VERSION_TYPE,
    Located,
    Reference,
    Trace,
    Unresolved,
    Value,
    concatenate,
    resource_of,
    to_int,
)

__all__ = ["Resolver"]

# Pseudo parameters a template may Ref; Fn::* this reader does not evaluate.
_PSEUDO = PSEUDO_PARAMETERS
_UNSUPPORTED = ("Fn::Base64", "Fn::Cidr", "Fn::GetAZs", "Fn::Transform", "Fn::ForEach")
_NO_VALUE = "AWS::NoValue"
_ARN_NAME_INDEX = 6  # arn:aws:lambda:region:account:function:NAME

_MAX_DEPTH = 20


def _is_sam(template: TemplateFile) -> bool:
    transform = template.body.get("Transform")
    names = transform if isinstance(transform, list) else [transform]
    return any(isinstance(name, str) and name.startswith("AWS::Serverless") for name in names)


class Resolver:
    """Every template of one run: resolves values in one, and references across them.

    Parameters
    ----------
    templates
        The templates read.
    parameters
        ``--parameter`` values by name (applied to every template that declares them).
    """

    def __init__(
        self, templates: Sequence[TemplateFile], parameters: Mapping[str, str] | None = None
    ) -> None:
        self.templates = list(templates)
        self.parameters = dict(parameters or {})
        self._exports: dict[str, list[tuple[TemplateFile, Any]]] | None = None
        self._names: dict[tuple[str, str], list[Located]] | None = None
        self._sam_aliases: dict[int, dict[str, str]] = {}

    def forget(self) -> None:
        """Drop what was read of the templates (exports, names): they have changed."""
        self._exports = None
        self._names = None
        self._sam_aliases = {}

    # --- resolution ------------------------------------------------------------------

    def resolve(self, template: TemplateFile, node: Any, trace: Trace, depth: int = 0) -> Value:
        """Resolve ``node`` (any part of ``template``) as far as the templates allow."""
        if depth > _MAX_DEPTH:
            return Unresolved("is defined in a cycle of references or imports")
        if isinstance(node, list):
            items = [self.resolve(template, item, trace, depth + 1) for item in node]
            return [item for item in items if item is not ABSENT]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, argument),) = node.items()
            if key == "Ref":
                return self._ref(template, argument, trace, depth)
            if key == "Fn::GetAtt":
                return self._get_att(template, argument, trace, depth)
            if key == "Fn::Sub":
                return self._sub(template, argument, trace, depth)
            if key == "Fn::Join":
                return self._join(template, argument, trace, depth)
            if key == "Fn::Select":
                return self._select(template, argument, trace, depth)
            if key == "Fn::Split":
                return self._split(template, argument, trace, depth)
            if key == "Fn::ImportValue":
                return self._import(template, argument, trace, depth)
            if key == "Fn::GetStackOutput":
                return self._stack_output(template, argument, trace, depth)
            if key == "Fn::FindInMap":
                return self._find_in_map(template, argument, trace, depth)
            if key == "Fn::If":
                return self._if(template, argument, trace, depth)
            if key == "Fn::Length":
                return self._length(template, argument, trace, depth)
            if key == "Fn::ToJsonString":
                return self._to_json_string(template, argument, trace, depth)
            if key in _UNSUPPORTED:
                return Unresolved(f"is computed with {key}, which safe-queue does not evaluate")
        resolved = {
            key: self.resolve(template, value, trace, depth + 1) for key, value in node.items()
        }
        return {key: value for key, value in resolved.items() if value is not ABSENT}

    def _length(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        """``Fn::Length`` (AWS::LanguageExtensions): the number of items of a list."""
        items = self.resolve(template, argument, trace, depth + 1)
        if isinstance(items, Unresolved):
            return items
        if not isinstance(items, list):
            return Unresolved(f"is an Fn::Length of {items!r}, which is not a list")
        return len(items)

    def _to_json_string(
        self, template: TemplateFile, argument: Any, trace: Trace, depth: int
    ) -> Value:
        """``Fn::ToJsonString`` (AWS::LanguageExtensions): an object or list as JSON text.

        A reference inside becomes its ``${Id.Attribute}`` placeholder, as in ``Fn::Sub``
        text, so a ``RedrivePolicy`` written this way still reaches its dead-letter queue.
        """
        value = self.resolve(template, argument, trace, depth + 1)
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, Unresolved):
                return item
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        if not isinstance(value, dict | list):
            return Unresolved(f"is an Fn::ToJsonString of {value!r}, not an object or a list")
        return json.dumps(value, separators=(",", ":"), default=str)

    def _ref(self, template: TemplateFile, name: Any, trace: Trace, depth: int = 0) -> Value:
        if not isinstance(name, str):
            return Unresolved(f"is a Ref to {name!r}, which is not a name")
        if name == _NO_VALUE:
            return ABSENT
        if name in _PSEUDO:
            return template.pseudo.get(name, f"${{{name}}}")
        parameters = template.body.get("Parameters")
        if isinstance(parameters, dict) and name in parameters:
            return self._parameter(template, name, parameters[name], trace, depth)
        resources = template.resources
        if name in resources:
            return Reference(template, name)
        target = self._sam_generated(template).get(name)
        if target is not None:
            return Reference(template, target)
        return Unresolved(f"is a Ref to {name}, which the template does not define")

    def _parameter(
        self, template: TemplateFile, name: str, declaration: Any, trace: Trace, depth: int
    ) -> Value:
        declaration = declaration if isinstance(declaration, dict) else {}
        kind = str(declaration.get("Type", "String"))
        if template.parent is not None:
            # A nested stack's parameter takes the value its parent stack passes.
            parent, stack_id = template.parent
            properties = resource_of(parent, stack_id).get("Properties")
            passed = properties.get("Parameters") if isinstance(properties, dict) else None
            if isinstance(passed, dict) and name in passed:
                return self.resolve(parent, passed[name], trace, depth + 1)
        if name in self.parameters:
            raw: Any = self.parameters[name]
            trace.parameters[name] = str(raw)
            trace.note(f"Used parameter {name} = {raw} from --parameter.")
        elif kind.startswith("AWS::SSM::Parameter::Value"):
            return Unresolved(
                f"is parameter {name} of type {kind}, read from SSM at deploy time; pass"
                f" --parameter {name}=VALUE"
            )
        elif "Default" in declaration:
            raw = declaration["Default"]
            trace.parameters[name] = str(raw)
            trace.note(f"Assumed parameter {name} = {raw}, its Default.")
        else:
            return Unresolved(
                f"is parameter {name}, which has no Default; pass --parameter {name}=VALUE"
            )
        if kind.startswith("List<") or kind == "CommaDelimitedList":
            return [item.strip() for item in str(raw).split(",")] if isinstance(raw, str) else raw
        return raw

    def _sam_generated(self, template: TemplateFile) -> dict[str, str]:
        """Logical ids SAM generates that a template may Ref: ``FnAliasLive``, ``Fn.Alias``."""
        key = id(template)
        generated = self._sam_aliases.get(key)
        if generated is None:
            generated = {}
            if _is_sam(template):
                for logical_id, resource in template.resources.items():
                    if not isinstance(resource, dict) or resource.get("Type") != SAM_FUNCTION:
                        continue
                    generated[f"{logical_id}.Alias"] = logical_id
                    generated[f"{logical_id}.Version"] = logical_id
                    properties = resource.get("Properties")
                    if not isinstance(properties, dict):
                        continue
                    alias = properties.get("AutoPublishAlias")
                    if isinstance(alias, str):
                        generated[f"{logical_id}Alias{alias}"] = logical_id
            self._sam_aliases[key] = generated
        return generated

    def _get_att(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        if isinstance(argument, str):
            argument = argument.split(".", 1)
        if not isinstance(argument, list) or len(argument) != 2:
            return Unresolved(f"is Fn::GetAtt {argument!r}, which is malformed")
        logical_id, attribute = argument[0], self.resolve(template, argument[1], trace, depth + 1)
        if not isinstance(attribute, str) or not isinstance(logical_id, str):
            return Unresolved(f"is Fn::GetAtt {argument!r}, whose attribute is not known")
        if logical_id in template.resources:
            return Reference(template, logical_id, attribute)
        target = self._sam_generated(template).get(logical_id)
        if target is not None:
            return Reference(template, target, attribute)
        return Unresolved(f"is Fn::GetAtt {logical_id}.{attribute}, a resource not defined here")

    def _sub(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        variables: dict[str, Any] = {}
        if isinstance(argument, list) and len(argument) == 2 and isinstance(argument[1], dict):
            argument, variables = argument
        if not isinstance(argument, str):
            return Unresolved("is an Fn::Sub whose string is not known")
        parts: list[Value] = []
        position = 0
        for match in SUB_VARIABLE.finditer(argument):
            parts.append(argument[position : match.start()])
            position = match.end()
            name = match.group(1).strip()
            if name.startswith("!"):
                parts.append(f"${{{name[1:]}}}")
            elif name in variables:
                parts.append(self.resolve(template, variables[name], trace, depth + 1))
            elif "." in name and name.split(".", 1)[0] in template.resources:
                parts.append(self._get_att(template, name, trace, depth))
            else:
                parts.append(self._ref(template, name, trace, depth))
        parts.append(argument[position:])
        return concatenate(parts)

    def _join(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        if not isinstance(argument, list) or len(argument) != 2:
            return Unresolved("is an Fn::Join that is malformed")
        delimiter = self.resolve(template, argument[0], trace, depth + 1)
        items = self.resolve(template, argument[1], trace, depth + 1)
        if isinstance(items, Unresolved):
            return items
        if not isinstance(delimiter, str) or not isinstance(items, list):
            return Unresolved("is an Fn::Join whose list is not known")
        parts: list[Value] = []
        for index, item in enumerate(items):
            if index:
                parts.append(delimiter)
            parts.append(item)
        return concatenate(parts)

    def _select(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        if not isinstance(argument, list) or len(argument) != 2:
            return Unresolved("is an Fn::Select that is malformed")
        index = to_int(self.resolve(template, argument[0], trace, depth + 1))
        items = self.resolve(template, argument[1], trace, depth + 1)
        if isinstance(items, Unresolved):
            return items
        if not isinstance(index, int) or not isinstance(items, list) or index >= len(items):
            return Unresolved("is an Fn::Select whose index or list is not known")
        return items[index]

    def _split(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        if not isinstance(argument, list) or len(argument) != 2:
            return Unresolved("is an Fn::Split that is malformed")
        delimiter = self.resolve(template, argument[0], trace, depth + 1)
        source = self.resolve(template, argument[1], trace, depth + 1)
        if isinstance(source, Unresolved):
            return source
        if (
            delimiter == ":"
            and isinstance(source, Reference)
            and source.attribute in (None, "Arn")
            and source.type in (*FUNCTION_TYPES, ALIAS_TYPE, VERSION_TYPE)
        ):
            # The ARN of a function, alias or version: arn:PARTITION:lambda:REGION:ACCOUNT:
            # function:NAME[:QUALIFIER]. Its seventh part names the function (what
            # aws-cdk-lib selects for an alias's FunctionName); the rest is not needed.
            unknown = Unresolved("is a part of a Lambda ARN known only at deploy time")
            return [unknown] * _ARN_NAME_INDEX + [source, unknown]
        if not isinstance(delimiter, str) or not isinstance(source, str):
            return Unresolved("is an Fn::Split of a value that is not known")
        return source.split(delimiter)

    def _find_in_map(
        self, template: TemplateFile, argument: Any, trace: Trace, depth: int
    ) -> Value:
        if not isinstance(argument, list) or len(argument) < 3:
            return Unresolved("is an Fn::FindInMap that is malformed")
        keys = [self.resolve(template, item, trace, depth + 1) for item in argument[:3]]
        for key in keys:
            if isinstance(key, Unresolved):
                return key
            if not isinstance(key, str | int) or "${AWS::" in str(key):
                return Unresolved(f"is an Fn::FindInMap with the key {key}, known at deploy time")
        value: Any = template.body.get("Mappings")
        for key in keys:
            if not isinstance(value, dict) or str(key) not in value:
                if len(argument) > 3 and isinstance(argument[3], dict):
                    return self.resolve(template, argument[3].get("DefaultValue"), trace, depth + 1)
                return Unresolved(f"is an Fn::FindInMap of {keys}, which Mappings lacks")
            value = value[str(key)]
        return self.resolve(template, value, trace, depth + 1)

    def _if(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        if not isinstance(argument, list) or len(argument) != 3:
            return Unresolved("is an Fn::If that is malformed")
        condition = self.condition(template, argument[0], trace, depth + 1)
        if isinstance(condition, Unresolved):
            return condition
        return self.resolve(template, argument[1 if condition else 2], trace, depth + 1)

    def condition(
        self, template: TemplateFile, name: Any, trace: Trace, depth: int = 0
    ) -> bool | Unresolved:
        """Evaluate the template's condition ``name`` with the parameters' values."""
        conditions = template.body.get("Conditions")
        if not isinstance(name, str):
            return Unresolved(f"depends on the condition {name!r}, which is not a name")
        if not isinstance(conditions, dict) or name not in conditions:
            return Unresolved(f"depends on condition {name}, which the template does not define")
        result = self._evaluate(template, conditions[name], trace, depth + 1)
        if isinstance(result, Unresolved):
            return Unresolved(f"depends on condition {name}, which {result.why}")
        return result

    def _evaluate(
        self, template: TemplateFile, node: Any, trace: Trace, depth: int
    ) -> bool | Unresolved:
        if depth > _MAX_DEPTH:
            return Unresolved("is defined in a cycle")
        if isinstance(node, dict) and len(node) == 1:
            ((key, argument),) = node.items()
            if key == "Condition":
                return self.condition(template, argument, trace, depth + 1)
            if key in ("Fn::And", "Fn::Or", "Fn::Not") and isinstance(argument, list):
                values = [self._evaluate(template, item, trace, depth + 1) for item in argument]
                for value in values:
                    if isinstance(value, Unresolved):
                        return value
                if key == "Fn::Not":
                    return not values[0] if len(values) == 1 else Unresolved("is malformed")
                return all(values) if key == "Fn::And" else any(values)
            if key == "Fn::Equals" and isinstance(argument, list) and len(argument) == 2:
                left, right = (self.resolve(template, item, trace, depth + 1) for item in argument)
                for value in (left, right):
                    if isinstance(value, Unresolved):
                        return value
                    if not isinstance(value, str | int | float | bool) or "${AWS::" in str(value):
                        return Unresolved(f"compares {value}, known only at deploy time")
                return str(left) == str(right)
        return Unresolved(f"is {node!r}, which is not a condition")

    # --- exports -----------------------------------------------------------------------

    def _import(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        name = self.resolve(template, argument, trace, depth + 1)
        if isinstance(name, Unresolved):
            return name
        if not isinstance(name, str):
            return Unresolved(f"is imported with Fn::ImportValue {name}, a name not known here")
        exporters = self.exports().get(name, [])
        if len(exporters) > 1:
            local = [entry for entry in exporters if entry[0].scope == template.scope]
            exporters = local if len(local) == 1 else exporters
        if not exporters:
            return Unresolved(
                f"is imported with Fn::ImportValue {name!r}, which no template of this run"
                " exports; pass the exporting template too"
            )
        if len(exporters) > 1:
            return Unresolved(f"is imported with Fn::ImportValue {name!r}, exported twice")
        exporter, value = exporters[0]
        return self.resolve(exporter, value, trace, depth + 1)

    def _stack_output(
        self, template: TemplateFile, argument: Any, trace: Trace, depth: int
    ) -> Value:
        """``Fn::GetStackOutput`` (CDK's weak cross-stack references): another stack's output."""
        argument = argument if isinstance(argument, dict) else {}
        stack_name = self.resolve(template, argument.get("StackName"), trace, depth + 1)
        output_name = self.resolve(template, argument.get("OutputName"), trace, depth + 1)
        if not isinstance(stack_name, str) or not isinstance(output_name, str):
            return Unresolved("is read with Fn::GetStackOutput from a stack not known here")
        for other in self.templates:
            if other.scope != template.scope:
                continue
            if stack_name not in (other.stack, other.pseudo.get("AWS::StackName")):
                continue
            outputs = other.body.get("Outputs")
            output = outputs.get(output_name) if isinstance(outputs, dict) else None
            if isinstance(output, dict) and "Value" in output:
                return self.resolve(other, output["Value"], trace, depth + 1)
        return Unresolved(
            f"is read with Fn::GetStackOutput from stack {stack_name} output {output_name},"
            " which no template of this run has; pass that stack's template too"
        )

    def exports(self) -> dict[str, list[tuple[TemplateFile, Any]]]:
        """Every ``Outputs.*.Export.Name`` of the run, with the template and its ``Value``."""
        if self._exports is None:
            self._exports = {}
            for template in self.templates:
                outputs = template.body.get("Outputs")
                if not isinstance(outputs, dict):
                    continue
                for output in outputs.values():
                    if not isinstance(output, dict) or not isinstance(output.get("Export"), dict):
                        continue
                    name = self.resolve(template, output["Export"].get("Name"), Trace())
                    if isinstance(name, str):
                        self._exports.setdefault(name, []).append((template, output.get("Value")))
        return self._exports
