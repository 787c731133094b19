"""The engine: each rule at its boundary, the registry, AWS's defaults, and evaluate()."""

from __future__ import annotations

import inspect

import pytest

from safe_queue.engine import (
    RULES,
    Acknowledgement,
    AcknowledgementError,
    Finding,
    FunctionFacts,
    Level,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
    acknowledgement,
    evaluate,
    evaluate_all,
    limits,
    recommended_visibility_timeout,
    rule,
    rule_inputs,
)


def check(name: str, **inputs) -> Finding | None:
    """Run rule ``safe-queue:<name>``'s check; return the finding its declaration builds."""
    declared = rule(f"safe-queue:{name}")
    assert declared.check is not None
    violation = declared.check(**inputs)
    return None if violation is None else declared.finding(violation)


@pytest.mark.parametrize(
    ("visibility", "expected"),
    [(180, None), (179, "safe-queue:visibility-below-function-timeout")],
)
def test_visibility_covers_function_timeout_boundary(visibility: int, expected: str | None):
    # GIVEN a 180 s function  WHEN the visibility is 180 s / 179 s
    finding = check(
        "visibility-below-function-timeout",
        visibility_timeout=visibility,
        function_timeout=180,
        batching_window=2,
    )
    # THEN only 179 s is an error
    assert (finding.rule_id if finding else None) == expected


def test_seed_incident_is_an_error_naming_both_values_and_the_fix():
    finding = check(
        "visibility-below-function-timeout",
        visibility_timeout=60,
        function_timeout=180,
        batching_window=2,
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
    finding = check(
        "visibility-below-guidance",
        visibility_timeout=visibility,
        function_timeout=180,
        batching_window=2,
    )
    assert (finding.rule_id if finding else None) == expected


def test_visibility_guidance_warning_states_the_recommended_value():
    finding = check(
        "visibility-below-guidance", visibility_timeout=365, function_timeout=60, batching_window=6
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
    assert recommended_visibility_timeout(function_timeout, window) == expected


@pytest.mark.parametrize(("has_dlq", "fires"), [(True, False), (False, True)])
def test_dead_letter_queue_configured(has_dlq: bool, fires: bool):
    finding = check("no-dead-letter-queue", has_dead_letter_queue=has_dlq)
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.WARNING


@pytest.mark.parametrize(("count", "fires"), [(5, False), (4, True), (1, True), (1000, False)])
def test_max_receive_count_meets_guidance_boundary(count: int, fires: bool):
    finding = check("max-receive-count-below-guidance", max_receive_count=count)
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
    finding = check(
        "dead-letter-retention-too-short",
        fifo=fifo,
        retention_period=345_600,
        dead_letter_retention_period=dead_letter_retention,
    )
    assert (finding.level if finding else None) is level
    if finding:
        assert finding.rule_id == "safe-queue:dead-letter-retention-too-short"
        assert "345600 s" in finding.message


@pytest.mark.parametrize(("retention", "fires"), [(5410, False), (5409, True)])
def test_retention_covers_retries_boundary(retention: int, fires: bool):
    finding = check(
        "retention-below-retry-budget",
        retention_period=retention,
        max_receive_count=5,
        visibility_timeout=1082,
        function_timeout=180,
        batching_window=2,
        backoff_base=None,
        backoff_cap=None,
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
    finding = check(
        "no-report-batch-item-failures", batch_size=batch_size, report_batch_item_failures=report
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
            check(
                "reserved-concurrency-without-max-concurrency",
                reserved_concurrency=reserved,
                max_concurrency=maximum,
                provisioned=False,
            ),
            check(
                "max-concurrency-above-reserved-concurrency",
                reserved_concurrency=reserved,
                max_concurrency=maximum,
            ),
        )
        if f is not None
    ]
    assert found == ([expected] if expected else [])


def test_reserved_concurrency_below_the_maximum_concurrency_minimum_says_raise_it():
    finding = check(
        "reserved-concurrency-without-max-concurrency",
        reserved_concurrency=1,
        max_concurrency=None,
        provisioned=False,
    )
    assert finding is not None
    assert "at least 2" in finding.message


@pytest.mark.parametrize(("filters", "fires"), [(False, False), (True, True)])
def test_filters_delete_unmatched(filters: bool, fires: bool):
    finding = check("filter-deletes-unmatched", has_filters=filters)
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.WARNING
        assert "FilterCriteria" in finding.message


@pytest.mark.parametrize(
    ("now", "derived", "fires"), [(180, 180, False), (900, 180, True), (180, None, False)]
)
def test_function_timeout_unchanged(now: int, derived: int | None, fires: bool):
    finding = check(
        "function-timeout-changed", function_timeout=now, derived_function_timeout=derived
    )
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.ERROR
        assert "900 s" in finding.message
        assert "180 s" in finding.message


# The registry


def test_registry_ids_are_prefixed_unique_and_documented():
    ids = [entry.id for entry in RULES]
    assert len(ids) == len(set(ids)) == 26
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


def test_every_rule_input_is_one_the_engine_provides():
    provided = set(rule_inputs(MappingFacts(QueueFacts(), FunctionFacts())))
    for entry in RULES:
        assert set(entry.inputs) <= provided, (entry.id, set(entry.inputs) - provided)


def test_every_rule_declares_its_words_source_examples_and_properties():
    for entry in RULES:
        assert entry.source_url.startswith("https://"), entry.id
        assert entry.docs_url.endswith(f"#{entry.name}"), entry.id
        assert entry.kind in ("aws-limit", "guidance", "drift", "engine"), entry.id
        if entry.check is None:
            continue
        assert entry.compliant is not None, entry.id
        assert entry.non_compliant is not None, entry.id
        assert entry.compliant.description, entry.id
        assert entry.non_compliant.description, entry.id
        assert entry.properties, entry.id
        for role, path in entry.properties:
            assert role in ("mapping", "queue", "dead_letter_queue", "function"), entry.id
            assert path.startswith("Properties/"), entry.id


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


# Each rule's own examples: the non-compliant one breaks it, the compliant one breaks nothing.

CHECKED_RULES = [entry for entry in RULES if entry.check is not None]


@pytest.mark.parametrize("entry", CHECKED_RULES, ids=lambda entry: entry.name)
def test_each_rules_examples_break_it_and_only_the_compliant_one_is_clean(entry):
    # GIVEN the rule's declared examples  WHEN the engine judges them as a run
    broken = evaluate_all(list(entry.non_compliant.mappings))
    clean = evaluate_all(list(entry.compliant.mappings))
    # THEN every mapping of the non-compliant one breaks the rule, the compliant one nothing
    assert all(entry.id in {f.rule_id for f in findings} for findings in broken)
    assert clean == [[] for _ in entry.compliant.mappings]


# AWS's limits: each range at its boundary


def test_batch_size_limits_depend_on_queue_type_and_window():
    def fires(batch_size: int, window: int, fifo: bool) -> bool:
        return (
            check(
                "batch-size-out-of-range", batch_size=batch_size, batching_window=window, fifo=fifo
            )
            is not None
        )

    assert not fires(10, 0, False)
    assert fires(11, 0, False)
    assert not fires(11, 1, False)
    assert not fires(10_000, 1, False)
    assert fires(10_001, 1, False)
    assert not fires(10, 0, True)
    assert fires(11, 0, True)
    assert fires(500, 0, True)
    assert fires(0, 0, False)
    finding = check("batch-size-out-of-range", batch_size=11, batching_window=0, fifo=False)
    assert "MaximumBatchingWindowInSeconds to at least 1 s" in finding.message


@pytest.mark.parametrize(
    ("name", "inputs", "fires"),
    [
        ("batching-window-out-of-range", {"batching_window": 300}, False),
        ("batching-window-out-of-range", {"batching_window": 301}, True),
        ("batching-window-on-fifo", {"batching_window": 0, "fifo": True}, False),
        ("batching-window-on-fifo", {"batching_window": 1, "fifo": True}, True),
        ("batching-window-on-fifo", {"batching_window": 5, "fifo": False}, False),
        ("max-concurrency-out-of-range", {"max_concurrency": None}, False),
        ("max-concurrency-out-of-range", {"max_concurrency": 2}, False),
        ("max-concurrency-out-of-range", {"max_concurrency": 1}, True),
        ("max-concurrency-out-of-range", {"max_concurrency": 1000}, False),
        ("max-concurrency-out-of-range", {"max_concurrency": 5000}, True),
        ("max-receive-count-out-of-range", {"max_receive_count": None}, False),
        ("max-receive-count-out-of-range", {"max_receive_count": 0}, True),
        ("max-receive-count-out-of-range", {"max_receive_count": 1000}, False),
        ("max-receive-count-out-of-range", {"max_receive_count": 1001}, True),
        ("visibility-timeout-out-of-range", {"visibility_timeout": 43_200}, False),
        ("visibility-timeout-out-of-range", {"visibility_timeout": 99_999}, True),
        (
            "retention-period-out-of-range",
            {"retention_period": 60, "dead_letter_retention_period": 1_209_600},
            False,
        ),
        (
            "retention-period-out-of-range",
            {"retention_period": 59, "dead_letter_retention_period": None},
            True,
        ),
        (
            "retention-period-out-of-range",
            {"retention_period": 60, "dead_letter_retention_period": 1_209_601},
            True,
        ),
        (
            "function-timeout-out-of-range",
            {"function_timeout": 900, "capacity_provider": False},
            False,
        ),
        (
            "function-timeout-out-of-range",
            {"function_timeout": 901, "capacity_provider": False},
            True,
        ),
        (
            "function-timeout-out-of-range",
            {"function_timeout": 5000, "capacity_provider": False},
            True,
        ),
        (
            "function-timeout-out-of-range",
            {"function_timeout": 5400, "capacity_provider": True},
            False,
        ),
        (
            "function-timeout-out-of-range",
            {"function_timeout": 5401, "capacity_provider": True},
            True,
        ),
        (
            "function-timeout-out-of-range",
            {"function_timeout": 0, "capacity_provider": False},
            True,
        ),
        (
            "provisioned-pollers-out-of-range",
            {"minimum_pollers": None, "maximum_pollers": None},
            False,
        ),
        (
            "provisioned-pollers-out-of-range",
            {"minimum_pollers": 2, "maximum_pollers": 10_000},
            False,
        ),
        ("provisioned-pollers-out-of-range", {"minimum_pollers": 1, "maximum_pollers": 10}, True),
        (
            "provisioned-pollers-out-of-range",
            {"minimum_pollers": 201, "maximum_pollers": 300},
            True,
        ),
        (
            "provisioned-pollers-out-of-range",
            {"minimum_pollers": 2, "maximum_pollers": 10_001},
            True,
        ),
        (
            "provisioned-mode-with-max-concurrency",
            {"provisioned": True, "max_concurrency": 5},
            True,
        ),
        (
            "provisioned-mode-with-max-concurrency",
            {"provisioned": True, "max_concurrency": None},
            False,
        ),
        (
            "provisioned-mode-with-max-concurrency",
            {"provisioned": False, "max_concurrency": 5},
            False,
        ),
        (
            "dead-letter-queue-type-mismatch",
            {"fifo": True, "dead_letter_fifo": False},
            True,
        ),
        ("dead-letter-queue-type-mismatch", {"fifo": False, "dead_letter_fifo": True}, True),
        ("dead-letter-queue-type-mismatch", {"fifo": True, "dead_letter_fifo": True}, False),
        ("dead-letter-queue-type-mismatch", {"fifo": False, "dead_letter_fifo": None}, False),
    ],
)
def test_aws_limit_rules_at_their_boundaries(name: str, inputs: dict, fires: bool):
    finding = check(name, **inputs)
    assert (finding is not None) is fires
    if finding:
        assert finding.level is Level.ERROR
        assert "Fix: " in finding.message


@pytest.mark.parametrize(
    ("name", "fifo", "fires"),
    [
        ("orders", False, False),
        ("orders.fifo", True, False),
        ("orders.fifo", False, True),
        ("orders", True, True),
        ("a" * 80, False, False),
        ("a" * 81, False, True),
        ("a" * 75 + ".fifo", True, False),
        ("a" * 76 + ".fifo", True, True),
        ("orders queue", False, True),
        ("${AWS::StackName}-orders", False, False),  # known only at deploy time: not judged
        ("${AWS::StackName}-orders!", False, True),  # but its literal part is
        ("", False, True),
    ],
)
def test_queue_names_at_their_boundaries(name: str, fifo: bool, fires: bool):
    finding = check(
        "queue-name-invalid",
        queue_name=name,
        fifo=fifo,
        dead_letter_queue_name=None,
        dead_letter_fifo=None,
    )
    assert (finding is not None) is fires


def test_dead_letter_queue_names_are_judged_by_their_own_type():
    finding = check(
        "queue-name-invalid",
        queue_name="orders.fifo",
        fifo=True,
        dead_letter_queue_name="orders-dlq",
        dead_letter_fifo=True,
    )
    assert finding is not None
    assert "dead-letter queue's QueueName is 'orders-dlq'" in finding.message


@pytest.mark.parametrize(
    ("fifo", "cbd", "dlq_fifo", "dlq_cbd", "fires"),
    [
        (True, True, True, False, False),
        (False, True, False, False, True),
        (False, False, False, True, True),
        (False, False, None, None, False),
    ],
)
def test_content_based_deduplication_only_on_fifo(fifo, cbd, dlq_fifo, dlq_cbd, fires):
    finding = check(
        "content-based-deduplication-on-standard-queue",
        fifo=fifo,
        content_based_deduplication=cbd,
        dead_letter_fifo=dlq_fifo,
        dead_letter_content_based_deduplication=dlq_cbd,
    )
    assert (finding is not None) is fires


def test_reserved_concurrency_without_max_is_not_judged_in_provisioned_mode():
    assert (
        check(
            "reserved-concurrency-without-max-concurrency",
            reserved_concurrency=10,
            max_concurrency=None,
            provisioned=True,
        )
        is None
    )


# Rules that span the mappings of one function


def _mapping(key: str, maximum: int | None, reserved: int | None = 10, name: str = "M"):
    queue = QueueFacts(
        visibility_timeout=1082, redrive=RedriveFacts(5, QueueFacts(retention_period=1_209_600))
    )
    return MappingFacts(
        queue,
        FunctionFacts(timeout=180, reserved_concurrency=reserved, key=key),
        name=name,
        batch_size=1,
        max_concurrency=maximum,
    )


SUM_RULE = "safe-queue:max-concurrency-sum-above-reserved-concurrency"


def test_mappings_of_one_function_share_its_reserved_concurrency():
    # GIVEN two mappings of one function (reserved 10), MaximumConcurrency 6 each
    verdicts = evaluate_all([_mapping("fn", 6, name="A"), _mapping("fn", 6, name="B")])
    # THEN both are told, each message naming the total
    for findings in verdicts:
        assert [f.rule_id for f in findings] == [SUM_RULE]
        assert "adding up to 12" in findings[0].message
        assert "at least 12" in findings[0].message
    # WHEN they fit together, or belong to different functions, or are judged alone
    assert evaluate_all([_mapping("fn", 5), _mapping("fn", 5)]) == [[], []]
    assert evaluate_all([_mapping("a", 6), _mapping("b", 6)]) == [[], []]
    assert evaluate(_mapping("fn", 6)) == []


def test_the_sum_rule_leaves_mappings_without_a_maximum_to_their_own_rule():
    verdicts = evaluate_all([_mapping("fn", 6), _mapping("fn", None)])
    assert [f.rule_id for f in verdicts[0]] == []
    assert [f.rule_id for f in verdicts[1]] == [
        "safe-queue:reserved-concurrency-without-max-concurrency"
    ]


def test_an_unknown_maximum_of_another_mapping_makes_the_sum_unchecked():
    unknown = Unknown("the ScalingConfig.MaximumConcurrency", "is a parameter without a value")
    verdicts = evaluate_all([_mapping("fn", 6), _mapping("fn", unknown)])
    assert [f.rule_id for f in verdicts[0]] == ["safe-queue:unchecked"]
    assert SUM_RULE in verdicts[0][0].message


def test_the_sum_rule_names_only_fixes_that_fit_the_limits():
    # 3 mappings at the minimum of 2 each cannot fit a reserved concurrency of 5
    finding = check(
        "max-concurrency-sum-above-reserved-concurrency",
        reserved_concurrency=5,
        function_sqs_mappings=3,
        function_max_concurrency_total=6,
    )
    assert "at least 6" in finding.message
    assert "lower the mappings'" not in finding.message


# Acknowledgements


def test_acknowledged_findings_are_kept_and_marked():
    acknowledged = Acknowledgement(
        "safe-queue:filter-deletes-unmatched", "only invoices are sent", "test"
    )
    facts = compliant(has_filters=True, visibility_timeout=60, acknowledgements=(acknowledged,))
    findings = evaluate(facts)
    by_id = {f.rule_id: f for f in findings}
    assert by_id["safe-queue:filter-deletes-unmatched"].acknowledged == acknowledged
    assert by_id["safe-queue:visibility-below-function-timeout"].acknowledged is None


@pytest.mark.parametrize(
    "written",
    [
        "safe-queue:no-dead-letter-queue",
        "SafeQueue::safe-queue:no-dead-letter-queue",
        "Annotation::safe-queue:no-dead-letter-queue",
    ],
)
def test_acknowledgement_ids_in_every_written_form_name_the_rule(written: str):
    made = acknowledgement(written, " reason ", source="here")
    assert made == Acknowledgement("safe-queue:no-dead-letter-queue", "reason", "here")


@pytest.mark.parametrize(
    ("written", "reason", "says"),
    [
        ("safe-queue:nope", "r", "is not a safe-queue rule"),
        ("SafeQueue::safe-queue:nope", "r", "is not a safe-queue rule"),
        ("no-dead-letter-queue", "r", "is not a safe-queue rule"),
        (42, "r", "is not a safe-queue rule"),
        ("safe-queue:no-dead-letter-queue", "", "has no reason"),
        ("safe-queue:no-dead-letter-queue", None, "has no reason"),
        ("safe-queue:no-dead-letter-queue", "   ", "has no reason"),
    ],
)
def test_bad_acknowledgements_are_refused_naming_where(written, reason, says):
    with pytest.raises(AcknowledgementError, match=says) as caught:
        acknowledgement(written, reason, source="Metadata of Fn in t.yaml")
    assert str(caught.value).startswith("Metadata of Fn in t.yaml: ")
    assert "Fix: " in str(caught.value)


# Fix texts: possible within AWS's limits, even at the extremes


def test_retention_fix_at_the_maximum_names_fewer_receives_not_a_longer_retention():
    # GIVEN 1,000 receives of a 12-hour lease: no retention can hold that
    finding = check(
        "retention-below-retry-budget",
        retention_period=1_209_600,
        max_receive_count=1000,
        visibility_timeout=43_200,
        function_timeout=900,
        batching_window=0,
        backoff_base=None,
        backoff_cap=None,
    )
    assert finding is not None
    fix = finding.message.split("Fix: ", 1)[1]
    assert "raise MessageRetentionPeriod" not in fix
    assert "lower maxReceiveCount to at most 28" in fix  # 28 x 43,200 = 1,209,600


def test_retention_fix_counts_the_failure_backoff():
    finding = check(
        "retention-below-retry-budget",
        retention_period=60,
        max_receive_count=5,
        visibility_timeout=366,
        function_timeout=60,
        batching_window=6,
        backoff_base=60,
        backoff_cap=3600,
    )
    assert "= 2670 s" in finding.message
    assert "raise MessageRetentionPeriod to at least 2670 s" in finding.message


def test_dead_letter_retention_fix_when_the_source_keeps_messages_14_days():
    finding = check(
        "dead-letter-retention-too-short",
        fifo=False,
        retention_period=1_209_600,
        dead_letter_retention_period=1_209_600,
    )
    fix = finding.message.split("Fix: ", 1)[1]
    assert "shorten the source queue's MessageRetentionPeriod" in fix
    assert "longer than the source's" not in fix


def test_max_concurrency_fix_when_the_reservation_is_below_the_minimum():
    finding = check(
        "max-concurrency-above-reserved-concurrency", reserved_concurrency=1, max_concurrency=2
    )
    fix = finding.message.split("Fix: ", 1)[1]
    assert "raise ReservedConcurrentExecutions to at least 2" in fix
    assert "at most 1" not in fix


def test_reserved_concurrency_fix_above_the_maximum_concurrency_maximum():
    finding = check(
        "reserved-concurrency-without-max-concurrency",
        reserved_concurrency=5000,
        max_concurrency=None,
        provisioned=False,
    )
    assert "at most 1000" in finding.message


@pytest.mark.parametrize(("timeout", "window"), [(900, 300), (5400, 300), (1, 0)])
def test_visibility_fix_is_within_the_12_hour_cap_at_the_extremes(timeout: int, window: int):
    finding = check(
        "visibility-below-function-timeout",
        visibility_timeout=0,
        function_timeout=timeout,
        batching_window=window,
    )
    recommended = recommended_visibility_timeout(timeout, window)
    assert recommended <= limits.VISIBILITY_TIMEOUT_MAX
    assert f"= {recommended} s" in finding.message


def test_every_finding_of_every_non_compliant_example_states_a_fix():
    for entry in CHECKED_RULES:
        for findings in evaluate_all(list(entry.non_compliant.mappings)):
            for finding in findings:
                assert "Fix: " in finding.message, finding.rule_id


def test_an_unknown_queue_leaves_even_its_dead_letter_queue_unknown():
    # GIVEN a queue that cannot be read at all
    findings = evaluate(compliant(queue=Unknown("the queue", "is imported")))
    # THEN no-dead-letter-queue is neither reported nor assumed away: it is listed as skipped
    assert [f.rule_id for f in findings] == ["safe-queue:unchecked"]
    assert "safe-queue:no-dead-letter-queue" in findings[0].message


def test_a_redrive_policy_whose_presence_is_unknown_skips_the_dead_letter_rules():
    unknown = Unknown("the queue's RedrivePolicy", "depends on condition HasDlq")
    findings = evaluate(compliant(redrive=unknown))
    assert [f.rule_id for f in findings] == ["safe-queue:unchecked"]
    for skipped in ("no-dead-letter-queue", "max-receive-count-below-guidance"):
        assert f"safe-queue:{skipped}" in findings[0].message
    # ... while one that exists but cannot be read still counts as a dead-letter queue
    present = RedriveFacts(unknown, unknown)
    findings = evaluate(compliant(redrive=present))
    assert "safe-queue:no-dead-letter-queue" not in findings[0].message
