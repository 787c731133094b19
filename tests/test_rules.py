"""Each rule on its own, at its boundary: the last compliant and the first failing value."""

from __future__ import annotations

import pytest

from safe_queue import rules
from safe_queue.checks import Unknown, evaluate_mapping
from safe_queue.rules import Level


@pytest.mark.parametrize(
    ("visibility", "expected"),
    [(180, None), (179, "safe-queue:visibility-below-function-timeout")],
)
def test_visibility_covers_function_timeout_boundary(visibility: int, expected: str | None):
    # GIVEN a 180 s function  WHEN the visibility is 180 s / 179 s
    finding = rules.visibility_covers_function_timeout(
        visibility_timeout=visibility, function_timeout=180, batching_window=2
    )
    # THEN only 179 s is an error
    assert (finding.rule_id if finding else None) == expected


def test_seed_incident_is_an_error_naming_both_values_and_the_fix():
    finding = rules.visibility_covers_function_timeout(
        visibility_timeout=60, function_timeout=180, batching_window=2
    )
    assert finding is not None
    assert finding.level is Level.ERROR
    assert "60 s" in finding.message
    assert "180 s" in finding.message
    assert "1082 s" in finding.message


@pytest.mark.parametrize(
    ("visibility", "expected"),
    [
        (1082, None),
        (1081, "safe-queue:visibility-below-guidance"),
        (180, "safe-queue:visibility-below-guidance"),
        (179, None),  # below the function timeout: the error rule applies instead
    ],
)
def test_visibility_meets_guidance_boundary(visibility: int, expected: str | None):
    finding = rules.visibility_meets_guidance(
        visibility_timeout=visibility, function_timeout=180, batching_window=2
    )
    assert (finding.rule_id if finding else None) == expected


def test_visibility_guidance_warning_states_the_recommended_value():
    finding = rules.visibility_meets_guidance(
        visibility_timeout=365, function_timeout=60, batching_window=6
    )
    assert finding is not None
    assert finding.level is Level.WARNING
    assert "366 s" in finding.message


@pytest.mark.parametrize(
    ("function_timeout", "window", "expected"),
    [(60, 5, 365), (180, 2, 1082), (900, 300, 5700), (1, 0, 6)],
)
def test_recommended_visibility_timeout_matches_aws_examples(
    function_timeout: int, window: int, expected: int
):
    assert rules.recommended_visibility_timeout(function_timeout, window) == expected


@pytest.mark.parametrize(("has_dlq", "fires"), [(True, False), (False, True)])
def test_dead_letter_queue_configured(has_dlq: bool, fires: bool):
    finding = rules.dead_letter_queue_configured(has_dead_letter_queue=has_dlq)
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.WARNING


@pytest.mark.parametrize(("count", "fires"), [(5, False), (4, True), (1, True), (1000, False)])
def test_max_receive_count_meets_guidance_boundary(count: int, fires: bool):
    finding = rules.max_receive_count_meets_guidance(max_receive_count=count)
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.WARNING
        assert f"max_receive_count is {count}" in finding.message


@pytest.mark.parametrize(
    ("fifo", "dead_letter_retention", "fires"),
    [
        (False, 345_601, False),
        (False, 345_600, True),  # equal is not longer
        (True, 345_600, False),  # FIFO resets the timestamp on the move
        (True, 60, False),
    ],
)
def test_dead_letter_retention_exceeds_source_boundary(
    fifo: bool, dead_letter_retention: int, fires: bool
):
    finding = rules.dead_letter_retention_exceeds_source(
        fifo=fifo, retention_period=345_600, dead_letter_retention_period=dead_letter_retention
    )
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.ERROR
        assert "345600 s" in finding.message


@pytest.mark.parametrize(("retention", "fires"), [(5410, False), (5409, True)])
def test_retention_covers_retries_boundary(retention: int, fires: bool):
    finding = rules.retention_covers_retries(
        retention_period=retention, max_receive_count=5, visibility_timeout=1082
    )
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.ERROR
        assert "5410 s" in finding.message


@pytest.mark.parametrize(
    ("batch_size", "report", "fires"),
    [(1, False, False), (2, False, True), (2, True, False), (10, True, False)],
)
def test_batch_failures_reported_boundary(batch_size: int, report: bool, fires: bool):
    finding = rules.batch_failures_reported(
        batch_size=batch_size, report_batch_item_failures=report
    )
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.WARNING


def test_every_rule_id_is_prefixed_and_unique():
    findings = [
        rules.visibility_covers_function_timeout(visibility_timeout=1, function_timeout=2),
        rules.visibility_meets_guidance(visibility_timeout=2, function_timeout=2),
        rules.dead_letter_queue_configured(has_dead_letter_queue=False),
        rules.max_receive_count_meets_guidance(max_receive_count=1),
        rules.dead_letter_retention_exceeds_source(
            fifo=False, retention_period=60, dead_letter_retention_period=60
        ),
        rules.retention_covers_retries(
            retention_period=60, max_receive_count=5, visibility_timeout=60
        ),
        rules.batch_failures_reported(batch_size=10, report_batch_item_failures=False),
    ]
    ids = [f.rule_id for f in findings if f is not None]
    assert len(ids) == 7
    assert len(set(ids)) == 7
    assert all(i.startswith("safe-queue:") for i in ids)


# evaluate_mapping: the rule table SafeQueueChecks applies to one mapping's facts
COMPLIANT = {
    "visibility_timeout": 1110,
    "function_timeout": 180,
    "batching_window": 2,
    "has_dead_letter_queue": True,
    "max_receive_count": 5,
    "fifo": False,
    "retention_period": 345_600,
    "dead_letter_retention_period": 1_209_600,
    "batch_size": 5,
    "report_batch_item_failures": True,
}


def test_evaluate_mapping_compliant_facts_give_nothing():
    assert evaluate_mapping(COMPLIANT) == []


def test_evaluate_mapping_without_dead_letter_queue_skips_the_dead_letter_rules():
    facts = {
        **COMPLIANT,
        "has_dead_letter_queue": False,
        "max_receive_count": None,
        "dead_letter_retention_period": None,
    }
    assert [f.rule_id for f in evaluate_mapping(facts)] == ["safe-queue:no-dead-letter-queue"]


def test_evaluate_mapping_reports_every_failing_rule_once():
    facts = {**COMPLIANT, "visibility_timeout": 60, "retention_period": 299, "batch_size": 2}
    facts["report_batch_item_failures"] = False
    assert [f.rule_id for f in evaluate_mapping(facts)] == [
        "safe-queue:visibility-below-function-timeout",
        "safe-queue:retention-below-retry-budget",
        "safe-queue:no-report-batch-item-failures",
    ]


def test_evaluate_mapping_does_not_guess_unknown_values():
    unknown = Unknown("queue VisibilityTimeout", "is an unresolved token")
    findings = evaluate_mapping({**COMPLIANT, "visibility_timeout": unknown})
    assert [(f.rule_id, f.level) for f in findings] == [("safe-queue:unchecked", Level.INFO)]
    message = findings[0].message
    assert "queue VisibilityTimeout is an unresolved token" in message
    for skipped in (
        "visibility_covers_function_timeout",
        "visibility_meets_guidance",
        "retention_covers_retries",
    ):
        assert skipped in message
