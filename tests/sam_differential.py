"""SAM's own translator beside ``safe-queue check``: the helpers and the template strategy.

Used by ``tests/test_template_sam_differential.py`` (every SAM fixture, and a Hypothesis
sample each run) and ``benchmarks/sam_differential.py`` (a fixed larger sample). The
property: the verdicts on a SAM template equal the verdicts on the CloudFormation that
``aws-sam-translator`` makes of it, on (mapping id, rule id, level).
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from safe_queue.template import check_paths

__all__ = ["sam_templates", "translate", "verdicts"]

Verdict = tuple[str, str, str]


def translate(body: dict[str, Any]) -> dict[str, Any]:
    """Return the CloudFormation that SAM makes of ``body``, offline.

    As ``tests``' toolchain notes say: the translator needs a region, and refuses a local
    ``CodeUri`` (the packaging step uploads it), so an ``s3://`` placeholder stands in. The
    parameters take their ``Default``, as CloudFormation passes them to the transform.
    """
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    session = _session()

    body = copy.deepcopy(body)
    for resource in body.get("Resources", {}).values():
        properties = resource.get("Properties") if isinstance(resource, dict) else None
        if resource.get("Type") == "AWS::Serverless::Function" and isinstance(properties, dict):
            code = properties.get("CodeUri")
            if isinstance(code, str) and not code.startswith("s3://"):
                properties["CodeUri"] = "s3://safe-queue-tests/code.zip"
    function_globals = body.get("Globals", {}).get("Function", {})
    if isinstance(function_globals.get("CodeUri"), str):
        function_globals["CodeUri"] = "s3://safe-queue-tests/code.zip"
    parameters = {
        name: declaration["Default"]
        for name, declaration in body.get("Parameters", {}).items()
        if isinstance(declaration, dict) and "Default" in declaration
    }
    translator = Translator({}, Parser(), boto_session=session)
    translated: dict[str, Any] = translator.translate(body, parameters)
    return translated


@functools.cache
def _session() -> Any:
    """Set the translator up once: a region, quiet logs, and its constant policy templates.

    Two costs of each ``translate`` call depend on no template: a boto3 session (passed in
    instead) and the validation of SAM's bundled policy templates against their schema
    (about 0.1 s each, so the plugin that holds them is built once and shared).
    """
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    logging.getLogger("samtranslator").setLevel(logging.ERROR)  # "unpublished metrics"
    import boto3
    from samtranslator.translator import translator

    translator.make_policy_template_for_function_plugin = functools.cache(  # type: ignore[method-assign]
        translator.make_policy_template_for_function_plugin
    )
    return boto3.session.Session(region_name=os.environ["AWS_DEFAULT_REGION"])


def verdicts(*bodies: dict[str, Any]) -> tuple[int, set[Verdict]]:
    """Check ``bodies`` as one deployment: mappings counted, and (mapping, rule, level)."""
    with tempfile.TemporaryDirectory() as directory:
        paths = []
        for index, body in enumerate(bodies):
            path = Path(directory, f"t{index}.json")
            path.write_text(json.dumps(body))
            paths.append(path)
        report = check_paths(paths)
    found = {(f.resource, f.rule_id, f.level.value) for f in report.findings}
    return report.mappings_checked, found


# --- the strategy ---------------------------------------------------------------------------

_SMALL = st.integers(min_value=1, max_value=10)


@st.composite
def _queue(draw: st.DrawFn, name: str, dead_letter: str | None, fifo: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    if fifo:
        properties["FifoQueue"] = True
    visibility = draw(st.one_of(st.none(), st.sampled_from([10, 30, 60, 180, 365, 1110, 5400])))
    if visibility is not None:
        properties["VisibilityTimeout"] = visibility
    retention = draw(st.one_of(st.none(), st.sampled_from([60, 3600, 345_600, 1_209_600])))
    if retention is not None:
        properties["MessageRetentionPeriod"] = retention
    if dead_letter is not None:
        properties["RedrivePolicy"] = {
            "deadLetterTargetArn": {"Fn::GetAtt": [dead_letter, "Arn"]},
            "maxReceiveCount": draw(st.sampled_from([1, 3, 5, 10])),
        }
    queue: dict[str, Any] = {"Type": "AWS::SQS::Queue", "Properties": properties}
    if draw(st.booleans()) and draw(st.booleans()):
        queue["Condition"] = "IsProd"
    return queue


@st.composite
def _sqs_event(draw: st.DrawFn, queues: list[tuple[str, bool]]) -> dict[str, Any]:
    name, fifo = draw(st.sampled_from(queues))
    properties: dict[str, Any] = {"Queue": {"Fn::GetAtt": [name, "Arn"]}}
    batch = draw(st.one_of(st.none(), st.sampled_from([1, 5, 10] if fifo else [1, 5, 10, 100])))
    if batch is not None:
        properties["BatchSize"] = batch
    if not fifo and draw(st.booleans()):
        properties["MaximumBatchingWindowInSeconds"] = draw(st.sampled_from([0, 1, 2, 30]))
    if draw(st.booleans()):
        properties["FunctionResponseTypes"] = ["ReportBatchItemFailures"]
    if draw(st.booleans()) and draw(st.booleans()):
        properties["ScalingConfig"] = {"MaximumConcurrency": draw(st.sampled_from([2, 5, 50]))}
    if draw(st.booleans()) and draw(st.booleans()):
        properties["FilterCriteria"] = {"Filters": [{"Pattern": '{"body": {"kind": ["a"]}}'}]}
    if draw(st.booleans()) and draw(st.booleans()):
        properties["Enabled"] = draw(st.booleans())
    if draw(st.booleans()) and draw(st.booleans()):
        properties["StartingPosition"] = "LATEST"  # SAM copies it onto the SQS mapping
    return {"Type": "SQS", "Properties": properties}


@st.composite
def _sns_event(
    draw: st.DrawFn, topics: list[str], queues: list[tuple[str, bool]]
) -> dict[str, Any]:
    properties: dict[str, Any] = {"Topic": {"Ref": draw(st.sampled_from(topics))}}
    kind = draw(st.sampled_from(["true", "false", "empty", "existing", "absent"]))
    if kind == "true":
        properties["SqsSubscription"] = True
    elif kind == "false":
        properties["SqsSubscription"] = False
    elif kind == "empty":
        properties["SqsSubscription"] = {}
    elif kind == "existing":
        name, _ = draw(st.sampled_from(queues))
        subscription: dict[str, Any] = {
            "QueueArn": {"Fn::GetAtt": [name, "Arn"]},
            "QueueUrl": {"Ref": name},
        }
        if draw(st.booleans()):
            subscription["BatchSize"] = draw(st.sampled_from([1, 5, 10]))
        properties["SqsSubscription"] = subscription
    return {"Type": "SNS", "Properties": properties}


@st.composite
def sam_templates(draw: st.DrawFn) -> dict[str, Any]:
    """SAM templates: functions, SQS/SNS/Kinesis events, Globals, queues, DLQs, conditions."""
    resources: dict[str, Any] = {}
    queues: list[tuple[str, bool]] = []
    for index in range(draw(st.integers(min_value=1, max_value=3))):
        fifo = draw(st.booleans())
        dead_letter = None
        if draw(st.booleans()):
            dead_letter = f"Dlq{index}"
            resources[dead_letter] = draw(_queue(dead_letter, None, fifo))
        name = f"Queue{index}"
        resources[name] = draw(_queue(name, dead_letter, fifo))
        queues.append((name, fifo))
    topics = []
    for index in range(draw(st.integers(min_value=0, max_value=2))):
        topic: dict[str, Any] = {"Type": "AWS::SNS::Topic"}
        if draw(st.booleans()):
            topic["Properties"] = {"FifoTopic": True, "TopicName": f"topic{index}.fifo"}
        resources[f"Topic{index}"] = topic
        topics.append(f"Topic{index}")
    resources["Stream"] = {"Type": "AWS::Kinesis::Stream", "Properties": {"ShardCount": 1}}
    for index in range(draw(st.integers(min_value=1, max_value=3))):
        properties: dict[str, Any] = {
            "Runtime": "python3.13",
            "Handler": "index.handler",
            "CodeUri": "./src",
        }
        timeout = draw(st.one_of(st.none(), st.sampled_from([3, 30, 60, 180, 900])))
        if timeout is not None:
            properties["Timeout"] = timeout
        if draw(st.booleans()) and draw(st.booleans()):
            properties["ReservedConcurrentExecutions"] = draw(st.sampled_from([1, 5, 100]))
        if draw(st.booleans()) and draw(st.booleans()):
            properties["AutoPublishAlias"] = "live"
        events: dict[str, Any] = {}
        for number in range(draw(st.integers(min_value=0, max_value=3))):
            kind = draw(st.sampled_from(["SQS", "SQS", "SNS", "Kinesis"]))
            if kind == "SNS" and not topics:
                kind = "SQS"
            if kind == "SQS":
                events[f"Sqs{number}"] = draw(_sqs_event(queues))
            elif kind == "SNS":
                events[f"Sns{number}"] = draw(_sns_event(topics, queues))
            else:
                events[f"Records{number}"] = {
                    "Type": "Kinesis",
                    "Properties": {"Stream": {"Fn::GetAtt": ["Stream", "Arn"]}},
                }
                events[f"Records{number}"]["Properties"]["StartingPosition"] = "LATEST"
        if events:
            properties["Events"] = events
        function: dict[str, Any] = {"Type": "AWS::Serverless::Function", "Properties": properties}
        if draw(st.booleans()) and draw(st.booleans()):
            function["Condition"] = "IsProd"
        resources[f"Fn{index}"] = function
    body: dict[str, Any] = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Parameters": {
            "Env": {"Type": "String", "Default": draw(st.sampled_from(["dev", "prod"]))}
        },
        "Conditions": {"IsProd": {"Fn::Equals": [{"Ref": "Env"}, "prod"]}},
        "Resources": resources,
    }
    function_globals: dict[str, Any] = {}
    if draw(st.booleans()):
        function_globals["Timeout"] = draw(st.sampled_from([3, 60, 200]))
    if draw(st.booleans()) and draw(st.booleans()):
        function_globals["ReservedConcurrentExecutions"] = draw(st.sampled_from([2, 10]))
    if function_globals:
        body["Globals"] = {"Function": function_globals}
    return body
