"""``SafeQueueHook``'s props, checked before anything is built, and as the template takes them.

Each refusal is a :class:`~safe_queue.errors.SafeQueueConfigError` naming the setting, the
value, what AWS allows (the ``AWS::CloudFormation::LambdaHook`` schema) and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import aws_cdk as cdk
from constructs import Construct

from safe_queue.cdk.stack_set import refuse

__all__ = [
    "ALIAS_PATTERN",
    "ALIAS_PREFIX",
    "FAILURE_MODES",
    "OPERATIONS",
    "TARGETS",
    "alias_of",
    "check_alias",
    "check_failure_mode",
    "check_memory_size",
    "check_operations",
    "check_stack_filters",
    "stack_filters_property",
    "target_filters",
]

ALIAS_PATTERN: Final = re.compile(
    r"^(?!(?i:aws))[A-Za-z0-9]{2,64}::[A-Za-z0-9]{2,64}::[A-Za-z0-9]{2,64}$"
)
"""``AWS::CloudFormation::LambdaHook`` ``Alias``'s pattern (the resource's schema)."""
ALIAS_PREFIX: Final = "Private"
TARGETS: Final = (
    "AWS::Lambda::EventSourceMapping",
    "AWS::SQS::Queue",
    "AWS::Lambda::Function",
)
"""The resource types the hook judges (its ``TargetFilters``)."""
OPERATIONS: Final = ("STACK", "RESOURCE", "CHANGE_SET")
FAILURE_MODES: Final = ("WARN", "FAIL")
_STACK_FILTER_KEYS: Final = ("FilteringCriteria", "StackNames", "StackRoles")

_refuse = refuse


def check_failure_mode(failure_mode: str) -> str:
    """Validate ``FailureMode``: ``WARN`` or ``FAIL``."""
    if failure_mode not in FAILURE_MODES:
        raise _refuse(
            "failure_mode",
            failure_mode,
            "a hook's FailureMode is WARN (the operation goes on, with a warning) or FAIL",
            "pass failure_mode='WARN' (the default, AWS's advice to start with) or 'FAIL'",
        )
    return failure_mode


def check_operations(target_operations: Sequence[str]) -> list[str]:
    """Validate ``TargetOperations``: a sequence of :data:`OPERATIONS`, each once."""
    operations = list(target_operations) if not isinstance(target_operations, str) else []
    unknown = [op for op in operations if op not in OPERATIONS]
    if isinstance(target_operations, str) or not operations or unknown:
        raise _refuse(
            "target_operations",
            target_operations,
            f"the hook evaluates {', '.join(OPERATIONS)} operations (CLOUD_CONTROL"
            " requests carry no stack to read acknowledgements or physical ids from)",
            "pass a sequence of them, such as ('STACK', 'RESOURCE') (the default)",
        )
    if len(set(operations)) != len(operations):
        raise _refuse(
            "target_operations",
            target_operations,
            "each operation may be named once",
            "remove the duplicate",
        )
    return operations


def _check_names(setting: str, value: object) -> dict[str, list[str]]:
    if not isinstance(value, Mapping) or not value or set(value) - {"Include", "Exclude"}:
        raise _refuse(
            setting,
            value,
            "it is a map with Include and/or Exclude, each a list of 1 to 50 names",
            f"pass {{'Include': ['orders-*']}} or {{'Exclude': [...]}} as {setting}",
        )
    checked: dict[str, list[str]] = {}
    for key, names in value.items():
        if (
            isinstance(names, str)
            or not isinstance(names, Sequence)
            or not 1 <= len(names) <= 50
            or not all(isinstance(name, str) and name for name in names)
            or len(set(names)) != len(names)
        ):
            raise _refuse(
                f"{setting}.{key}",
                names,
                "it is a list of 1 to 50 different, non-empty names",
                "list each stack name (or role ARN) once",
            )
        checked[key] = list(names)
    return checked


def check_stack_filters(stack_filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Validate ``StackFilters`` in CloudFormation's shape; return it as the template takes it."""
    if stack_filters is None:
        return None
    if not isinstance(stack_filters, Mapping) or set(stack_filters) - set(_STACK_FILTER_KEYS):
        raise _refuse(
            "stack_filters",
            stack_filters,
            f"it is a map of {', '.join(_STACK_FILTER_KEYS)} (CloudFormation's StackFilters)",
            "pass {'FilteringCriteria': 'ALL', 'StackNames': {'Include': ['orders-*']}}",
        )
    criteria = stack_filters.get("FilteringCriteria", "ALL")
    if criteria not in ("ALL", "ANY"):
        raise _refuse(
            "stack_filters.FilteringCriteria",
            criteria,
            "it is ALL (every filter must match) or ANY (one is enough)",
            "pass 'ALL' (the default) or 'ANY'",
        )
    filters: dict[str, Any] = {"FilteringCriteria": criteria}
    for key in ("StackNames", "StackRoles"):
        if key in stack_filters:
            filters[key] = _check_names(f"stack_filters.{key}", stack_filters[key])
    if len(filters) == 1:
        raise _refuse(
            "stack_filters",
            stack_filters,
            "it filters by StackNames, StackRoles or both",
            "add StackNames or StackRoles, or leave stack_filters out to evaluate every stack",
        )
    return filters


def check_alias(alias: str | None) -> None:
    """Validate a given alias: ``Private::Name::Name`` (the resource's pattern)."""
    if alias is None or cdk.Token.is_unresolved(alias):
        return
    if not ALIAS_PATTERN.match(alias) or alias.split("::")[0] != ALIAS_PREFIX:
        raise _refuse(
            "alias",
            alias,
            "a Lambda hook's alias is Private::Name::Name, each name 2 to 64 letters or"
            " digits (the LambdaHook resource's pattern; not starting with AWS)",
            "pass an alias such as 'Private::SafeQueue::Orders', or leave it out to derive one",
        )


def alias_of(scope: Construct, alias: str | None) -> str:
    """Return the alias given, else ``Private::SafeQueue::<scope's unique id>``."""
    if alias is not None:
        return alias
    unique = re.sub(r"[^A-Za-z0-9]", "", cdk.Names.unique_id(scope))[-64:]
    return f"{ALIAS_PREFIX}::SafeQueue::{unique.rjust(2, '0')}"


def target_filters() -> cdk.CfnLambdaHook.TargetFiltersProperty:
    """Return ``TargetFilters``: create and update of :data:`TARGETS`, before provisioning."""
    return cdk.CfnLambdaHook.TargetFiltersProperty(
        targets=[
            cdk.CfnLambdaHook.HookTargetProperty(
                target_name=name, action=action, invocation_point="PRE_PROVISION"
            )
            for name in TARGETS
            for action in ("CREATE", "UPDATE")
        ]
    )


def stack_filters_property(
    filters: Mapping[str, Any] | None,
) -> cdk.CfnLambdaHook.StackFiltersProperty | None:
    """Return checked ``StackFilters`` as CDK's struct (``None``: every stack)."""
    if filters is None:
        return None
    names, roles = filters.get("StackNames"), filters.get("StackRoles")
    return cdk.CfnLambdaHook.StackFiltersProperty(
        filtering_criteria=filters["FilteringCriteria"],
        stack_names=cdk.CfnLambdaHook.StackNamesProperty(
            include=names.get("Include"), exclude=names.get("Exclude")
        )
        if names
        else None,
        stack_roles=cdk.CfnLambdaHook.StackRolesProperty(
            include=roles.get("Include"), exclude=roles.get("Exclude")
        )
        if roles
        else None,
    )


def check_memory_size(memory_size: int) -> int:
    """Validate the handler's memory (Lambda's 128 to 10,240 MB)."""
    if not isinstance(memory_size, int) or not 128 <= memory_size <= 10240:
        raise _refuse(
            "memory_size",
            memory_size,
            "Lambda gives a function 128 to 10,240 MB",
            "pass memory_size=1024 (the default)",
        )
    return memory_size
