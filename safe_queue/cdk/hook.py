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

:class:`~safe_queue.cdk.hook_stack_set.SafeQueueHookStackSet` deploys the same hook to every
account of organizational units (a service-managed StackSet), its code in a Lambda layer
shared with the organization. The props are checked in :mod:`safe_queue.cdk.hook_props`.

This module imports no :mod:`safe_queue.hook`, :mod:`safe_queue.live` or
:mod:`safe_queue.template` module at import time: the handler is named by a string and its
IAM actions come from the leaf module :mod:`safe_queue.live.actions`.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import aws_cdk as cdk
from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from safe_queue.cdk.bundling import AUDIT_MODULES, copy_package, local_asset
from safe_queue.cdk.hook_props import (
    alias_of,
    check_alias,
    check_failure_mode,
    check_memory_size,
    check_operations,
    check_stack_filters,
    stack_filters_property,
    target_filters,
)
from safe_queue.cdk.service import (
    NO_DEAD_LETTER_QUEUE,
    NO_TRACING,
    acknowledge,
    latest_python_runtime,
    logged_role,
)
from safe_queue.errors import SafeQueueConfigError
from safe_queue.live.actions import HOOK_IAM_ACTIONS

__all__ = [
    "HANDLER",
    "HOOK_MODULES",
    "SERVICE_PRINCIPAL",
    "SafeQueueHook",
    "copy_hook_code",
    "hook_code",
]

HANDLER: Final = "safe_queue.hook.handler"
SERVICE_PRINCIPAL: Final = "hooks.cloudformation.amazonaws.com"
HOOK_MODULES: Final = (*AUDIT_MODULES, "template", "hook")
"""What of safe_queue the handler needs: the audit's modules, the template reader, the hook."""


def copy_hook_code(target: Path) -> Path:
    """Copy the handler's modules and PyYAML's pure-Python modules into ``target``.

    ``target / "safe_queue"`` gets the CDK-free modules, the template reader and the hook;
    ``target / "yaml"`` PyYAML without its C extension (the template reader falls back to
    PyYAML's Python loader, as PyYAML does when libyaml is absent).
    """
    copy_package(target, HOOK_MODULES)
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


def hook_code(*, layer: bool = False) -> lambda_.Code:
    """Return the handler's code asset (``layer``: under ``python/``, as a Lambda layer)."""
    prefix = "python" if layer else ""
    return local_asset(
        lambda target: copy_hook_code(target / prefix),
        "hook-layer" if layer else "hook-function",
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
        (``SafeQueueHookStackSet``) passes a stub and the shared layer.

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
        mode = check_failure_mode(failure_mode)
        operations = check_operations(target_operations)
        filters = check_stack_filters(stack_filters)
        check_alias(alias)
        check_memory_size(memory_size)
        super().__init__(scope, id)
        self.alias = alias_of(self, alias)
        self.log_group, self.role = logged_role(
            self,
            policy_name="SafeQueueHook",
            description="safe-queue hook: read SQS mappings, their queues and functions",
            statements=[
                iam.PolicyStatement(
                    sid="HookReadOnly", actions=list(HOOK_IAM_ACTIONS), resources=["*"]
                )
            ],
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
            target_filters=target_filters(),
            stack_filters=stack_filters_property(filters),
        )
        # aws-cdk-lib's own template validation (on with @aws-cdk/core:validateAgainstDefault
        # Rules) matched CloudFormation's documented TargetFilters form against two of its
        # schemas in older releases (2.262.0 refuses the synth); newer ones accept it.
        acknowledge(
            self.hook,
            (
                "CloudFormation-Validate::F3018",
                "TargetFilters is CloudFormation's documented Targets form; older aws-cdk-lib"
                " schemas matched it twice.",
            ),
        )
