"""Every derived value and default of SafeQueueConsumer, read from one synthesized template."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Match, Template

from safe_queue import SafeQueueConsumer, derive_visibility_timeout

from .conftest import make_function, make_stack

DAY = 86_400


@dataclass
class Built:
    stack: cdk.Stack
    template: Template
    consumers: dict[str, SafeQueueConsumer]
    topic: sns.Topic

    def resource(self, construct: Any) -> dict[str, Any]:
        logical_id = self.stack.get_logical_id(construct.node.default_child)
        resource: dict[str, Any] = self.template.to_json()["Resources"][logical_id]
        return resource

    def props(self, construct: Any) -> dict[str, Any]:
        props: dict[str, Any] = self.resource(construct)["Properties"]
        return props

    def mapping(self, name: str) -> dict[str, Any]:
        queue_id = self.stack.get_logical_id(self.consumers[name].queue.node.default_child)
        mappings = self.template.find_resources(
            "AWS::Lambda::EventSourceMapping",
            {"Properties": {"EventSourceArn": {"Fn::GetAtt": [queue_id, "Arn"]}}},
        )
        assert len(mappings) == 1
        props: dict[str, Any] = next(iter(mappings.values()))["Properties"]
        return props


@pytest.fixture(scope="module")
def built() -> Built:
    stack = make_stack("Consumers")
    topic = sns.Topic(stack, "Alarms")
    imported = lambda_.Function.from_function_arn(
        stack, "ImportedFn", "arn:aws:lambda:eu-west-1:123456789012:function:render"
    )
    consumers = {
        "Seed": SafeQueueConsumer(
            stack,
            "Seed",
            function=make_function(stack, "SeedFn", cdk.Duration.seconds(180)),
            batch_size=5,
            max_batching_window=cdk.Duration.seconds(2),
            max_concurrency=20,
            alarm_topic=topic,
        ),
        "Defaults": SafeQueueConsumer(
            stack, "Defaults", function=make_function(stack, "DefaultsFn", timeout=None)
        ),
        "Fifo": SafeQueueConsumer(
            stack,
            "Fifo",
            function=make_function(stack, "FifoFn", cdk.Duration.minutes(1)),
            fifo=True,
            content_based_deduplication=True,
        ),
        "Imported": SafeQueueConsumer(
            stack, "Imported", function=imported, function_timeout=cdk.Duration.seconds(30)
        ),
        "Override": SafeQueueConsumer(
            stack,
            "Override",
            function=make_function(stack, "OverrideFn", cdk.Duration.seconds(10)),
            visibility_timeout=cdk.Duration.minutes(5),
            max_receive_count=7,
            retention_period=cdk.Duration.days(2),
            dead_letter_retention_period=cdk.Duration.days(3),
            max_message_age=cdk.Duration.minutes(30),
            report_batch_item_failures=False,
            batch_size=1,
        ),
    }
    return Built(stack, Template.from_stack(stack), consumers, topic)


@pytest.mark.parametrize(
    ("name", "function_timeout", "visibility"),
    [
        ("Seed", 180, 1082),  # 6 x 180 + 2
        ("Defaults", 3, 18),  # Lambda's default timeout, 6 x 3
        ("Fifo", 60, 360),
        ("Imported", 30, 180),
        ("Override", 10, 300),  # explicit override kept as given
    ],
)
def test_visibility_timeout_is_derived_from_the_function_timeout(
    built: Built, name: str, function_timeout: int, visibility: int
):
    consumer = built.consumers[name]
    assert consumer.function_timeout.to_seconds() == function_timeout
    assert consumer.visibility_timeout.to_seconds() == visibility
    assert built.props(consumer.queue)["VisibilityTimeout"] == visibility


def test_derive_visibility_timeout_is_the_documented_formula():
    derived = derive_visibility_timeout(cdk.Duration.seconds(180), cdk.Duration.seconds(2))
    assert derived.to_seconds() == 1082


def test_default_retention_periods(built: Built):
    consumer = built.consumers["Seed"]
    assert built.props(consumer.queue)["MessageRetentionPeriod"] == 4 * DAY
    assert built.props(consumer.dead_letter_queue)["MessageRetentionPeriod"] == 14 * DAY


def test_redrive_policy_targets_the_dead_letter_queue_with_max_receive_count(built: Built):
    consumer = built.consumers["Seed"]
    dlq_id = built.stack.get_logical_id(consumer.dead_letter_queue.node.default_child)
    assert built.props(consumer.queue)["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]},
        "maxReceiveCount": 5,
    }
    override = built.consumers["Override"]
    assert built.props(override.queue)["RedrivePolicy"]["maxReceiveCount"] == 7


def test_max_time_to_dead_letter_is_receive_count_times_visibility(built: Built):
    assert built.consumers["Seed"].max_time_to_dead_letter.to_seconds() == 5 * 1082
    assert built.consumers["Override"].max_time_to_dead_letter.to_seconds() == 7 * 300


@pytest.mark.parametrize("name", ["Seed", "Defaults", "Fifo", "Imported", "Override"])
def test_both_queues_encrypted_and_tls_only(built: Built, name: str):
    consumer = built.consumers[name]
    for queue in (consumer.queue, consumer.dead_letter_queue):
        assert built.props(queue)["SqsManagedSseEnabled"] is True
        queue_id = built.stack.get_logical_id(queue.node.default_child)
        policies = built.template.find_resources(
            "AWS::SQS::QueuePolicy", {"Properties": {"Queues": [{"Ref": queue_id}]}}
        )
        (policy,) = policies.values()
        (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
        assert statement["Effect"] == "Deny"
        assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_mapping_carries_batch_settings_and_partial_failures(built: Built):
    mapping = built.mapping("Seed")
    assert mapping["BatchSize"] == 5
    assert mapping["MaximumBatchingWindowInSeconds"] == 2
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 20}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_mapping_defaults(built: Built):
    mapping = built.mapping("Defaults")
    assert mapping["BatchSize"] == 10
    assert "MaximumBatchingWindowInSeconds" not in mapping
    assert "ScalingConfig" not in mapping
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_report_batch_item_failures_can_be_turned_off(built: Built):
    assert "FunctionResponseTypes" not in built.mapping("Override")


def test_function_is_granted_consume_permissions_on_the_queue(built: Built):
    consumer = built.consumers["Seed"]
    queue_id = built.stack.get_logical_id(consumer.queue.node.default_child)
    built.template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Action": Match.array_with(
                                    [
                                        "sqs:ChangeMessageVisibility",
                                        "sqs:DeleteMessage",
                                        "sqs:ReceiveMessage",
                                    ]
                                ),
                                "Resource": {"Fn::GetAtt": [queue_id, "Arn"]},
                            }
                        )
                    ]
                )
            }
        },
    )


def test_fifo_makes_both_queues_fifo(built: Built):
    consumer = built.consumers["Fifo"]
    assert built.props(consumer.queue)["FifoQueue"] is True
    assert built.props(consumer.queue)["ContentBasedDeduplication"] is True
    assert built.props(consumer.dead_letter_queue)["FifoQueue"] is True
    assert consumer.queue.fifo
    assert consumer.dead_letter_queue.fifo


def test_standard_queues_have_no_fifo_attributes(built: Built):
    props = built.props(built.consumers["Seed"].queue)
    assert "FifoQueue" not in props
    assert "ContentBasedDeduplication" not in props


def test_dead_letter_alarm(built: Built):
    consumer = built.consumers["Seed"]
    dlq_id = built.stack.get_logical_id(consumer.dead_letter_queue.node.default_child)
    props = built.props(consumer.dead_letter_alarm)
    assert props["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert props["Namespace"] == "AWS/SQS"
    assert props["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq_id, "QueueName"]}}
    ]
    assert props["Statistic"] == "Maximum"
    assert props["Period"] == 60
    assert props["Threshold"] == 1
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert props["EvaluationPeriods"] == 1
    assert props["TreatMissingData"] == "notBreaching"


@pytest.mark.parametrize(
    ("name", "threshold"),
    [
        ("Seed", 5 * 1082),  # max_time_to_dead_letter, well under half of 4 days
        ("Defaults", 5 * 18),
        ("Override", 30 * 60),  # explicit max_message_age
    ],
)
def test_age_alarm_threshold(built: Built, name: str, threshold: int):
    consumer = built.consumers[name]
    queue_id = built.stack.get_logical_id(consumer.queue.node.default_child)
    props = built.props(consumer.age_alarm)
    assert props["MetricName"] == "ApproximateAgeOfOldestMessage"
    assert props["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": [queue_id, "QueueName"]}}
    ]
    assert props["Statistic"] == "Maximum"
    assert props["Period"] == 60
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert props["Threshold"] == threshold
    assert consumer.max_message_age.to_seconds() == threshold


def test_age_alarm_threshold_is_capped_at_half_the_retention_period():
    # GIVEN a retry budget (1000 x 360 s = 100 h) longer than half the 5-day source retention
    stack = make_stack()
    consumer = SafeQueueConsumer(
        stack,
        "Long",
        function=make_function(stack, "Fn", cdk.Duration.minutes(1)),
        max_receive_count=1000,
        retention_period=cdk.Duration.days(5),
        dead_letter_retention_period=cdk.Duration.days(14),
    )
    # THEN the threshold is half of 5 days, not 360,000 s
    assert consumer.max_time_to_dead_letter.to_seconds() == 360_000
    assert consumer.max_message_age.to_seconds() == 5 * DAY // 2


def test_alarm_topic_is_the_action_of_every_alarm(built: Built):
    consumer = built.consumers["Seed"]
    topic_id = built.stack.get_logical_id(built.topic.node.default_child)  # type: ignore[arg-type]
    assert len(consumer.alarms) == 3
    assert set(map(id, consumer.alarms)) == {
        id(consumer.dead_letter_alarm),
        id(consumer.age_alarm),
        id(consumer.redelivery_alarm),
    }
    for alarm in consumer.alarms:
        assert built.props(alarm)["AlarmActions"] == [{"Ref": topic_id}]


def test_no_alarm_actions_without_a_topic(built: Built):
    for alarm in built.consumers["Defaults"].alarms:
        assert "AlarmActions" not in built.props(alarm)


def test_resources_per_consumer(built: Built):
    # 2 queues, 2 queue policies, 3 alarms, 1 mapping: 8 resources per consumer
    consumers = len(built.consumers)
    assert len(built.template.find_resources("AWS::SQS::Queue")) == 2 * consumers
    assert len(built.template.find_resources("AWS::SQS::QueuePolicy")) == 2 * consumers
    assert len(built.template.find_resources("AWS::CloudWatch::Alarm")) == 3 * consumers
    mappings = built.template.find_resources("AWS::Lambda::EventSourceMapping")
    assert len(mappings) == consumers


def test_construct_ids_are_stable(built: Built):
    consumer = built.consumers["Seed"]
    assert [c.node.id for c in consumer.node.children][:5] == [
        "DeadLetterQueue",
        "Queue",
        "DeadLetterAlarm",
        "AgeAlarm",
        "RedeliveryAlarm",
    ]
    assert isinstance(consumer.queue, sqs.Queue)
    # logical ids follow the construct path, so they survive refactors that keep the ids
    assert built.stack.get_logical_id(consumer.queue.node.default_child).startswith("SeedQueue")
    assert built.stack.get_logical_id(consumer.age_alarm.node.default_child).startswith(
        "SeedAgeAlarm"
    )
