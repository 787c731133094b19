"""``SafeQueueOrganizationConfigRule``: ``SafeQueueConfigRule``'s organization form.

An ``AWS::Config::OrganizationConfigRule`` whose function, in the management or delegated
administrator account, assumes a member role in each account (deployed by a
service-managed StackSet, :mod:`safe_queue.cdk.stack_set`) and audits the account with it
(:mod:`safe_queue.live.organization`, named here by a string).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import aws_cdk as cdk
from aws_cdk import Duration
from aws_cdk import aws_config as config
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from safe_queue.cdk.config_rule import audit_statements, config_frequency, handler_code
from safe_queue.cdk.service import (
    NO_DEAD_LETTER_QUEUE,
    NO_TRACING,
    acknowledge,
    latest_python_runtime,
    logged_role,
)
from safe_queue.cdk.stack_set import (
    check_call_as,
    check_organizational_units,
    member_template,
    refuse,
    stack_set,
    stack_set_name,
)
from safe_queue.keys import MEMBER_ROLE_ENV
from safe_queue.live.actions import IAM_ACTIONS

__all__ = ["MEMBER_ACTIONS", "ORGANIZATION_HANDLER", "SafeQueueOrganizationConfigRule"]

ORGANIZATION_HANDLER: Final = "safe_queue.live.organization.handler"
AUDITOR_PARAMETER: Final = "SafeQueueAuditorRoleArn"
"""The member template's parameter: the management function's role, which the member trusts."""
MEMBER_ACTIONS: Final = (*IAM_ACTIONS, "config:PutEvaluations")
"""What the member role allows: the audit's reads and ``PutEvaluations``, in its account."""
_TRIGGERS: Final = ("ConfigurationItemChangeNotification", "ScheduledNotification")
_FREQUENCY_NAMES: Final = {
    1: "One_Hour",
    3: "Three_Hours",
    6: "Six_Hours",
    12: "Twelve_Hours",
    24: "TwentyFour_Hours",
}
_ROLE_NAME = re.compile(r"^[\w+=,.@-]{1,64}$")
_RULE_NAME = re.compile(r"^[A-Za-z0-9-_]{1,64}$")
_ACCOUNT = re.compile(r"^\d{12}$")


class SafeQueueOrganizationConfigRule(Construct):
    """``SafeQueueConfigRule``'s organization form: the audit in every account of an organization.

    In the management account (or a Config delegated administrator) it deploys:

    - the function (the same bundled code, handler ``safe_queue.live.organization.handler``)
      and its role, allowed only ``sts:AssumeRole`` on the member role and its own logs;
    - ``lambda:InvokeFunction`` for ``config.amazonaws.com`` (AWS Config in each member
      account invokes it);
    - an ``AWS::Config::OrganizationConfigRule`` (custom Lambda rule: queues and functions
      changed, and every ``schedule``), which AWS Config creates in every account of the
      organization but this one;
    - a service-managed StackSet deploying the member role to every account of
      ``organizational_unit_ids`` (and each that joins them): named ``member_role_name``,
      trusting only this function's role, allowed the audit's reads and
      ``config:PutEvaluations``.

    AWS Config does not record event source mappings: in each account the function lists
    them itself, as the single-account rule does. IAM roles are global: deploy the member
    role once (``deploy_member_role=False`` in the stacks of further regions).

    Parameters
    ----------
    scope, id
        Where to add it.
    organizational_unit_ids
        The OUs (``ou-...``) or root (``r-...``) whose accounts get the member role.
    schedule, timeout
        As :class:`SafeQueueConfigRule`.
    config_rule_name
        The organization rule's name (default ``safe-queue``).
    member_role_name
        The role assumed in each member account (default ``safe-queue-config-rule-member``).
    excluded_accounts
        Accounts the organization rule leaves out (this account always is).
    deploy_member_role
        Deploy the member role's StackSet here (default ``True``).
    call_as
        ``SELF`` (management account) or ``DELEGATED_ADMIN`` for the StackSet.

    Attributes
    ----------
    rule
        The ``CfnOrganizationConfigRule``.
    function, role, log_group
        The function, its role, its log group.
    stack_set
        The member role's ``CfnStackSet`` (``None`` with ``deploy_member_role=False``).
    member_template
        The member accounts' template (a dict).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        organizational_unit_ids: Sequence[str],
        schedule: Duration | None = None,
        config_rule_name: str = "safe-queue",
        member_role_name: str = "safe-queue-config-rule-member",
        excluded_accounts: Sequence[str] = (),
        deploy_member_role: bool = True,
        timeout: Duration | None = None,
        call_as: str = "SELF",
    ) -> None:
        units = check_organizational_units(organizational_unit_ids)
        frequency = _FREQUENCY_NAMES[_hours(schedule or Duration.hours(24))]
        _check(
            "config_rule_name",
            config_rule_name,
            _RULE_NAME,
            "an organization Config rule's name is 1 to 64 letters, digits, - or _",
            "pass a name such as 'safe-queue'",
        )
        _check(
            "member_role_name",
            member_role_name,
            _ROLE_NAME,
            "an IAM role's name is 1 to 64 letters, digits or +=,.@_-",
            "pass a name such as 'safe-queue-config-rule-member'",
        )
        excluded = list(excluded_accounts) if not isinstance(excluded_accounts, str) else [""]
        if not all(isinstance(a, str) and _ACCOUNT.match(a) for a in excluded):
            raise refuse(
                "excluded_accounts",
                excluded_accounts,
                "it lists 12-digit account ids",
                "pass the ids, such as ['111122223333']",
            )
        check_call_as(call_as)
        super().__init__(scope, id)
        member_roles = cdk.Fn.sub(
            "arn:${AWS::Partition}:iam::*:role/${Name}", {"Name": member_role_name}
        )
        self.log_group, self.role = logged_role(
            self,
            policy_name="SafeQueueOrganizationConfigRule",
            description="safe-queue organization Config rule: assume the member role",
            statements=[
                iam.PolicyStatement(
                    sid="AssumeMemberRole", actions=["sts:AssumeRole"], resources=[member_roles]
                )
            ],
        )
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=latest_python_runtime(),
            architecture=lambda_.Architecture.ARM_64,
            handler=ORGANIZATION_HANDLER,
            code=handler_code(),
            timeout=timeout or Duration.minutes(5),
            memory_size=256,
            role=self.role.without_policy_updates(),
            log_group=self.log_group,
            environment={MEMBER_ROLE_ENV: member_role_name},
            description="safe-queue: audit member accounts' SQS -> Lambda mappings for AWS Config",
        )
        acknowledge(self.function, NO_DEAD_LETTER_QUEUE, NO_TRACING)
        acknowledge(
            self.role,
            (
                "AwsSolutions::AwsSolutions-IAM5[Resource::"
                '["arn:${AWS::Partition}:iam::*:role/${Name}",'
                f'{{"Name":"{member_role_name}"}}]]',
                "The member role has this name in every account of the organization; only"
                " roles that trust this function's role can be assumed.",
            ),
        )
        permission = lambda_.CfnPermission(
            self,
            "ConfigInvokes",
            action="lambda:InvokeFunction",
            function_name=self.function.function_arn,
            principal="config.amazonaws.com",
        )
        auditor = self.role.role_arn

        def build(stack: cdk.Stack) -> None:
            trusted = cdk.CfnParameter(
                stack,
                AUDITOR_PARAMETER,
                type="String",
                description="The safe-queue organization Config rule function's role",
            )
            iam.Role(
                stack,
                "MemberRole",
                role_name=member_role_name,
                assumed_by=iam.ArnPrincipal(trusted.value_as_string),
                description="safe-queue organization Config rule: audit this account",
                inline_policies={
                    "SafeQueueAudit": iam.PolicyDocument(statements=audit_statements())
                },
            )

        self.member_template = member_template(self, build)
        self.stack_set: cdk.CfnStackSet | None = None
        if deploy_member_role:
            self.stack_set = stack_set(
                self,
                "MemberRole",
                template=self.member_template,
                parameters={AUDITOR_PARAMETER: auditor},
                organizational_unit_ids=units,
                stack_set_name=stack_set_name(self, None, "SafeQueueConfigRuleMember"),
                capabilities=["CAPABILITY_NAMED_IAM"],
                call_as=call_as,
                description="safe-queue: the role the organization Config rule assumes in"
                " each member account",
            )
        self.rule = config.CfnOrganizationConfigRule(
            self,
            "Rule",
            organization_config_rule_name=config_rule_name,
            excluded_accounts=[cdk.Aws.ACCOUNT_ID, *excluded],
            organization_custom_rule_metadata=config.CfnOrganizationConfigRule.OrganizationCustomRuleMetadataProperty(
                lambda_function_arn=self.function.function_arn,
                organization_config_rule_trigger_types=list(_TRIGGERS),
                maximum_execution_frequency=frequency,
                resource_types_scope=["AWS::SQS::Queue", "AWS::Lambda::Function"],
                description=(
                    "safe-queue: every SQS queue feeding a Lambda function has a visibility"
                    " timeout, dead-letter queue and mapping settings that neither duplicate"
                    " nor lose messages."
                ),
            ),
        )
        # Config may invoke the function as soon as the rule exists; the roles must be there.
        self.rule.node.add_dependency(permission)
        self.rule.node.add_dependency(self.role)
        if self.stack_set is not None:
            self.rule.node.add_dependency(self.stack_set)


def _hours(schedule: Duration) -> int:
    config_frequency(schedule)  # refuses what AWS Config cannot run, with the fix
    return int(schedule.to_seconds()) // 3600


def _check(setting: str, value: object, pattern: re.Pattern[str], allowed: str, fix: str) -> None:
    if not isinstance(value, str) or not (pattern.match(value) or cdk.Token.is_unresolved(value)):
        raise refuse(setting, value, allowed, fix)
