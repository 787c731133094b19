"""Every rule's own examples, through every surface: one verdict, with the same rule id.

Each rule declares a compliant and a non-compliant example (``Rule.compliant`` /
``Rule.non_compliant``, written as CloudFormation by ``Example.template()``). Here each
surface is given each example, and must report the rule on every mapping of the
non-compliant one and nothing at all on the compliant one:

- ``safe-queue check`` as a user runs it (one subprocess for all example templates);
- the CDK plugin ``SafeQueueChecks`` (its ``validate``, as CDK calls it after synthesis);
- ``SafeQueueConsumer``, for the examples its props can express: an error is refused at
  construction with the rule id, a warning is an annotation on the consumer with the id,
  and drift is refused by the consumer's own synth-time validation.

The engine's own verdicts on the examples are in test_engine.py; the audit, the hook,
cfn-lint and Terraform have their own example tests beside their adapters.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_

from safe_queue import SafeQueueChecks, SafeQueueConfigError, SafeQueueConsumer
from safe_queue.engine import RULES, FunctionFacts, MappingFacts, QueueFacts, RedriveFacts, Rule

from .conftest import ROOT, make_app, make_function

S = cdk.Duration.seconds
CHECKED = [entry for entry in RULES if entry.check is not None]
KINDS = ("compliant", "non_compliant")
CASES = [(entry, kind) for entry in CHECKED for kind in KINDS]


def example_of(entry: Rule, kind: str) -> Any:
    return entry.compliant if kind == "compliant" else entry.non_compliant


def case_id(case: tuple[Rule, str]) -> str:
    return f"{case[0].name}-{case[1]}"


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every example as a CloudFormation template file, by case id."""
    directory = tmp_path_factory.mktemp("examples")
    files = {}
    for case in CASES:
        path = directory / f"{case_id(case)}.json"
        path.write_text(json.dumps(example_of(*case).template(), indent=1))
        files[case_id(case)] = path
    return files


def assert_verdict(entry: Rule, kind: str, found: dict[str, set[str]], mappings: int) -> None:
    """``found``: the rule ids reported per mapping (logical id / construct path)."""
    if kind == "compliant":
        assert found == {}, f"{entry.id}: compliant example gave {found}"
        return
    assert len(found) == mappings, f"{entry.id}: {found}"
    for mapping, ids in found.items():
        assert entry.id in ids, f"{entry.id} missing on {mapping}: {ids}"


# --- safe-queue check, as a subprocess over every example at once ---------------------------


@pytest.fixture(scope="module")
def check_output(templates: dict[str, Path]) -> dict[str, Any]:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "safe_queue.cli",
            "check",
            "--format",
            "json",
            "--fail-on",
            "never",
            *map(str, templates.values()),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    report: dict[str, Any] = json.loads(completed.stdout)
    return report


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_check_gives_each_example_its_rules_verdict(
    case: tuple[Rule, str], templates: dict[str, Path], check_output: dict[str, Any]
) -> None:
    # GIVEN the example as a template  WHEN `safe-queue check` reads it with all the others
    entry, kind = case
    path = str(templates[case_id(case)])
    found: dict[str, set[str]] = {}
    for finding in check_output["findings"]:
        if finding["template"] == path:
            found.setdefault(finding["resource"], set()).add(finding["rule_id"])
    # THEN the non-compliant one breaks the rule on every mapping, the compliant one nothing
    assert_verdict(entry, kind, found, len(example_of(entry, kind).mappings))


def test_check_counted_every_examples_mapping(
    check_output: dict[str, Any], templates: dict[str, Path]
) -> None:
    expected = sum(len(example_of(*case).mappings) for case in CASES)
    assert check_output["summary"]["mappings_checked"] == expected
    assert check_output["summary"]["sources"] == [str(path) for path in templates.values()]


# --- the CDK plugin, called as CDK calls it after synthesis --------------------------------


class _Context:
    """What the plugin reads of CDK's IPolicyValidationContext: the template paths."""

    def __init__(self, paths: list[str]) -> None:
        self.template_paths = paths


@pytest.fixture(scope="module")
def plugin_report(templates: dict[str, Path]) -> Any:
    return SafeQueueChecks().validate(_Context([str(path) for path in templates.values()]))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_plugin_gives_each_example_its_rules_verdict(
    case: tuple[Rule, str], templates: dict[str, Path], plugin_report: Any
) -> None:
    entry, kind = case
    path = str(templates[case_id(case)])
    found: dict[str, set[str]] = {}
    for violation in plugin_report.violations:
        for resource in violation.violating_resources:
            if resource.template_path == path:
                found.setdefault(resource.resource_logical_id, set()).add(violation.rule_name)
    assert_verdict(entry, kind, found, len(example_of(entry, kind).mappings))


def test_the_plugin_fails_exactly_when_an_example_has_an_error(plugin_report: Any) -> None:
    errors = {v.rule_name for v in plugin_report.violations if v.severity == "error"}
    assert plugin_report.success is False
    assert errors == {entry.id for entry in CHECKED if entry.level.value == "error"}


# --- SafeQueueConsumer, for what its props can express --------------------------------------

NOT_A_PROP = {
    "safe-queue:no-dead-letter-queue": "the consumer always creates a dead-letter queue",
    "safe-queue:dead-letter-queue-type-mismatch": "both of the consumer's queues have one type",
    "safe-queue:provisioned-pollers-out-of-range": "the consumer has no provisioned mode",
    "safe-queue:provisioned-mode-with-max-concurrency": "the consumer has no provisioned mode",
    "safe-queue:max-concurrency-sum-above-reserved-concurrency": "one consumer is one mapping;"
    " two consumers of a function are judged by the plugin (above)",
}


def consumer_props(facts: MappingFacts) -> dict[str, Any]:
    """The SafeQueueConsumer props (and function settings) that synthesize ``facts``."""
    queue, function = facts.queue, facts.function
    assert isinstance(queue, QueueFacts)
    assert isinstance(function, FunctionFacts)
    assert isinstance(queue.redrive, RedriveFacts)
    dead_letter = queue.redrive.dead_letter_queue
    assert isinstance(dead_letter, QueueFacts)
    assert dead_letter.fifo == queue.fifo
    assert facts.provisioned is None
    assert not function.capacity_provider
    filters = [
        lambda_.FilterCriteria.filter({"body": {"kind": [lambda_.FilterRule.is_equal("x")]}})
    ]
    return {
        "visibility_timeout": S(queue.visibility_timeout),
        "retention_period": None if queue.retention_period is None else S(queue.retention_period),
        "fifo": bool(queue.fifo),
        "content_based_deduplication": bool(queue.content_based_deduplication),
        "queue_name": queue.queue_name,
        "max_receive_count": queue.redrive.max_receive_count,
        "dead_letter_retention_period": S(dead_letter.retention_period),
        "batch_size": facts.batch_size,
        "max_batching_window": S(facts.batching_window) if facts.batching_window else None,
        "report_batch_item_failures": bool(facts.report_batch_item_failures),
        "max_concurrency": facts.max_concurrency,
        "filters": filters if facts.has_filters else None,
    }


def build_consumer(stack: cdk.Stack, facts: MappingFacts) -> SafeQueueConsumer:
    function = facts.function
    assert isinstance(function, FunctionFacts)
    timeout = facts.derived_function_timeout or function.timeout
    if timeout is not None and timeout > 900:  # a Function refuses it: an imported one
        fn: lambda_.IFunction = lambda_.Function.from_function_arn(
            stack, "Fn", "arn:aws:lambda:eu-west-1:123456789012:function:consumer"
        )
        extra: dict[str, Any] = {"function_timeout": S(timeout)}
    else:
        fn = make_function(stack, "Fn", S(timeout) if timeout is not None else None)
        extra = {}
        if function.reserved_concurrency is not None:
            cfn = fn.node.default_child
            assert isinstance(cfn, lambda_.CfnFunction)
            cfn.reserved_concurrent_executions = function.reserved_concurrency
    consumer = SafeQueueConsumer(stack, "Consumer", function=fn, **consumer_props(facts), **extra)
    if facts.derived_function_timeout is not None and isinstance(fn, lambda_.Function):
        cfn = fn.node.default_child
        assert isinstance(cfn, lambda_.CfnFunction)
        cfn.timeout = function.timeout  # changed after the consumer derived its queue
    return consumer


# What the consumer derives itself, so its props cannot leave the rule broken.
MENDED = {
    "safe-queue:reserved-concurrency-without-max-concurrency": "the consumer sets"
    " MaximumConcurrency to the function's reserved concurrency (when within 2..1,000)",
}
EXPRESSIBLE = [case for case in CASES if case[0].id not in NOT_A_PROP]


@pytest.fixture(scope="module")
def consumer_app() -> cdk.App:
    return make_app()


@pytest.mark.parametrize("case", EXPRESSIBLE, ids=case_id)
def test_the_consumer_gives_each_example_its_rules_verdict(
    case: tuple[Rule, str], consumer_app: cdk.App
) -> None:
    # GIVEN the example as SafeQueueConsumer props, in a stack of its own
    entry, kind = case
    (facts,) = example_of(entry, kind).mappings
    stack = cdk.Stack(consumer_app, case_id(case).replace("_", "-"))
    # WHEN the consumer is built, and its stack validated as synth does
    try:
        consumer = build_consumer(stack, facts)
    except SafeQueueConfigError as refused:
        found = {"refused": set(_ids(str(refused)))}
    else:
        warnings = [
            entry_.data
            for entry_ in consumer.node.metadata
            if entry_.type in ("aws:cdk:warning", "aws:cdk:error")
        ]
        found = {"warned": set(_ids(" ".join(map(str, warnings))))}
        # as synth does: every construct of the stack (the drift check is on a record
        # under the function)
        invalid = [error for c in stack.node.find_all() for error in c.node.validate()]
        found["invalid"] = set(_ids(" ".join(invalid)))
        found = {key: ids for key, ids in found.items() if ids}
    # THEN errors are refused, warnings annotated, drift invalid: each with the rule's id
    if kind == "compliant":
        assert found == {}
        return
    if entry.id in MENDED:  # ... or the consumer mended it: nothing to report
        assert found == {}
        assert consumer.max_concurrency_from_reserved_concurrency
        return
    assert any(entry.id in ids for ids in found.values()), found
    if entry.level.value == "error":
        assert entry.id in found.get("refused", set()) | found.get("invalid", set())


def _ids(text: str) -> list[str]:
    return [entry.id for entry in RULES if entry.id in text]


def why_not(example: Any) -> str | None:
    """Why the consumer's props cannot express ``example``; None when they can."""
    if len(example.mappings) > 1:
        return "several mappings"
    try:
        consumer_props(example.mappings[0])
    except AssertionError:
        return "a setting without a prop"
    return None


def test_what_the_consumer_cannot_express_is_listed_with_its_reason() -> None:
    # GIVEN every rule's non-compliant example  WHEN turned into consumer props
    unexpressible = {entry.id for entry in CHECKED if why_not(entry.non_compliant)}
    # THEN exactly the listed rules cannot be expressed (each with its reason above)
    assert unexpressible == set(NOT_A_PROP)
    assert all(why_not(entry.compliant) is None for entry in CHECKED if entry.id not in NOT_A_PROP)
