"""``SafeQueueHookStackSet``: the hook in every account of organizational units.

A service-managed StackSet (:mod:`safe_queue.cdk.stack_set`) deploys a
:class:`~safe_queue.cdk.hook.SafeQueueHook` stack to the accounts; the handler's code is a
Lambda layer version published in this account and shared with the organization.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from safe_queue.cdk.hook import SafeQueueHook, hook_code
from safe_queue.cdk.hook_props import (
    ALIAS_PREFIX,
    check_alias,
    check_failure_mode,
    check_operations,
    check_stack_filters,
)
from safe_queue.cdk.service import latest_python_runtime
from safe_queue.cdk.stack_set import (
    check_call_as,
    check_organization_id,
    check_organizational_units,
    check_stack_set_name,
    member_template,
    stack_set,
)
from safe_queue.cdk.stack_set import stack_set_name as stack_set_name_

__all__ = ["LAYER_PARAMETER", "SafeQueueHookStackSet"]

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
        check_failure_mode(failure_mode)
        check_operations(target_operations)
        check_stack_filters(stack_filters)
        check_alias(alias)
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
