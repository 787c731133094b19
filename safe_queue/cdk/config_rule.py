"""``SafeQueueConfigRule``: an AWS Config custom rule that keeps auditing the account.

It deploys a Lambda function running :mod:`safe_queue.live.config_handler` (the same
audit as ``safe-queue audit``, in the function's region) and an AWS Config custom rule
that invokes it periodically (every 24 hours by default) and whenever an
``AWS::SQS::Queue`` or an ``AWS::Lambda::Function`` changes. Each source queue feeding a
Lambda function gets an evaluation: ``COMPLIANT``, ``NON_COMPLIANT`` (an error or a
warning, the annotation naming the rule ids; or a mapping that could not be evaluated,
the annotation naming the failed read) or ``NOT_APPLICABLE`` (the queue was deleted); see
:mod:`safe_queue.live.config_handler`.

The function's role has exactly the audit's read actions
(:data:`safe_queue.live.actions.IAM_ACTIONS`), ``config:PutEvaluations``, and
``logs:CreateLogStream`` / ``logs:PutLogEvents`` on its own log group. It is passed to
the function as an immutable role, so that ``aws_config.CustomRule`` cannot attach the
``AWSConfigRulesExecutionRole`` managed policy (which also grants reading every
configuration item and the Config bucket) as it otherwise does.

:class:`SafeQueueOrganizationConfigRule` is its organization form: an
``AWS::Config::OrganizationConfigRule`` whose function, in the management or delegated
administrator account, assumes a member role in each account (deployed by a service-managed
StackSet) and audits the account with it.

The function's code is the package's CDK-free modules (``safe_queue/__init__.py``,
``report.py``, ``retries.py``, ``engine/``, ``live/``...), copied from the installed
package into the asset's output by CDK's local bundling at synth time: no Docker, no
staging directory, no aws-cdk-lib in the asset; boto3 is the Lambda runtime's own.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import aws_cdk as cdk
import jsii
from aws_cdk import BundlingOptions, DockerImage, Duration, ILocalBundling
from aws_cdk import aws_config as config
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from safe_queue.cdk.stack_set import (
    check_call_as,
    check_organizational_units,
    member_template,
    refuse,
    stack_set,
    stack_set_name,
)
from safe_queue.errors import SafeQueueConfigError
from safe_queue.live.actions import IAM_ACTIONS

__all__ = [
    "BUNDLED",
    "SafeQueueConfigRule",
    "SafeQueueOrganizationConfigRule",
    "acknowledge",
    "copy_handler_code",
    "handler_code",
    "latest_python_runtime",
]

BUNDLED: Final = (
    "__init__.py",
    "_version.py",
    "arn.py",
    "py.typed",
    "errors.py",
    "keys.py",
    "report.py",
    "retries.py",
    "engine",
    "live",
)
"""What of the installed ``safe_queue`` package goes into the function (no CDK module)."""
_NOT_BUNDLED: Final = ("__pycache__", "*.pyc", "command.py")  # command.py: the CLI only

HANDLER: Final = "safe_queue.live.config_handler.handler"
LOG_ACTIONS: Final = ("logs:CreateLogStream", "logs:PutLogEvents")

_FREQUENCIES: Final = {
    1: config.MaximumExecutionFrequency.ONE_HOUR,
    3: config.MaximumExecutionFrequency.THREE_HOURS,
    6: config.MaximumExecutionFrequency.SIX_HOURS,
    12: config.MaximumExecutionFrequency.TWELVE_HOURS,
    24: config.MaximumExecutionFrequency.TWENTY_FOUR_HOURS,
}


@jsii.implements(ILocalBundling)
class _CdkFreeModules:
    """CDK local bundling: copy :data:`BUNDLED` of the installed package into the asset."""

    def try_bundle(self, output_dir: str, *_options: Any, **_named: Any) -> bool:
        """Write ``safe_queue/...`` into ``output_dir``; CDK then needs no Docker."""
        copy_handler_code(Path(output_dir))
        return True


def copy_handler_code(target: Path) -> Path:
    """Copy the CDK-free modules of the installed package into ``target / "safe_queue"``."""
    source = Path(__file__).resolve().parent.parent
    package = target / "safe_queue"
    package.mkdir(parents=True, exist_ok=True)
    for name in BUNDLED:
        path = source / name
        if path.is_dir():
            shutil.copytree(
                path,
                package / name,
                ignore=shutil.ignore_patterns(*_NOT_BUNDLED),
                dirs_exist_ok=True,
            )
        else:
            shutil.copy2(path, package / name)
    return target


def handler_code() -> lambda_.Code:
    """Return the function's code asset: the CDK-free modules, bundled locally at synth."""
    source = Path(__file__).resolve().parent.parent
    return lambda_.Code.from_asset(
        str(source),
        exclude=["__pycache__", "*.pyc"],
        bundling=BundlingOptions(
            # Never pulled: the local bundling always succeeds.
            image=DockerImage.from_registry("public.ecr.aws/sam/build-python3.13"),
            local=_CdkFreeModules(),
        ),
    )


def _frequency(schedule: Duration) -> config.MaximumExecutionFrequency:
    seconds = schedule.to_seconds()
    hours, rest = divmod(int(seconds), 3600)
    if rest or seconds != int(seconds) or hours not in _FREQUENCIES:
        raise SafeQueueConfigError(
            f"schedule is {schedule.to_human_string()}; AWS Config runs a periodic rule every"
            f" {', '.join(str(h) for h in _FREQUENCIES)} hours"
            " (MaximumExecutionFrequency). Fix: pass Duration.hours(24) (the default) or"
            " another of those."
        )
    return _FREQUENCIES[hours]


class SafeQueueConfigRule(Construct):
    """An AWS Config custom rule running ``safe-queue audit`` inside the account.

    Parameters
    ----------
    scope, id
        Where to add it.
    schedule
        How often the periodic evaluation runs: 1, 3, 6, 12 or 24 hours (default 24).
        It also runs on every configuration change of a queue or a function.
    config_rule_name
        The rule's name; default: generated by CloudFormation.
    timeout
        The function's timeout (default 5 minutes: about 1,000 mappings a minute).

    Attributes
    ----------
    rule
        The ``aws_config.CustomRule``.
    function
        The ``aws_lambda.Function`` that audits and calls ``PutEvaluations``.
    role
        Its role (inline policy only).
    log_group
        Its log group.

    Examples
    --------
    >>> import aws_cdk as cdk
    >>> from safe_queue.cdk import SafeQueueConfigRule
    >>> stack = cdk.Stack(cdk.App(), "Governance")
    >>> rule = SafeQueueConfigRule(stack, "SafeQueueRule", schedule=cdk.Duration.hours(12))
    >>> rule.function.runtime.name
    'python3.13'
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        schedule: Duration | None = None,
        config_rule_name: str | None = None,
        timeout: Duration | None = None,
    ) -> None:
        super().__init__(scope, id)
        frequency = _frequency(schedule or Duration.hours(24))
        self.log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_MONTH)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="safe-queue AWS Config rule: read SQS mappings, put evaluations",
            inline_policies={
                "SafeQueueConfigRule": iam.PolicyDocument(
                    statements=[
                        iam.PolicyStatement(
                            sid="AuditReadOnly", actions=list(IAM_ACTIONS), resources=["*"]
                        ),
                        iam.PolicyStatement(
                            sid="PutEvaluations",
                            actions=["config:PutEvaluations"],
                            resources=["*"],
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
            runtime=lambda_.Runtime.PYTHON_3_13,
            architecture=lambda_.Architecture.ARM_64,
            handler=HANDLER,
            code=handler_code(),
            timeout=timeout or Duration.minutes(5),
            memory_size=256,
            # Immutable: CustomRule would otherwise attach AWSConfigRulesExecutionRole.
            role=self.role.without_policy_updates(),
            log_group=self.log_group,
            description="safe-queue: audit SQS -> Lambda mappings for AWS Config",
        )
        self.rule = config.CustomRule(
            self,
            "Rule",
            lambda_function=self.function,
            periodic=True,
            maximum_execution_frequency=frequency,
            configuration_changes=True,
            rule_scope=config.RuleScope.from_resources(
                [config.ResourceType.SQS_QUEUE, config.ResourceType.LAMBDA_FUNCTION]
            ),
            config_rule_name=config_rule_name,
            description=(
                "safe-queue: every SQS queue feeding a Lambda function has a visibility"
                " timeout, dead-letter queue and mapping settings that neither duplicate"
                " nor lose messages."
            ),
        )
        # The function's policy must exist before Config invokes it.
        self.rule.node.add_dependency(self.role)


# --- the organization form -----------------------------------------------------------------


def latest_python_runtime() -> lambda_.Runtime:
    """Return the newest Python runtime the installed aws-cdk-lib knows (3.14, else 3.13)."""
    runtime: lambda_.Runtime = getattr(lambda_.Runtime, "PYTHON_3_14", lambda_.Runtime.PYTHON_3_13)
    return runtime


NO_DEAD_LETTER_QUEUE: Final = (
    "Serverless::Serverless-LambdaDLQ",
    "A dead-letter queue receives failed asynchronous invocations; a failed evaluation"
    " shows in the caller instead (the AWS Config console, the CloudFormation events).",
)
NO_TRACING: Final = (
    "Serverless::Serverless-LambdaTracing",
    "Its role is fixed and least-privilege (no X-Ray actions); each evaluation and each"
    " failed AWS call is logged as one line in its own log group.",
)


def acknowledge(scope: Construct, *acknowledgements: tuple[str, str]) -> None:
    """Acknowledge cdk-nag findings on ``scope``, each with its reason."""
    cdk.Validations.of(scope).acknowledge(
        *(cdk.Acknowledgment(id=rule_id, reason=reason) for rule_id, reason in acknowledgements)
    )


ORGANIZATION_HANDLER: Final = "safe_queue.live.organization.handler"
MEMBER_ROLE_ENV: Final = "SAFE_QUEUE_MEMBER_ROLE"  # safe_queue.live.organization reads it
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
        self.log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_MONTH)
        member_roles = cdk.Fn.sub(
            "arn:${AWS::Partition}:iam::*:role/${Name}", {"Name": member_role_name}
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="safe-queue organization Config rule: assume the member role",
            inline_policies={
                "SafeQueueOrganizationConfigRule": iam.PolicyDocument(
                    statements=[
                        iam.PolicyStatement(
                            sid="AssumeMemberRole",
                            actions=["sts:AssumeRole"],
                            resources=[member_roles],
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
                    "SafeQueueAudit": iam.PolicyDocument(
                        statements=[
                            iam.PolicyStatement(
                                sid="AuditReadOnly",
                                actions=list(IAM_ACTIONS),
                                resources=["*"],
                            ),
                            iam.PolicyStatement(
                                sid="PutEvaluations",
                                actions=["config:PutEvaluations"],
                                resources=["*"],
                            ),
                        ]
                    )
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
    _frequency(schedule)  # refuses what AWS Config cannot run, with the fix
    return int(schedule.to_seconds()) // 3600


def _check(setting: str, value: object, pattern: re.Pattern[str], allowed: str, fix: str) -> None:
    if not isinstance(value, str) or not (pattern.match(value) or cdk.Token.is_unresolved(value)):
        raise refuse(setting, value, allowed, fix)
