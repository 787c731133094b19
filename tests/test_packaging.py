"""The distributions as a user gets them: built, checked with twine, and their contents.

One module-scoped build (`python -m build --no-isolation`: the sdist, then the wheel from
the sdist, so a file missing from the sdist breaks the wheel too) serves every test.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = re.search(
    r'^__version__ = "([^"]+)"$', (ROOT / "safe_queue" / "_version.py").read_text(), re.M
)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> zipfile.ZipFile:
    (path,) = dist.glob("*.whl")
    return zipfile.ZipFile(path)


@pytest.fixture(scope="module")
def metadata(wheel: zipfile.ZipFile) -> Message:
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    return Parser().parsestr(wheel.read(name).decode())


def test_version_is_single_sourced_from_the_package(metadata: Message):
    # GIVEN pyproject.toml declares the version dynamic, read from safe_queue/_version.py
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert "version" not in PYPROJECT["project"]
    # THEN the built metadata carries __version__
    assert VERSION is not None
    assert metadata["Version"] == VERSION.group(1)


def test_twine_check_strict_passes(dist: Path):
    files = sorted(str(p) for p in dist.iterdir())
    assert len(files) == 2  # the sdist and the wheel
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


def test_wheel_holds_only_the_library_and_its_licence(wheel: zipfile.ZipFile):
    names = wheel.namelist()
    dist_info = f"safe_queue-{VERSION.group(1) if VERSION else ''}.dist-info/"
    strays = [n for n in names if not n.startswith(("safe_queue/", dist_info))]
    assert strays == []
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert "safe_queue/__init__.py" in names
    assert "safe_queue/py.typed" in names  # Typing :: Typed is honest
    assert wheel.read(f"{dist_info}licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()


def test_sdist_carries_licence_changelog_and_no_repository_clutter(dist: Path):
    (path,) = dist.glob("*.tar.gz")
    with tarfile.open(path) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", "PKG-INFO"} <= names
    assert "safe_queue/__init__.py" in names
    top = {name.split("/", 1)[0] for name in names}
    assert not top & {"tests", "node_modules", ".venv", "docs", "example", "benchmarks", "cdk.out"}


def test_licence_is_the_full_apache_2_text(metadata: Message):
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]


def test_metadata_names_urls_classifiers_and_python(metadata: Message):
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = set(metadata.get_all("Classifier") or [])
    assert {
        "Framework :: AWS CDK :: 2",
        "Typing :: Typed",
        "Programming Language :: Python :: 3.11",
    } <= classifiers
    assert metadata["Requires-Python"] == ">=3.11"


def test_base_distribution_depends_on_nothing_and_extras_use_ranges(metadata: Message):
    requirements = [Requirement(r) for r in metadata.get_all("Requires-Dist") or []]
    # Every requirement belongs to an extra: `pip install safe-queue` brings no CDK.
    assert [str(r) for r in requirements if r.marker is None] == []
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert {"cdk", "cli", "docs", "dev"} <= extras
    # No exact pins are published; they live in constraints.txt.
    assert [str(r) for r in requirements if "==" in str(r.specifier)] == []


def test_console_script_is_declared(wheel: zipfile.ZipFile):
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    entry_points = wheel.read(name).decode()
    assert "[console_scripts]\nsafe-queue = safe_queue.cli:main" in entry_points


def test_readme_links_are_absolute():
    # The README is the package index's description, where relative links break.
    links = re.findall(r"\]\(([^)\s]+)\)", (ROOT / "README.md").read_text())
    assert links  # the pattern finds the README's links
    assert [link for link in links if not link.startswith(("https://", "#"))] == []


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


@pytest.mark.parametrize("constraints", ["constraints.txt", "constraints-oldest.txt"])
def test_constraints_pin_every_declared_requirement_within_its_range(constraints: str):
    pins = _pins(ROOT / constraints)
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items():
        for requirement in map(Requirement, requirements):
            if requirement.name == "safe-queue":
                continue
            name = re.sub(r"[-_.]+", "-", requirement.name).lower()
            assert name in pins, f"{constraints} does not pin {name} ({extra} extra)"
            assert requirement.specifier.contains(pins[name]), (constraints, str(requirement))


def test_oldest_constraints_pin_the_lower_bounds_of_the_cdk_extra():
    # The supported range's lower end is the one scripts/test-oldest tests.
    pins = _pins(ROOT / "constraints-oldest.txt")
    for requirement in map(Requirement, PYPROJECT["project"]["optional-dependencies"]["cdk"]):
        (lower,) = [s.version for s in requirement.specifier if s.operator == ">="]
        assert pins[requirement.name] == lower
