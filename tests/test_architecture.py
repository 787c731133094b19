"""The package's shape, as docs/architecture.md describes it: small rooms, arrows towards
the engine, no import cycle, and no private CDK or jsii API.

Read from the source with :mod:`ast` (no import), so a change that breaks the shape fails
here with the module's name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ROOT

PACKAGE = ROOT / "safe_queue"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 450


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


NAMES = {module_name(path): path for path in MODULES}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path) -> Iterator[str]:
    """Every safe_queue module ``path`` imports at run time (TYPE_CHECKING blocks left out)."""
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rsplit(".", 1)[0]
    )

    def visit(node: ast.AST) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                yield from (name for orelse in child.orelse for name in visit(orelse))
                continue
            if isinstance(child, ast.Import):
                yield from (alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join(
                        [*package.split(".")[: len(package.split(".")) - child.level + 1], base]
                    ).strip(".")
                # `from package import submodule` imports the submodule, not the package's
                # own code (its __init__ runs, as for any import below it, but is no edge).
                for alias in child.names:
                    yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in NAMES else base
            yield from visit(child)

    for name in visit(ast.parse(path.read_text())):
        while name and name not in NAMES:
            name = name.rpartition(".")[0]
        if name and name != module_name(path):
            yield name


GRAPH = {name: set(imports(path)) for name, path in NAMES.items()}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_450_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_there_is_no_import_cycle() -> None:
    # GIVEN every import between safe_queue's modules (lazy ones included)
    # WHEN walked depth first  THEN no module reaches itself
    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        stack = list(GRAPH[start])
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            stack.extend(GRAPH.get(name, ()))
        return seen

    cycles = sorted(name for name in GRAPH if name in reach(name) and name != "safe_queue")
    assert cycles == []


ALLOWED_FROM_CDK = ("safe_queue.cdk", "safe_queue.engine", "safe_queue.report",
                    "safe_queue.errors", "safe_queue.keys", "safe_queue._version",
                    "safe_queue.live.actions")  # fmt: skip


def test_the_cdk_room_imports_only_the_engine_the_report_and_leaf_modules() -> None:
    outside = {
        (name, target)
        for name, targets in GRAPH.items()
        if name.startswith("safe_queue.cdk")
        for target in targets
        if not target.startswith(ALLOWED_FROM_CDK) and target != "safe_queue"
    }
    assert outside == set()


def test_the_engine_imports_nothing_but_itself_and_leaf_modules() -> None:
    outside = {
        (name, target)
        for name, targets in GRAPH.items()
        if name.startswith("safe_queue.engine")
        for target in targets
        if not target.startswith(("safe_queue.engine", "safe_queue.keys"))
    }
    assert outside == set()


@pytest.mark.parametrize(
    "leaf",
    ["safe_queue.keys", "safe_queue._version", "safe_queue.live.actions", "safe_queue.retries"],
)
def test_leaf_modules_import_no_other_safe_queue_module(leaf: str) -> None:
    assert GRAPH[leaf] == set()


PRIVATE = ("_cfn_properties", "children[-1]", "__jsii_", "_delegates", "0xFBFF", "${Token[")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_cdk_or_jsii_api(path: Path) -> None:
    text = path.read_text()
    assert [pattern for pattern in PRIVATE if pattern in text] == []
