"""The real-world corpus (issue 17): `safe-queue check` and the CDK plugin give one verdict.

tests/fixtures/corpus holds SQS -> Lambda consumers gathered from public repositories
(aws-samples/serverless-patterns, aws-samples/aws-cdk-examples, cdk-patterns/serverless and
other aws-samples apps; each file names its source, commit and licence):

- cdk/: CDK apps (Python ones, and TypeScript ones written in Python), each a function
  ``build(scope)`` that creates the app's stacks with every SQS, Lambda and mapping setting
  of the source;
- templates/: SAM and CloudFormation templates, trimmed to the queues, functions and event
  sources;
- verdicts.json: for every mapping, the findings a reviewer expects from the source, each
  with why it is true, and the number of mappings per app and template.

All the CDK apps are synthesized once, each in its own Stage of one App, with
``SafeQueueChecks`` as a validation plugin; ``check_paths`` then reads the same cloud
assembly. The plugin's verdicts must equal check's, and both the manifest: a finding the
manifest does not list is a new false positive, and fails here.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Validations

from safe_queue import SafeQueueChecks
from safe_queue.engine import rule
from safe_queue.plugin import PLUGIN_NAME
from safe_queue.template import check_paths, mappings

from .conftest import CDK_CONTEXT, ROOT

CORPUS = ROOT / "tests" / "fixtures" / "corpus"
CDK_APPS = sorted((CORPUS / "cdk").glob("*.py"))
TEMPLATES = sorted((CORPUS / "templates").glob("*.yaml"))
MANIFEST: dict[str, Any] = json.loads((CORPUS / "verdicts.json").read_text())

# Synth writes the validation report whatever it holds, instead of raising on an error.
CONTEXT = {**CDK_CONTEXT, "@aws-cdk/core:failSynthOnValidationErrors": False}

Verdict = frozenset[tuple[str, str]]
"""A mapping's findings: (rule id, level)."""


def stage_id(app: str) -> str:
    return app.replace("_", "-")


def expected(entry: dict[str, Any]) -> Verdict:
    return frozenset((finding["rule"], finding["level"]) for finding in entry["findings"])


def verdicts(findings: list[Any]) -> dict[tuple[str, str], Verdict]:
    """Group check's findings by mapping: (template file name, mapping logical id)."""
    grouped: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for finding in findings:
        key = (os.path.basename(finding.template), finding.resource)
        grouped[key].add((finding.rule_id, finding.level.value))
    return {key: frozenset(value) for key, value in grouped.items()}


@dataclass(frozen=True)
class Mapping:
    """One SQS mapping of the corpus, named as the manifest names it."""

    app: str
    at: str  # CDK: the stack's path under the app's Stage; template: the mapping's logical id
    queue: str | None
    function: str | None
    key: tuple[str, str]  # (template file name, mapping logical id)


# --- the CDK apps: one App, one synth ----------------------------------------------------


@dataclass(frozen=True)
class Synthesized:
    mappings: list[Mapping]
    esm_paths: dict[str, tuple[str, str]]  # CDK construct path -> (template, logical id)
    esm_per_app: dict[str, int]
    check: dict[tuple[str, str], Verdict]
    plugin: dict[tuple[str, str], Verdict]
    plugin_report: dict[str, Any]


def load_app(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"corpus_cdk_{path.stem}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def resources(app: cdk.App) -> dict[tuple[str, str], tuple[cdk.Stack, str]]:
    """Every CloudFormation resource: (template, logical id) -> (stack, path in the stack)."""
    found = {}
    for construct in app.node.find_all():
        if not cdk.CfnResource.is_cfn_resource(construct):
            continue
        stack = cdk.Stack.of(construct)
        logical_id = stack.resolve(stack.get_logical_id(construct))
        path = construct.node.path.removeprefix(stack.node.path + "/").removesuffix("/Resource")
        found[(stack.template_file, logical_id)] = (stack, path)
    return found


def plugin_verdicts(
    report: dict[str, Any], esm_paths: dict[str, tuple[str, str]]
) -> dict[tuple[str, str], Verdict]:
    """Group the plugin's violations by mapping, read from the validation report CDK wrote.

    Every app is in a Stage, so each violation names no construct and says where its mapping
    is: ``[<construct path> in <template file>] <message>``.
    """
    grouped: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for violation in report["violations"]:
        where = re.match(r"\[(\S+) in (\S+)\] ", violation["description"])
        assert where is not None, violation["description"]
        key = esm_paths[where[1]]
        assert key[0] == where[2], (where[0], key)
        grouped[key].add((violation["ruleName"], violation["severity"]))
    return {key: frozenset(value) for key, value in grouped.items()}


HAS_VALIDATION_SWITCH = (
    "builtin_cloud_formation_validation" in inspect.signature(cdk.App.__init__).parameters
)


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    outdir = tmp_path_factory.mktemp("corpus") / "cdk.out"
    # CDK's built-in CloudFormation validation is not under test, and would double the synth
    # (aws-cdk-lib 2.262.0, the oldest supported, has no switch for it)
    quiet = {"builtin_cloud_formation_validation": False} if HAS_VALIDATION_SWITCH else {}
    app = cdk.App(outdir=str(outdir), context=CONTEXT, **quiet)
    Validations.of(app).add_plugins(SafeQueueChecks())
    for path in CDK_APPS:
        load_app(path).build(cdk.Stage(app, stage_id(path.stem)))
    app.synth()

    located = resources(app)
    esm_paths: dict[str, tuple[str, str]] = {}
    esm_per_app: dict[str, int] = defaultdict(int)
    for construct in app.node.find_all():
        if (
            cdk.CfnResource.is_cfn_resource(construct)
            and construct.cfn_resource_type == "AWS::Lambda::EventSourceMapping"
        ):
            stack = cdk.Stack.of(construct)
            logical_id = stack.resolve(stack.get_logical_id(construct))
            esm_paths[construct.node.path] = (stack.template_file, logical_id)
            esm_per_app[construct.node.path.split("/", 1)[0].replace("-", "_")] += 1

    def name(template: str, logical_id: str | None) -> str | None:
        return None if logical_id is None else located[(template, logical_id)][1]

    found = []
    for checked in mappings([outdir])[1]:
        template = os.path.basename(checked.source.template.path)
        stack, _ = located[(template, checked.source.logical_id)]
        stage, stack_path = stack.node.path.split("/", 1)
        found.append(
            Mapping(
                app=stage.replace("-", "_"),
                at=stack_path,
                queue=name(template, checked.where.queue),
                function=name(template, checked.where.function),
                key=(template, checked.source.logical_id),
            )
        )

    report = json.loads((outdir / "validation-report.json").read_text())
    (plugin,) = [p for p in report["pluginReports"] if p["pluginName"] == PLUGIN_NAME]
    return Synthesized(
        mappings=found,
        esm_paths=esm_paths,
        esm_per_app=dict(esm_per_app),
        check=verdicts(check_paths([outdir]).findings),
        plugin=plugin_verdicts(plugin, esm_paths),
        plugin_report=plugin,
    )


def test_the_corpus_is_as_large_as_issue_17_asks() -> None:
    # GIVEN the manifest  THEN 30+ CDK mappings from 15+ apps, and 30+ template mappings
    apps, templates = MANIFEST["cdk"], MANIFEST["templates"]
    assert len(apps) >= 15
    assert sum(app["mapping_count"] for app in apps.values()) >= 30
    assert sum(entry["mapping_count"] for entry in templates.values()) >= 30
    # ... and the manifest covers exactly the fixture files
    assert sorted(apps) == [path.stem for path in CDK_APPS]
    assert sorted(templates) == [path.name for path in TEMPLATES]


def test_every_expected_finding_is_a_rule_at_one_of_its_levels_and_says_why() -> None:
    for entries in (MANIFEST["cdk"], MANIFEST["templates"]):
        for name, entry in entries.items():
            assert entry["source"].startswith("https://github.com/"), name
            assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), name
            assert entry["license"] in {"MIT-0", "MIT", "Apache-2.0"}, name
            assert entry["mapping_count"] == len(entry["mappings"]), name
            for mapping in entry["mappings"]:
                for finding in mapping["findings"]:
                    levels = {level.value for level in rule(finding["rule"]).levels}
                    assert finding["level"] in levels, (name, finding)
                    assert len(finding["reason"]) > 20, (name, finding)


def test_the_plugin_ran_on_the_whole_assembly(synthesized: Synthesized) -> None:
    # GIVEN the synthesized corpus  THEN the plugin raised nothing, and passed: no error expected
    report = synthesized.plugin_report
    assert "error" not in report.get("metadata", {}), report.get("metadata")
    has_errors = any(
        finding["level"] == "error"
        for app in MANIFEST["cdk"].values()
        for mapping in app["mappings"]
        for finding in mapping["findings"]
    )
    assert report["conclusion"] == ("failure" if has_errors else "success")


@pytest.mark.parametrize("app", sorted(MANIFEST["cdk"]))
def test_each_app_has_its_mappings(app: str, synthesized: Synthesized) -> None:
    # GIVEN the app's source  WHEN synthesized and read by check
    read = [mapping for mapping in synthesized.mappings if mapping.app == app]
    # THEN check reads every mapping CDK synthesized, as many as the source has
    assert synthesized.esm_per_app.get(app, 0) == MANIFEST["cdk"][app]["mapping_count"]
    assert len(read) == MANIFEST["cdk"][app]["mapping_count"]


def test_the_plugin_and_check_give_identical_verdicts(synthesized: Synthesized) -> None:
    # GIVEN one cloud assembly  WHEN judged by the plugin during synth and by check after it
    # THEN every mapping has the same findings, rule id and level, from both
    assert synthesized.plugin == synthesized.check
    assert len(synthesized.check) > 0


@pytest.mark.parametrize("app", sorted(MANIFEST["cdk"]))
def test_check_gives_each_cdk_app_its_reviewed_verdicts(app: str, synthesized: Synthesized) -> None:
    # GIVEN the reviewed verdicts of the app's mappings
    want = {
        (entry["stack"], entry["queue"], entry["function"]): expected(entry)
        for entry in MANIFEST["cdk"][app]["mappings"]
    }
    # WHEN check reads the app's stacks  THEN each mapping has exactly those findings
    got = {
        (mapping.at, mapping.queue, mapping.function): synthesized.check.get(
            mapping.key, frozenset()
        )
        for mapping in synthesized.mappings
        if mapping.app == app
    }
    assert got == want


# --- the SAM and CloudFormation templates ---------------------------------------------------


@pytest.fixture(scope="module")
def templates_checked() -> tuple[list[Mapping], dict[tuple[str, str], Verdict]]:
    found = [
        Mapping(
            app=os.path.basename(checked.source.template.path),
            at=checked.source.logical_id,
            queue=checked.where.queue,
            function=checked.where.function,
            key=(os.path.basename(checked.source.template.path), checked.source.logical_id),
        )
        for checked in mappings(TEMPLATES)[1]
    ]
    return found, verdicts(check_paths(TEMPLATES).findings)


@pytest.mark.parametrize("template", sorted(MANIFEST["templates"]))
def test_check_gives_each_template_its_reviewed_verdicts(
    template: str, templates_checked: tuple[list[Mapping], dict[tuple[str, str], Verdict]]
) -> None:
    found, checked = templates_checked
    entry = MANIFEST["templates"][template]
    want = {(m["mapping"], m["queue"], m["function"]): expected(m) for m in entry["mappings"]}
    got = {
        (mapping.at, mapping.queue, mapping.function): checked.get(mapping.key, frozenset())
        for mapping in found
        if mapping.app == template
    }
    assert len(got) == entry["mapping_count"]
    assert got == want


def test_the_cli_gives_the_templates_their_reviewed_verdicts() -> None:
    # GIVEN every corpus template  WHEN `safe-queue check --format json` reads them, as CI would
    completed = subprocess.run(
        [sys.executable, "-m", "safe_queue.cli", "check", "--format", "json", *map(str, TEMPLATES)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    report = json.loads(completed.stdout)
    # THEN it exits 1 exactly when a reviewed verdict is an error (the default --fail-on error)
    entries = MANIFEST["templates"]
    errors = [
        finding
        for entry in entries.values()
        for mapping in entry["mappings"]
        for finding in mapping["findings"]
        if finding["level"] == "error"
    ]
    assert completed.returncode == (1 if errors else 0), completed.stderr
    # ... counts every mapping, and reports exactly the reviewed findings
    assert report["summary"]["mappings_checked"] == sum(
        e["mapping_count"] for e in entries.values()
    )
    got = sorted(
        (os.path.basename(f["template"]), f["resource"], f["rule_id"], f["level"])
        for f in report["findings"]
    )
    want = sorted(
        (name, mapping["mapping"], finding["rule"], finding["level"])
        for name, entry in entries.items()
        for mapping in entry["mappings"]
        for finding in mapping["findings"]
    )
    assert got == want
