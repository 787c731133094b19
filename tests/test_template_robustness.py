"""Any template content gives facts or an Unknown, never a crash (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from safe_queue.engine import evaluate
from safe_queue.template._deployment import Deployment
from safe_queue.template._facts import build_mapping, find_mappings
from safe_queue.template._load import TemplateFile

NAMES = st.sampled_from(
    [
        "Queue",
        "Dlq",
        "Fn",
        "Alias",
        "Version",
        "Param",
        "Cond",
        "Nope",
        "AWS::Region",
        "AWS::NoValue",
    ]
)
INTRINSICS = [
    "Ref",
    "Fn::GetAtt",
    "Fn::Sub",
    "Fn::Join",
    "Fn::Select",
    "Fn::Split",
    "Fn::If",
    "Fn::ImportValue",
    "Fn::FindInMap",
    "Fn::Base64",
    "Fn::Equals",
    "Condition",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 2_000_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    NAMES,
    st.sampled_from(
        [
            "Queue.Arn",
            "${Queue.Arn}",
            "arn:aws:sqs:r:1:q",
            "arn:aws:lambda:r:1:function:f",
            "60",
            "true",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(INTRINSICS), children, min_size=1, max_size=1),
        st.dictionaries(st.text(max_size=8), children, max_size=3),
    ),
    max_leaves=8,
)


def body(
    queue: dict[str, Any], function: dict[str, Any], mapping: dict[str, Any], redrive: Any
) -> dict[str, Any]:
    return {
        "Transform": "AWS::Serverless-2016-10-31",
        "Parameters": {"Param": {"Type": "Number"}},
        "Conditions": {"Cond": {"Fn::Equals": ["a", {"Ref": "Param"}]}},
        "Mappings": {"M": {"K": {"V": 1}}},
        "Resources": {
            "Dlq": {"Type": "AWS::SQS::Queue"},
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {**queue, "RedrivePolicy": redrive}},
            "Fn": {"Type": "AWS::Lambda::Function", "Properties": function},
            "Version": {
                "Type": "AWS::Lambda::Version",
                "Properties": {"FunctionName": function.get("FunctionName")},
            },
            "Alias": {
                "Type": "AWS::Lambda::Alias",
                "Properties": {"FunctionName": {"Ref": "Version"}},
            },
            "Mapping": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": mapping},
            "SamFn": {
                "Type": "AWS::Serverless::Function",
                "Properties": {"Events": {"E": {"Type": "SQS", "Properties": mapping}}},
            },
        },
        "Outputs": {
            "O": {
                "Value": mapping.get("EventSourceArn"),
                "Export": {"Name": queue.get("QueueName")},
            }
        },
    }


def properties(*keys: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=dict.fromkeys(keys, VALUES))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    queue=properties("VisibilityTimeout", "MessageRetentionPeriod", "FifoQueue", "QueueName"),
    function=properties("Timeout", "ReservedConcurrentExecutions", "FunctionName"),
    mapping=properties(
        "EventSourceArn",
        "FunctionName",
        "BatchSize",
        "MaximumBatchingWindowInSeconds",
        "FunctionResponseTypes",
        "ScalingConfig",
        "FilterCriteria",
        "Enabled",
    ),
    redrive=VALUES,
)
def test_any_content_gives_facts_never_a_crash(
    queue: dict[str, Any], function: dict[str, Any], mapping: dict[str, Any], redrive: Any
) -> None:
    template = TemplateFile("t.yaml", body(queue, function, mapping, redrive))
    deployment = Deployment([template])
    for source in list(find_mappings(template)):
        checked = build_mapping(deployment, source)
        if checked is not None:
            for finding in evaluate(checked.facts):
                assert finding.rule_id.startswith("safe-queue:")


def test_a_condition_that_is_not_a_name_is_unknown() -> None:
    template = TemplateFile(
        "t.yaml",
        {
            "Resources": {
                "Queue": {
                    "Type": "AWS::SQS::Queue",
                    "Properties": {"VisibilityTimeout": {"Fn::If": [["x"], 1, 2]}},
                },
                "Fn": {"Type": "AWS::Lambda::Function"},
                "Mapping": {
                    "Type": "AWS::Lambda::EventSourceMapping",
                    "Properties": {
                        "EventSourceArn": {"Fn::GetAtt": ["Queue", "Arn"]},
                        "FunctionName": {"Ref": "Fn"},
                    },
                },
            }
        },
    )
    (source,) = find_mappings(template)
    checked = build_mapping(Deployment([template]), source)
    assert checked is not None
    assert "is not a name" in str(checked.facts.queue)
