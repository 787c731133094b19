"""The engine: each rule at its boundary, the registry, AWS's defaults, and evaluate()."""

from __future__ import annotations

import inspect

import pytest

from safe_queue.engine import (
    RULES,
    FunctionFacts,
    Level,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
    evaluate,
    rule,
    rule_inputs,
    rules,
)


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
        assert f"maxReceiveCount is {count}" in finding.message


@pytest.mark.parametrize(
    ("fifo", "dead_letter_retention", "level"),
    [
        (False, 345_601, None),
        (False, 345_600, Level.WARNING),  # equal (CDK's default): little time left, not lost
        (False, 345_599, Level.ERROR),  # shorter: can expire at once
        (True, 345_600, None),  # FIFO resets the timestamp on the move
        (True, 60, None),
        (False, None, None),  # no dead-letter queue: not applicable
    ],
)
def test_dead_letter_retention_exceeds_source_boundary(
    fifo: bool, dead_letter_retention: int | None, level: Level | None
):
    finding = rules.dead_letter_retention_exceeds_source(
        fifo=fifo, retention_period=345_600, dead_letter_retention_period=dead_letter_retention
    )
    assert (finding.level if finding else None) is level
    if finding:
        assert finding.rule_id == "safe-queue:dead-letter-retention-too-short"
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


@pytest.mark.parametrize(
    ("reserved", "maximum", "expected"),
    [
        (None, None, None),
        (10, None, "safe-queue:reserved-concurrency-without-max-concurrency"),
        (10, 10, None),
        (10, 11, "safe-queue:max-concurrency-above-reserved-concurrency"),
        (None, 50, None),
    ],
)
def test_concurrency_rules_boundary(reserved: int | None, maximum: int | None, expected):
    found = [
        f.rule_id
        for f in (
            rules.reserved_concurrency_has_max_concurrency(
                reserved_concurrency=reserved, max_concurrency=maximum
            ),
            rules.max_concurrency_within_reserved(
                reserved_concurrency=reserved, max_concurrency=maximum
            ),
        )
        if f is not None
    ]
    assert found == ([expected] if expected else [])


def test_reserved_concurrency_below_the_maximum_concurrency_minimum_says_raise_it():
    finding = rules.reserved_concurrency_has_max_concurrency(
        reserved_concurrency=1, max_concurrency=None
    )
    assert finding is not None
    assert "at least 2" in finding.message


@pytest.mark.parametrize(("filters", "fires"), [(False, False), (True, True)])
def test_filters_delete_unmatched(filters: bool, fires: bool):
    finding = rules.filters_delete_unmatched(has_filters=filters)
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.WARNING
        assert "FilterCriteria" in finding.message


@pytest.mark.parametrize(
    ("now", "derived", "fires"), [(180, 180, False), (900, 180, True), (180, None, False)]
)
def test_function_timeout_unchanged(now: int, derived: int | None, fires: bool):
    finding = rules.function_timeout_unchanged(
        function_timeout=now, derived_function_timeout=derived
    )
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.ERROR
        assert "900 s" in finding.message
        assert "180 s" in finding.message


# The registry


def test_registry_ids_are_prefixed_unique_and_documented():
    ids = [entry.id for entry in RULES]
    assert len(ids) == len(set(ids)) == 12
    for entry in RULES:
        assert entry.id.startswith("safe-queue:")
        assert entry.summary
        assert entry.why
        assert entry.fix


def test_registry_inputs_are_exactly_each_checks_keyword_arguments():
    for entry in RULES:
        if entry.check is None:
            assert entry.id == "safe-queue:unchecked"
            continue
        assert tuple(inspect.signature(entry.check).parameters) == entry.inputs, entry.id


def test_registry_level_is_the_most_serious_its_check_gives():
    # dead-letter retention gives both: its registry level is the worst
    assert rule("safe-queue:dead-letter-retention-too-short").level is Level.ERROR
    assert rule("safe-queue:unchecked").level is Level.INFO
    with pytest.raises(KeyError, match="not a safe-queue rule"):
        rule("safe-queue:nope")


# rule_inputs: AWS's defaults, applied once


def test_unset_values_get_aws_defaults():
    inputs = rule_inputs(MappingFacts(QueueFacts(), FunctionFacts()))
    assert inputs["visibility_timeout"] == 30
    assert inputs["retention_period"] == 345_600
    assert inputs["function_timeout"] == 3
    assert inputs["batch_size"] == 10
    assert inputs["batching_window"] == 0
    assert inputs["fifo"] is False
    assert inputs["report_batch_item_failures"] is False
    assert inputs["has_filters"] is False
    assert inputs["has_dead_letter_queue"] is False
    assert inputs["max_receive_count"] is None
    assert inputs["reserved_concurrency"] is None
    assert inputs["max_concurrency"] is None


def test_unset_dead_letter_retention_is_the_default_four_days():
    facts = MappingFacts(QueueFacts(redrive=RedriveFacts(5, QueueFacts())), FunctionFacts())
    assert rule_inputs(facts)["dead_letter_retention_period"] == 345_600


# evaluate: the registry applied to one mapping's facts


def compliant(**changes) -> MappingFacts:
    queue = QueueFacts(
        visibility_timeout=changes.pop("visibility_timeout", 1110),
        retention_period=changes.pop("retention_period", 345_600),
        fifo=False,
        redrive=changes.pop("redrive", RedriveFacts(5, QueueFacts(retention_period=1_209_600))),
    )
    function = FunctionFacts(
        timeout=changes.pop("function_timeout", 180),
        reserved_concurrency=changes.pop("reserved_concurrency", None),
    )
    return MappingFacts(
        queue=changes.pop("queue", queue),
        function=changes.pop("function", function),
        **{"batch_size": 5, "batching_window": 2, "report_batch_item_failures": True, **changes},
    )


def test_evaluate_compliant_facts_give_nothing():
    assert evaluate(compliant()) == []


def test_evaluate_without_dead_letter_queue_skips_the_dead_letter_rules():
    assert [f.rule_id for f in evaluate(compliant(redrive=None))] == [
        "safe-queue:no-dead-letter-queue"
    ]


def test_evaluate_reports_every_failing_rule_once_in_registry_order():
    facts = compliant(
        visibility_timeout=60,
        retention_period=299,
        batch_size=2,
        report_batch_item_failures=False,
        has_filters=True,
    )
    assert [f.rule_id for f in evaluate(facts)] == [
        "safe-queue:visibility-below-function-timeout",
        "safe-queue:retention-below-retry-budget",
        "safe-queue:no-report-batch-item-failures",
        "safe-queue:filter-deletes-unmatched",
    ]


def test_evaluate_does_not_guess_unknown_values():
    unknown = Unknown("queue VisibilityTimeout", "is an unresolved token")
    findings = evaluate(compliant(visibility_timeout=unknown))
    assert [(f.rule_id, f.level) for f in findings] == [("safe-queue:unchecked", Level.INFO)]
    message = findings[0].message
    assert "queue VisibilityTimeout is an unresolved token" in message
    for skipped in (
        "safe-queue:visibility-below-function-timeout",
        "safe-queue:visibility-below-guidance",
        "safe-queue:retention-below-retry-budget",
    ):
        assert skipped in message


def test_evaluate_unknown_queue_skips_every_queue_rule_but_checks_the_mapping():
    queue = Unknown("the queue", "is imported")
    findings = evaluate(compliant(queue=queue, report_batch_item_failures=False))
    assert [f.rule_id for f in findings] == [
        "safe-queue:no-report-batch-item-failures",
        "safe-queue:unchecked",
    ]
    assert "the queue is imported" in findings[-1].message


def test_evaluate_appends_the_adapters_assumptions_to_every_message():
    findings = evaluate(compliant(visibility_timeout=60, notes=("Assumed Timeout=180.",)))
    assert findings
    assert all(f.message.endswith("(Assumed Timeout=180.)") for f in findings)


def test_evaluate_flags_drift_from_the_recorded_derived_timeout():
    findings = evaluate(
        compliant(
            function_timeout=900,
            visibility_timeout=5402,
            retention_period=1_000_000,
            derived_function_timeout=180,
        )
    )
    assert [f.rule_id for f in findings] == ["safe-queue:function-timeout-changed"]
