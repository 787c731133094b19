"""`safe-queue check` on Terraform plans and states: verdicts, links, unknowns, inputs, formats.

The fixtures are the JSON that `terraform show -json` printed for the .tf files beside them
(scripts/terraform-fixtures regenerates them); no test here runs terraform.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from safe_queue.cli import main
from safe_queue.engine import Acknowledgement, ProvisionedFacts
from safe_queue.terraform import ACKNOWLEDGE_TAG, check_paths, is_terraform_json, mappings

FIXTURES = Path(__file__).parent / "fixtures" / "terraform"
ERROR, WARNING, INFO = "error", "warning", "info"
VIS = "safe-queue:visibility-below-function-timeout"
GUIDANCE = "safe-queue:visibility-below-guidance"
NO_DLQ = "safe-queue:no-dead-letter-queue"
FEW_RECEIVES = "safe-queue:max-receive-count-below-guidance"
DLQ_RETENTION = "safe-queue:dead-letter-retention-too-short"
WHOLE_BATCH = "safe-queue:no-report-batch-item-failures"
RESERVED = "safe-queue:reserved-concurrency-without-max-concurrency"
ABOVE_RESERVED = "safe-queue:max-concurrency-above-reserved-concurrency"
UNCHECKED = "safe-queue:unchecked"


def verdicts(*paths: Path, acknowledged: bool = False) -> dict[str, list[tuple[str, str]]]:
    """(rule id, level) per mapping address, every mapping present (clean ones with []).

    The findings no acknowledgement covers; with ``acknowledged=True``, the covered ones.
    """
    result: dict[str, list[tuple[str, str]]] = {m.address: [] for m in mappings(paths)}
    for finding in check_paths(paths).findings:
        if finding.acknowledged == acknowledged:
            result[finding.resource].append((finding.rule_id, finding.level.value))
    return {address: sorted(found) for address, found in result.items()}


def expect(verdict: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The expected verdict in the order :func:`verdicts` gives (sorted per mapping)."""
    return {address: sorted(found) for address, found in verdict.items()}


def messages(path: Path, address: str, rule_id: str = UNCHECKED) -> str:
    found = [
        f.message
        for f in check_paths([path]).findings
        if f.resource == address and f.rule_id == rule_id
    ]
    assert len(found) == 1, found
    return found[0]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- the fixtures give the verdicts the rules say ----------------------------------------

SEED = "aws_lambda_event_source_mapping.render"


def test_seed_mistake_in_a_first_plan_is_an_error_and_the_redrive_count_is_unchecked():
    # GIVEN the seed (visibility 60 s, function timeout 180 s) planned from nothing
    # WHEN checked THEN the visibility error, and maxReceiveCount (inside a redrive policy
    # that holds the not-yet-known DLQ ARN) is reported unchecked, not assumed
    assert verdicts(FIXTURES / "seed" / "plan-broken.json") == expect(
        {SEED: [(VIS, ERROR), (UNCHECKED, INFO)]}
    )
    message = messages(FIXTURES / "seed" / "plan-broken.json", SEED)
    assert "maxReceiveCount" in message
    assert "known only after apply" in message
    assert "safe-queue:max-receive-count-below-guidance" in message


def test_seed_fix_in_a_first_plan_has_only_the_unchecked_redrive_count():
    # 6 x 180 s + 2 s window = 1082 s
    assert verdicts(FIXTURES / "seed" / "plan-fixed.json") == expect({SEED: [(UNCHECKED, INFO)]})


def test_seed_fix_state_after_apply_is_clean():
    # GIVEN the state after applying the fix (every ARN known, the policy's JSON readable)
    assert verdicts(FIXTURES / "seed" / "state.json") == expect({SEED: []})


def test_second_plan_against_existing_resources_links_by_arn_and_catches_the_regression():
    # GIVEN a plan that puts the 60 s visibility back on queues that exist
    body = json.loads((FIXTURES / "seed" / "second-plan.json").read_text())
    after = {c["address"]: c["change"]["after"] for c in body["resource_changes"]}
    # the mapping's event_source_arn is a known ARN: linked by value, not by reference
    assert after[SEED]["event_source_arn"].startswith("arn:aws:sqs:")
    # THEN the error, and nothing unchecked: the redrive policy is known in this plan
    assert verdicts(FIXTURES / "seed" / "second-plan.json") == expect({SEED: [(VIS, ERROR)]})


def test_for_each_count_module_inputs_and_outputs_give_each_instance_its_own_verdict():
    assert verdicts(FIXTURES / "modules" / "plan.json") == expect(
        {
            # for_each in a module: aws_sqs_queue.this[each.key] with the mapping's own key
            'module.workers.aws_lambda_event_source_mapping.this["orders"]': [(NO_DLQ, WARNING)],
            'module.workers.aws_lambda_event_source_mapping.this["invoices"]': [
                (NO_DLQ, WARNING),
                (VIS, ERROR),
            ],
            # count in a module; the function comes in as a module input (var.shared_function_arn)
            "module.workers.aws_lambda_event_source_mapping.extra[0]": [
                (NO_DLQ, WARNING),
                (GUIDANCE, WARNING),
            ],
            "module.workers.aws_lambda_event_source_mapping.extra[1]": [
                (NO_DLQ, WARNING),
                (GUIDANCE, WARNING),
            ],
            # a module called with for_each: each.key in its inputs is the module instance's key
            'module.tenant["acme"].aws_lambda_event_source_mapping.this': [(NO_DLQ, WARNING)],
            'module.tenant["globex"].aws_lambda_event_source_mapping.this': [
                (NO_DLQ, WARNING),
                (GUIDANCE, WARNING),
            ],
            # the queue's ARN from a module output
            "aws_lambda_event_source_mapping.from_output": [(NO_DLQ, WARNING), (VIS, ERROR)],
        }
    )


def test_module_links_name_the_instances_they_reached():
    linked = {m.address: m.where.fields() for m in mappings([FIXTURES / "modules" / "plan.json"])}
    assert linked['module.tenant["globex"].aws_lambda_event_source_mapping.this'] == {
        "queue": 'aws_sqs_queue.tenant["globex"]',
        "function": "aws_lambda_function.shared",
        "terraform": "plan",
    }
    assert linked["module.workers.aws_lambda_event_source_mapping.extra[1]"]["queue"] == (
        "module.workers.aws_sqs_queue.extra[1]"
    )
    assert linked['module.workers.aws_lambda_event_source_mapping.this["invoices"]'][
        "function"
    ] == ('module.workers.aws_lambda_function.this["invoices"]')
    assert linked["aws_lambda_event_source_mapping.from_output"]["queue"] == (
        "module.queue.aws_sqs_queue.this"
    )


@pytest.mark.parametrize("name", ["plan.json", "state.json"])
def test_alias_is_followed_to_its_function_and_its_reserved_concurrency(name: str):
    assert verdicts(FIXTURES / "alias" / name) == expect(
        {
            "aws_lambda_event_source_mapping.jobs": [(NO_DLQ, WARNING), (RESERVED, WARNING)],
            "aws_lambda_event_source_mapping.bulk": [(ABOVE_RESERVED, WARNING), (NO_DLQ, WARNING)],
        }
    )
    functions = {m.where.function for m in mappings([FIXTURES / "alias" / name])}
    assert functions == {"aws_lambda_function.render"}


def test_redrive_policy_resource_in_a_first_plan_links_the_dlq_but_not_its_count():
    # GIVEN aws_sqs_queue_redrive_policy (queue_url = aws_sqs_queue.jobs.id) and a DLQ
    # with the default retention, like its source's
    assert verdicts(FIXTURES / "redrive" / "plan.json") == expect(
        {
            "aws_lambda_event_source_mapping.jobs": [
                (DLQ_RETENTION, WARNING),
                (WHOLE_BATCH, WARNING),  # batch_size null: AWS's 10, no ReportBatchItemFailures
                (UNCHECKED, INFO),
            ]
        }
    )


def test_redrive_policy_resource_in_the_state_gives_the_count_too():
    assert verdicts(FIXTURES / "redrive" / "state.json") == expect(
        {
            "aws_lambda_event_source_mapping.jobs": [
                (DLQ_RETENTION, WARNING),
                (FEW_RECEIVES, WARNING),
                (WHOLE_BATCH, WARNING),
            ]
        }
    )


def test_fifo_pair_with_equal_retention_is_not_a_retention_finding():
    # The dead-letter retention rule does not apply to FIFO queues.
    assert verdicts(FIXTURES / "fifo" / "state.json") == expect(
        {"aws_lambda_event_source_mapping.orders": []}
    )
    assert verdicts(FIXTURES / "fifo" / "plan.json") == expect(
        {"aws_lambda_event_source_mapping.orders": [(UNCHECKED, INFO)]}
    )
    (orders,) = mappings([FIXTURES / "fifo" / "state.json"])
    assert orders.facts.queue.fifo is True  # type: ignore[union-attr]


# --- links that cannot be made: unchecked, naming what is unknown -------------------------

LINKS = FIXTURES / "links" / "plan.json"


def test_links_fixture_verdicts():
    assert verdicts(LINKS) == expect(
        {
            "aws_lambda_event_source_mapping.external_queue": [(UNCHECKED, INFO)],
            "aws_lambda_event_source_mapping.literal_index": [(NO_DLQ, WARNING)],
            "aws_lambda_event_source_mapping.either": [(UNCHECKED, INFO)],
            "aws_lambda_event_source_mapping.splat": [(UNCHECKED, INFO)],
            "aws_lambda_event_source_mapping.via_local": [(UNCHECKED, INFO)],
            'aws_lambda_event_source_mapping.each_value["x"]': [(UNCHECKED, INFO)],
            "aws_lambda_event_source_mapping.unknown_values": [
                (NO_DLQ, WARNING),
                (UNCHECKED, INFO),
            ],
        }
    )


@pytest.mark.parametrize(
    ("address", "named"),
    [
        # a known ARN of a queue no file of the run manages
        (
            "aws_lambda_event_source_mapping.external_queue",
            ["arn:aws:sqs:eu-west-1:123456789012:managed-elsewhere", "not managed"],
        ),
        # a conditional between two queues: ambiguous
        ("aws_lambda_event_source_mapping.either", ["aws_sqs_queue.a", "aws_sqs_queue.b"]),
        # a splat of a counted resource: ambiguous between its instances
        (
            "aws_lambda_event_source_mapping.splat",
            ["aws_sqs_queue.many[0]", "aws_sqs_queue.many[1]"],
        ),
        # locals are not in the plan's configuration
        ("aws_lambda_event_source_mapping.via_local", ["local.queue_arn"]),
        ('aws_lambda_event_source_mapping.each_value["x"]', ["each.value.queue"]),
        # values after_unknown: the function's timeout and the batch size
        (
            "aws_lambda_event_source_mapping.unknown_values",
            ["timeout (aws_lambda_function.late)", "batch_size", "known only after apply"],
        ),
    ],
)
def test_unchecked_names_what_is_unknown(address: str, named: list[str]):
    message = messages(LINKS, address)
    for text in named:
        assert text in message


def test_queue_unknown_skips_the_queue_rules_and_still_checks_the_mapping():
    # GIVEN the ambiguous mapping WHEN evaluated THEN the queue's rules are listed as skipped
    message = messages(LINKS, "aws_lambda_event_source_mapping.either")
    assert VIS in message
    assert DLQ_RETENTION in message
    # and the mapping's own rules are not: batch size 1 needs no ReportBatchItemFailures
    assert WHOLE_BATCH not in message
    assert verdicts(LINKS)["aws_lambda_event_source_mapping.either"] == [(UNCHECKED, INFO)]


def test_an_unknown_queue_lists_the_dead_letter_queue_rule_as_skipped():
    assert NO_DLQ in messages(LINKS, "aws_lambda_event_source_mapping.either")


def test_a_literal_index_and_a_known_function_name_are_linked():
    linked = {m.address: m.where.fields() for m in mappings([LINKS])}
    assert linked["aws_lambda_event_source_mapping.literal_index"]["queue"] == (
        "aws_sqs_queue.many[0]"
    )
    # function_name = "links-fn", a literal: linked by name
    assert linked["aws_lambda_event_source_mapping.via_local"]["function"] == (
        "aws_lambda_function.fn"
    )
    # the known ARN of a queue outside the run is shown as the mapping's queue
    assert linked["aws_lambda_event_source_mapping.external_queue"]["queue"] == (
        "arn:aws:sqs:eu-west-1:123456789012:managed-elsewhere"
    )


def test_non_sqs_mapping_is_left_out():
    addresses = {m.address for m in mappings([LINKS])}
    assert "aws_lambda_event_source_mapping.kinesis" not in addresses
    assert check_paths([LINKS]).mappings_checked == 7


def _edit(path: Path, tmp_path: Path, edit: Any) -> Path:
    body = json.loads(path.read_text())
    edit(body)
    target = tmp_path / path.name
    target.write_text(json.dumps(body))
    return target


def _change(body: dict[str, Any], address: str) -> dict[str, Any]:
    (change,) = [c["change"] for c in body["resource_changes"] if c["address"] == address]
    return change


def _planned(body: dict[str, Any], address: str) -> dict[str, Any]:
    (resource,) = [
        r for r in body["planned_values"]["root_module"]["resources"] if r["address"] == address
    ]
    return resource


def test_after_unknown_inside_a_block_is_unknown_not_unset(tmp_path: Path):
    # GIVEN the alias plan with scaling_config's maximum_concurrency marked after_unknown
    def edit(body: dict[str, Any]) -> None:
        address = "aws_lambda_event_source_mapping.bulk"
        _change(body, address)["after_unknown"]["scaling_config"] = [{"maximum_concurrency": True}]
        _planned(body, address)["values"]["scaling_config"] = [{}]

    path = _edit(FIXTURES / "alias" / "plan.json", tmp_path, edit)
    # THEN neither concurrency rule guesses: both are reported as skipped
    message = messages(path, "aws_lambda_event_source_mapping.bulk")
    assert "maximum_concurrency" in message
    assert ABOVE_RESERVED in message
    assert RESERVED in message


def test_an_unlinked_redrive_policy_resource_makes_every_queue_redrive_unknown(tmp_path: Path):
    # GIVEN the redrive plan whose aws_sqs_queue_redrive_policy points through a local
    def edit(body: dict[str, Any]) -> None:
        (resource,) = [
            r
            for r in body["configuration"]["root_module"]["resources"]
            if r["address"] == "aws_sqs_queue_redrive_policy.jobs"
        ]
        resource["expressions"]["queue_url"] = {"references": ["local.queue_url"]}

    path = _edit(FIXTURES / "redrive" / "plan.json", tmp_path, edit)
    # THEN the queue is not said to lack a DLQ: its redrive policy is unknown
    found = verdicts(path)["aws_lambda_event_source_mapping.jobs"]
    assert (NO_DLQ, WARNING) not in found
    assert "aws_sqs_queue_redrive_policy.jobs" in messages(
        path, "aws_lambda_event_source_mapping.jobs"
    )


def _point_external_queue_at(body: dict[str, Any], arn: str) -> None:
    _planned(body, "aws_lambda_event_source_mapping.external_queue")["values"][
        "event_source_arn"
    ] = arn


def test_a_known_arn_is_linked_by_the_queue_name_while_the_queue_arn_is_unknown(tmp_path: Path):
    # GIVEN a first plan whose mapping names a planned queue by a known ARN
    # (e.g. "arn:aws:sqs:${region}:${account}:${aws_sqs_queue.a.name}")
    path = _edit(
        LINKS,
        tmp_path,
        lambda body: _point_external_queue_at(body, "arn:aws:sqs:eu-west-1:123456789012:links-a"),
    )
    # THEN it is linked to that queue by name and checked: 180 s = 6 x 30 s, no DLQ
    (found,) = [m for m in mappings([path]) if m.address.endswith(".external_queue")]
    assert found.where.queue == "aws_sqs_queue.a"
    assert verdicts(path)["aws_lambda_event_source_mapping.external_queue"] == [(NO_DLQ, WARNING)]


def test_a_queue_name_shared_by_two_queues_is_ambiguous(tmp_path: Path):
    def edit(body: dict[str, Any]) -> None:
        _point_external_queue_at(body, "arn:aws:sqs:eu-west-1:123456789012:links-a")
        _planned(body, "aws_sqs_queue.b")["values"]["name"] = "links-a"

    path = _edit(LINKS, tmp_path, edit)
    message = messages(path, "aws_lambda_event_source_mapping.external_queue")
    assert "matches several queues (aws_sqs_queue.a, aws_sqs_queue.b)" in message


def test_a_plan_and_the_state_of_the_same_configuration_checked_together_link_each_in_its_own_file():
    # The same queue ARN is in both files; each mapping is linked within its own file.
    found = check_paths([FIXTURES / "seed" / "second-plan.json", FIXTURES / "seed" / "state.json"])
    assert found.mappings_checked == 2
    assert [(f.template, f.rule_id) for f in found.findings] == [
        (str(FIXTURES / "seed" / "second-plan.json"), VIS)
    ]


# --- acknowledgements: tags ------------------------------------------------------------------

ACKNOWLEDGE = FIXTURES / "acknowledge" / "plan.json"


def test_acknowledgement_tags_on_the_mapping_and_the_function_are_read():
    found = {m.address: m.facts.acknowledgements for m in mappings([ACKNOWLEDGE])}
    assert found["aws_lambda_event_source_mapping.audit"] == (
        Acknowledgement(
            "safe-queue:filter-deletes-unmatched",
            "only audit events are sent to this queue",
            "tag safe-queue:acknowledge:filter-deletes-unmatched on"
            " aws_lambda_event_source_mapping.audit",
        ),
        Acknowledgement(
            NO_DLQ,
            "audit events are replayed from S3",
            "tag safe-queue:acknowledge:no-dead-letter-queue on aws_lambda_function.audit",
        ),
    )


def test_acknowledged_findings_are_reported_marked_and_the_others_stay(tmp_path: Path):
    # GIVEN the plan as written THEN only the unacknowledged batch warning is open
    assert verdicts(ACKNOWLEDGE) == expect(
        {
            "aws_lambda_event_source_mapping.audit": [],
            "aws_lambda_event_source_mapping.errors": [(WHOLE_BATCH, WARNING)],
        }
    )
    # and the acknowledged ones are still reported, marked
    assert verdicts(ACKNOWLEDGE, acknowledged=True) == expect(
        {
            "aws_lambda_event_source_mapping.audit": [
                ("safe-queue:filter-deletes-unmatched", WARNING),
                (NO_DLQ, WARNING),
            ],
            # the function's tag covers every mapping of the function
            "aws_lambda_event_source_mapping.errors": [(NO_DLQ, WARNING)],
        }
    )

    # GIVEN the same plan without any tag THEN the acknowledged findings come back
    def untag(body: dict[str, Any]) -> None:
        for resource in body["planned_values"]["root_module"]["resources"]:
            resource["values"]["tags"] = None
            resource["values"]["tags_all"] = None

    assert verdicts(_edit(ACKNOWLEDGE, tmp_path, untag)) == expect(
        {
            "aws_lambda_event_source_mapping.audit": [
                ("safe-queue:filter-deletes-unmatched", WARNING),
                (NO_DLQ, WARNING),
            ],
            "aws_lambda_event_source_mapping.errors": [(NO_DLQ, WARNING), (WHOLE_BATCH, WARNING)],
        }
    )


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (f"{ACKNOWLEDGE_TAG}filter-delete", "typo", "names no safe-queue rule"),
        (f"{ACKNOWLEDGE_TAG}filter-deletes-unmatched", " ", "has no reason"),
    ],
)
def test_a_bad_acknowledgement_tag_is_an_input_error_naming_the_resource(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key: str, value: str, expected: str
):
    def edit(body: dict[str, Any]) -> None:
        resource = _planned(body, "aws_lambda_event_source_mapping.audit")
        resource["values"]["tags_all"] = {key: value}

    path = _edit(ACKNOWLEDGE, tmp_path, edit)
    code, out, err = run(capsys, str(path))
    assert code == 2
    assert out == ""
    assert err.startswith(f"safe-queue check: error: {path}: aws_lambda_event_source_mapping.audit")
    assert expected in err
    assert "Fix:" in err
    assert len(err.strip().splitlines()) == 1


def test_provisioned_pollers_are_read_into_the_facts():
    (errors,) = [m for m in mappings([ACKNOWLEDGE]) if m.address.endswith(".errors")]
    assert errors.facts.provisioned == ProvisionedFacts(minimum_pollers=2, maximum_pollers=20)
    (audit,) = [m for m in mappings([ACKNOWLEDGE]) if m.address.endswith(".audit")]
    assert audit.facts.provisioned is None


def test_acknowledged_findings_never_fail_a_run(capsys: pytest.CaptureFixture[str]):
    path = str(ACKNOWLEDGE)
    # the open batch warning fails --fail-on warning; the acknowledged ones alone would not
    assert run(capsys, "--fail-on", "warning", path)[0] == 1
    _, out, _ = run(capsys, "--format", "json", "--fail-on", "never", path)
    (audit_filter,) = [
        f
        for f in json.loads(out)["findings"]
        if f["resource"].endswith(".audit") and f["rule_id"].endswith("filter-deletes-unmatched")
    ]
    assert audit_filter["acknowledged"]["reason"] == "only audit events are sent to this queue"


# --- the CLI: recognition, exit codes, formats -----------------------------------------------


def test_check_exit_codes_follow_fail_on(capsys: pytest.CaptureFixture[str]):
    broken = str(FIXTURES / "seed" / "plan-broken.json")
    assert run(capsys, broken)[0] == 1
    assert run(capsys, str(FIXTURES / "seed" / "state.json"))[0] == 0
    assert run(capsys, "--fail-on", "warning", str(FIXTURES / "alias" / "plan.json"))[0] == 1
    assert run(capsys, "--fail-on", "never", broken)[0] == 0


def test_text_output_names_the_file_and_the_resource_address(capsys: pytest.CaptureFixture[str]):
    path = str(FIXTURES / "modules" / "plan.json")
    _, out, _ = run(capsys, path)
    lines = out.splitlines()
    assert lines[0] == path
    assert (
        f"  {path}: error {VIS} module.workers.aws_lambda_event_source_mapping.this"
        '["invoices"] Queue VisibilityTimeout 30 s is below the function Timeout 60 s'
    ) in out
    assert lines[-1] == "2 errors, 10 warnings, 0 infos in 7 mappings (1 template)"


def test_json_output_has_the_address_and_no_line(capsys: pytest.CaptureFixture[str]):
    path = str(FIXTURES / "seed" / "plan-broken.json")
    _, out, _ = run(capsys, "--format", "json", "--fail-on", "never", path)
    report = json.loads(out)
    first = report["findings"][0]
    assert first["resource"] == SEED
    assert first["template"] == path
    assert first["line"] is None
    assert first["queue"] == "aws_sqs_queue.render"
    assert first["function"] == "aws_lambda_function.render"
    assert first["terraform"] == "plan"
    assert report["summary"]["sources"] == [path]


def test_sarif_names_the_mapping_by_its_address_as_a_logical_location(
    capsys: pytest.CaptureFixture[str],
):
    path = str(FIXTURES / "modules" / "plan.json")
    _, out, _ = run(capsys, "--format", "sarif", "--fail-on", "never", path)
    results = json.loads(out)["runs"][0]["results"]
    names = {r["locations"][0]["logicalLocations"][0]["name"] for r in results}
    assert 'module.workers.aws_lambda_event_source_mapping.this["invoices"]' in names
    assert all(r["locations"][0]["logicalLocations"][0]["kind"] == "resource" for r in results)


def test_templates_and_terraform_files_in_one_run_make_one_report(
    capsys: pytest.CaptureFixture[str],
):
    template = Path(__file__).parent / "fixtures" / "templates" / "seed000_fixed.yaml"
    code, out, _ = run(capsys, str(FIXTURES / "seed" / "plan-broken.json"), str(template))
    assert code == 1
    assert out.splitlines()[-1] == "1 error, 0 warnings, 1 info in 2 mappings (2 templates)"


def test_recognised_by_format_version_and_not_by_file_name(tmp_path: Path):
    renamed = tmp_path / "anything.txt"
    renamed.write_text((FIXTURES / "seed" / "state.json").read_text())
    empty_state = tmp_path / "empty.json"
    empty_state.write_text('{"format_version": "1.0"}')
    template = Path(__file__).parent / "fixtures" / "templates" / "rules.json"
    assert is_terraform_json(renamed)
    assert is_terraform_json(empty_state)
    assert not is_terraform_json(template)
    assert not is_terraform_json(tmp_path / "missing.json")
    assert not is_terraform_json(tmp_path)
    assert check_paths([empty_state]).mappings_checked == 0


def _binary_plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.out"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("tfplan", b"\x00binary")
    return path


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (_binary_plan, "binary format, not JSON. Fix: run `terraform show -json plan.out"),
        (
            lambda tmp: _write(
                tmp,
                "terraform.tfstate",
                {
                    "version": 4,
                    "terraform_version": "1.11.4",
                    "serial": 3,
                    "lineage": "x",
                    "resources": [],
                },
            ),
            "raw state file (terraform.tfstate)",
        ),
        (
            lambda tmp: _write(tmp, "plan.json", {"format_version": "2.0", "planned_values": {}}),
            "format_version '2.0' is not supported",
        ),
    ],
)
def test_files_that_are_not_checkable_exit_2_with_the_command_that_fixes_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: Any, expected: str
):
    path = make(tmp_path)
    code, out, err = run(capsys, str(path))
    assert code == 2
    assert out == ""
    assert err.startswith(f"safe-queue check: error: {path}: ")
    assert expected in err
    assert len(err.strip().splitlines()) == 1


def _write(tmp_path: Path, name: str, body: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(body))
    return path


def test_a_parameter_with_only_terraform_files_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
):
    code, _, err = run(capsys, "--parameter", "Timeout=3", str(FIXTURES / "seed" / "state.json"))
    assert code == 2
    assert "--parameter Timeout: no template declares it" in err


def test_check_needs_no_terraform_on_path(capsys: pytest.CaptureFixture[str], monkeypatch):
    # GIVEN a PATH without terraform WHEN a plan is checked THEN it works the same
    monkeypatch.setenv("PATH", "/nonexistent")
    code, out, _ = run(capsys, str(FIXTURES / "seed" / "plan-broken.json"))
    assert code == 1
    assert VIS in out
