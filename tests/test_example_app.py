"""The example app: its template as a snapshot, and the derived values it must contain."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from example.stack import InvoiceRenderingStack

from .conftest import EXAMPLE_BACKOFF_ENV, make_app

_ASSET_KEY = re.compile(r"^[0-9a-f]{64}\.zip$")


@pytest.fixture(scope="module")
def synthesized() -> tuple[dict[str, Any], Path]:
    """The example stack's template and its cloud assembly's directory (one synth)."""
    app = make_app()
    InvoiceRenderingStack(app, "InvoiceRendering")
    assembly = app.synth()
    result: dict[str, Any] = assembly.get_stack_by_name("InvoiceRendering").template
    return result, Path(assembly.directory)


@pytest.fixture(scope="module")
def template(synthesized: tuple[dict[str, Any], Path]) -> dict[str, Any]:
    return synthesized[0]


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def _asset_keys(template: dict[str, Any]) -> dict[str, str]:
    """The S3 key of each function's code asset, by logical id."""
    return {
        logical_id: resource["Properties"]["Code"]["S3Key"]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Function" and "S3Key" in resource["Properties"]["Code"]
    }


def test_template_matches_the_reviewed_snapshot(
    template: dict[str, Any], snapshot_json: SnapshotAssertion
):
    # The handlers' asset hash follows the bundled safe_queue modules, so it changes with
    # any edit of the package: the snapshot holds a placeholder (the asset's own tests
    # are below). Update deliberately with `scripts/test --snapshot-update`, and review.
    text = json.dumps(template)
    for key in set(_asset_keys(template).values()):
        assert _ASSET_KEY.match(key), key
        text = text.replace(key, "ASSET-HASH.zip")
    assert json.loads(text) == snapshot_json


def test_both_handlers_share_one_asset_with_the_runtime_helpers_and_no_cdk(
    synthesized: tuple[dict[str, Any], Path],
):
    # GIVEN the example's two functions and their code asset in the cloud assembly
    template, assembly = synthesized
    keys = set(_asset_keys(template).values())
    assert len(keys) == 1
    asset = assembly / f"asset.{keys.pop().removesuffix('.zip')}"
    files = {p.relative_to(asset).as_posix() for p in asset.rglob("*") if p.is_file()}
    # THEN it holds the handlers at its root and safe_queue's CDK-free modules beside them
    assert {"render_invoices.py", "ledger_fifo.py"} <= files
    assert "safe_queue/runtime/backoff.py" in files
    assert "safe_queue/engine/budget.py" in files
    assert not [f for f in files if f.startswith(("safe_queue/cdk/", "safe_queue/template/"))]
    assert not [f for f in files if "__pycache__" in f]
    # AND the handler imports from the asset alone, with aws-cdk-lib unimportable
    env = {**os.environ, **EXAMPLE_BACKOFF_ENV, "PYTHONPATH": str(asset)}
    probe = (
        "import sys; sys.modules['aws_cdk'] = None; sys.modules['yaml'] = None\n"
        "import render_invoices, ledger_fifo, safe_queue.runtime\n"
        "print(safe_queue.runtime.__file__); print(render_invoices.backoff)"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=asset, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    where, backoff = run.stdout.splitlines()
    assert Path(where).is_relative_to(asset)
    assert backoff == "FailureBackoff(base=30, cap=900, jitter=True)"


def test_the_invoice_function_gets_the_backoff_the_consumer_counts(template: dict[str, Any]):
    # GIVEN the invoice consumer, declared with failure_backoff=FailureBackoff(base=30, cap=900)
    resources = template["Resources"].values()
    (function,) = [r for r in resources if r.get("Properties", {}).get("Timeout") == 180]
    variables = function["Properties"]["Environment"]["Variables"]
    # THEN its function carries the settings FailureBackoff.from_env() reads
    assert {k: variables[k] for k in EXAMPLE_BACKOFF_ENV} == EXAMPLE_BACKOFF_ENV
    # AND the age alarm fires at the retry budget with that backoff: each of the 7
    # receives waits max(1082, 2 + 180 + min(900, 30 x 2^(k-1))) = 1082 s (the delay
    # never passes the lease here), so 7 x 1082 s
    (age_alarm,) = [
        r["Properties"]
        for r in resources
        if r["Type"] == "AWS::CloudWatch::Alarm"
        and r["Properties"].get("MetricName") == "ApproximateAgeOfOldestMessage"
        and "ledger" not in json.dumps(r["Properties"]).lower()
    ]
    assert age_alarm["Threshold"] == 7 * 1082


def test_template_is_identical_when_synthesized_again(template: dict[str, Any]):
    app = make_app()
    InvoiceRenderingStack(app, "InvoiceRendering")
    again = app.synth().get_stack_by_name("InvoiceRendering").template
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
