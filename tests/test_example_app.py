"""The example app: its template as a snapshot, and the derived values it must contain."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Template
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from example.stack import InvoiceRenderingStack

from .conftest import make_app


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    stack = InvoiceRenderingStack(make_app(), "InvoiceRendering")
    result: dict[str, Any] = Template.from_stack(stack).to_json()
    return result


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def test_template_matches_the_reviewed_snapshot(
    template: dict[str, Any], snapshot_json: SnapshotAssertion
):
    # Update deliberately with `scripts/test --snapshot-update`, and review the diff.
    assert template == snapshot_json


def test_template_is_identical_when_synthesized_again(template: dict[str, Any]):
    again = Template.from_stack(InvoiceRenderingStack(make_app(), "InvoiceRendering")).to_json()
    assert again == template


def test_example_derives_the_seed_fix(template: dict[str, Any]):
    # The seed incident's function: 180 s timeout, batch 5, 2 s window -> 6 x 180 + 2 s.
    resources = template["Resources"].values()
    (function,) = [r for r in resources if r["Type"] == "AWS::Lambda::Function"]
    assert function["Properties"]["Timeout"] == 180
    queues = [r["Properties"] for r in resources if r["Type"] == "AWS::SQS::Queue"]
    (source,) = [q for q in queues if "RedrivePolicy" in q]
    assert source["VisibilityTimeout"] == 6 * 180 + 2
    (mapping,) = [r for r in resources if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert mapping["Properties"]["BatchSize"] == 5
    assert mapping["Properties"]["MaximumBatchingWindowInSeconds"] == 2
    assert mapping["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
