"""The organization Config rule's function against a moto server: AWS Config in a member account
invokes the management account's function, which assumes the member role and audits that
account (moto maps an assumed role's credentials to the role's account, as AWS does).

What cannot run here: CloudFormation StackSets, AWS Organizations and AWS Config's own
cross-account invocation (moto has none of them). Their templates are tested in
test_hook_construct.py; this module tests the function's side of the contract."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from safe_queue.live import organization
from safe_queue.live.actions import IAM_ACTIONS
from safe_queue.live.config_handler import evaluate_and_report
from tests import moto_world
from tests.moto_world import DLQ_RETENTION, Calls

moto_endpoint = moto_world.moto_endpoint  # fixtures
aws_environment = moto_world.aws_environment

REGION = "sa-east-1"  # this module's own region of the shared moto server
MEMBER = "111122223333"
MANAGEMENT = "123456789012"
ROLE = "safe-queue-config-rule-member"


class Context:
    invoked_function_arn = f"arn:aws:lambda:{REGION}:{MANAGEMENT}:function:safe-queue-org-rule"


def as_account(account: str) -> boto3.Session:
    """A session in ``account``: moto gives assumed-role credentials the role's account."""
    credentials = (
        boto3.Session(region_name=REGION)
        .client("sts")
        .assume_role(RoleArn=f"arn:aws:iam::{account}:role/setup", RoleSessionName="test-setup")[
            "Credentials"
        ]
    )
    return boto3.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        region_name=REGION,
    )


@dataclass
class Accounts:
    member_queue: str
    management_queue: str


def seed(session: boto3.Session, visibility: int) -> str:
    """A 180 s function fed by a queue of ``visibility`` seconds, with a dead-letter queue."""
    sqs, lambda_ = session.client("sqs"), session.client("lambda")
    role = session.client("iam").create_role(RoleName="consumer", AssumeRolePolicyDocument="{}")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("index.py", "def handler(event, context):\n    return None\n")
    lambda_.create_function(
        FunctionName="render",
        Runtime="python3.13",
        Role=role["Role"]["Arn"],
        Handler="index.handler",
        Code={"ZipFile": archive.getvalue()},
        Timeout=180,
    )
    account = session.client("sts").get_caller_identity()["Account"]
    dlq_name, queue_name = f"render-dlq-{visibility}", f"render-{visibility}"
    sqs.create_queue(QueueName=dlq_name, Attributes={"MessageRetentionPeriod": str(DLQ_RETENTION)})
    dlq = f"arn:aws:sqs:{REGION}:{account}:{dlq_name}"
    sqs.create_queue(
        QueueName=queue_name,
        Attributes={
            "VisibilityTimeout": str(visibility),
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq, "maxReceiveCount": 5}),
        },
    )
    queue = f"arn:aws:sqs:{REGION}:{account}:{queue_name}"
    lambda_.create_event_source_mapping(
        EventSourceArn=queue,
        FunctionName="render",
        BatchSize=5,
        MaximumBatchingWindowInSeconds=2,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    return queue


@pytest.fixture(scope="module")
def accounts(aws_environment: str) -> Accounts:
    """GIVEN the seed's broken pair in a member account, and a fixed pair in the management
    account, in the same region."""
    return Accounts(
        member_queue=seed(as_account(MEMBER), 60),
        management_queue=seed(boto3.Session(region_name=REGION), 1082),
    )


def event(account: str) -> dict[str, Any]:
    invoking = {
        "messageType": "ScheduledNotification",
        "notificationCreationTime": "2026-11-30T12:00:00.000Z",
    }
    return {
        "version": "1.0",
        "invokingEvent": json.dumps(invoking),
        "resultToken": "TESTMODE",
        "eventLeftScope": False,
        "executionRoleArn": f"arn:aws:iam::{account}:role/aws-service-role/config.amazonaws.com/AWSServiceRoleForConfig",
        "configRuleArn": f"arn:aws:config:{REGION}:{account}:config-rule/config-rule-abc123",
        "configRuleName": "OrgConfigRule-safe-queue-abc123",
        "accountId": account,
    }


def test_the_function_assumes_the_member_role_and_audits_the_member_account(
    accounts: Accounts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(organization.MEMBER_ROLE_ENV, ROLE)
    base = boto3.Session(region_name=REGION)
    base_calls = Calls(base)
    # WHEN AWS Config of the member account invokes the function
    member = organization.member_session(event(MEMBER), Context(), base)
    # THEN it assumed exactly the member role, and its session is in the member account
    assert base_calls.params("sts:AssumeRole") == [
        {
            "RoleArn": f"arn:aws:iam::{MEMBER}:role/{ROLE}",
            "RoleSessionName": "safe-queue-config-rule",
        }
    ]
    assert member.client("sts").get_caller_identity()["Account"] == MEMBER
    member_calls = Calls(member)
    summary = evaluate_and_report(event(MEMBER), member)
    # AND it judged the member's mapping (the seed pair), not the management account's
    assert summary == {
        "mappings": 1,
        "unreadable": 0,
        "COMPLIANT": 0,
        "NON_COMPLIANT": 1,
        "NOT_APPLICABLE": 0,
    }
    (request,) = member_calls.params("config:PutEvaluations")
    (evaluation,) = request["Evaluations"]
    assert evaluation["ComplianceResourceId"].endswith(f"/{MEMBER}/render-60")
    # AND the member role needs no more than it is given
    assert set(member_calls.actions) <= {*IAM_ACTIONS, "config:PutEvaluations"}


def test_the_lambda_entry_point(accounts: Accounts, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(organization.MEMBER_ROLE_ENV, ROLE)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    summary = organization.handler(event(MEMBER), Context())
    assert (summary["mappings"], summary["NON_COMPLIANT"]) == (1, 1)


def test_its_own_account_is_audited_with_its_own_credentials(
    accounts: Accounts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(organization.MEMBER_ROLE_ENV, ROLE)
    base = boto3.Session(region_name=REGION)
    calls = Calls(base)
    assert organization.member_session(event(MANAGEMENT), Context(), base) is base
    assert "sts:AssumeRole" not in calls.actions


def test_a_member_role_that_cannot_be_assumed_fails_the_invocation_in_one_line(
    accounts: Accounts, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(organization.MEMBER_ROLE_ENV, ROLE)
    base = boto3.Session(region_name=REGION)
    moto_world.deny(base, "sts.AssumeRole")
    with (
        caplog.at_level("ERROR", logger="safe_queue.live.organization"),
        pytest.raises(
            RuntimeError, match=rf"account {MEMBER} not evaluated: sts:AssumeRole"
        ) as raised,
    ):
        organization.member_session(event(MEMBER), Context(), base)
    assert "\n" not in str(raised.value)
    assert f"deploy the member role {ROLE} to account {MEMBER}" in str(raised.value)
    (line,) = [r.getMessage() for r in caplog.records]
    assert "AccessDenied" in line


@pytest.mark.parametrize(
    ("environment", "given", "pattern"),
    [({}, event(MEMBER), "SAFE_QUEUE_MEMBER_ROLE is not set"), ({"X": "1"}, {}, "no accountId")],
)
def test_a_misconfigured_function_says_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
    environment: dict[str, str],
    given: dict[str, Any],
    pattern: str,
) -> None:
    monkeypatch.delenv(organization.MEMBER_ROLE_ENV, raising=False)
    with pytest.raises(RuntimeError, match=pattern):
        organization.member_session(given, Context(), boto3.Session(region_name=REGION))
