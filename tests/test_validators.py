"""Independent validators on synthesized templates: cfn-lint and cdk-nag (AwsSolutions, Serverless).

The app holds the example stack and a stack with the other shapes a consumer takes (FIFO,
imported function, overrides), so every resource type the construct makes is checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs, lint_all, lint_file

from example.stack import InvoiceRenderingStack
from safe_queue import SafeQueueConsumer, SafeQueueDashboard

from .conftest import CDK_CONTEXT, make_function

# cfn-lint checks ignored, each with its reason:
IGNORED_CFN_LINT_CHECKS = {
    # aws-cdk-lib's Function adds an explicit DependsOn on its role, which the GetAtt of the
    # role's ARN already implies: harmless, and not ours to change.
    "W3005",
}


@dataclass
class Synthesized:
    outdir: Path
    report: dict[str, Any]
    consumers: list[SafeQueueConsumer]


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    outdir = tmp_path_factory.mktemp("cdk.out")
    app = cdk.App(context=CDK_CONTEXT, outdir=str(outdir))
    example = InvoiceRenderingStack(app, "InvoiceRendering")
    shapes = cdk.Stack(app, "Shapes")
    imported = lambda_.Function.from_function_arn(
        shapes, "ImportedFn", "arn:aws:lambda:eu-west-1:123456789012:function:render"
    )
    reserved_function = make_function(shapes, "ReservedFn", cdk.Duration.seconds(30))
    reserved_l1 = reserved_function.node.default_child
    assert isinstance(reserved_l1, lambda_.CfnFunction)
    reserved_l1.reserved_concurrent_executions = 10
    consumers = [
        example.consumer,
        example.ledger_consumer,
        SafeQueueConsumer(
            shapes,
            "Fifo",
            function=make_function(shapes, "FifoFn", cdk.Duration.seconds(30)),
            fifo=True,
            content_based_deduplication=True,
            batch_size=10,
        ),
        SafeQueueConsumer(
            shapes, "Imported", function=imported, function_timeout=cdk.Duration.seconds(900)
        ),
        SafeQueueConsumer(
            shapes,
            "Tuned",
            function=make_function(shapes, "TunedFn", cdk.Duration.seconds(5)),
            batch_size=1000,
            max_batching_window=cdk.Duration.seconds(300),
            max_concurrency=2,
            max_receive_count=10,
            retention_period=cdk.Duration.days(1),
            dead_letter_retention_period=cdk.Duration.days(14),
        ),
        # the props of issue 12: a customer-managed key, names, filters, reserved concurrency
        SafeQueueConsumer(
            shapes,
            "Encrypted",
            function=reserved_function,
            encryption_key=kms.Key(shapes, "QueueKey", enable_key_rotation=True),
            queue_name="orders",
            dead_letter_queue_name="orders-failed",
            filters=[lambda_.FilterCriteria.filter({"body": {"kind": ["invoice"]}})],
            removal_policy=cdk.RemovalPolicy.DESTROY,
        ),
    ]
    SafeQueueDashboard(shapes, "Dashboard", consumers=consumers)
    # a user who filters acknowledges that unmatched messages are deleted, as documented
    cdk.Annotations.of(consumers[-1]).acknowledge_warning(
        "safe-queue:filter-deletes-unmatched", "only invoices are sent to this queue"
    )
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    # the example's own function has findings (see the last test), so the synth fails
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    report = json.loads((outdir / "validation-report.json").read_text())
    return Synthesized(outdir, report, consumers)


def consumer_paths(consumer: SafeQueueConsumer) -> set[str]:
    """Every construct path of the resources the consumer made (its mapping included)."""
    paths = {c.node.path for c in consumer.node.find_all()}
    paths.update(c.node.path for c in consumer.event_source_mapping.node.find_all())
    return paths


def test_both_templates_synthesized(synthesized: Synthesized):
    names = {p.name for p in synthesized.outdir.glob("*.template.json")}
    assert names == {"InvoiceRendering.template.json", "Shapes.template.json"}


@pytest.mark.parametrize("stack", ["InvoiceRendering", "Shapes"])
def test_cfn_lint_finds_no_errors_or_warnings(synthesized: Synthesized, stack: str):
    template = synthesized.outdir / f"{stack}.template.json"
    config = ManualArgs(ignore_checks=sorted(IGNORED_CFN_LINT_CHECKS), include_checks=["I"])
    findings = [f"{m.rule.id} {m.message}" for m in lint_file(template, config=config)]
    # informational findings are listed by the assertion message but allowed
    assert [f for f in findings if not f.startswith("I")] == [], findings


def test_cfn_lint_is_live():
    # GIVEN the seed's broken pair (visibility 60 s, function timeout 180 s) in a template
    template = {
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 60}},
            "Fn": {
                "Type": "AWS::Lambda::Function",
                "Properties": {
                    "Code": {"ZipFile": "x"},
                    "Handler": "index.handler",
                    "Runtime": "python3.13",
                    "Role": "arn:aws:iam::123456789012:role/r",
                    "Timeout": 180,
                },
            },
            "Mapping": {
                "Type": "AWS::Lambda::EventSourceMapping",
                "Properties": {
                    "EventSourceArn": {"Fn::GetAtt": ["Queue", "Arn"]},
                    "FunctionName": {"Ref": "Fn"},
                },
            },
        }
    }
    # THEN cfn-lint reports it (E3505), so a clean result above means something
    rule_ids = {m.rule.id for m in lint_all(json.dumps(template))}
    assert "E3505" in rule_ids


def test_cdk_nag_ran_both_packs(synthesized: Synthesized):
    plugins = {report["pluginName"] for report in synthesized.report["pluginReports"]}
    assert {"AwsSolutions", "Serverless"} <= plugins


def test_cdk_nag_finds_nothing_on_the_constructs_resources(synthesized: Synthesized):
    ours = set().union(*(consumer_paths(c) for c in synthesized.consumers))
    assert len(ours) > 20
    findings = [
        (violation["ruleName"], construct["constructPath"])
        for report in synthesized.report["pluginReports"]
        for violation in report.get("violations", [])
        for construct in violation["violatingConstructs"]
        if construct["constructPath"] in ours
    ]
    assert findings == []


def test_cdk_nag_does_check_the_app(synthesized: Synthesized):
    # GIVEN the example's function, which uses an AWS managed policy (not our resource)
    # THEN cdk-nag reports it: the validator is live, and the filter above is what is clean
    rules = {
        violation["ruleName"].split("[")[0]
        for report in synthesized.report["pluginReports"]
        for violation in report.get("violations", [])
    }
    assert "AwsSolutions-IAM4" in rules
