"""What resolving a template gives: plain data, references, text, or why not.

Values are plain (``str``, ``int``, ``bool``, lists, dicts), a :class:`Reference` to a
resource (``Ref``/``Fn::GetAtt``), a :class:`Text` mixing strings and references
(``Fn::Sub``/``Fn::Join`` over a reference), or :class:`Unresolved` with the reason. Nothing
is guessed: what cannot be known stays :class:`Unresolved`, and becomes the engine's
``Unknown`` (``safe-queue:unchecked``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from safe_queue import keys
from safe_queue.template._file import TemplateFile

__all__ = [
    "ABSENT",
    "ALIAS_TYPE",
    "FUNCTION_TYPES",
    "OPAQUE_TYPES",
    "PSEUDO_PARAMETERS",
    "QUEUE_TYPE",
    "SAM_FUNCTION",
    "VERSION_TYPE",
    "Located",
    "NotQueue",
    "Reference",
    "Text",
    "Trace",
    "Unresolved",
    "Value",
    "as_bool",
    "as_int",
    "concatenate",
    "derived_timeout",
    "parse_json_text",
    "placeholder",
    "resource_of",
    "to_int",
]

QUEUE_TYPE = "AWS::SQS::Queue"
SAM_FUNCTION = "AWS::Serverless::Function"
FUNCTION_TYPES = ("AWS::Lambda::Function", SAM_FUNCTION)
ALIAS_TYPE = "AWS::Lambda::Alias"
VERSION_TYPE = "AWS::Lambda::Version"
# Resources whose value may be a queue's ARN without being a queue: custom resources,
# nested stacks and applications (their outputs), modules. Any other resource type that is
# not AWS::SQS::Queue is some other event source (a stream, a broker, a function...).
OPAQUE_TYPES = (
    "Custom::",
    "AWS::CloudFormation::CustomResource",
    "AWS::CloudFormation::Stack",
    "AWS::Serverless::Application",
)
PSEUDO_PARAMETERS = frozenset(
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
"""The pseudo parameters a template may ``Ref``."""
PLACEHOLDER = re.compile(r"^\$\{([^}.]+)(?:\.([^}]+))?\}$")
"""``${Id}`` / ``${Id.Attr}``: a reference written inside a JSON string (Fn::Sub)."""
SUB_VARIABLE = re.compile(r"\$\{([^}]*)\}")


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
        return str(resource_of(self.template, self.logical_id).get("Type", ""))

    @property
    def metadata(self) -> dict[str, Any]:
        """The resource's ``Metadata`` (empty when absent)."""
        metadata = resource_of(self.template, self.logical_id).get("Metadata")
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
        properties = resource_of(self.template, self.logical_id).get("Properties")
        return properties if isinstance(properties, dict) else {}

    @property
    def type(self) -> str:
        """The resource's ``Type``."""
        return str(resource_of(self.template, self.logical_id).get("Type", ""))

    @property
    def metadata(self) -> dict[str, Any]:
        """The resource's ``Metadata`` (empty when absent)."""
        metadata = resource_of(self.template, self.logical_id).get("Metadata")
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


def resource_of(template: TemplateFile, logical_id: str) -> dict[str, Any]:
    """Return a resource of ``template`` (empty for an ``Fn::ForEach`` loop not expanded)."""
    resource = template.resources.get(logical_id)
    return resource if isinstance(resource, dict) else {}


class _Absent:
    """``AWS::NoValue``: the property is removed."""

    def __repr__(self) -> str:
        return "AWS::NoValue"


ABSENT: Any = _Absent()


def concatenate(parts: list[Value]) -> Value:
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
        elif part is ABSENT:
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


def to_int(value: Value) -> int | None:
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
    if value is None or value is ABSENT or isinstance(value, Unresolved):
        return None if value is ABSENT else value
    number = to_int(value)
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


def derived_timeout(metadata: dict[str, Any]) -> int | None:
    value = as_int(metadata.get(keys.DERIVED_FUNCTION_TIMEOUT))
    return value if isinstance(value, int) else None


def placeholder(template: TemplateFile, value: Any) -> Any:
    """``"${Dlq.Arn}"`` from a JSON-string RedrivePolicy built with Fn::Sub, as a reference."""
    if isinstance(value, str):
        match = PLACEHOLDER.match(value)
        if match and match.group(1) in template.resources:
            return Reference(template, match.group(1), match.group(2))
    return value
