"""The `safe-queue-check` pre-commit hook (.pre-commit-hooks.yaml), run by pre-commit itself."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement

from .conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "templates"
VENV_BIN = Path(sys.executable).parent  # .venv/bin (or .venv-oldest/bin)
MANIFEST = ROOT / ".pre-commit-hooks.yaml"


@pytest.fixture(scope="module")
def hook() -> dict[str, Any]:
    hooks = yaml.safe_load(MANIFEST.read_text())
    assert [entry["id"] for entry in hooks] == ["safe-queue-check"]
    entry: dict[str, Any] = hooks[0]
    return entry


def _selected(hook: dict[str, Any], path: str) -> bool:
    """Whether pre-commit hands ``path`` (relative to the repository root) to the hook."""
    return bool(re.search(hook["files"], path)) and not re.search(hook["exclude"], path)


def test_hook_runs_safe_queue_check_once_with_all_files(hook: dict[str, Any]):
    assert hook["entry"] == "safe-queue check"
    assert hook["language"] == "python"
    # one invocation: the templates given are one deployment (imports resolved between them)
    assert hook["require_serial"] is True
    assert hook.get("pass_filenames", True) is True
    # --fail-on is the user's (args); the hook's own default is check's (error)
    assert "args" not in hook


def test_hook_installs_what_check_needs_from_the_cli_extra(hook: dict[str, Any]):
    # pre-commit installs the bare distribution plus these; check imports PyYAML
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["cli"]
    pyyaml = [r for r in extra if Requirement(r).name.lower() == "pyyaml"]
    assert hook["additional_dependencies"] == pyyaml


def test_pre_commit_accepts_the_manifest():
    validated = subprocess.run(
        [str(VENV_BIN / "pre-commit"), "validate-manifest", str(MANIFEST)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_files_pattern_selects_every_template_fixture_check_reads(hook: dict[str, Any]):
    # GIVEN the repository's own template fixtures (a `templates/` folder), JSON and YAML,
    # SAM and CloudFormation, and the templates inside a cloud assembly
    fixtures = [
        path.relative_to(ROOT).as_posix()
        for path in [*FIXTURES.glob("*.yaml"), *FIXTURES.glob("*.json")]
    ]
    assembly = [path.relative_to(ROOT).as_posix() for path in FIXTURES.glob("*/**/*.template.json")]
    assert len(fixtures) >= 10
    assert len(assembly) >= 3
    # THEN the hook is given each of them
    assert [path for path in fixtures + assembly if not _selected(hook, path)] == []


@pytest.mark.parametrize(
    "path",
    [
        "template.yaml",  # `sam init`
        "sam-app/template.yml",
        "infra/Queues.template",
        "infra/orders.template.json",
        "stacks/queues.yaml",  # docs/ci.md's example
        "cloudformation/orders.json",
        "infra/orders-stack.yaml",
        "infra/api.cfn.yml",
    ],
)
def test_files_pattern_selects_usual_template_names(hook: dict[str, Any], path: str):
    assert _selected(hook, path)


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/ci.yml",
        ".pre-commit-config.yaml",
        ".pre-commit-hooks.yaml",
        "mkdocs.yml",
        "package.json",
        "package-lock.json",
        "cdk.json",
        "tsconfig.json",
        "samconfig.yaml",  # SAM CLI's settings, not a template
        "docs/sample.yaml",
        ".cfnlintrc.yaml",
        "tests/fixtures/templates/cloud-assembly/manifest.json",
        "cdk.out/Orders.template.json",  # synthesized: check cdk.out as a whole in CI
        ".aws-sam/build/template.yaml",
    ],
)
def test_files_pattern_skips_other_json_and_yaml(hook: dict[str, Any], path: str):
    # a file that is not a template would fail the hook (exit 2, "not a CloudFormation template")
    assert not _selected(hook, path)


def _repository(tmp_path: Path, hook: dict[str, Any], args: list[str]) -> Path:
    """A git repository whose pre-commit config runs the manifest's hook on its files.

    The hook is the manifest's, as a `local` hook with `language: system`: installing the
    `python` hook builds this package and PyYAML from the package index, which the tests
    do not reach; `safe-queue` comes from .venv instead. Everything that decides which
    files the hook gets and how it is called (entry, files, exclude, require_serial, args)
    is the manifest's, unchanged.
    """
    repo = tmp_path / "repo"
    (repo / "stacks").mkdir(parents=True)
    shutil.copy(FIXTURES / "seed000_broken.yaml", repo / "stacks" / "render.yaml")
    shutil.copy(FIXTURES / "seed000_queue_stack.yaml", repo / "stacks" / "queues.yaml")
    shutil.copy(FIXTURES / "sam_globals.yaml", repo / "template.yaml")
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: push\njobs: {}\n")
    (repo / "mkdocs.yml").write_text("site_name: not a template\n")
    local = {k: v for k, v in hook.items() if k not in ("language", "additional_dependencies")}
    local.update(language="system", args=args)
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    return repo


def _pre_commit(repo: Path, *files: str) -> subprocess.CompletedProcess[str]:
    selection = ["--files", *files] if files else ["--all-files"]
    return subprocess.run(
        [str(VENV_BIN / "pre-commit"), "run", "--color", "never", *selection],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={
            **os.environ,
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
            "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"),
        },
    )


def test_all_files_fails_on_the_error_across_two_stacks(tmp_path: Path, hook: dict[str, Any]):
    # GIVEN a repository with the seed's broken consumer and, in another stack, its queue,
    # a SAM template with warnings only, and YAML files that are not templates
    repo = _repository(tmp_path, hook, args=[])
    # WHEN pre-commit runs the hook on every file
    run = _pre_commit(repo)
    # THEN the hook fails on the error, which only the two stacks together show, on the
    # mapping's line; the other YAML files were not given to it (they would exit 2)
    assert run.returncode == 1, run.stdout
    assert "safe-queue check" in run.stdout
    assert "Failed" in run.stdout
    assert "stacks/render.yaml:14: error safe-queue:visibility-below-function-timeout" in run.stdout
    assert "1 error, 7 warnings, 0 infos in 4 mappings (3 templates)" in run.stdout
    assert "ci.yml" not in run.stdout
    assert "mkdocs.yml" not in run.stdout


def test_warnings_pass_by_default_and_fail_with_fail_on_warning(
    tmp_path: Path, hook: dict[str, Any]
):
    # GIVEN the SAM template with warnings only
    default = _pre_commit(_repository(tmp_path / "default", hook, args=[]), "template.yaml")
    strict = _pre_commit(
        _repository(tmp_path / "strict", hook, args=["--fail-on", "warning"]), "template.yaml"
    )
    # THEN the hook passes with check's default (--fail-on error), and fails when the
    # user's args say --fail-on warning
    assert default.returncode == 0, default.stdout
    assert "Passed" in default.stdout
    assert strict.returncode == 1, strict.stdout
    assert "template.yaml" in strict.stdout
    assert "5 warnings" in strict.stdout
