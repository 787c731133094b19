"""SafeQueueConsumer(failure_backoff=...): the handler's backoff set on the function and
counted in the retry budget, the same budget ``safe-queue check`` counts from the template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from safe_queue import SafeQueueConsumer
from safe_queue.errors import SafeQueueConfigError
from safe_queue.runtime import FailureBackoff
from safe_queue.template import check_paths

from .conftest import make_function, make_stack

S = cdk.Duration.seconds
RETENTION = "safe-queue:retention-below-retry-budget"

# A 10 s function (lease 60 s), backoff base 30 s, cap 900 s, 7 receives. The k-th receive
# keeps the message max(60, 10 + min(900, 30 x 2^(k-1))) s:
# 60 (40), 70, 130, 250, 490, 910, 910 -> 2,820 s; without the backoff 7 x 60 = 420 s.
BUDGET_WITH_BACKOFF = 60 + 70 + 130 + 250 + 490 + 910 + 910


def consumer_with(backoff: Any, **props: Any) -> tuple[cdk.Stack, SafeQueueConsumer]:
    stack = make_stack()
    function = make_function(stack, timeout=S(10))
    consumer = SafeQueueConsumer(
        stack, "Orders", function=function, failure_backoff=backoff, max_receive_count=7, **props
    )
    return stack, consumer


def variables(stack: cdk.Stack) -> dict[str, Any]:
    (function,) = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    found: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return found


def test_the_function_gets_the_settings_from_env_reads():
    # GIVEN a consumer with a backoff, one without jitter
    stack, _ = consumer_with(FailureBackoff(base=30, cap=900))
    plain, _ = consumer_with(FailureBackoff(base=2.5, cap=60, jitter=False))
    # THEN FailureBackoff.from_env() in the handler reads the same backoff back
    assert repr(FailureBackoff.from_env(variables(stack))) == repr(FailureBackoff(base=30, cap=900))
    assert variables(plain)["SAFE_QUEUE_BACKOFF_BASE"] == "2.5"
    assert variables(plain)["SAFE_QUEUE_BACKOFF_JITTER"] == "false"
    assert FailureBackoff.from_env(variables(plain)).jitter is False


def test_the_retry_budget_and_the_age_alarm_count_the_backoff():
    # GIVEN the backoff and 7 receives on a 10 s function
    stack, consumer = consumer_with(FailureBackoff(base=30, cap=900))
    # THEN the worst case before the dead-letter queue is summed over the receives
    assert consumer.max_time_to_dead_letter.to_seconds() == BUDGET_WITH_BACKOFF
    alarms = Template.from_stack(stack).find_resources(
        "AWS::CloudWatch::Alarm", {"Properties": {"MetricName": "ApproximateAgeOfOldestMessage"}}
    )
    (alarm,) = alarms.values()
    assert alarm["Properties"]["Threshold"] == BUDGET_WITH_BACKOFF
    # AND without it, the fixed lease
    _, fixed = consumer_with(None)
    assert fixed.max_time_to_dead_letter.to_seconds() == 7 * 60


def test_a_retention_shorter_than_the_backoffs_budget_is_refused():
    # GIVEN 30 minutes of retention: enough for 7 x 60 s, not for 2,820 s of backoff
    consumer_with(None, retention_period=cdk.Duration.minutes(30))
    # WHEN the backoff is declared THEN the engine's retention rule refuses the pair
    with pytest.raises(SafeQueueConfigError) as refused:
        consumer_with(FailureBackoff(base=30, cap=900), retention_period=cdk.Duration.minutes(30))
    message = str(refused.value)
    assert RETENTION in message
    assert "failure backoff (base 30" in message
    assert "cap" in message


def test_check_reads_the_same_budget_from_the_synthesized_template(tmp_path: Path):
    # GIVEN the consumer's template, its retention then lowered below the backoff's budget
    stack, _ = consumer_with(FailureBackoff(base=30, cap=900))
    template = Template.from_stack(stack).to_json()
    (queue,) = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SQS::Queue" and "RedrivePolicy" in r["Properties"]
    ]
    queue["MessageRetentionPeriod"] = BUDGET_WITH_BACKOFF - 1
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template))
    # WHEN safe-queue check reads it (the budget from the function's SAFE_QUEUE_BACKOFF_*)
    findings = check_paths([path]).findings
    # THEN it gives the construct's verdict: the retention rule, naming the backoff
    (finding,) = [f for f in findings if f.rule_id == RETENTION]
    assert "failure backoff (base 30" in finding.message
    # AND at exactly the budget, nothing
    queue["MessageRetentionPeriod"] = BUDGET_WITH_BACKOFF
    path.write_text(json.dumps(template))
    assert [f for f in check_paths([path]).findings if f.rule_id == RETENTION] == []


def test_an_imported_function_or_a_wrong_type_is_refused_before_anything_is_added():
    stack = make_stack()
    imported = lambda_.Function.from_function_arn(
        stack, "Imported", "arn:aws:lambda:eu-west-1:123456789012:function:orders"
    )
    # GIVEN a function the app cannot set variables on
    with pytest.raises(SafeQueueConfigError) as refused:
        SafeQueueConsumer(
            stack,
            "Orders",
            function=imported,
            function_timeout=S(10),
            failure_backoff=FailureBackoff(base=30, cap=900),
        )
    assert "failure_backoff" in str(refused.value)
    assert "imported" in str(refused.value)
    # GIVEN a number instead of a FailureBackoff
    with pytest.raises(SafeQueueConfigError) as wrong:
        SafeQueueConsumer(stack, "Typed", function=make_function(stack), failure_backoff=30)
    assert "failure_backoff" in str(wrong.value)
    assert "int" in str(wrong.value)
    assert "FailureBackoff(base=30, cap=900)" in str(wrong.value)
    # THEN neither consumer joined the tree
    assert [c.node.id for c in stack.node.children if c.node.id in ("Orders", "Typed")] == []
