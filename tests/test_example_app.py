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
    (function,) = [r for r in resources if r.get("Properties", {}).get("Timeout") == 180]
    assert function["Properties"]["Handler"] == "render_invoices.handler"
    queues = [r["Properties"] for r in resources if r["Type"] == "AWS::SQS::Queue"]
    (source,) = [q for q in queues if "RedrivePolicy" in q and "FifoQueue" not in q]
    assert source["VisibilityTimeout"] == 6 * 180 + 2
    mappings = [r for r in resources if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    (mapping,) = [m for m in mappings if "MaximumBatchingWindowInSeconds" in m["Properties"]]
    assert mapping["Properties"]["BatchSize"] == 5
    assert mapping["Properties"]["MaximumBatchingWindowInSeconds"] == 2
    assert mapping["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_example_fifo_consumer_has_its_own_function_and_fifo_queues(template: dict[str, Any]):
    # The ledger: a 30 s function on a FIFO queue -> 6 x 30 s, no window, batches of 10.
    resources = template["Resources"]

    def ids_of(kind: str) -> list[str]:
        return [logical_id for logical_id, r in resources.items() if r["Type"] == kind]

    (function_id,) = [
        f
        for f in ids_of("AWS::Lambda::Function")
        if resources[f]["Properties"]["Handler"] == "ledger_fifo.handler"
    ]
    assert resources[function_id]["Properties"]["Timeout"] == 30
    fifo = [q for q in ids_of("AWS::SQS::Queue") if resources[q]["Properties"].get("FifoQueue")]
    assert len(fifo) == 2  # the source queue and its dead-letter queue
    (source_id,) = [q for q in fifo if "RedrivePolicy" in resources[q]["Properties"]]
    assert resources[source_id]["Properties"]["VisibilityTimeout"] == 6 * 30
    (mapping,) = [
        resources[m]["Properties"]
        for m in ids_of("AWS::Lambda::EventSourceMapping")
        if resources[m]["Properties"]["FunctionName"] == {"Ref": function_id}
    ]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [source_id, "Arn"]}
    assert mapping["BatchSize"] == 10
    assert "MaximumBatchingWindowInSeconds" not in mapping
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
