"""The benchmark's hand-wired baseline builds the same resources as SafeQueueConsumer.

The speed ratio (benchmarks/README.md) compares the construct with these hand-wired
resources; it only means something while both synthesize the same resources (templates,
logical ids aside) with the same acknowledgements. ``benchmarks/bench_consumer.py`` runs
the same comparison at 100 consumers before it times anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.apps import consumers_app, differences


def synthesize(tmp_path: Path, *, hand_wired: bool) -> Path:
    outdir = tmp_path / ("hand" if hand_wired else "construct")
    consumers_app(3, per_stack=2, hand_wired=hand_wired, outdir=str(outdir)).synth()
    return outdir


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_hand_wired_baseline_builds_the_constructs_resources(tmp_path: Path):
    # GIVEN 3 consumers in 2 stacks, built by SafeQueueConsumer and wired by hand
    construct = synthesize(tmp_path, hand_wired=False)
    hand = synthesize(tmp_path, hand_wired=True)
    # THEN both have 12 resources per consumer and its function, and no difference
    sizes = {
        path.name: len(json.loads(path.read_text())["Resources"])
        for path in sorted(construct.glob("*.template.json"))
    }
    assert sizes == {"Consumers0.template.json": 24, "Consumers1.template.json": 12}
    assert differences(construct, hand) == []


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_comparison_sees_a_missing_acknowledgement(tmp_path: Path):
    # GIVEN the construct's app, and a copy whose dead-letter queues lost their
    # acknowledgement (the assembly metadata the benchmark compares)
    construct = synthesize(tmp_path, hand_wired=False)
    metadata = construct / "Consumers1.metadata.json"
    entries = json.loads(metadata.read_text())
    for path in entries:
        if path.endswith("/DeadLetterQueue"):
            entries[path] = [e for e in entries[path] if e["type"] != "aws:cdk:acknowledged-rules"]
    copy = tmp_path / "copy"
    copy.mkdir()
    for item in construct.glob("*.json"):
        (copy / item.name).write_text(item.read_text())
    (copy / metadata.name).write_text(json.dumps(entries))
    # THEN the dead-letter queue of that stack and its queue policy (an acknowledgement
    # covers the construct and everything under it) are reported, on both sides
    found = differences(construct, copy)
    ours = [line for line in found if "only with SafeQueueConsumer" in line]
    theirs = [line for line in found if "only hand-wired" in line]
    assert len(ours) == len(theirs) == 2
    assert all(line.startswith("Consumers1: ") for line in found)
    assert all('"acknowledged": ["Serverless::Serverless-SQSRedrivePolicy"]' in x for x in ours)
    assert all('"acknowledged": []' in line for line in theirs)
    assert sorted('"AWS::SQS::QueuePolicy"' in line for line in ours) == [False, True]
