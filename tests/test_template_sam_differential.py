"""Verdicts on a SAM template equal the verdicts on SAM's own transform of it (issue 24).

``aws-sam-translator`` (the code CloudFormation's ``AWS::Serverless`` transform runs) turns
each SAM fixture, and each template a Hypothesis strategy generates, into CloudFormation;
``safe-queue check`` must give both the same (mapping id, rule id, level) and count the same
mappings. The suite draws a sample every run; ``benchmarks/sam_differential.py`` runs a
fixed larger one (see ``benchmarks/README.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from safe_queue.template import load_template
from tests.sam_differential import sam_templates, translate, verdicts

FIXTURES = Path(__file__).parent / "fixtures" / "templates"
SAM_FIXTURES = [
    ("sam_globals.yaml",),
    ("sam_sns_subscription.yaml",),
    ("sam_sns_details.yaml",),
    ("sam_fifo_dlq_conditions.yaml",),
    ("seed000_fixed.yaml",),
    ("seed000_broken.yaml",),
    ("seed000_broken.yaml", "seed000_queue_stack.yaml"),  # the SAM one with its queue stack
]


def body(name: str) -> dict[str, Any]:
    return load_template(FIXTURES / name).body


@pytest.mark.parametrize("names", SAM_FIXTURES, ids="+".join)
def test_every_sam_fixture_gets_the_verdicts_of_its_transform(names: tuple[str, ...]) -> None:
    # GIVEN a SAM fixture (and the plain templates of its deployment)
    sam, *others = (body(name) for name in names)
    # WHEN SAM transforms it
    transformed = translate(sam)
    assert "AWS::Serverless::Function" not in str(transformed)
    # THEN both give the same mappings and verdicts
    expected = verdicts(sam, *others)
    assert verdicts(transformed, *others) == expected
    assert expected[0] >= 1  # each fixture has SQS mappings to compare


def test_the_fixtures_cover_what_the_differential_is_for() -> None:
    # The comparison is only worth its fixtures: they include SNS subscriptions (a generated
    # FIFO queue among them), FIFO queues with DLQs, a condition, an alias and other sources.
    count, found = verdicts(body("sam_fifo_dlq_conditions.yaml"))
    assert count == 2  # the DynamoDB stream event is not counted
    assert ("JobsFnJobs", "safe-queue:filter-deletes-unmatched", "warning") in found
    assert ("OrdersFnOrders", "safe-queue:max-receive-count-below-guidance", "warning") in found
    count, found = verdicts(body("sam_sns_details.yaml"))
    assert count == 2


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(sam_templates())
def test_generated_sam_templates_get_the_verdicts_of_their_transform(
    template: dict[str, Any],
) -> None:
    # GIVEN a generated SAM template (functions, SQS/SNS/Kinesis events, Globals, standard
    # and FIFO queues, DLQs, batch settings, conditions) WHEN SAM transforms it
    transformed = translate(template)
    # THEN safe-queue check gives both the same verdicts
    assert verdicts(transformed) == verdicts(template)
