"""Check ``--parameter`` values and parameter Default values before anything is resolved.

A value CloudFormation would refuse is an input error (exit 2), not a guess: a name no
template declares (a typo), or a value that is not a number for a ``Number`` or
``List<Number>`` parameter (given with ``--parameter`` or written as its ``Default``).

Examples
--------
>>> from safe_queue.template._load import TemplateFile
>>> template = TemplateFile("t.yaml", {"Parameters": {"Vis": {"Type": "Number"}},
...                                    "Resources": {}})
>>> check_parameters([template], {"Vis": "60"})
>>> check_parameters([template], {"Vis": "abc"})
Traceback (most recent call last):
    ...
safe_queue.template._parameters.ParameterError: --parameter Vis=abc: t.yaml declares Vis \
with Type Number, and 'abc' is not a number. Fix: give a number, e.g. --parameter Vis=60.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from safe_queue.template._load import TemplateError, TemplateFile

__all__ = ["ParameterError", "check_parameters", "is_number"]

_NUMBER = re.compile(r"\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*")


class ParameterError(ValueError):
    """A ``--parameter`` value no template can take: an undeclared name, or not a number."""


def is_number(value: Any) -> bool:
    """Return whether CloudFormation takes ``value`` for a ``Number`` parameter.

    Examples
    --------
    >>> [is_number(v) for v in (60, 1.5, "60", " -2.5e3 ", "abc", "", True, "nan", None)]
    [True, True, True, True, False, False, False, False, False]
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    return isinstance(value, str) and _NUMBER.fullmatch(value) is not None


def _numbers(kind: str, value: Any) -> list[Any] | None:
    """Return the items of ``value`` that must be numbers for a parameter of ``kind``."""
    if kind == "Number":
        return [value]
    if kind == "List<Number>":
        if isinstance(value, list):
            return value
        return str(value).split(",") if isinstance(value, str | int | float) else [value]
    return None


def check_parameters(templates: Sequence[TemplateFile], parameters: Mapping[str, str]) -> None:
    """Refuse parameter values and Default values that no deployment could take.

    Raises
    ------
    ParameterError
        ``parameters`` names a parameter no template declares, or gives a value that is not
        a number to a ``Number``/``List<Number>`` parameter.
    TemplateError
        A template's ``Number``/``List<Number>`` parameter has a ``Default`` that is not a
        number.
    """
    declared: dict[str, list[tuple[TemplateFile, str]]] = {}
    for template in templates:
        section = template.body.get("Parameters")
        if not isinstance(section, dict):
            continue
        for name, declaration in section.items():
            kind = declaration.get("Type") if isinstance(declaration, dict) else None
            kind = kind if isinstance(kind, str) else "String"
            declared.setdefault(str(name), []).append((template, kind))
            if isinstance(declaration, dict) and "Default" in declaration:
                default = declaration["Default"]
                items = _numbers(kind, default)
                if items is not None and not all(is_number(item) for item in items):
                    raise TemplateError(
                        template.path,
                        None,
                        f"parameter {name} has Type {kind}, and its Default {default!r} is not"
                        " a number: CloudFormation refuses the template. Fix: give a number"
                        " as the Default, or change the Type.",
                    )
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise ParameterError(
            f"--parameter {', '.join(unknown)}: no template declares"
            f" {'it' if len(unknown) == 1 else 'them'} (declared:"
            f" {', '.join(sorted(declared)) or 'none'}). Fix: use a declared name."
        )
    for name, value in parameters.items():
        for template, kind in declared[name]:
            items = _numbers(kind, value)
            if items is not None and not all(is_number(item) for item in items):
                example = "60" if kind == "Number" else "60,120"
                raise ParameterError(
                    f"--parameter {name}={value}: {template.path} declares {name} with Type"
                    f" {kind}, and {value!r} is not a number. Fix: give a number, e.g."
                    f" --parameter {name}={example}."
                )
