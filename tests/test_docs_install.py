"""The install lines of the README and Getting started: the clone and git forms resolve.

pip runs them as written, offline: `--dry-run --no-index --no-build-isolation`, so that
pip builds this repository's metadata with .venv's hatchling and finds every dependency
of the extra already installed in .venv (no package index is reached). The git form's
GitHub URL becomes a `git+file://` URL of this repository: pip clones it with git, as it
would clone GitHub.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib

import pytest

from .conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
REPOSITORY = PYPROJECT["project"]["urls"]["Repository"]
PAGES = ["README.md", "docs/getting-started.md"]


def install_lines(page: str) -> list[list[str]]:
    """The `$ pip install ...` commands of a page's console blocks, without the comment."""
    text = (ROOT / page).read_text()
    lines = re.findall(r"^\$ (pip install .*)$", text, re.M)
    return [shlex.split(line, comments=True) for line in lines]


def _requirement(page: str, form: str) -> str:
    (requirement,) = [line[2] for line in install_lines(page) if len(line) == 3 and form in line[2]]
    return requirement


@pytest.mark.parametrize("page", PAGES)
def test_page_gives_the_git_the_clone_and_the_index_form_and_says_which_is_which(page: str):
    text = (ROOT / page).read_text()
    requirements = [line[2] for line in install_lines(page)]
    assert requirements == [
        f"safe-queue[cdk] @ git+{REPOSITORY}",
        ".[cdk]",
        "safe-queue[cdk]",
    ]
    assert "not on a public package index yet" in text
    assert re.search(r"pip install 'safe-queue\[cdk\]' +# from a package index: (only )?once", text)
    assert f"$ git clone {REPOSITORY} && cd safe_queue" in text


@pytest.mark.parametrize("page", [*PAGES, "docs/ci.md"])
def test_every_extra_named_in_the_docs_exists(page: str):
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    named = re.findall(r"(?:safe-queue|\.)\[([a-z,-]+)\]", (ROOT / page).read_text())
    assert named  # the pattern finds them
    assert {extra for group in named for extra in group.split(",")} - extras == set()


@pytest.fixture(scope="module")
def dry_runs() -> dict[str, subprocess.CompletedProcess[str]]:
    """pip on the README's clone form and git form, both at once (each waits on pip and git)."""
    git = _requirement("README.md", "git+")
    local = git.replace(REPOSITORY, f"file://localhost{ROOT}")
    assert local != git
    requirements = {"clone": _requirement("README.md", ".["), "git": local}
    started = {
        form: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--no-index",
                "--no-build-isolation",
                "--disable-pip-version-check",
                requirement,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for form, requirement in requirements.items()
    }
    done = {}
    for form, process in started.items():
        out, err = process.communicate(timeout=120)
        done[form] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return done


@pytest.mark.parametrize("form", ["clone", "git"])
def test_clone_and_git_forms_resolve(
    dry_runs: dict[str, subprocess.CompletedProcess[str]], form: str
):
    # GIVEN the README's command for a clone (run in its root), or for the git repository
    # (this repository as the remote) WHEN pip resolves it
    pip = dry_runs[form]
    # THEN pip builds this project and finds the extra's dependencies (aws-cdk-lib ...)
    assert pip.returncode == 0, pip.stderr
    assert re.search(r"^Would install safe-queue-\S+$", pip.stdout, re.M)
    assert "aws-cdk-lib" in pip.stdout
