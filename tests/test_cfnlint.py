"""safe_queue.cfnlint: the real cfn-lint, with safe-queue's rules appended, gives check's verdicts.

One cfn-lint process (``cfn-lint --append-rules safe_queue.cfnlint --include-checks I95
--format json``) checks every test fixture, both examples of every rule and a few templates
written here (acknowledgements, cfn-lint's ignore_checks, a broken acknowledgement, a
dead-letter queue as old as its source). Each file is compared with ``safe-queue check
<file>`` (cfn-lint judges each template alone, so check is given each file alone): the
same line, mapping, rule id, level and message, acknowledged findings as ``I9501``.
The other tests run cfn-lint in this process (its API, its command-line parser, its
``.cfnlintrc`` reader).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from cfnlint.api import ManualArgs, lint, lint_file
from cfnlint.config import _DEFAULT_RULESDIR, ConfigMixIn
from cfnlint.rules import Rules
from cfnlint.runner import Runner

import safe_queue.engine
from safe_queue import cli
from safe_queue.cfnlint import (
    ACKNOWLEDGED,
    NUMBERS,
    RULE_CLASSES,
    UNREADABLE,
    _ids,
    _rules,
    cfn_lint_id,
)
from safe_queue.engine import RULES, Level, Rule, rule
from safe_queue.engine.example import example

from .conftest import ROOT

MODULE = "safe_queue.cfnlint"
CFN_LINT = Path(sys.executable).parent / "cfn-lint"
FIXTURES = ROOT / "tests" / "fixtures" / "templates"
OUR_ID = re.compile(r"^[EWI]95\d\d$")
LEVEL_OF_LETTER = {"E": "error", "W": "warning", "I": "info"}

# Every template fixture; a cloud assembly's manifest.json and assets files are not templates
# (check expands a manifest into its whole assembly; cfn-lint checks files one by one).
FIXTURE_FILES = sorted(
    path
    for path in FIXTURES.rglob("*")
    if path.suffix in (".yaml", ".yml", ".json")
    and path.name != "manifest.json"
    and not path.name.endswith(".assets.json")
)
# The real-world SAM and CloudFormation templates of tests/test_corpus.py
CORPUS = sorted((ROOT / "tests" / "fixtures" / "corpus" / "templates").glob("*.yaml"))
EXAMPLES = [
    (entry, kind)
    for entry in RULES
    for kind in ("compliant", "non_compliant")
    if getattr(entry, kind) is not None
]

ACKNOWLEDGED_YAML = """\
# Acknowledgements as check reads them: on a SAM function (its SQS events), on a mapping.
Transform: AWS::Serverless-2016-10-31
Resources:
  Dlq:
    Type: AWS::SQS::Queue
    Properties:
      MessageRetentionPeriod: 1209600
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 1082
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt Dlq.Arn
        maxReceiveCount: 5
  Consumer:
    Type: AWS::Serverless::Function
    Metadata:
      safe-queue:
        acknowledge:
          - id: safe-queue:filter-deletes-unmatched
            reason: the queue only carries invoices
    Properties:
      Handler: app.handler
      Runtime: python3.13
      CodeUri: s3://bucket/code.zip
      Timeout: 180
      Events:
        Invoices:
          Type: SQS
          Properties:
            Queue: !GetAtt Queue.Arn
            BatchSize: 5
            MaximumBatchingWindowInSeconds: 2
            FunctionResponseTypes: [ReportBatchItemFailures]
            FilterCriteria:
              Filters:
                - Pattern: '{"body": {"kind": ["invoice"]}}'
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Metadata:
      safe-queue:
        acknowledge:
          - id: safe-queue:no-report-batch-item-failures
            reason: each batch is all or nothing by design
    Properties:
      EventSourceArn: !GetAtt Queue.Arn
      FunctionName: !Ref Consumer
      BatchSize: 5
      MaximumBatchingWindowInSeconds: 2
"""

IGNORED_YAML = """\
# cfn-lint's own ignore_checks: for the template, on a SAM function, on a mapping.
Transform: AWS::Serverless-2016-10-31
Metadata:
  cfn-lint:
    config:
      ignore_checks:
        - W9542
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 60
  Consumer:
    Type: AWS::Serverless::Function
    Metadata:
      cfn-lint:
        config:
          ignore_checks:
            - W9546
    Properties:
      Handler: app.handler
      Runtime: python3.13
      CodeUri: s3://bucket/code.zip
      Timeout: 120
      Events:
        Work:
          Type: SQS
          Properties:
            Queue: !GetAtt Queue.Arn
  Ignored:
    Type: AWS::Lambda::EventSourceMapping
    Metadata:
      cfn-lint:
        config:
          ignore_checks:
            - E9540
    Properties:
      EventSourceArn: !GetAtt Queue.Arn
      FunctionName: !Ref Consumer
  Kept:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      EventSourceArn: !GetAtt Queue.Arn
      FunctionName: !Ref Consumer
"""

BAD_ACKNOWLEDGEMENT_YAML = """\
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Metadata:
      safe-queue:
        acknowledge:
          - id: safe-queue:filter-deletes-unmatched
    Properties:
      EventSourceArn: !GetAtt Queue.Arn
      FunctionName: consumer
"""

SAME_RETENTION = example(
    "A dead-letter queue that keeps messages as long as its source.",
    queue={"retention_period": 345_600},
    dead_letter_queue={"retention_period": 345_600},
)


def example_name(entry: Rule, kind: str) -> str:
    return f"{entry.name}-{kind}.json"


# --- one cfn-lint process for every file --------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """One finding as both tools can state it."""

    line: int
    resource: str
    rule_id: str
    level: str  # error, warning, info, or acknowledged
    message: str


@dataclass
class Run:
    files: dict[str, Path]  # by short name
    matches: dict[str, list[dict[str, Any]]]  # cfn-lint's JSON matches, by short name
    returncode: int

    def ours(self, name: str) -> list[dict[str, Any]]:
        return [m for m in self.matches.get(name, []) if OUR_ID.match(m["Rule"]["Id"])]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    directory = tmp_path_factory.mktemp("cfnlint")
    files = {str(path.relative_to(FIXTURES)): path for path in FIXTURE_FILES}
    files.update({f"corpus/{path.name}": path for path in CORPUS})
    for entry, kind in EXAMPLES:
        path = directory / example_name(entry, kind)
        path.write_text(json.dumps(getattr(entry, kind).template(), indent=1))
        files[path.name] = path
    extras = {
        "acknowledged.yaml": ACKNOWLEDGED_YAML,
        "ignored.yaml": IGNORED_YAML,
        "bad_acknowledgement.yaml": BAD_ACKNOWLEDGEMENT_YAML,
        "same_retention.json": json.dumps(SAME_RETENTION.template(), indent=1),
    }
    for name, text in extras.items():
        (directory / name).write_text(text)
        files[name] = directory / name
    # WHEN cfn-lint runs once over all of them with the module appended, as a user runs it
    completed = subprocess.run(
        [
            str(CFN_LINT),
            "--append-rules",
            MODULE,
            "--include-checks",
            "I95",
            "--format",
            "json",
            "--",
            *(str(path) for path in files.values()),
        ],
        capture_output=True,
        text=True,
        cwd=directory,
        check=False,
    )
    assert completed.stdout.startswith("["), completed.stderr
    by_path = {str(path): name for name, path in files.items()}
    matches: dict[str, list[dict[str, Any]]] = {}
    for match in json.loads(completed.stdout):
        matches.setdefault(by_path[match["Filename"]], []).append(match)
    return Run(files, matches, completed.returncode)


def check(path: Path) -> tuple[int, dict[str, Any] | None, str]:
    """Run ``safe-queue check --format json <path>``; return its exit code, JSON and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["check", "--format", "json", "--fail-on", "never", str(path)])
    return code, (json.loads(out.getvalue()) if code != 2 else None), err.getvalue()


def check_verdicts(report: dict[str, Any]) -> set[Verdict]:
    verdicts = set()
    for finding in report["findings"]:
        acknowledged = finding["acknowledged"]
        mark = f" [acknowledged: {acknowledged['reason']}]" if acknowledged else ""
        verdicts.add(
            Verdict(
                finding["line"],
                finding["resource"],
                finding["rule_id"],
                "acknowledged" if acknowledged else finding["level"],
                finding["message"] + mark,
            )
        )
    return verdicts


def cfn_lint_verdicts(matches: list[dict[str, Any]]) -> set[Verdict]:
    verdicts = set()
    for match in matches:
        cfn_id = match["Rule"]["Id"]
        rule_id, resource, message = match["Message"].split(" ", 2)
        level = "acknowledged" if cfn_id == ACKNOWLEDGED else LEVEL_OF_LETTER[cfn_id[0]]
        if cfn_id != ACKNOWLEDGED:  # the id is the table's, for the finding's level
            assert cfn_id == cfn_lint_id(rule_id, Level(level)), match
        verdicts.add(
            Verdict(match["Location"]["Start"]["LineNumber"], resource, rule_id, level, message)
        )
    return verdicts


COMPARED = [
    *(str(path.relative_to(FIXTURES)) for path in FIXTURE_FILES),
    *(f"corpus/{path.name}" for path in CORPUS),
    *(example_name(entry, kind) for entry, kind in EXAMPLES),
    "acknowledged.yaml",
    "bad_acknowledgement.yaml",
    "same_retention.json",
]


def test_the_real_world_templates_are_compared(run: Run):
    # the corpus's 43 templates (48 mappings) are among the files cfn-lint ran over
    assert len(CORPUS) >= 40
    assert sum(len(run.ours(f"corpus/{path.name}")) for path in CORPUS) > 100


@pytest.mark.parametrize("name", COMPARED)
def test_cfn_lint_reports_what_check_reports(run: Run, name: str):
    # GIVEN what safe-queue check says of the file alone
    code, report, stderr = check(run.files[name])
    ours = run.ours(name)
    if report is None:
        # THEN a file check refuses (exit 2) is an error in cfn-lint too: cfn-lint's own
        # parse error (the rules never ran), or E9500 with check's reason, at its line
        assert code == 2
        parse_errors = [m for m in run.matches.get(name, []) if m["Rule"]["Id"] == "E0000"]
        if parse_errors:
            assert ours == []
            return
        (unreadable,) = ours
        assert unreadable["Rule"]["Id"] == UNREADABLE
        reason = unreadable["Message"].removeprefix("safe-queue could not check it: ")
        assert reason in stderr
        line = re.search(rf"{re.escape(str(run.files[name]))}:(\d+):", stderr)
        expected = int(line.group(1)) if line else 1  # no line: cfn-lint's first
        assert unreadable["Location"]["Start"]["LineNumber"] == expected
        return
    # THEN cfn-lint, with the module, says the same: line, mapping, rule, level, message
    assert cfn_lint_verdicts(ours) == check_verdicts(report)
    assert len(ours) == len(report["findings"])  # and says each once


def test_the_run_exercises_every_cfn_lint_id_of_the_module(run: Run):
    # GIVEN the ids cfn-lint reported for safe-queue, over all files
    reported = {m["Rule"]["Id"] for name in run.files for m in run.ours(name)}
    # THEN every rule class of the module gave at least one match, so the comparison above
    # covers every engine rule, both levels of the rule that has two, and the module's own
    assert reported == {rule_class.id for rule_class in RULE_CLASSES}  # type: ignore[attr-defined]
    assert {"E9544", "W9544", ACKNOWLEDGED, UNREADABLE, "I9590"} <= reported
    # and cfn-lint's exit code (a bitmask) says there were errors, warnings and infos
    assert run.returncode & 2
    assert run.returncode & 4
    assert run.returncode & 8


def test_each_non_compliant_example_reports_its_rule_and_no_compliant_one_anything(run: Run):
    for entry, kind in EXAMPLES:
        ids = {m["Message"].split(" ", 1)[0] for m in run.ours(example_name(entry, kind))}
        if kind == "non_compliant":
            assert entry.id in ids, entry.id
        else:
            assert ids == set(), entry.id


def test_acknowledged_findings_are_informational_with_their_reason(run: Run):
    # GIVEN acknowledgements on a SAM function and on a mapping
    ours = run.ours("acknowledged.yaml")
    # THEN each finding is I9501 with its reason, on its line, and never an error or warning
    assert sorted((m["Rule"]["Id"], m["Location"]["Start"]["LineNumber"]) for m in ours) == [
        (ACKNOWLEDGED, 28),  # the SAM event Invoices
        (ACKNOWLEDGED, 38),  # the mapping
    ]
    messages = sorted(m["Message"] for m in ours)
    assert messages[0].startswith("safe-queue:filter-deletes-unmatched ConsumerInvoices ")
    assert messages[0].endswith("[acknowledged: the queue only carries invoices]")
    assert messages[1].startswith("safe-queue:no-report-batch-item-failures Mapping ")
    assert messages[1].endswith("[acknowledged: each batch is all or nothing by design]")


def test_cfn_lint_ignore_checks_metadata_works_on_our_ids(run: Run):
    # GIVEN check's findings: three mappings, each with E9540, W9542 and W9546
    _, report, _ = check(run.files["ignored.yaml"])
    assert report is not None
    found = {
        (f["resource"], cfn_lint_id(f["rule_id"], Level(f["level"]))) for f in report["findings"]
    }
    assert found == {
        (resource, cfn_id)
        for resource in ("ConsumerWork", "Ignored", "Kept")
        for cfn_id in ("E9540", "W9542", "W9546")
    }
    # WHEN cfn-lint reads its own ignore_checks: W9542 for the template, W9546 on the SAM
    # function (its event's matches), E9540 on the mapping Ignored
    reported = {(m["Message"].split(" ")[1], m["Rule"]["Id"]) for m in run.ours("ignored.yaml")}
    # THEN exactly those are left out
    assert reported == {
        ("ConsumerWork", "E9540"),
        ("Ignored", "W9546"),
        ("Kept", "E9540"),
        ("Kept", "W9546"),
    }


def test_a_broken_acknowledgement_is_one_error_naming_the_resource(run: Run):
    (match,) = run.ours("bad_acknowledgement.yaml")
    assert match["Rule"]["Id"] == UNREADABLE
    assert match["Location"]["Start"]["LineNumber"] == 4  # the mapping
    assert "Mapping" in match["Message"]
    assert "safe-queue:filter-deletes-unmatched has no reason" in match["Message"]


# --- the ids --------------------------------------------------------------------------------


def test_every_engine_rule_has_one_number_in_its_kinds_block():
    assert set(NUMBERS) == {entry.id for entry in RULES}
    assert len(set(NUMBERS.values())) == len(NUMBERS)
    for entry in RULES:
        assert NUMBERS[entry.id] in _ids.BLOCKS[entry.kind], entry.id
    for own in (UNREADABLE, ACKNOWLEDGED):
        assert int(own[1:]) in _ids.BLOCKS["module"]
        assert own[1:] not in {str(number) for number in NUMBERS.values()}


def test_ids_have_cfn_lints_shape_in_its_users_range_and_none_is_cfn_lints_own():
    ours = {rule_class.id for rule_class in RULE_CLASSES}  # type: ignore[attr-defined]
    assert all(re.fullmatch(r"[EWI]9\d{3}", cfn_id) for cfn_id in ours)
    assert len(ours) == len(RULE_CLASSES)
    builtin = Rules.create_from_directory(_DEFAULT_RULESDIR)
    assert len(builtin) > 300  # cfn-lint's own rules were found
    assert not {cfn_id[1:] for cfn_id in ours} & {cfn_id[1:] for cfn_id in builtin}


def test_the_letter_is_the_level_and_a_two_level_rule_has_two_ids():
    assert cfn_lint_id("safe-queue:no-dead-letter-queue", Level.WARNING) == "W9542"
    assert cfn_lint_id("safe-queue:unchecked", Level.INFO) == "I9590"
    assert _ids.cfn_lint_ids("safe-queue:dead-letter-retention-too-short") == ("E9544", "W9544")


def test_a_new_engine_rule_without_a_number_stops_the_module_loading(
    monkeypatch: pytest.MonkeyPatch,
):
    # GIVEN an engine rule the table does not know
    new = replace(rule("safe-queue:no-dead-letter-queue"), id="safe-queue:brand-new")
    monkeypatch.setattr(safe_queue.engine, "RULES", (*RULES, new))
    try:
        # THEN loading the table fails, naming the rule and the fix (cfn-lint prints it)
        with pytest.raises(ImportError, match=r"safe-queue:brand-new .*Fix: add them to NUMBERS"):
            importlib.reload(_ids)
    finally:
        monkeypatch.undo()
        importlib.reload(_ids)


# --- the rules as cfn-lint loads them -----------------------------------------------------


def test_the_module_gives_cfn_lint_one_rule_per_engine_rule_and_level():
    # WHEN cfn-lint loads the module as --append-rules does
    loaded = Rules.create_from_module(MODULE)
    # THEN it has the module's two rules and one per engine rule and level, declared from
    # the engine's words
    assert set(loaded) == {UNREADABLE, ACKNOWLEDGED} | {
        cfn_lint_id(entry.id, level) for entry in RULES for level in entry.levels
    }
    for entry in RULES:
        for level in entry.levels:
            declared = loaded[cfn_lint_id(entry.id, level)]
            assert declared.shortdesc == entry.summary
            assert declared.description.startswith(f"{entry.id}: {entry.why} Fix: {entry.fix}")
            assert declared.source_url == entry.docs_url
            assert declared.tags == list(entry.tags)
            assert declared.severity == {"error": "error", "warning": "warning"}.get(
                level.value, "informational"
            )
    assert loaded[ACKNOWLEDGED].severity == "informational"
    assert loaded[UNREADABLE].severity == "error"


def _ours(matches: list[Any]) -> list[tuple[str, int, str]]:
    return sorted((m.rule.id, m.linenumber, m.message) for m in matches if OUR_ID.match(m.rule.id))


def test_a_template_without_a_file_gets_the_same_matches(run: Run):
    # GIVEN templates given to cfn-lint as text (stdin, or its API), not as a file
    for name in ("sam_globals.yaml", "rules.json", "acknowledged.yaml"):
        matches = lint(
            run.files[name].read_text(),
            config=ManualArgs(append_rules=[MODULE], include_checks=["I95"]),
        )
        # THEN the matches are those of the file: ids, lines (found from the path: the SAM
        # event's, the mapping's) and messages
        from_file = sorted(
            (m["Rule"]["Id"], m["Location"]["Start"]["LineNumber"], m["Message"])
            for m in run.ours(name)
        )
        assert _ours(matches) == from_file != []


def test_the_cfnlintrc_of_the_docs_turns_it_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # GIVEN a repository with the .cfnlintrc the docs and the README show
    (tmp_path / ".cfnlintrc").write_text(documented_cfnlintrc())
    (tmp_path / "rules.json").write_text((FIXTURES / "rules.json").read_text())
    (tmp_path / "acknowledged.yaml").write_text(ACKNOWLEDGED_YAML)
    monkeypatch.chdir(tmp_path)
    # WHEN cfn-lint runs with no options but the files, as editors and pre-commit run it
    matches = list(Runner(ConfigMixIn(["--", "rules.json", "acknowledged.yaml"])).run())
    # THEN safe-queue's errors, warnings and informational matches are there
    ids = {m.rule.id for m in matches if OUR_ID.match(m.rule.id)}
    assert {"E9544", "E9580", "W9541", "W9550", ACKNOWLEDGED} <= ids
    # and no informational rule of cfn-lint's own was switched on
    assert [m.rule.id for m in matches if m.rule.id.startswith("I")] == [ACKNOWLEDGED] * 2


def test_the_append_rules_option_turns_it_on():
    # GIVEN cfn-lint's command line parser, as the cfn-lint command uses it
    config = ConfigMixIn(["--append-rules", MODULE, "--", str(FIXTURES / "rules.json")])
    # THEN safe-queue's rules run (and without -c I95, informational matches stay hidden)
    ids = {m.rule.id for m in Runner(config).run()}
    assert {"E9544", "W9541", "E9580"} <= ids
    assert not any(cfn_id.startswith("I") for cfn_id in ids)


@contextlib.contextmanager
def counting_judgements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    calls: list[str] = []
    real = _rules.judge_file

    def counted(path: str, **kwargs: Any) -> Any:
        calls.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(_rules, "judge_file", counted)
    yield calls


def test_each_template_is_judged_once_not_once_per_rule(monkeypatch: pytest.MonkeyPatch):
    files = [str(FIXTURES / "rules.json"), str(FIXTURES / "sam_globals.yaml")]
    with counting_judgements(monkeypatch) as calls:
        config = ConfigMixIn(["--append-rules", MODULE, "--", *files])
        matches = list(Runner(config).run())
    assert len(RULE_CLASSES) > 25  # every one of them ran on each file
    assert calls == files
    assert len([m for m in matches if OUR_ID.match(m.rule.id)]) == 8 + 5


@pytest.mark.parametrize("broken", ["judge_file", "_rule_match"])
def test_a_failure_inside_safe_queue_is_one_error_not_one_per_rule(
    monkeypatch: pytest.MonkeyPatch, broken: str
):
    # GIVEN a bug in the adapter, or in placing a match
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(_rules, broken, fail)
    matches = lint_file(FIXTURES / "rules.json", config=ManualArgs(append_rules=[MODULE]))
    # THEN cfn-lint shows one error saying so (not silence, not E0002 once per rule)
    (failure,) = [m for m in matches if m.rule.id in (UNREADABLE, "E0002")]
    assert failure.rule.id == UNREADABLE
    assert "RuntimeError: boom" in failure.message
    assert "bug in safe-queue" in failure.message


# --- the docs -------------------------------------------------------------------------------


def documented_cfnlintrc() -> str:
    """The .cfnlintrc the docs page shows (and the README shows the same)."""
    text = (ROOT / "docs" / "cfn-lint.md").read_text()
    blocks = re.findall(r"```yaml title=\"\.cfnlintrc\"\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/cfn-lint.md shows one .cfnlintrc"
    return str(blocks[0])


def test_the_readme_shows_the_same_cfnlintrc():
    readme = (ROOT / "README.md").read_text()
    assert documented_cfnlintrc() in readme


def _id_rows(text: str) -> set[tuple[str, str]]:
    rows = re.findall(r"^\| `([EWI]9\d{3})` \| ([^|]+?) \|", text, re.M)
    named = {cfn_id: re.search(r"safe-queue:[a-z-]+", cell) for cfn_id, cell in rows}
    return {(cfn_id, found.group() if found else "—") for cfn_id, found in named.items()}


@pytest.mark.parametrize("page", ["README.md", "docs/cfn-lint.md"])
def test_the_id_tables_list_every_cfn_lint_id(page: str):
    # The tables are written by hand: this keeps them in step with the module.
    rows = _id_rows((ROOT / page).read_text())
    expected = {
        (cfn_lint_id(entry.id, level), entry.id) for entry in RULES for level in entry.levels
    }
    expected |= {(UNREADABLE, "—"), (ACKNOWLEDGED, "—")}
    assert rows == expected
