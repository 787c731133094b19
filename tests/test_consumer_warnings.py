"""Configurations AWS accepts but that weaken the guarantees synthesize with a warning."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match

from safe_queue import SafeQueueConsumer

from .conftest import make_function, make_stack

S = cdk.Duration.seconds


def warnings_of(**props: Any) -> list[str]:
    stack = make_stack()
    SafeQueueConsumer(stack, "Consumer", function=make_function(stack, "Fn", S(180)), **props)
    found = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    return [str(message.entry.data) for message in found]


def test_the_derived_configuration_has_no_warnings():
    assert warnings_of(batch_size=5, max_batching_window=S(2)) == []


@pytest.mark.parametrize(
    ("props", "rule_id", "parts"),
    [
        (
            {"visibility_timeout": S(1081), "max_batching_window": S(2)},
            "safe-queue:visibility-below-guidance",
            [
                "VisibilityTimeout 1081 s",
                "6 x function Timeout 180 s + MaximumBatchingWindowInSeconds 2 s",
                "props: visibility_timeout (omit it to derive it)",
            ],
        ),
        (
            {"max_receive_count": 4},
            "safe-queue:max-receive-count-below-guidance",
            ["maxReceiveCount is 4", "props: max_receive_count"],
        ),
        (
            {"report_batch_item_failures": False, "batch_size": 2},
            "safe-queue:no-report-batch-item-failures",
            ["BatchSize is 2", "props: report_batch_item_failures"],
        ),
        (
            {"retention_period": S(4 * 86400), "dead_letter_retention_period": S(4 * 86400)},
            "safe-queue:dead-letter-retention-too-short",
            ["MessageRetentionPeriod 345600 s is the same as the source queue's 345600 s"],
        ),
    ],
)
def test_warning_names_the_value_and_the_recommendation(
    props: dict[str, Any], rule_id: str, parts: list[str]
):
    (warning,) = warnings_of(**props)
    assert warning.endswith(f"[ack: {rule_id}]")
    for part in parts:
        assert part in warning


@pytest.mark.parametrize(
    "props",
    [
        {"visibility_timeout": S(1082), "max_batching_window": S(2)},
        {"max_receive_count": 5},
        {"report_batch_item_failures": False, "batch_size": 1},
    ],
)
def test_no_warning_at_the_boundary(props: dict[str, Any]):
    assert warnings_of(**props) == []


def test_a_warning_can_be_acknowledged_on_the_consumer_with_a_reason():
    stack = make_stack()
    consumer = SafeQueueConsumer(
        stack, "Consumer", function=make_function(stack, "Fn", S(60)), max_receive_count=2
    )
    annotations = Annotations.from_stack(stack)
    assert len(annotations.find_warning("*", Match.any_value())) == 1
    cdk.Annotations.of(consumer).acknowledge_warning(
        "safe-queue:max-receive-count-below-guidance", "payments must fail fast to the DLQ"
    )
    assert Annotations.from_stack(stack).find_warning("*", Match.any_value()) == []
