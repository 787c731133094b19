"""SafeQueueConfigRule: the template (rule, schedule, triggers, function, exact role), the
function's code asset, and the handler against a moto server (PutEvaluations included)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import boto3
import pytest
from aws_cdk.assertions import Match, Template

from safe_queue import SafeQueueConfigError
from safe_queue.cdk import SafeQueueConfigRule
from safe_queue.live import IAM_ACTIONS, queue_url
from safe_queue.live.config_handler import (
    ANNOTATION_MAX,
    annotation,
    evaluate_and_report,
    handler,
)
from tests import moto_world
from tests.conftest import make_app
from tests.moto_world import DLQ_RETENTION, Calls, World

moto_endpoint = moto_world.moto_endpoint  # fixtures
aws_environment = moto_world.aws_environment

REGION = "eu-central-1"  # this module's own region of the shared moto server
ASSET_SIZE_LIMIT = 200_000  # bytes: the CDK-free modules are about a tenth of this


@dataclass
class Synthesized:
    template: Template
    asset: Path


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    app = make_app()
    stack = cdk.Stack(app, "Governance")
    SafeQueueConfigRule(stack, "SafeQueueRule")
    template = Template.from_stack(stack)
    assembly = app.synth()
    (function,) = template.find_resources("AWS::Lambda::Function").values()
    asset_hash = function["Properties"]["Code"]["S3Key"].split(".")[0]
    return Synthesized(template, Path(assembly.directory) / f"asset.{asset_hash}")


# --- the template --------------------------------------------------------------------


def test_the_rule_runs_every_24_hours_and_on_queue_and_function_changes(
    synthesized: Synthesized,
) -> None:
    synthesized.template.has_resource_properties(
        "AWS::Config::ConfigRule",
        {
            "Source": {
                "Owner": "CUSTOM_LAMBDA",
                "SourceDetails": Match.array_with(
                    [
                        {
                            "EventSource": "aws.config",
                            "MessageType": "ConfigurationItemChangeNotification",
                        },
                        {
                            "EventSource": "aws.config",
                            "MessageType": "ScheduledNotification",
                            "MaximumExecutionFrequency": "TwentyFour_Hours",
                        },
                    ]
                ),
            },
            "Scope": {"ComplianceResourceTypes": ["AWS::SQS::Queue", "AWS::Lambda::Function"]},
        },
    )


def test_the_function_runs_the_config_handler(synthesized: Synthesized) -> None:
    synthesized.template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": "safe_queue.live.config_handler.handler",
            "Runtime": "python3.13",
            "Timeout": 300,
            "Architectures": ["arm64"],
            "LoggingConfig": {"LogGroup": Match.any_value()},
        },
    )
    synthesized.template.has_resource_properties(
        "AWS::Lambda::Permission",
        {"Principal": "config.amazonaws.com", "Action": "lambda:InvokeFunction"},
    )


def test_the_role_has_exactly_the_audit_actions_put_evaluations_and_its_logs(
    synthesized: Synthesized,
) -> None:
    (role,) = synthesized.template.find_resources("AWS::IAM::Role").values()
    # no managed policy: CustomRule's AWSConfigRulesExecutionRole was not attached
    assert "ManagedPolicyArns" not in role["Properties"]
    assert synthesized.template.find_resources("AWS::IAM::Policy") == {}
    (policy,) = role["Properties"]["Policies"]
    statements = {s["Sid"]: s for s in policy["PolicyDocument"]["Statement"]}
    assert sorted(statements["AuditReadOnly"]["Action"]) == sorted(IAM_ACTIONS)
    assert statements["PutEvaluations"]["Action"] == "config:PutEvaluations"
    assert statements["Logs"]["Action"] == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert "Fn::GetAtt" in statements["Logs"]["Resource"]  # its own log group only
    assert all(s["Effect"] == "Allow" for s in statements.values())
    assert set(statements) == {"AuditReadOnly", "PutEvaluations", "Logs"}


@pytest.mark.parametrize(
    ("hours", "frequency"),
    [(1, "One_Hour"), (3, "Three_Hours"), (6, "Six_Hours"), (12, "Twelve_Hours")],
)
def test_the_schedule_is_a_prop(hours: int, frequency: str) -> None:
    stack = cdk.Stack(make_app(), "Governance")
    SafeQueueConfigRule(
        stack, "Rule", schedule=cdk.Duration.hours(hours), config_rule_name="safe-queue"
    )
    Template.from_stack(stack).has_resource_properties(
        "AWS::Config::ConfigRule",
        {
            "ConfigRuleName": "safe-queue",
            "Source": {
                "SourceDetails": Match.array_with(
                    [Match.object_like({"MaximumExecutionFrequency": frequency})]
                )
            },
        },
    )


@pytest.mark.parametrize(
    "schedule", [cdk.Duration.hours(2), cdk.Duration.minutes(90), cdk.Duration.days(2)]
)
def test_a_schedule_config_cannot_run_is_refused(schedule: cdk.Duration) -> None:
    stack = cdk.Stack(make_app(), "Governance")
    with pytest.raises(
        SafeQueueConfigError, match=r"schedule is .*every 1, 3, 6, 12, 24 hours.*Fix"
    ):
        SafeQueueConfigRule(stack, "Rule", schedule=schedule)


# --- the code asset ------------------------------------------------------------------


def asset_files(asset: Path) -> list[str]:
    return sorted(str(p.relative_to(asset)) for p in asset.rglob("*") if p.is_file())


def test_the_asset_is_the_cdk_free_modules_only(synthesized: Synthesized) -> None:
    files = asset_files(synthesized.asset)
    assert "safe_queue/live/config_handler.py" in files
    assert "safe_queue/live/account.py" in files
    assert "safe_queue/engine/evaluate.py" in files
    assert "safe_queue/report.py" in files
    # nothing of the CDK: no aws-cdk-lib, no constructs, no safe_queue/cdk, no CDK modules
    parts = {part for name in files for part in Path(name).parts}
    assert not parts & {"aws_cdk", "constructs", "jsii", "cdk", "__pycache__", "node_modules"}
    assert "safe_queue/errors.py" in files  # safe_queue/__init__.py imports it
    assert "safe_queue/retries.py" in files  # every client's retry settings
    assert not [
        name for name in files if name.startswith(("safe_queue/template/", "safe_queue/runtime/"))
    ]
    # AND no module of the asset imports one (lazy imports inside functions included)
    cdk_imports = [
        (name, imported)
        for name in files
        if name.endswith(".py")
        for imported in _imported_modules((synthesized.asset / name).read_text())
        if imported.split(".")[0] in {"aws_cdk", "constructs", "jsii"}
    ]
    assert cdk_imports == []


def test_each_asset_of_safe_queue_holds_its_own_modules() -> None:
    # GIVEN, in one app, a function packaged with the runtime's modules (no handler folder:
    # the same source directory as the Config rule's asset), bundled first, and the rule
    from aws_cdk import aws_lambda as lambda_

    from safe_queue.cdk.bundling import RUNTIME_MODULES, package_code

    app = make_app()
    stack = cdk.Stack(app, "Shared")
    lambda_.Function(
        stack,
        "RuntimeOnly",
        runtime=lambda_.Runtime.PYTHON_3_13,
        handler="safe_queue.runtime.handler",
        code=package_code(RUNTIME_MODULES),
    )
    SafeQueueConfigRule(stack, "SafeQueueRule")
    # WHEN synthesized
    assembly = Path(app.synth().directory)
    functions = Template.from_stack(stack).find_resources("AWS::Lambda::Function")
    packages = {
        logical_id.rstrip("0123456789ABCDEF"): {
            path.name
            for path in (
                assembly / f"asset.{f['Properties']['Code']['S3Key'].split('.')[0]}" / "safe_queue"
            ).iterdir()
        }
        for logical_id, f in functions.items()
    }
    # THEN each function's asset has the modules it was packaged with, not the other's
    (runtime,) = [modules for name, modules in packages.items() if name.startswith("RuntimeOnly")]
    (rule,) = [modules for name, modules in packages.items() if name.startswith("SafeQueueRule")]
    assert "runtime" in runtime
    assert "live" not in runtime
    assert "live" in rule
    assert "runtime" not in rule


def _imported_modules(source: str) -> list[str]:
    """Every module a source imports, statically (``import x``, ``from x import y``)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
    return found


def test_the_asset_is_small(synthesized: Synthesized, tmp_path: Path) -> None:
    archive = tmp_path / "asset.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name in asset_files(synthesized.asset):
            zipped.write(synthesized.asset / name, name)
    size = sum((synthesized.asset / n).stat().st_size for n in asset_files(synthesized.asset))
    print(f"asset: {size} bytes, {archive.stat().st_size} bytes zipped")
    assert archive.stat().st_size < size < ASSET_SIZE_LIMIT


def test_the_handler_imports_from_the_asset_without_cdk(synthesized: Synthesized) -> None:
    program = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'aws_cdk', 'constructs', 'jsii'}:\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"sys.path.insert(0, {str(synthesized.asset)!r})\n"
        "import safe_queue.live.config_handler as h\n"
        f"assert h.__file__.startswith({str(synthesized.asset)!r}), h.__file__\n"
        "print(h.handler.__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "handler\n"


# --- the handler against moto ----------------------------------------------------------


@dataclass
class Account:
    world: World
    queues: dict[str, str]


@pytest.fixture(scope="module")
def account(aws_environment: str) -> Account:
    """GIVEN a region with the seed's broken pair, the fixed pair (two mappings), and a
    mapping whose queue was deleted."""
    world = World(REGION)
    world.function("render", 180)
    dlq = world.queue("render-dlq", MessageRetentionPeriod=DLQ_RETENTION)
    queues = {
        "broken": world.queue(
            "invoice-render", VisibilityTimeout=60, RedrivePolicy=world.redrive(dlq)
        ),
        "fixed": world.queue(
            "invoice-render-fixed", VisibilityTimeout=1082, RedrivePolicy=world.redrive(dlq)
        ),
        "deleted": world.queue("gone", VisibilityTimeout=1082, RedrivePolicy=world.redrive(dlq)),
    }
    settings = {
        "BatchSize": 5,
        "MaximumBatchingWindowInSeconds": 2,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
    }
    for case in ("broken", "fixed", "fixed", "deleted"):
        world.mapping(queues[case], "render", **settings)
    world.delete_queue(queues["deleted"])
    return Account(world, queues)


def scheduled_event() -> dict[str, Any]:
    invoking = {
        "messageType": "ScheduledNotification",
        "notificationCreationTime": "2026-11-30T12:00:00.000Z",
    }
    return {
        "invokingEvent": json.dumps(invoking),
        "resultToken": "TESTMODE",
        "eventLeftScope": False,
    }


def put_evaluations(
    account: Account, event: dict[str, Any]
) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
    session = boto3.Session(region_name=REGION)
    calls = Calls(session)
    summary = evaluate_and_report(event, session)
    (request,) = calls.params("config:PutEvaluations")
    # every call the handler makes is one its role allows
    assert set(calls.actions) == {*IAM_ACTIONS, "config:PutEvaluations"}
    assert request["ResultToken"] == "TESTMODE"
    assert request["TestMode"] is True
    return summary, {e["ComplianceResourceId"]: e for e in request["Evaluations"]}


def test_put_evaluations_per_source_queue(account: Account) -> None:
    summary, evaluations = put_evaluations(account, scheduled_event())
    broken = evaluations[queue_url(account.queues["broken"])]
    fixed = evaluations[queue_url(account.queues["fixed"])]
    deleted = evaluations[queue_url(account.queues["deleted"])]
    # THEN the seed's queue is NON_COMPLIANT, naming the rule it breaks
    assert broken["ComplianceType"] == "NON_COMPLIANT"
    assert broken["ComplianceResourceType"] == "AWS::SQS::Queue"
    assert "safe-queue:visibility-below-function-timeout" in broken["Annotation"]
    assert "(1 of 1 mappings)" in broken["Annotation"]
    # AND the fixed queue, fed by two mappings, is COMPLIANT (one evaluation)
    assert fixed["ComplianceType"] == "COMPLIANT"
    # AND a source queue deleted meanwhile is NOT_APPLICABLE (AWS's verdict for a deleted
    # resource), saying why
    assert deleted["ComplianceType"] == "NOT_APPLICABLE"
    assert "does not exist" in deleted["Annotation"]
    assert all(len(e["Annotation"]) <= ANNOTATION_MAX for e in evaluations.values())
    # AND the ordering timestamp is the invoking event's
    assert {e["OrderingTimestamp"].isoformat() for e in evaluations.values()} == {
        "2026-11-30T12:00:00+00:00"
    }
    assert summary == {
        "mappings": 4,
        "unreadable": 1,
        "COMPLIANT": 1,
        "NON_COMPLIANT": 1,
        "NOT_APPLICABLE": 1,
    }
    # AND the resource id is the queue URL, as AWS Config records an AWS::SQS::Queue
    assert set(evaluations) == {
        f"https://sqs.{REGION}.amazonaws.com/123456789012/{n}"
        for n in ("invoice-render", "invoice-render-fixed", "gone")
    }


def test_a_change_triggered_evaluation_uses_the_items_capture_time(account: Account) -> None:
    item = {
        "resourceType": "AWS::Lambda::Function",
        "resourceId": "render",
        "configurationItemStatus": "OK",
        "configurationItemCaptureTime": "2026-11-30T13:14:15.000Z",
    }
    invoking = {"messageType": "ConfigurationItemChangeNotification", "configurationItem": item}
    event = {"invokingEvent": json.dumps(invoking), "resultToken": "TESTMODE"}
    _, evaluations = put_evaluations(account, event)
    # a function change re-evaluates the queues that feed it
    assert evaluations[queue_url(account.queues["broken"])]["ComplianceType"] == "NON_COMPLIANT"
    assert {e["OrderingTimestamp"].isoformat() for e in evaluations.values()} == {
        "2026-11-30T13:14:15+00:00"
    }


def test_a_deleted_queue_that_triggered_the_rule_is_not_applicable(account: Account) -> None:
    url = f"https://sqs.{REGION}.amazonaws.com/123456789012/no-longer-mapped"
    item = {
        "resourceType": "AWS::SQS::Queue",
        "resourceId": url,
        "configurationItemStatus": "ResourceDeleted",
        "configurationItemCaptureTime": "2026-11-30T13:14:15.000Z",
    }
    invoking = {"messageType": "ConfigurationItemChangeNotification", "configurationItem": item}
    _, evaluations = put_evaluations(
        account, {"invokingEvent": json.dumps(invoking), "resultToken": "TESTMODE"}
    )
    assert evaluations[url]["ComplianceType"] == "NOT_APPLICABLE"


def test_the_lambda_entry_point_audits_its_own_region(
    account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    summary = handler(scheduled_event(), None)
    assert summary["NON_COMPLIANT"] == 1
    assert summary["COMPLIANT"] == 1


@pytest.mark.parametrize(
    ("operation", "when", "code", "read"),
    [
        ("lambda.GetFunctionConfiguration", "", "AccessDeniedException", "lambda:GetFunction"),
        ("sqs.GetQueueAttributes", "render-dlq", "AccessDenied", "sqs:GetQueueAttributes"),
        ("sqs.GetQueueAttributes", "render-dlq", "ThrottlingException", "sqs:GetQueueAttributes"),
    ],
)
def test_a_mapping_that_cannot_be_read_is_non_compliant_never_not_applicable(
    account: Account,
    caplog: pytest.LogCaptureFixture,
    operation: str,
    when: str,
    code: str,
    read: str,
) -> None:
    # GIVEN the function, or the shared dead-letter queue, cannot be read (after retries)
    session = boto3.Session(region_name=REGION)
    moto_world.deny(session, operation, when=when, code=code)
    calls = Calls(session)
    with caplog.at_level("WARNING", logger="safe_queue.live.config_handler"):
        summary = evaluate_and_report(scheduled_event(), session)
    (request,) = calls.params("config:PutEvaluations")
    evaluations = {e["ComplianceResourceId"]: e for e in request["Evaluations"]}
    # THEN every existing queue it feeds is NON_COMPLIANT: "Not evaluated", naming the read
    # and the error (Config accepts no INSUFFICIENT_DATA; NOT_APPLICABLE would hide it)
    fixed = evaluations[queue_url(account.queues["fixed"])]
    assert fixed["ComplianceType"] == "NON_COMPLIANT"
    assert fixed["Annotation"].startswith(f"Not evaluated: {read}")
    assert code in fixed["Annotation"]
    # AND the seed's queue stays NON_COMPLIANT: by its visibility error when the function was
    # read (the dead-letter queue's failed read added), else as not evaluated
    broken = evaluations[queue_url(account.queues["broken"])]
    assert broken["ComplianceType"] == "NON_COMPLIANT"
    if read.startswith("sqs:"):
        assert broken["Annotation"].startswith(
            "Breaks safe-queue:visibility-below-function-timeout (1 of 1 mappings)."
        )
        assert broken["Annotation"].endswith(f"Also not read: {read} ({code}).")
    else:
        assert broken["Annotation"].startswith(f"Not evaluated: {read}")
    assert all(len(e["Annotation"]) <= ANNOTATION_MAX for e in evaluations.values())
    # AND only the deleted queue is NOT_APPLICABLE
    assert [e["ComplianceType"] for e in evaluations.values()].count("NOT_APPLICABLE") == 1
    assert summary["COMPLIANT"] == 0
    # AND each failed read is logged as one line: operation, error code, fix
    lines = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(lines) == summary["unreadable"] == 2  # this read, and the deleted queue
    assert all("\n" not in line and "Fix: " in line for line in lines)
    assert any(code in line and read in line for line in lines)


def test_a_region_that_cannot_be_listed_fails_the_invocation_with_one_logged_line(
    account: Account, caplog: pytest.LogCaptureFixture
) -> None:
    session = boto3.Session(region_name=REGION)
    moto_world.deny(session, "lambda.ListEventSourceMappings", code="AccessDeniedException")
    calls = Calls(session)
    with (
        caplog.at_level("ERROR", logger="safe_queue.live.config_handler"),
        pytest.raises(RuntimeError, match="no queue evaluated: lambda:ListEventSourceMappings"),
    ):
        evaluate_and_report(scheduled_event(), session)
    # no evaluation is sent: the previous verdicts stay, and Config shows the failed run
    assert calls.params("config:PutEvaluations") == []
    (line,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert "AccessDeniedException" in line
    assert "Fix: grant lambda:ListEventSourceMappings" in line


def test_a_failed_put_evaluations_is_logged_as_one_line_and_fails_the_invocation(
    account: Account, caplog: pytest.LogCaptureFixture
) -> None:
    from botocore.exceptions import ClientError

    session = boto3.Session(region_name=REGION)
    moto_world.deny(session, "config.PutEvaluations", code="AccessDeniedException")
    with (
        caplog.at_level("ERROR", logger="safe_queue.live.config_handler"),
        pytest.raises(ClientError, match="AccessDeniedException"),
    ):
        evaluate_and_report(scheduled_event(), session)
    (line,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert line.startswith("safe-queue: config:PutEvaluations on 3 evaluations failed:")
    assert "Fix: grant config:PutEvaluations" in line


def test_annotations_name_the_rules_in_at_most_256_characters() -> None:
    rule_ids = [f"safe-queue:some-rule-with-a-long-name-{n}" for n in range(20)]
    text = annotation(rule_ids, 3, 4)
    assert len(text) <= ANNOTATION_MAX
    assert text.startswith("Breaks safe-queue:some-rule-with-a-long-name-0, ")
    assert "more (3 of 4 mappings)" in text
