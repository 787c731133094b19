"""Hypothesis: Terraform states agree with CloudFormation on any settings; no input crashes.

The states are built from the resources of tests/fixtures/terraform/equivalence/state.json
(what terraform 1.11 and the AWS provider 5.100 wrote after applying against moto), with
their values replaced, so their shape is Terraform's own.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from safe_queue.engine import evaluate, evaluate_all
from safe_queue.template._deployment import Deployment
from safe_queue.template._facts import build_mapping, find_mappings
from safe_queue.template._load import TemplateFile
from safe_queue.terraform._facts import build_mappings
from safe_queue.terraform._load import TerraformError, parse

from .test_terraform_equivalence import cloudformation

FIXTURES = Path(__file__).parent / "fixtures" / "terraform"
STATE = json.loads((FIXTURES / "equivalence" / "state.json").read_text())
LINKS_PLAN = json.loads((FIXTURES / "links" / "plan.json").read_text())
ACCOUNT = "arn:aws:sqs:eu-west-1:123456789012"


def _template_resource(address: str) -> dict[str, Any]:
    (resource,) = [
        r for r in STATE["values"]["root_module"]["resources"] if r["address"] == address
    ]
    return resource


QUEUE = _template_resource('aws_sqs_queue.source["compliant"]')
FUNCTION = _template_resource('aws_lambda_function.consumer["compliant"]')
MAPPING = _template_resource('aws_lambda_event_source_mapping.consumer["compliant"]')

# Settings in and beyond AWS's ranges (the limit rules), names SQS accepts and refuses,
# and mappings that share one function (the rule over all SQS mappings of a function).
NAME_ENDINGS = st.sampled_from(["", ".fifo", " bad", "x" * 80, "-ok_1"])
CONSUMER = st.fixed_dictionaries(
    {
        "visibility": st.integers(0, 45_000),
        "timeout": st.integers(1, 1_000),
    },
    optional={
        "retention": st.integers(30, 1_300_000),
        "dlq_retention": st.integers(30, 1_300_000),
        "max_receive_count": st.integers(0, 1_100),
        "batch_size": st.integers(1, 11_000),
        "window": st.integers(0, 400),
        "report": st.booleans(),
        "reserved": st.integers(0, 1_000),
        "max_concurrency": st.integers(0, 1_100),
        "filter": st.just('{"body":{"kind":["a"]}}'),
        "fifo": st.booleans(),
        "dedup": st.booleans(),
        "name": NAME_ENDINGS,
        "dlq_name": NAME_ENDINGS,
        "pollers": st.tuples(st.integers(0, 2_100), st.integers(0, 2_100)),
        "shares": st.booleans(),
    },
).map(lambda c: c if "dlq_retention" not in c else {"max_receive_count": 5, **c})


def consumers_of(drawn: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Name endings become names (unique per consumer); ``shares`` invokes a's function."""
    consumers = {}
    first = min(drawn)
    for key, drawn_consumer in drawn.items():
        consumer = dict(drawn_consumer)
        for name in ("name", "dlq_name"):
            if name in consumer:
                consumer[name] = f"{key}{'-dlq' if name == 'dlq_name' else ''}{consumer[name]}"
        if consumer.pop("shares", False):
            consumer["function"] = first
        consumers[key] = consumer
    return consumers


def _resource(template: dict[str, Any], kind: str, key: str, values: dict[str, Any]) -> Any:
    resource = copy.deepcopy(template)
    resource["address"] = f'{resource["type"]}.{kind}["{key}"]'
    resource["name"] = kind
    resource["index"] = key
    resource["values"].update(values)
    return resource


def terraform_state(consumers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A state with the consumers, in the shape of the fixture's."""
    resources = []
    for key, c in consumers.items():
        suffix = ".fifo" if c.get("fifo") else ""
        # no name: the provider generates a valid one (with .fifo for a FIFO queue)
        name = c.get("name", f"{key}{suffix}")
        queue = {
            "name": name,
            "arn": f"{ACCOUNT}:{name}",
            "fifo_queue": bool(c.get("fifo")),
            "content_based_deduplication": c.get("dedup", False),
            "visibility_timeout_seconds": c["visibility"],
            "message_retention_seconds": c.get("retention", 345_600),
            "redrive_policy": "",
        }
        if "dlq_retention" in c:
            dlq_name = c.get("dlq_name", f"{key}-dlq{suffix}")
            resources.append(
                _resource(
                    QUEUE,
                    "dlq",
                    key,
                    {
                        "name": dlq_name,
                        "arn": f"{ACCOUNT}:{dlq_name}",
                        "fifo_queue": bool(c.get("fifo")),
                        "content_based_deduplication": False,
                        "message_retention_seconds": c["dlq_retention"],
                        "redrive_policy": "",
                    },
                )
            )
            queue["redrive_policy"] = json.dumps(
                {
                    "deadLetterTargetArn": f"{ACCOUNT}:{dlq_name}",
                    "maxReceiveCount": c["max_receive_count"],
                }
            )
        resources.append(_resource(QUEUE, "source", key, queue))
        function_arn = f"arn:aws:lambda:eu-west-1:123456789012:function:{key}"
        invoked = f"arn:aws:lambda:eu-west-1:123456789012:function:{c.get('function', key)}"
        resources.append(
            _resource(
                FUNCTION,
                "consumer",
                key,
                {
                    "function_name": key,
                    "arn": function_arn,
                    "qualified_arn": f"{function_arn}:$LATEST",
                    "timeout": c["timeout"],
                    "reserved_concurrent_executions": c.get("reserved", -1),
                },
            )
        )
        resources.append(
            _resource(
                MAPPING,
                "consumer",
                key,
                {
                    "event_source_arn": queue["arn"],
                    "function_name": invoked,
                    "function_arn": invoked,
                    "batch_size": c.get("batch_size"),
                    "maximum_batching_window_in_seconds": c.get("window"),
                    "function_response_types": (
                        ["ReportBatchItemFailures"] if c.get("report") else []
                    ),
                    "scaling_config": (
                        [{"maximum_concurrency": c["max_concurrency"]}]
                        if "max_concurrency" in c
                        else []
                    ),
                    "filter_criteria": (
                        [{"filter": [{"pattern": c["filter"]}]}] if "filter" in c else []
                    ),
                    "provisioned_poller_config": (
                        [{"minimum_pollers": c["pollers"][0], "maximum_pollers": c["pollers"][1]}]
                        if "pollers" in c
                        else []
                    ),
                },
            )
        )
    return {
        "format_version": STATE["format_version"],
        "terraform_version": STATE["terraform_version"],
        "values": {"root_module": {"resources": resources}},
    }


def template_verdicts(consumers: dict[str, dict[str, Any]]) -> dict[str, list[Any]]:
    template = TemplateFile("template.json", cloudformation(consumers))
    deployment = Deployment([template], {})
    keys, facts = [], []
    for source in find_mappings(template):
        mapping = build_mapping(deployment, source)
        assert mapping is not None
        keys.append(next(k for k in consumers if source.logical_id == f"{k.upper()}Mapping"))
        facts.append(mapping.facts)
    return {
        key: sorted((f.rule_id, f.level.value) for f in found)
        for key, found in zip(keys, evaluate_all(facts), strict=True)
    }


def terraform_verdicts(consumers: dict[str, dict[str, Any]]) -> dict[str, list[Any]]:
    checked = build_mappings([parse("state.json", terraform_state(consumers))])
    verdicts = evaluate_all([mapping.facts for mapping in checked])
    return {
        mapping.address.split('"')[1]: sorted((f.rule_id, f.level.value) for f in found)
        for mapping, found in zip(checked, verdicts, strict=True)
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), CONSUMER, min_size=1, max_size=3))
def test_any_consumer_gets_the_same_verdict_from_a_terraform_state_and_a_template(
    drawn: dict[str, dict[str, Any]],
):
    # GIVEN consumers with any settings, in AWS's ranges or not, some sharing a function,
    # as a Terraform state and as a template
    consumers = consumers_of(drawn)
    # WHEN both adapters build facts and the engine evaluates them all
    # THEN every mapping has the same (rule id, level)s
    assert terraform_verdicts(consumers) == template_verdicts(consumers)


JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-2, 2_000),
        st.text(max_size=8),
        st.sampled_from(["arn:aws:sqs:r:1:q", "aws_sqs_queue.a", "each.key", "var.x", "[0]"]),
    ),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


LINKS_PATHS = _paths(LINKS_PLAN)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(LINKS_PATHS), JSON), min_size=1, max_size=4))
def test_any_value_anywhere_in_a_plan_gives_findings_or_a_clear_error(
    edits: list[tuple[tuple[Any, ...], Any]],
):
    # GIVEN the links plan with values replaced anywhere (keys, lists, references, values)
    body = copy.deepcopy(LINKS_PLAN)
    for path, value in edits:
        if not path:
            continue
        node = body
        try:
            for step in path[:-1]:
                node = node[step]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    # WHEN it is read and every mapping evaluated THEN nothing but TerraformError escapes
    errors: list[str] = []
    try:
        for mapping in build_mappings([parse("plan.json", body)]):
            assert evaluate(mapping.facts) is not None
    except TerraformError as error:
        errors.append(str(error))
    assert all(message.startswith("plan.json: ") for message in errors)
