"""Resolve intrinsic functions across the templates of one run, and find queues and functions.

Values are plain (``str``, ``int``, ``bool``, lists, dicts), a :class:`Reference` to a
resource (``Ref``/``Fn::GetAtt``), a :class:`Text` mixing strings and references
(``Fn::Sub``/``Fn::Join`` over a reference), or :class:`Unresolved` with the reason. Nothing
is guessed: what cannot be known stays :class:`Unresolved`, and becomes the engine's
``Unknown`` (``safe-queue:unchecked``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from safe_queue.template._load import TemplateFile

__all__ = [
    "FUNCTION_TYPES",
    "QUEUE_TYPE",
    "Deployment",
    "Located",
    "NotQueue",
    "Reference",
    "Text",
    "Trace",
    "Unresolved",
]

QUEUE_TYPE = "AWS::SQS::Queue"
SAM_FUNCTION = "AWS::Serverless::Function"
FUNCTION_TYPES = ("AWS::Lambda::Function", SAM_FUNCTION)
_ARN_NAME_INDEX = 6  # arn:aws:lambda:region:account:function:NAME
_ALIAS = "AWS::Lambda::Alias"
_VERSION = "AWS::Lambda::Version"
_PSEUDO = frozenset(
    {
        "AWS::AccountId",
        "AWS::NotificationARNs",
        "AWS::Partition",
        "AWS::Region",
        "AWS::StackId",
        "AWS::StackName",
        "AWS::URLSuffix",
    }
)
_NO_VALUE = "AWS::NoValue"
_UNSUPPORTED = (
    "Fn::Base64",
    "Fn::Cidr",
    "Fn::GetAZs",
    "Fn::Transform",
    "Fn::ForEach",
)
# Resources whose value may be a queue's ARN without being a queue: custom resources,
# nested stacks and applications (their outputs), modules. Any other resource type that is
# not AWS::SQS::Queue is some other event source (a stream, a broker, a function...).
_OPAQUE_TYPES = (
    "Custom::",
    "AWS::CloudFormation::CustomResource",
    "AWS::CloudFormation::Stack",
    "AWS::Serverless::Application",
)
_SUB_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_MAX_DEPTH = 20


@dataclass(frozen=True)
class Unresolved:
    """A value that cannot be known from the templates; ``why`` ends a sentence."""

    why: str


@dataclass(frozen=True, eq=False)
class Reference:
    """``Ref`` (``attribute`` None) or ``Fn::GetAtt`` of a resource of ``template``."""

    template: TemplateFile
    logical_id: str
    attribute: str | None = None

    @property
    def type(self) -> str:
        """The resource's ``Type``."""
        return str(_resource(self.template, self.logical_id).get("Type", ""))

    @property
    def metadata(self) -> dict[str, Any]:
        """The resource's ``Metadata`` (empty when absent)."""
        metadata = _resource(self.template, self.logical_id).get("Metadata")
        return metadata if isinstance(metadata, dict) else {}

    def __str__(self) -> str:
        suffix = f".{self.attribute}" if self.attribute else ""
        return f"${{{self.logical_id}{suffix}}}"


@dataclass(frozen=True)
class Text:
    """A string built from literal parts and references (``Fn::Sub``, ``Fn::Join``)."""

    parts: tuple[str | Reference, ...]

    def __str__(self) -> str:
        return "".join(str(part) for part in self.parts)


@dataclass(frozen=True)
class NotQueue:
    """The event source is something other than an SQS queue (a stream, a broker...)."""

    what: str


@dataclass(frozen=True)
class Located:
    """A resource found: its template and logical id."""

    template: TemplateFile
    logical_id: str

    @property
    def properties(self) -> dict[str, Any]:
        """The resource's ``Properties`` (empty when absent)."""
        properties = _resource(self.template, self.logical_id).get("Properties")
        return properties if isinstance(properties, dict) else {}

    @property
    def type(self) -> str:
        """The resource's ``Type``."""
        return str(_resource(self.template, self.logical_id).get("Type", ""))

    @property
    def metadata(self) -> dict[str, Any]:
        """The resource's ``Metadata`` (empty when absent)."""
        metadata = _resource(self.template, self.logical_id).get("Metadata")
        return metadata if isinstance(metadata, dict) else {}


@dataclass
class Trace:
    """What resolving one mapping assumed: parameter values (and where they came from)."""

    parameters: dict[str, str] = field(default_factory=dict)
    notes: dict[str, None] = field(default_factory=dict)

    def note(self, text: str) -> None:
        """Record an assumption once."""
        self.notes[text] = None


Value = Any
"""A resolved value: plain data, :class:`Reference`, :class:`Text` or :class:`Unresolved`."""


def _resource(template: TemplateFile, logical_id: str) -> dict[str, Any]:
    """Return a resource of ``template`` (empty for an ``Fn::ForEach`` loop not expanded)."""
    resource = template.resources.get(logical_id)
    return resource if isinstance(resource, dict) else {}


def _is_sam(template: TemplateFile) -> bool:
    transform = template.body.get("Transform")
    names = transform if isinstance(transform, list) else [transform]
    return any(isinstance(name, str) and name.startswith("AWS::Serverless") for name in names)


class Deployment:
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
            return [item for item in items if item is not _ABSENT]
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
        return {key: value for key, value in resolved.items() if value is not _ABSENT}

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
            return _ABSENT
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
            properties = _resource(parent, stack_id).get("Properties")
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
        for match in _SUB_VARIABLE.finditer(argument):
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
        return _concatenate(parts)

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
        return _concatenate(parts)

    def _select(self, template: TemplateFile, argument: Any, trace: Trace, depth: int) -> Value:
        if not isinstance(argument, list) or len(argument) != 2:
            return Unresolved("is an Fn::Select that is malformed")
        index = _as_int(self.resolve(template, argument[0], trace, depth + 1))
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
            and source.type in (*FUNCTION_TYPES, _ALIAS, _VERSION)
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

    # --- queues and functions ----------------------------------------------------------

    def _named(self, kind: str, name: str) -> list[Located]:
        if self._names is None:
            self._names = {}
            for template in self.templates:
                for logical_id, resource in template.resources.items():
                    if not isinstance(resource, dict):
                        continue
                    resource_type = resource.get("Type")
                    if resource_type == QUEUE_TYPE:
                        key, prop = "queue", "QueueName"
                    elif resource_type in FUNCTION_TYPES:
                        key, prop = "function", "FunctionName"
                    else:
                        continue
                    properties = resource.get("Properties")
                    if not isinstance(properties, dict):
                        continue
                    physical = self.resolve(template, properties.get(prop), Trace())
                    if isinstance(physical, str):
                        self._names.setdefault((key, physical), []).append(
                            Located(template, logical_id)
                        )
        return self._names.get((kind, name), [])

    def find_queue(self, value: Value) -> Located | NotQueue | Unresolved:
        """Find the queue an ARN (``EventSourceArn``, ``deadLetterTargetArn``...) refers to."""
        if isinstance(value, Unresolved):
            return value
        if isinstance(value, Text):
            tail = value.parts[-1]
            if isinstance(tail, Reference):
                value = tail
            else:
                return self._queue_by_arn(str(value))
        if isinstance(value, Reference):
            if value.type == QUEUE_TYPE:
                return Located(value.template, value.logical_id)
            if value.type.startswith("AWS::") and not value.type.startswith(_OPAQUE_TYPES):
                return NotQueue(f"{value.type} {value.logical_id}")
            return Unresolved(
                f"is {value.type or 'a resource'} {value.logical_id}, not an SQS queue"
            )
        if isinstance(value, str):
            return self._queue_by_arn(value)
        return Unresolved(f"is {value!r}, not a queue ARN")

    def _queue_by_arn(self, arn: str) -> Located | NotQueue | Unresolved:
        segments = _segments(arn)
        if arn.startswith("arn:") and len(segments) >= 6 and segments[2] not in ("sqs", "*"):
            return NotQueue(arn)  # a stream, a broker, a function...: not an SQS mapping
        name = segments[-1].rsplit("/", 1)[-1]
        return self._one_named("queue", name, arn)

    def find_function(self, value: Value, trace: Trace, depth: int = 0) -> Located | Unresolved:
        """Find the function a ``FunctionName`` refers to, through aliases and versions."""
        if depth > _MAX_DEPTH:
            return Unresolved("is defined in a cycle of aliases or versions")
        if isinstance(value, Unresolved):
            return value
        if isinstance(value, Text):
            tail = [part for part in value.parts if part != ""]
            references = [part for part in tail if isinstance(part, Reference)]
            if len(references) == 1 and (
                tail[-1] is references[0]
                or (len(tail) >= 2 and tail[-2] is references[0] and str(tail[-1]).startswith(":"))
            ):
                value = references[0]
            else:
                return self._function_by_name(str(value))
        if isinstance(value, Reference):
            located = Located(value.template, value.logical_id)
            if value.type in FUNCTION_TYPES:
                return located
            if value.type in (_ALIAS, _VERSION):
                properties = located.properties
                target = properties.get("FunctionName")
                if target is None and value.type == _ALIAS:
                    target = properties.get("FunctionVersion")
                resolved = self.resolve(value.template, target, trace, depth + 1)
                return self.find_function(resolved, trace, depth + 1)
            return Unresolved(f"is {value.type} {value.logical_id}, not a Lambda function")
        if isinstance(value, str):
            return self._function_by_name(value)
        return Unresolved(f"is {value!r}, not a function name or ARN")

    def _function_by_name(self, name: str) -> Located | Unresolved:
        # arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER], ACCOUNT:function:NAME,
        # NAME[:QUALIFIER]
        segments = _segments(name)
        index = segments.index("function") if "function" in segments else -1
        short = segments[index + 1] if 0 <= index < len(segments) - 1 else segments[0]
        return self._one_named("function", short, name)

    def _one_named(self, kind: str, name: str, given: str) -> Located | Unresolved:
        found = self._named(kind, name) if name and "${" not in name else []
        if len(found) == 1:
            return found[0]
        if found:
            where = ", ".join(f"{item.logical_id} in {item.template.path}" for item in found)
            return Unresolved(f"{given} is defined more than once in these templates ({where})")
        return Unresolved(f"{given} is not defined in these templates")


class _Absent:
    """``AWS::NoValue``: the property is removed."""

    def __repr__(self) -> str:
        return "AWS::NoValue"


_ABSENT: Any = _Absent()


def _segments(arn: str) -> list[str]:
    """Split an ARN at ``:``, each ``${AWS::Region}``-like placeholder as ``*``."""
    return _SUB_VARIABLE.sub("*", arn).split(":")


def _concatenate(parts: list[Value]) -> Value:
    """Join resolved parts into a ``str``, a :class:`Text`, or the first :class:`Unresolved`."""
    flat: list[str | Reference] = []
    for part in parts:
        if isinstance(part, Unresolved):
            return part
        if isinstance(part, Text):
            flat.extend(part.parts)
        elif isinstance(part, Reference):
            flat.append(part)
        elif isinstance(part, bool):
            flat.append(str(part).lower())
        elif isinstance(part, str | int | float):
            flat.append(str(part))
        elif part is _ABSENT:
            continue
        else:
            return Unresolved(f"joins {part!r}, which is not a string")
    merged: list[str | Reference] = []
    for part in flat:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    if all(isinstance(part, str) for part in merged):
        return "".join(str(part) for part in merged)
    return Text(tuple(part for part in merged if part != ""))


def _as_int(value: Value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                return None
            return int(number) if number.is_integer() else None
    return None


def as_int(value: Value) -> int | Unresolved | None:
    """Return a whole number from a resolved value (``"60"`` counts), ``None`` when absent."""
    if value is None or value is _ABSENT or isinstance(value, Unresolved):
        return None if value is _ABSENT else value
    number = _as_int(value)
    if number is None:
        return Unresolved(f"is {value}, not a whole number")
    return number


def as_bool(value: Value) -> bool | Unresolved | None:
    """Return a boolean from a resolved value (``"true"`` counts), ``None`` when absent."""
    if value is None or isinstance(value, Unresolved):
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return Unresolved(f"is {value}, not true or false")


def parse_json_text(value: Value) -> Value:
    """Parse a JSON-string ``RedrivePolicy``; references stay ``${Id.Attr}`` placeholders."""
    if isinstance(value, Text | str):
        try:
            return json.loads(str(value))
        except json.JSONDecodeError:
            return Unresolved(f"is {str(value)!r}, not JSON")
    return value
