"""The organization Config rule's function: a member account's audit, from the management account.

An ``AWS::Config::OrganizationConfigRule`` (``SafeQueueOrganizationConfigRule``) makes AWS
Config create the rule in every member account, and invoke this one function, in the
management (or delegated administrator) account, for each of them: "If you are adding a new
Config Custom Lambda rule, you first need to create an Lambda function in the management
account or a delegated administrator that the rule invokes to evaluate your resources. You
also need to create an IAM role in the managed account that can be assumed by the Lambda
function" (AWS Config API Reference, ``PutOrganizationConfigRule``).

The event names the member account (``accountId``: "the ID of the AWS account that owns the
rule"). The function assumes the role :data:`MEMBER_ROLE_ENV` names in that account
(deployed by a service-managed StackSet, trusting only this function's role), and runs the
same evaluation as the single-account rule
(:func:`safe_queue.live.config_handler.evaluate_and_report`) with those credentials: the
audit's reads and ``PutEvaluations`` happen in the member account.
A role that cannot be assumed fails the invocation with one logged line (the rule's
evaluation shows as failed in that account's AWS Config console).

Examples
--------
>>> member_role_arn("111122223333", "safe-queue-member", "aws")
'arn:aws:iam::111122223333:role/safe-queue-member'
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any, Final

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from safe_queue.arn import Arn
from safe_queue.keys import MEMBER_ROLE_ENV
from safe_queue.live.aws_errors import describe
from safe_queue.live.config_handler import evaluate_and_report
from safe_queue.retries import client_config

__all__ = ["MEMBER_ROLE_ENV", "SESSION_NAME", "handler", "member_role_arn", "member_session"]

"""The function's environment variable naming the role to assume in each member account."""
SESSION_NAME: Final = "safe-queue-config-rule"

logger = logging.getLogger(__name__)


def member_role_arn(account: str, role_name: str, partition: str) -> str:
    """Return the ARN of ``role_name`` in ``account``."""
    return f"arn:{partition}:iam::{account}:role/{role_name}"


def member_session(
    event: Mapping[str, Any], context: object, session: boto3.Session | None = None
) -> boto3.Session:
    """Return a session in the event's account: the member role's, or the function's own.

    Raises
    ------
    RuntimeError
        The event names no account, the role is not configured, or it cannot be assumed
        (one line, logged first).
    """
    session = session or boto3.Session()
    account = str(event.get("accountId") or "")
    if not account:
        raise RuntimeError("the AWS Config event has no accountId")
    own = Arn.parse(str(getattr(context, "invoked_function_arn", "") or ""))
    if own is not None and own.account == account:
        return session
    role_name = os.environ.get(MEMBER_ROLE_ENV, "")
    if not role_name:
        raise RuntimeError(f"{MEMBER_ROLE_ENV} is not set: no member role to assume")
    partition = own.partition if own is not None else "aws"
    role = member_role_arn(account, role_name, partition)
    sts = session.client("sts", config=client_config("config-rule"))
    try:
        credentials = sts.assume_role(RoleArn=role, RoleSessionName=SESSION_NAME)["Credentials"]
    except (ClientError, BotoCoreError) as error:
        failure = describe(
            error,
            "sts:AssumeRole",
            role,
            fixes={
                "denied": (
                    f"deploy the member role {role_name} to account {account} (the rule's"
                    " StackSet does), trusting this function's role"
                )
            },
            expected_only=False,
        )
        sentence = failure.sentence() if failure else f"{type(error).__name__}: {error}"
        logger.error("safe-queue: account %s not evaluated: %s", account, sentence)
        raise RuntimeError(f"account {account} not evaluated: {sentence}") from None
    return boto3.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        region_name=session.region_name,
    )


def handler(event: Mapping[str, Any], context: object) -> dict[str, int]:
    """Lambda entry point (``safe_queue.live.organization.handler``)."""
    logging.getLogger().setLevel(logging.INFO)
    return evaluate_and_report(event, member_session(event, context))
