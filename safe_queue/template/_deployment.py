"""One run's templates as a deployment: resolution, and the queues and functions it has.

A queue or a function is found by reference (``Ref``, ``Fn::GetAtt``, an alias or a
version followed to its function), or by an ARN or name written out, matched against the
names the templates give their resources (``QueueName``, ``FunctionName``). More than one
match, or none, is :class:`~safe_queue.template._values.Unresolved`, never a guess.
"""

from __future__ import annotations

from safe_queue.template._resolve import Resolver
from safe_queue.template._values import (
    ALIAS_TYPE,
    FUNCTION_TYPES,
    OPAQUE_TYPES,
    QUEUE_TYPE,
    SUB_VARIABLE,
    VERSION_TYPE,
    Located,
    NotQueue,
    Reference,
    Text,
    Trace,
    Unresolved,
    Value,
)

__all__ = ["Deployment"]

_MAX_DEPTH = 20


class Deployment(Resolver):
    """Every template of one run: values resolved, and queues and functions found."""

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
            if value.type.startswith("AWS::") and not value.type.startswith(OPAQUE_TYPES):
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
            if value.type in (ALIAS_TYPE, VERSION_TYPE):
                properties = located.properties
                target = properties.get("FunctionName")
                if target is None and value.type == ALIAS_TYPE:
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


def _segments(arn: str) -> list[str]:
    """Split an ARN at ``:``, each ``${AWS::Region}``-like placeholder as ``*``."""
    return SUB_VARIABLE.sub("*", arn).split(":")
