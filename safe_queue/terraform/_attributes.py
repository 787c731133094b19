"""Reading one Terraform resource's attributes as engine facts: numbers, flags, blocks, tags.

A value Terraform knows only after apply is an :class:`~safe_queue.engine.Unknown` saying
so; a value of the wrong shape is one naming what it is. Nothing is guessed.
"""

from __future__ import annotations

from typing import Any, Final

from safe_queue.arn import Arn
from safe_queue.engine import RULES, limits
from safe_queue.engine.acknowledge import acknowledgement
from safe_queue.engine.facts import Acknowledgement, ProvisionedFacts, Unknown
from safe_queue.terraform._load import (
    AFTER_APPLY,
    Document,
    Instance,
    TerraformError,
    has_unknown_inside,
)

__all__ = [
    "ACKNOWLEDGE_TAG",
    "LATER",
    "acknowledgements",
    "boolean",
    "filters",
    "function_name",
    "integer",
    "name_in_arn",
    "provisioned",
    "queue_name",
    "response_types",
    "scaling",
]

ACKNOWLEDGE_TAG: Final = "safe-queue:acknowledge:"
"""Tag key prefix: ``safe-queue:acknowledge:<rule>`` = ``<reason>`` acknowledges a finding."""
LATER: Final = "is known only after apply"
_RULE_IDS: Final = frozenset(entry.id for entry in RULES)


def integer(value: Any, what: str) -> int | Unknown | None:
    if value is AFTER_APPLY:
        return Unknown(what, LATER)
    if value is None:
        return None
    if isinstance(value, bool):
        return Unknown(what, f"is {value!r}, not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    return Unknown(what, f"is {value!r}, not a whole number")


def name_in_arn(arn: str, service: str) -> str | None:
    """Return the resource name of an ``arn:<partition>:<service>:...`` ARN."""
    parsed = Arn.parse(arn)
    if parsed is None or parsed.service != service:
        return None
    if service == "lambda":
        if not parsed.resource.startswith("function:"):
            return None
        return parsed.name.split(":")[0]
    return parsed.name


def function_name(value: str) -> str:
    """Return a function's name from any form Lambda accepts (name, ARN, partial, qualified).

    Examples
    --------
    >>> [function_name(v) for v in ("render", "render:live",
    ...     "arn:aws:lambda:eu-west-1:123456789012:function:render:live",
    ...     "123456789012:function:render")]
    ['render', 'render', 'render', 'render']
    """
    parts = value.split(":")
    if value.startswith("arn:") and len(parts) > 6:
        return parts[6]
    if len(parts) >= 3 and parts[1] == "function":
        return parts[2]
    return parts[0]


def response_types(mapping: Instance) -> bool | Unknown | None:
    types = mapping.get("function_response_types")
    if types is AFTER_APPLY or has_unknown_inside(mapping.unknown.get("function_response_types")):
        return Unknown("the function_response_types", LATER)
    if types is None:
        return None
    return isinstance(types, list) and limits.REPORT_BATCH_ITEM_FAILURES in types


def block_of(mapping: Instance, name: str) -> tuple[dict[str, Any] | None, Any]:
    """Return a nested block's value (``scaling_config { ... }``) and its unknown marks."""
    value = mapping.get(name)
    marks = mapping.unknown.get(name)
    if value is AFTER_APPLY:
        return None, True
    block = value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else None
    mark = marks[0] if isinstance(marks, list) and marks else None
    return block, mark


def scaling(mapping: Instance) -> int | Unknown | None:
    block, marks = block_of(mapping, "scaling_config")
    what = "the scaling_config's maximum_concurrency"
    if marks is True or (isinstance(marks, dict) and marks.get("maximum_concurrency") is True):
        return Unknown(what, LATER)
    return integer(block.get("maximum_concurrency"), what) if block else None


def filters(mapping: Instance) -> bool | Unknown | None:
    block, marks = block_of(mapping, "filter_criteria")
    if marks is True or (isinstance(marks, dict) and marks.get("filter") is True):
        return Unknown("the filter_criteria", LATER)
    if block is None:
        return None
    filters = block.get("filter")
    return isinstance(filters, list) and len(filters) > 0


def provisioned(mapping: Instance) -> ProvisionedFacts | Unknown | None:
    block, marks = block_of(mapping, "provisioned_poller_config")
    what = "the provisioned_poller_config"
    if marks is True:
        return Unknown(what, LATER)
    if block is None:
        return None
    marks = marks if isinstance(marks, dict) else {}

    def pollers(key: str) -> int | Unknown | None:
        argument = f"{key}_pollers"
        if marks.get(argument) is True:
            return Unknown(f"the provisioned_poller_config's {argument}", LATER)
        return integer(block.get(argument), f"the provisioned_poller_config's {argument}")

    return ProvisionedFacts(minimum_pollers=pollers("minimum"), maximum_pollers=pollers("maximum"))


def boolean(value: Any, what: str) -> bool | Unknown | None:
    if value is AFTER_APPLY:
        return Unknown(what, LATER)
    if value is None or isinstance(value, bool):
        return value
    return Unknown(what, f"is {value!r}, not true or false")


def queue_name(queue: Instance, what: str) -> str | Unknown | None:
    """Return the queue's name; ``None`` when Terraform generates it (no ``name``)."""
    name = queue.get("name")
    if isinstance(name, str):
        return name
    expression = queue.expression("name")
    if name is AFTER_APPLY and expression is not None and "constant_value" not in expression:
        return Unknown(what, LATER)
    # not set (or name_prefix): the provider makes a valid name, with .fifo for FIFO queues
    return None


def tags(instance: Instance) -> dict[str, Any]:
    for attribute in ("tags_all", "tags"):
        tags = instance.get(attribute)
        if isinstance(tags, dict):
            return tags
    return {}


def acknowledgements(document: Document, owners: list[Instance]) -> tuple[Acknowledgement, ...]:
    found: list[Acknowledgement] = []
    for owner in owners:
        for key, reason in tags(owner).items():
            if not isinstance(key, str) or not key.startswith(ACKNOWLEDGE_TAG):
                continue
            rule_id = f"safe-queue:{key[len(ACKNOWLEDGE_TAG) :]}"
            if rule_id not in _RULE_IDS:
                raise TerraformError(
                    document.path,
                    f"{owner.address}: tag {key!r} names no safe-queue rule. Fix: write"
                    f" {ACKNOWLEDGE_TAG}<rule> with a rule of the rules reference, without its"
                    f" safe-queue: prefix (e.g. {ACKNOWLEDGE_TAG}filter-deletes-unmatched)",
                )
            if not isinstance(reason, str) or not reason.strip():
                raise TerraformError(
                    document.path,
                    f"{owner.address}: tag {key!r} has no reason. Fix: give the tag a value"
                    " that says why the finding is acceptable",
                )
            source = f"tag {key} on {owner.address}"
            found.append(acknowledgement(rule_id, reason, source=source))
    return tuple(found)
