"""idempotency=True: the table Powertools expects, exactly four actions on it, the env var."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from safe_queue import SafeQueueConfigError, SafeQueueConsumer

from .conftest import make_function, make_stack


@dataclass
class Built:
    stack: cdk.Stack
    template: dict[str, Any]
    with_table: SafeQueueConsumer
    without_table: SafeQueueConsumer
    via_alias: SafeQueueConsumer

    def logical_id(self, construct: Any) -> str:
        return self.stack.get_logical_id(construct.node.default_child)

    def resources(self, kind: str) -> dict[str, dict[str, Any]]:
        return {k: r for k, r in self.template["Resources"].items() if r["Type"] == kind}

    def function_props(self, name: str) -> dict[str, Any]:
        function = self.stack.node.find_child(name)
        props: dict[str, Any] = self.template["Resources"][self.logical_id(function)]["Properties"]
        return props


@pytest.fixture(scope="module")
def built() -> Built:
    stack = make_stack("Idempotency")
    with_table = SafeQueueConsumer(
        stack,
        "Render",
        function=make_function(stack, "RenderFn", cdk.Duration.seconds(60)),
        idempotency=True,
    )
    without_table = SafeQueueConsumer(
        stack, "Plain", function=make_function(stack, "PlainFn", cdk.Duration.seconds(60))
    )
    aliased = make_function(stack, "AliasedFn", cdk.Duration.seconds(30))
    alias = lambda_.Alias(stack, "Live", alias_name="live", version=aliased.current_version)
    via_alias = SafeQueueConsumer(stack, "ViaAlias", function=alias, idempotency=True)
    template = Template.from_stack(stack).to_json()
    return Built(stack, template, with_table, without_table, via_alias)


def test_table_has_the_shape_powertools_expects(built: Built):
    table = built.with_table.idempotency_table
    assert table is not None
    props = built.template["Resources"][built.logical_id(table)]["Properties"]
    assert props["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert props["AttributeDefinitions"] == [{"AttributeName": "id", "AttributeType": "S"}]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["SSESpecification"] == {"SSEEnabled": True}


def test_function_gets_the_table_name_in_its_environment(built: Built):
    table = built.with_table.idempotency_table
    assert table is not None
    variables = built.function_props("RenderFn")["Environment"]["Variables"]
    assert variables == {
        "IDEMPOTENCY_TABLE_NAME": {"Ref": built.logical_id(table)},
        "SAFE_QUEUE_VISIBILITY_TIMEOUT": "360",
    }


def dynamodb_statements(built: Built, function_name: str) -> list[dict[str, Any]]:
    role_id = built.function_props(function_name)["Role"]["Fn::GetAtt"][0]
    statements = [
        statement
        for policy in built.resources("AWS::IAM::Policy").values()
        if {"Ref": role_id} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    return [s for s in statements if any("dynamodb:" in a for a in _actions(s))]


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def test_function_may_do_exactly_the_four_item_calls_on_exactly_that_table(built: Built):
    table = built.with_table.idempotency_table
    assert table is not None
    (statement,) = dynamodb_statements(built, "RenderFn")
    assert statement["Effect"] == "Allow"
    assert sorted(_actions(statement)) == [
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
    ]
    resources = statement["Resource"]
    resources = resources if isinstance(resources, list) else [resources]
    assert resources == [{"Fn::GetAtt": [built.logical_id(table), "Arn"]}]


def test_no_table_no_grant_no_variable_when_off(built: Built):
    assert built.without_table.idempotency_table is None
    variables = built.function_props("PlainFn")["Environment"]["Variables"]
    assert variables == {"SAFE_QUEUE_VISIBILITY_TIMEOUT": "360"}
    assert dynamodb_statements(built, "PlainFn") == []
    # two consumers asked for a table, one did not
    assert len(built.resources("AWS::DynamoDB::Table")) == 2


@pytest.mark.parametrize(
    ("removal_policy", "deletion_policy"),
    [(None, "Retain"), (cdk.RemovalPolicy.DESTROY, "Delete")],
)
def test_the_table_follows_the_removal_policy(
    removal_policy: cdk.RemovalPolicy | None, deletion_policy: str
):
    stack = make_stack()
    props = {} if removal_policy is None else {"removal_policy": removal_policy}
    consumer = SafeQueueConsumer(
        stack, "C", function=make_function(stack, "Fn"), idempotency=True, **props
    )
    assert consumer.idempotency_table is not None
    (table,) = Template.from_stack(stack).find_resources("AWS::DynamoDB::Table").values()
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == deletion_policy


def test_an_alias_wires_the_table_to_its_function(built: Built):
    table = built.via_alias.idempotency_table
    assert table is not None
    variables = built.function_props("AliasedFn")["Environment"]["Variables"]
    assert variables == {
        "IDEMPOTENCY_TABLE_NAME": {"Ref": built.logical_id(table)},
        "SAFE_QUEUE_VISIBILITY_TIMEOUT": "180",
    }
    assert len(dynamodb_statements(built, "AliasedFn")) == 1


def test_idempotency_with_an_imported_function_is_refused():
    stack = make_stack()
    imported = lambda_.Function.from_function_arn(
        stack, "Fn", "arn:aws:lambda:eu-west-1:123456789012:function:render"
    )
    with pytest.raises(SafeQueueConfigError) as raised:
        SafeQueueConsumer(
            stack,
            "Consumer",
            function=imported,
            function_timeout=cdk.Duration.seconds(60),
            idempotency=True,
        )
    message = str(raised.value)
    assert "idempotency is True but the function Test/Fn is imported" in message
    assert "IDEMPOTENCY_TABLE_NAME cannot be set" in message
    assert stack.node.try_find_child("Consumer") is None
