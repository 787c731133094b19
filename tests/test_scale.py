"""Apps with many consumers: 120 over several stacks, and the 500-resource limit."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.apps import consumers_app
from safe_queue.template import check_paths

RESOURCES_PER_CONSUMER_WITH_FUNCTION = 12  # 2 queues, 2 queue policies, 3 alarms, 1 mapping,
# and the function's role, policy, function and log group (benchmarks/README.md)


@pytest.fixture(scope="module")
def large_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    # GIVEN 120 consumers, 40 (with their functions) to a stack, checked by SafeQueueChecks
    outdir = tmp_path_factory.mktemp("cdk.out")
    assembly = consumers_app(120, per_stack=40, checks=True, outdir=str(outdir)).synth()
    messages = {
        stack.stack_name: [m.entry.type for m in stack.messages] for stack in assembly.stacks
    }
    return outdir, messages


def templates(outdir: Path) -> dict[str, dict[str, Any]]:
    return {
        path.name.removesuffix(".template.json"): json.loads(path.read_text())
        for path in sorted(outdir.glob("*.template.json"))
    }


def test_a_120_consumer_app_synthesizes_in_three_stacks_under_the_limit(
    large_app: tuple[Path, dict[str, Any]],
):
    outdir, _ = large_app
    by_stack = templates(outdir)
    assert sorted(by_stack) == ["Consumers0", "Consumers1", "Consumers2"]
    for template in by_stack.values():
        assert len(template["Resources"]) == 40 * RESOURCES_PER_CONSUMER_WITH_FUNCTION
        assert len(template["Resources"]) <= 500


def test_every_consumer_is_wired_with_its_derived_visibility(
    large_app: tuple[Path, dict[str, Any]],
):
    outdir, _ = large_app
    resources = [r for t in templates(outdir).values() for r in t["Resources"].values()]
    kinds = Counter(r["Type"] for r in resources)
    assert kinds["AWS::Lambda::EventSourceMapping"] == 120
    visibilities = {
        r["Properties"]["VisibilityTimeout"]
        for r in resources
        if r["Type"] == "AWS::SQS::Queue" and "RedrivePolicy" in r["Properties"]
    }
    assert visibilities == {1082}
    assert kinds["AWS::SQS::Queue"] == 240


def test_the_large_app_passes_the_checks(large_app: tuple[Path, dict[str, Any]]):
    outdir, messages = large_app
    # the plugin ran at synth (the synth did not fail) over every mapping, with no finding
    report = check_paths([outdir])
    assert report.mappings_checked == 120
    assert report.findings == []
    assert set(messages) == {"Consumers0", "Consumers1", "Consumers2"}
    # CDK's own info (stack approaching its limit) is allowed; no errors, no warnings
    for types in messages.values():
        assert "aws:cdk:error" not in types
        assert "aws:cdk:warning" not in types


def test_a_stack_past_500_resources_fails_the_synth_with_cdks_error():
    # GIVEN 42 consumers with their functions in one stack: 42 x 12 = 504 resources
    app = consumers_app(42, per_stack=42)
    # WHEN it is synthesized  THEN CDK refuses it, before any deployment, with the counts
    with pytest.raises(RuntimeError) as raised:
        app.synth()
    message = str(raised.value)
    assert message.startswith("TooManyResourcesInStack: ")
    assert re.search(
        r"Number of resources in stack 'Consumers0': 504 is greater than allowed maximum of 500",
        message,
    )
    assert "AWS::SQS::Queue (84)" in message
