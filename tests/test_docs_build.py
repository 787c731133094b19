"""The docs gate: `scripts/docs` (run by `scripts/test`) fails on a broken link, silent when clean."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from .conftest import ROOT


def _site(tmp_path: Path, *links: str) -> Path:
    """A two-page mkdocs project with the repository's own link validation settings."""
    validation = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["validation"]
    config = {
        "site_name": "gate",
        "docs_dir": str(tmp_path / "docs"),
        "site_dir": str(tmp_path / "site"),
        "nav": ["index.md", "other.md"],
        "validation": validation,
    }
    (tmp_path / "docs").mkdir()
    text = "".join(f"See [this]({link}).\n\n" for link in links)
    (tmp_path / "docs" / "index.md").write_text(f"# Home\n\n{text}")
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## Numbers\n")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    return tmp_path / "mkdocs.yml"


def _gate(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "scripts" / "docs"), "--config-file", str(config)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_a_link_outside_the_site_or_to_no_anchor_fails_the_gate(tmp_path: Path):
    # GIVEN a page linking a file outside docs/ (the mistake of docs/audit.md and
    # docs/cli.md) and a heading that does not exist
    config = _site(tmp_path, "../benchmarks/README.md", "other.md#no-such-heading")
    # WHEN the gate builds it
    gate = _gate(config)
    # THEN it fails, and says which page links what
    assert gate.returncode == 1
    assert "Doc file 'index.md' contains a link '../benchmarks/README.md'" in gate.stderr
    assert "'other.md#no-such-heading'" in gate.stderr
    assert "docs: the strict build failed" in gate.stderr
    # (the gate before, `mkdocs build --strict --quiet`, passed this site: --quiet hides the
    # warnings that --strict counts)


def test_the_same_site_with_good_links_passes_silently(tmp_path: Path):
    # GIVEN the links fixed (to the page and one of its headings)
    gate = _gate(_site(tmp_path, "other.md", "other.md#numbers"))
    # THEN the gate passes and prints nothing, so scripts/test's output stays short
    assert (gate.returncode, gate.stdout, gate.stderr) == (0, "", "")
    assert (tmp_path / "site" / "other" / "index.html").exists()


def test_scripts_test_runs_the_gate_without_quiet():
    lines = (ROOT / "scripts" / "test").read_text().splitlines()
    docs = [line for line in lines if "mkdocs" in line and not line.startswith("#")]
    assert [line.split("#")[0].strip() for line in docs] == ["scripts/docs --site-dir .site"]
    assert "--quiet" not in (ROOT / "scripts" / "docs").read_text().split("set -euo")[1]
    # and hands the site it built to the browser test
    assert 'export SAFE_QUEUE_DOCS_SITE="$PWD/.site"' in lines
