"""``SafeQueueHook``: a CloudFormation Lambda hook running the rules before each deployment.

It deploys the handler :mod:`safe_queue.hook` (no CDK in its code: the package's CDK-free
modules, the template reader and PyYAML's pure-Python modules, copied by CDK local
bundling at synth), its role with exactly :data:`~safe_queue.live.actions.HOOK_IAM_ACTIONS`
(read-only) and its own log group, the hook's execution role (trusted by
``hooks.cloudformation.amazonaws.com`` for this account only, allowed only
``lambda:InvokeFunction`` on the handler), and the ``AWS::CloudFormation::LambdaHook``:

- ``Alias``: ``Private::SafeQueue::<unique id>`` unless given (``Name::Name::Name``, two to
  64 letters or digits each, not starting with ``AWS``: the resource's pattern);
- ``FailureMode``: ``WARN`` by default. AWS's advice ("Creating Hooks in WARN mode is an
  effective way to monitor Hook behavior without affecting stack operations ... then switch
  the Hook to FAIL mode", CloudFormation Hooks User Guide, Concepts);
- ``TargetOperations``: ``STACK`` and ``RESOURCE`` by default (``CHANGE_SET`` can be added);
- ``TargetFilters``: the create and update of ``AWS::Lambda::EventSourceMapping``,
  ``AWS::SQS::Queue`` and ``AWS::Lambda::Function``, before provisioning;
- ``StackFilters``: as given, in CloudFormation's shape.

:class:`SafeQueueHookStackSet` deploys the same hook to every account of organizational
units (a service-managed StackSet), its code in a Lambda layer shared with the organization.

This module imports no :mod:`safe_queue.hook`, :mod:`safe_queue.live` or
:mod:`safe_queue.template` module at import time: the handler is named by a string and its
IAM actions come from the leaf module :mod:`safe_queue.live.actions`.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import aws_cdk as cdk
import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, Duration, ILocalBundling
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from safe_queue.cdk.config_rule import (
    LOG_ACTIONS,
    NO_DEAD_LETTER_QUEUE,
    NO_TRACING,
    acknowledge,
    copy_handler_code,
    latest_python_runtime,
)
from safe_queue.cdk.stack_set import (
    check_call_as,
    check_organization_id,
    check_organizational_units,
    check_stack_set_name,
    member_template,
    refuse,
    stack_set,
)
from safe_queue.cdk.stack_set import stack_set_name as stack_set_name_
from safe_queue.errors import SafeQueueConfigError
from safe_queue.live.actions import HOOK_IAM_ACTIONS

__all__ = [
    "ALIAS_PATTERN",
    "HANDLER",
    "HOOK_BUNDLED",
    "SERVICE_PRINCIPAL",
    "TARGETS",
    "SafeQueueHook",
    "SafeQueueHookStackSet",
    "check_organization_id",
    "check_organizational_units",
    "copy_hook_code",
    "hook_code",
]

HANDLER: Final = "safe_queue.hook.handler"
SERVICE_PRINCIPAL: Final = "hooks.cloudformation.amazonaws.com"
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
HOOK_BUNDLED: Final = ("template", "hook")
"""Besides the Config rule's modules (``BUNDLED``): the template reader and the handler."""
_NOT_BUNDLED: Final = ("__pycache__", "*.pyc", "command.py")
_STACK_FILTER_KEYS: Final = ("FilteringCriteria", "StackNames", "StackRoles")


def copy_hook_code(target: Path) -> Path:
    """Copy the handler's modules and PyYAML's pure-Python modules into ``target``.

    ``target / "safe_queue"`` gets the CDK-free modules, the template reader and the hook;
    ``target / "yaml"`` PyYAML without its C extension (the template reader falls back to
    PyYAML's Python loader, as PyYAML does when libyaml is absent).
    """
    copy_handler_code(target)
    source = Path(__file__).resolve().parent.parent
    for name in HOOK_BUNDLED:
        shutil.copytree(
            source / name,
            target / "safe_queue" / name,
            ignore=shutil.ignore_patterns(*_NOT_BUNDLED),
            dirs_exist_ok=True,
        )
    spec = importlib.util.find_spec("yaml")
    if spec is None or spec.origin is None:
        raise SafeQueueConfigError(
            "PyYAML is not installed, and the hook's handler reads YAML templates with it."
            " Fix: pip install 'safe-queue[cdk,cli]'."
        )
    yaml_dir = target / "yaml"
    yaml_dir.mkdir(parents=True, exist_ok=True)
    for module in Path(spec.origin).parent.glob("*.py"):
        shutil.copy2(module, yaml_dir / module.name)
    return target


@jsii.implements(ILocalBundling)
class _HookModules:
    """CDK local bundling: the handler's code into the asset (under ``prefix``)."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix

    def try_bundle(self, output_dir: str, *_options: Any, **_named: Any) -> bool:
        """Write the code into ``output_dir``; CDK then needs no Docker."""
        copy_hook_code(Path(output_dir) / self.prefix)
        return True


def hook_code(*, layer: bool = False) -> lambda_.Code:
    """Return the handler's code asset (``layer``: under ``python/``, as a Lambda layer)."""
    source = Path(__file__).resolve().parent.parent
    return lambda_.Code.from_asset(
        str(source),
        exclude=["__pycache__", "*.pyc"],
        asset_hash_type=AssetHashType.OUTPUT,
        bundling=BundlingOptions(
            # Never pulled: the local bundling always succeeds.
            image=DockerImage.from_registry("public.ecr.aws/sam/build-python3.13"),
            local=_HookModules("python" if layer else ""),
            # Part of CDK's asset cache key: the layer, the function and the Config rule's
            # code share a source directory, not an output.
            environment={"SAFE_QUEUE_BUNDLE": "hook-layer" if layer else "hook-function"},
        ),
    )


_refuse = refuse


def _check_failure_mode(failure_mode: str) -> str:
    if failure_mode not in FAILURE_MODES:
        raise _refuse(
            "failure_mode",
            failure_mode,
            "a hook's FailureMode is WARN (the operation goes on, with a warning) or FAIL",
            "pass failure_mode='WARN' (the default, AWS's advice to start with) or 'FAIL'",
        )
    return failure_mode


def _check_operations(target_operations: Sequence[str]) -> list[str]:
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


def _check_stack_filters(stack_filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
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


def _check_alias(alias: str | None) -> None:
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


def _alias(scope: Construct, alias: str | None) -> str:
    if alias is not None:
        return alias
    unique = re.sub(r"[^A-Za-z0-9]", "", cdk.Names.unique_id(scope))[-64:]
    return f"{ALIAS_PREFIX}::SafeQueue::{unique.rjust(2, '0')}"


def _target_filters() -> cdk.CfnLambdaHook.TargetFiltersProperty:
    return cdk.CfnLambdaHook.TargetFiltersProperty(
        targets=[
            cdk.CfnLambdaHook.HookTargetProperty(
                target_name=name, action=action, invocation_point="PRE_PROVISION"
            )
            for name in TARGETS
            for action in ("CREATE", "UPDATE")
        ]
    )


def _stack_filters_property(
    filters: Mapping[str, Any] | None,
) -> cdk.CfnLambdaHook.StackFiltersProperty | None:
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


class SafeQueueHook(Construct):
    """A CloudFormation Lambda hook that judges SQS -> Lambda mappings before they deploy.

    Parameters
    ----------
    scope, id
        Where to add it.
    failure_mode
        ``WARN`` (the default: the operation goes on, with the findings as a warning) or
        ``FAIL`` (an error that is not acknowledged stops it).
    target_operations
        What it evaluates: ``STACK`` (the template, before a stack is created or updated),
        ``RESOURCE`` (each mapping, queue or function, before it is created or updated),
        ``CHANGE_SET`` (the template, when a change set is created). Default
        ``("STACK", "RESOURCE")``.
    stack_filters
        CloudFormation's ``StackFilters``: ``{"FilteringCriteria": "ALL" | "ANY",
        "StackNames": {"Include": [...], "Exclude": [...]}, "StackRoles": {...}}``;
        default: every stack.
    alias
        The hook's type alias, ``Private::Name::Name`` (unique per account and region);
        default ``Private::SafeQueue::<the construct's unique id>``.
    memory_size
        The handler's memory in MB (Lambda gives CPU in proportion; default 1024).
    code, layers
        The handler's code and layers; default: the bundled asset. The organization form
        (:class:`SafeQueueHookStackSet`) passes a stub and the shared layer.

    Attributes
    ----------
    hook
        The ``CfnLambdaHook``.
    function
        The handler (``safe_queue.hook.handler``).
    role
        The handler's role: :data:`~safe_queue.live.actions.HOOK_IAM_ACTIONS` and its logs.
    execution_role
        The role CloudFormation assumes to invoke the handler.
    log_group
        The handler's log group.
    alias
        The hook's type alias.

    Raises
    ------
    SafeQueueConfigError
        A prop AWS would refuse, or that the handler cannot serve (``CLOUD_CONTROL``).

    Examples
    --------
    >>> import aws_cdk as cdk
    >>> from safe_queue import SafeQueueHook
    >>> stack = cdk.Stack(cdk.App(), "Guard")
    >>> hook = SafeQueueHook(stack, "Hook", alias="Private::SafeQueue::Guard")
    >>> hook.hook.failure_mode, hook.hook.target_operations
    ('WARN', ['STACK', 'RESOURCE'])
    >>> SafeQueueHook(stack, "Other", failure_mode="BLOCK")
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: failure_mode is 'BLOCK'; a hook's FailureMode is \
WARN (the operation goes on, with a warning) or FAIL. Fix: pass failure_mode='WARN' (the \
default, AWS's advice to start with) or 'FAIL'.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        failure_mode: str = "WARN",
        target_operations: Sequence[str] = ("STACK", "RESOURCE"),
        stack_filters: Mapping[str, Any] | None = None,
        alias: str | None = None,
        memory_size: int = 1024,
        code: lambda_.Code | None = None,
        layers: Sequence[lambda_.ILayerVersion] = (),
    ) -> None:
        mode = _check_failure_mode(failure_mode)
        operations = _check_operations(target_operations)
        filters = _check_stack_filters(stack_filters)
        _check_alias(alias)
        if not isinstance(memory_size, int) or not 128 <= memory_size <= 10240:
            raise _refuse(
                "memory_size",
                memory_size,
                "Lambda gives a function 128 to 10,240 MB",
                "pass memory_size=1024 (the default)",
            )
        super().__init__(scope, id)
        self.alias = _alias(self, alias)
        self.log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_MONTH)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="safe-queue hook: read SQS mappings, their queues and functions",
            inline_policies={
                "SafeQueueHook": iam.PolicyDocument(
                    statements=[
                        iam.PolicyStatement(
                            sid="HookReadOnly", actions=list(HOOK_IAM_ACTIONS), resources=["*"]
                        ),
                        iam.PolicyStatement(
                            sid="Logs",
                            actions=list(LOG_ACTIONS),
                            resources=[self.log_group.log_group_arn],
                        ),
                    ]
                )
            },
        )
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=latest_python_runtime(),
            architecture=lambda_.Architecture.ARM_64,
            handler=HANDLER,
            code=code or hook_code(),
            layers=list(layers) or None,
            # CloudFormation waits 30 s; the handler answers within 25 s (its own budget).
            timeout=Duration.seconds(30),
            memory_size=memory_size,
            role=self.role.without_policy_updates(),
            log_group=self.log_group,
            description="safe-queue: CloudFormation hook for SQS -> Lambda mappings",
        )
        acknowledge(
            self.role,
            (
                "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
                "Read-only actions on the queues and functions that mappings name, in any"
                " account; ListEventSourceMappings and ListExports take no resource.",
            ),
            (
                "Serverless::Serverless-LambdaStarPermissions",
                "Read-only actions only (HOOK_IAM_ACTIONS); see AwsSolutions-IAM5.",
            ),
        )
        acknowledge(
            self.function,
            (
                NO_DEAD_LETTER_QUEUE[0],
                "CloudFormation invokes the hook synchronously: a dead-letter queue (for"
                " asynchronous invocations) would never receive anything.",
            ),
            NO_TRACING,
        )
        self.execution_role = iam.Role(
            self,
            "ExecutionRole",
            assumed_by=iam.ServicePrincipal(SERVICE_PRINCIPAL).with_conditions(
                {"StringEquals": {"aws:SourceAccount": cdk.Aws.ACCOUNT_ID}}
            ),
            description="CloudFormation hooks: invoke the safe-queue hook's function",
            inline_policies={
                "InvokeHandler": iam.PolicyDocument(
                    statements=[
                        iam.PolicyStatement(
                            sid="InvokeHandler",
                            actions=["lambda:InvokeFunction"],
                            resources=[self.function.function_arn],
                        )
                    ]
                )
            },
        )
        self.hook = cdk.CfnLambdaHook(
            self,
            "Hook",
            alias=self.alias,
            execution_role=self.execution_role.role_arn,
            failure_mode=mode,
            hook_status="ENABLED",
            lambda_function=self.function.function_arn,
            target_operations=operations,
            target_filters=_target_filters(),
            stack_filters=_stack_filters_property(filters),
        )


# --- across an organization --------------------------------------------------------------

LAYER_PARAMETER: Final = "SafeQueueLayerArn"
"""The member template's parameter: the shared layer's version ARN."""
_STUB: Final = "# safe-queue: the handler's code is in the layer (safe_queue.hook.handler).\n"


class SafeQueueHookStackSet(Construct):
    """``SafeQueueHook`` in every account of organizational units (a service-managed StackSet).

    In the management account (or a delegated StackSet administrator) it publishes the
    handler's code as a Lambda layer version, shared with the organization
    (``lambda:GetLayerVersion`` for every account whose ``aws:PrincipalOrgID`` is
    ``organization_id``), and a ``SERVICE_MANAGED`` StackSet whose template is a
    :class:`SafeQueueHook` (handler, roles, hook) built on that layer. AutoDeployment puts
    it in every account that joins the OUs, and removes it from an account that leaves.
    The StackSet deploys in this stack's region (the layer's): add one per region.

    A service-managed StackSet never deploys to the management account itself; add a
    :class:`SafeQueueHook` there if it deploys stacks too.

    Parameters
    ----------
    scope, id
        Where to add it.
    organizational_unit_ids
        The OUs (``ou-...``) or the root (``r-...``) to guard.
    organization_id
        The organization's id (``o-...``): the layer is shared with its accounts only.
    failure_mode, target_operations, stack_filters, alias, memory_size
        As :class:`SafeQueueHook`, for the hook in each account.
    stack_set_name
        Default: ``SafeQueueHook`` and the construct's unique id.
    call_as
        ``SELF`` (the management account, default) or ``DELEGATED_ADMIN``.

    Attributes
    ----------
    layer
        The code's layer version.
    stack_set
        The ``CfnStackSet``.
    template
        The member accounts' template (a dict), as the StackSet deploys it.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        organizational_unit_ids: Sequence[str],
        organization_id: str,
        failure_mode: str = "WARN",
        target_operations: Sequence[str] = ("STACK", "RESOURCE"),
        stack_filters: Mapping[str, Any] | None = None,
        alias: str | None = None,
        memory_size: int = 1024,
        stack_set_name: str | None = None,
        call_as: str = "SELF",
    ) -> None:
        units = check_organizational_units(organizational_unit_ids)
        organization = check_organization_id(organization_id)
        _check_failure_mode(failure_mode)
        _check_operations(target_operations)
        _check_stack_filters(stack_filters)
        _check_alias(alias)
        check_call_as(call_as)
        check_stack_set_name(stack_set_name)
        super().__init__(scope, id)
        name = stack_set_name_(self, stack_set_name, "SafeQueueHook")
        hook_alias = alias or f"{ALIAS_PREFIX}::SafeQueue::Hook"

        def build(stack: cdk.Stack) -> None:
            layer_arn = cdk.CfnParameter(
                stack,
                LAYER_PARAMETER,
                type="String",
                description="The safe-queue hook's layer version, shared with the organization",
            )
            SafeQueueHook(
                stack,
                "SafeQueueHook",
                failure_mode=failure_mode,
                target_operations=target_operations,
                stack_filters=stack_filters,
                alias=hook_alias,
                memory_size=memory_size,
                code=lambda_.Code.from_inline(_STUB),
                layers=[
                    lambda_.LayerVersion.from_layer_version_arn(
                        stack, "Layer", layer_arn.value_as_string
                    )
                ],
            )

        self.template = member_template(self, build)
        self.layer = lambda_.LayerVersion(
            self,
            "Layer",
            code=hook_code(layer=True),
            compatible_runtimes=[latest_python_runtime()],
            compatible_architectures=[lambda_.Architecture.ARM_64],
            description="safe-queue: the CloudFormation hook's handler (safe_queue.hook)",
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        self.layer.add_permission("Organization", account_id="*", organization_id=organization)
        self.stack_set = stack_set(
            self,
            "StackSet",
            template=self.template,
            parameters={LAYER_PARAMETER: self.layer.layer_version_arn},
            organizational_unit_ids=units,
            stack_set_name=name,
            capabilities=["CAPABILITY_IAM"],
            call_as=call_as,
            description="safe-queue: a CloudFormation hook for SQS -> Lambda mappings in"
            " every account of the organizational units",
        )
