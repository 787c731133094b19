"""Follow a plan's ``configuration`` references to the resource instances an expression uses.

In a first plan, an ARN is known only after apply, so a mapping's ``event_source_arn`` has
no value; the configuration says what its expression refers to instead
(``["aws_sqs_queue.this", "each.key"]`` for ``aws_sqs_queue.this[each.key].arn``). This
module turns those references into resource instances:

- ``TYPE.NAME`` in the same module instance; ``TYPE.NAME[0]`` / ``TYPE.NAME["k"]`` pick an
  instance; a bare reference to a resource with ``count`` or ``for_each`` picks the
  instance whose key is the referring object's own ``count.index`` / ``each.key`` when the
  expression uses that, and is otherwise every instance (ambiguous);
- ``var.NAME`` in a child module follows the ``module_calls`` input into the parent module,
  where ``each.key`` / ``count.index`` are the module instance's key;
- ``module.NAME.OUTPUT`` follows the child module's output expression.

Anything else (``local.*``, which the plan does not describe, ``each.value``, data
sources, a root variable or a constant that may choose between branches) is kept as a
reference that was not followed: a link is made only when the expression comes down to
exactly one resource instance and nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from safe_queue.terraform._load import Document, Instance, Key, ModulePath, parse_key

__all__ = ["Resolved", "resolve"]

_HELPERS = frozenset({"each.key", "count.index"})
_RESOURCE = re.compile(
    r"^(?P<type>[A-Za-z][A-Za-z0-9_-]*)\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)"
    r'(?:\[(?P<key>\d+|"(?:[^"\\]|\\.)*")\])?(?:[.\[].*)?$'
)
_MODULE_OUTPUT = re.compile(
    r'^module\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)(?:\[(?P<key>\d+|"(?:[^"\\]|\\.)*")\])?'
    r"(?:\.(?P<output>[A-Za-z_][A-Za-z0-9_-]*))?"
)
_NOT_RESOURCES = frozenset({"var", "local", "each", "count", "path", "terraform", "self", "data"})
_MAX_DEPTH = 32


@dataclass
class Resolved:
    """What an expression comes down to.

    Attributes
    ----------
    instances
        The resource instances it refers to, each once.
    others
        The references it also uses and that were not followed to a resource.
    """

    instances: list[Instance] = field(default_factory=list)
    others: list[str] = field(default_factory=list)

    def add(self, other: Resolved) -> None:
        """Merge another expression's result into this one."""
        for instance in other.instances:
            if all(instance is not known for known in self.instances):
                self.instances.append(instance)
        for reference in other.others:
            if reference not in self.others:
                self.others.append(reference)

    def single(self) -> Instance | None:
        """Return the one instance the expression refers to, when that is all it refers to."""
        if len(self.instances) == 1 and not self.others:
            return self.instances[0]
        return None

    def describe(self) -> str:
        """Name the references, for an ``unchecked`` message."""
        names = [instance.address for instance in self.instances] + self.others
        return ", ".join(names) if names else "nothing this plan describes"


def _references(expression: dict[str, Any]) -> list[str]:
    """Return the references, without the prefixes Terraform lists beside them."""
    raw = expression.get("references")
    references = [item for item in raw if isinstance(item, str)] if isinstance(raw, list) else []
    return [
        reference
        for reference in references
        if not any(
            other != reference and other.startswith((reference + ".", reference + "["))
            for other in references
        )
    ]


def _pick(
    instances: list[Instance], key: str | None, helpers: set[str], own_key: Key
) -> list[Instance]:
    if key is not None:
        wanted = parse_key(key)
        return [instance for instance in instances if instance.index == wanted]
    if len(instances) == 1 and instances[0].index is None:
        return instances
    if _helped(own_key, helpers):
        return [instance for instance in instances if instance.index == own_key]
    return instances


def _helped(own_key: Key, helpers: set[str]) -> bool:
    """Whether the expression indexes with its own key (``each.key``, ``count.index``)."""
    if isinstance(own_key, str):
        return "each.key" in helpers
    return isinstance(own_key, int) and "count.index" in helpers


def _multi_instance(call: dict[str, Any]) -> bool:
    return "count_expression" in call or "for_each_expression" in call


def resolve(
    document: Document,
    expression: dict[str, Any] | None,
    module: ModulePath,
    own_key: Key,
    depth: int = 0,
) -> Resolved:
    """Follow ``expression`` (a configuration expression) to resource instances.

    Parameters
    ----------
    document
        The plan.
    expression
        ``{"references": [...]}`` or ``{"constant_value": ...}`` from the configuration.
    module
        The module instance the expression is evaluated in.
    own_key
        The ``each.key`` or ``count.index`` of the object whose expression it is (a
        resource instance, or for a ``module_calls`` input, the module instance).
    """
    result = Resolved()
    if expression is None or depth > _MAX_DEPTH:
        result.others.append("an expression the plan does not describe")
        return result
    references = _references(expression)
    helpers = {reference for reference in references if reference in _HELPERS}
    for reference in references:
        if reference in _HELPERS:
            continue
        head = reference.split(".", 1)[0].split("[", 1)[0]
        if head == "var":
            result.add(_variable(document, reference, module, depth))
        elif head == "module":
            result.add(_output(document, reference, module, helpers, own_key, depth))
        elif head in _NOT_RESOURCES:
            result.others.append(reference)
        else:
            match = _RESOURCE.match(reference)
            found = (
                document.resource(module, match.group("type"), match.group("name")) if match else []
            )
            picked = _pick(found, match.group("key") if match else None, helpers, own_key)
            if picked:
                result.add(Resolved(instances=picked))
            else:
                result.others.append(reference)
    return result


def _variable(document: Document, reference: str, module: ModulePath, depth: int) -> Resolved:
    name = reference.split(".")[1] if "." in reference else ""
    call = document.module_call(module)
    expressions = call.get("expressions") if call else None
    expression = expressions.get(name) if isinstance(expressions, dict) else None
    if not module or not isinstance(expression, dict) or "references" not in expression:
        # a root variable, a constant input or a default: a value, not a resource
        return Resolved(others=[reference])
    return resolve(document, expression, module[:-1], module[-1][1], depth + 1)


def _output(
    document: Document,
    reference: str,
    module: ModulePath,
    helpers: set[str],
    own_key: Key,
    depth: int,
) -> Resolved:
    match = _MODULE_OUTPUT.match(reference)
    parent = document.config_module(module)
    calls = parent.get("module_calls") if parent else None
    call = calls.get(match.group("name")) if match and isinstance(calls, dict) else None
    if match is None or not isinstance(call, dict) or match.group("output") is None:
        return Resolved(others=[reference])
    key: Key
    if match.group("key") is not None:
        key = parse_key(match.group("key"))
    elif not _multi_instance(call):
        key = None
    elif _helped(own_key, helpers):
        key = own_key
    else:
        return Resolved(others=[reference])
    child = (*module, (match.group("name"), key))
    outputs = document.config_module(child)
    outputs = outputs.get("outputs") if outputs else None
    output = outputs.get(match.group("output")) if isinstance(outputs, dict) else None
    expression = output.get("expression") if isinstance(output, dict) else None
    if not isinstance(expression, dict):
        return Resolved(others=[reference])
    return resolve(document, expression, child, None, depth + 1)
