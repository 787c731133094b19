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

from typing import Final

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

__all__ = ["NO_DEAD_LETTER_QUEUE", "NO_TRACING", "acknowledge", "latest_python_runtime"]


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
