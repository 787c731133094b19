"""The DynamoDB table Powertools' idempotency utility expects, wired to a function."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

__all__ = ["IDEMPOTENCY_ACTIONS", "IDEMPOTENCY_TABLE_ENV", "idempotency_table"]

# What Powertools' DynamoDBPersistenceLayer calls, and nothing more.
IDEMPOTENCY_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
)
IDEMPOTENCY_TABLE_ENV = "IDEMPOTENCY_TABLE_NAME"


def idempotency_table(
    scope: Construct,
    function: lambda_.Function,
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
) -> dynamodb.Table:
    """Create the table Powertools' DynamoDBPersistenceLayer expects by default, and wire it."""
    table = dynamodb.Table(
        scope,
        "IdempotencyTable",
        partition_key=dynamodb.Attribute(name="id", type=dynamodb.AttributeType.STRING),
        time_to_live_attribute="expiration",
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        encryption=dynamodb.TableEncryption.AWS_MANAGED,
        removal_policy=removal_policy,
    )
    table.grant(function, *IDEMPOTENCY_ACTIONS)
    function.add_environment(IDEMPOTENCY_TABLE_ENV, table.table_name)
    return table
