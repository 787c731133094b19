"""What the functions safe_queue deploys to run its own checks share.

The hook (:mod:`safe_queue.cdk.hook`) and the organization Config rule
(:mod:`safe_queue.cdk.organization_rule`) run on the newest Python runtime the installed
aws-cdk-lib knows, and acknowledge the same cdk-nag findings on their own resources, each
with its reason (cdk-nag 3 reads ``Validations.acknowledge``).

Examples
--------
>>> latest_python_runtime().name in ("python3.14", "python3.13")
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

__all__ = [
    "LOG_ACTIONS",
    "NO_DEAD_LETTER_QUEUE",
    "NO_TRACING",
    "acknowledge",
    "latest_python_runtime",
    "logged_role",
]

LOG_ACTIONS: Final = ("logs:CreateLogStream", "logs:PutLogEvents")
"""What a function needs to write to its own log group (which exists: no CreateLogGroup)."""


def logged_role(
    scope: Construct,
    *,
    policy_name: str,
    description: str,
    statements: Sequence[iam.PolicyStatement],
) -> tuple[logs.LogGroup, iam.Role]:
    """Return a function's log group (``Logs``, one month) and role (``Role``).

    The role is assumed by Lambda and has one inline policy, ``policy_name``: the
    ``statements`` and writing to that log group (statement ``Logs``), nothing else.
    """
    log_group = logs.LogGroup(scope, "Logs", retention=logs.RetentionDays.ONE_MONTH)
    role = iam.Role(
        scope,
        "Role",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=description,
        inline_policies={
            policy_name: iam.PolicyDocument(
                statements=[
                    *statements,
                    iam.PolicyStatement(
                        sid="Logs", actions=list(LOG_ACTIONS), resources=[log_group.log_group_arn]
                    ),
                ]
            )
        },
    )
    return log_group, role


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


def acknowledge(scope: Construct, *acknowledgements: tuple[str, str]) -> tuple[str, ...]:
    """Acknowledge cdk-nag findings on ``scope``, each with its reason.

    Returns the ids the installed aws-cdk-lib refused. Releases before aws/aws-cdk#38787
    (2.262.0, the oldest supported, among them) reserve ``::`` for the plugin's prefix, so a
    finding-level id is tried without the prefix (``AwsSolutions-IAM5[Resource::*]``,
    accepted when one ``::`` remains), and one with an ARN in it cannot be acknowledged
    there at all: cdk-nag then reports that finding, as it would for any app.
    """
    validations = cdk.Validations.of(scope)
    refused: list[str] = []
    for rule_id, reason in acknowledgements:
        for candidate in (rule_id, rule_id.split("::", 1)[-1]):
            try:
                validations.acknowledge(cdk.Acknowledgment(id=candidate, reason=reason))
                break
            except RuntimeError as error:
                if "InvalidValidationId" not in str(error):
                    raise
        else:
            refused.append(rule_id)
    return tuple(refused)
