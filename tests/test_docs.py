"""The documentation site's rules reference is generated from the rule registry."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from enum import Enum
from types import ModuleType

import pytest

from .conftest import ROOT


def _load_hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _load_hooks()


class _Level(Enum):
    ERROR = "error"
    INFO = "info"


@dataclass(frozen=True)
class _Rule:
    id: str
    level: _Level
    summary: str
    why: str
    fix: str


def test_reference_has_a_row_and_a_section_per_rule_in_order():
    rules = [
        _Rule("safe-queue:a-rule", _Level.ERROR, "Catches a | b.", "Because.", "Do this."),
        _Rule("safe-queue:b-rule", _Level.INFO, "Catches c.", "Since.", "Do that."),
    ]
    text = hooks.rules_reference(rules)
    # a summary row linking to each section; a pipe inside a cell is escaped
    assert "| [`safe-queue:a-rule`](#a-rule) | error | Catches a \\| b. |" in text
    assert "| [`safe-queue:b-rule`](#b-rule) | info | Catches c. |" in text
    headings = re.findall(r"^## `([^`]+)` \{#([^}]+)\}$", text, re.M)
    assert headings == [("safe-queue:a-rule", "a-rule"), ("safe-queue:b-rule", "b-rule")]
    assert "**Why.** Since." in text
    assert "**Fix.** Do that." in text


def test_rules_page_keeps_the_marker():
    # Without it the hook fails the build rather than publish a page without rules.
    assert hooks.MARKER in (ROOT / "docs" / "rules.md").read_text()


def test_every_registered_rule_is_documented():
    rules_module = pytest.importorskip("safe_queue.engine.rules")
    text = hooks.rules_reference()
    for rule in rules_module.RULES:
        assert f"## `{rule.id}`" in text
        assert rule.fix.split()[0] in text
