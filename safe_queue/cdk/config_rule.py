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

The function's code is the package's CDK-free modules (``safe_queue/__init__.py``,
``report.py``, ``retries.py``, ``engine/``, ``live/``...), copied from the installed
package into the asset's output by CDK's local bundling at synth time: no Docker, no
staging directory, no aws-cdk-lib in the asset; boto3 is the Lambda runtime's own.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Final

import jsii
from aws_cdk import BundlingOptions, DockerImage, Duration, ILocalBundling
from aws_cdk import aws_config as config
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from safe_queue.errors import SafeQueueConfigError
from safe_queue.live.actions import IAM_ACTIONS

__all__ = ["BUNDLED", "SafeQueueConfigRule", "copy_handler_code", "handler_code"]

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
