"""The benchmark's hand-wired baseline builds the same template as SafeQueueConsumer.

The speed ratio (benchmarks/README.md) compares the construct with these hand-wired
resources; it only means something while both synthesize the same resources.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks.apps import consumers_app


def normalized(template: dict[str, Any]) -> list[str]:
    """Each resource as JSON, logical ids and asset hashes replaced, sorted."""
    resources = template["Resources"]
    ids = sorted(resources, key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, ids)))
    result = []
    for resource in resources.values():
        resource = dict(resource)
        metadata = {k: v for k, v in resource.pop("Metadata", {}).items() if k != "aws:cdk:path"}
        if metadata:
            resource["Metadata"] = metadata
        result.append(pattern.sub("<ID>", json.dumps(resource, sort_keys=True)))
    return sorted(result)


def template(tmp_path: Path, *, hand_wired: bool) -> dict[str, Any]:
    outdir = tmp_path / ("hand" if hand_wired else "construct")
    consumers_app(2, hand_wired=hand_wired, outdir=str(outdir)).synth()
    loaded: dict[str, Any] = json.loads((outdir / "Consumers0.template.json").read_text())
    return loaded


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_hand_wired_baseline_builds_the_constructs_template(tmp_path: Path):
    construct = template(tmp_path, hand_wired=False)
    hand = template(tmp_path, hand_wired=True)
    assert len(construct["Resources"]) == len(hand["Resources"]) == 2 * 12
    assert normalized(hand) == normalized(construct)
