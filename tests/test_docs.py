"""The documentation site's rules reference is generated from the rule registry."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

from safe_queue.engine import RULES, rule

from .conftest import ROOT


def _load_hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _load_hooks()


def test_reference_has_a_row_and_a_section_per_rule_in_order():
    # GIVEN two of the rules, in this order
    rules = [
        rule("safe-queue:dead-letter-retention-too-short"),
        rule("safe-queue:unchecked"),
    ]
    text = hooks.rules_reference(rules)
    # THEN a summary row links to each section, with every level the rule gives
    assert (
        "| [`safe-queue:dead-letter-retention-too-short`](#dead-letter-retention-too-short)"
        " | error or warning |" in text
    )
    assert "| [`safe-queue:unchecked`](#unchecked) | info |" in text
    headings = re.findall(r"^## `([^`]+)` \{#([^}]+)\}$", text, re.M)
    assert headings == [
        ("safe-queue:dead-letter-retention-too-short", "dead-letter-retention-too-short"),
        ("safe-queue:unchecked", "unchecked"),
    ]


def test_a_cell_with_a_pipe_is_escaped():
    assert hooks._cell("a | b\n c") == "a \\| b c"


def test_each_section_shows_the_source_and_both_examples_as_cloudformation():
    text = hooks.rules_reference([rule("safe-queue:visibility-below-function-timeout")])
    assert (
        "**Source.** <https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html>"
        in text
    )
    assert (
        '!!! example "Breaks it: Visibility 60 s on a 180 s function (the seed incident)."' in text
    )
    assert '!!! example "Passes: Visibility 1082 s = 6 x 180 s + 2 s."' in text
    # the examples are the rule's own, rendered: the broken one's visibility is 60
    broken = text.split("Breaks it")[1].split("Passes")[0]
    assert "      VisibilityTimeout: 60" in broken
    assert "Type: AWS::Lambda::EventSourceMapping" in broken


def test_rules_page_keeps_the_marker():
    # Without it the hook fails the build rather than publish a page without rules.
    assert hooks.MARKER in (ROOT / "docs" / "rules.md").read_text()


def test_every_registered_rule_is_documented():
    text = hooks.rules_reference()
    for entry in RULES:
        assert f"## `{entry.id}`" in text
        assert entry.fix in text
        assert entry.source_url in text


def test_the_readme_lists_every_rule_id_and_no_other():
    # The README's tables are written by hand: this keeps them in step with the engine.
    readme = (ROOT / "README.md").read_text()
    listed = set(re.findall(r"^\| `(safe-queue:[a-z-]+)` \|", readme, re.M))
    assert listed == {entry.id for entry in RULES}


def test_the_architecture_page_describes_every_folder_and_module():
    # GIVEN docs/architecture.md, written by hand
    page = (ROOT / "docs" / "architecture.md").read_text()
    package = ROOT / "safe_queue"
    # THEN every package folder is named as `safe_queue/<folder>/`
    folders = {p.parent for p in package.rglob("__init__.py")} - {package}
    missing = [
        f"safe_queue/{f.relative_to(package).as_posix()}/"
        for f in folders
        if f"`safe_queue/{f.relative_to(package).as_posix()}/`" not in page
    ]
    # AND every module at the top and inside each folder by its file name
    for module in package.rglob("*.py"):
        relative = module.relative_to(package)
        if module.name == "__init__.py" or relative.parts[:2] == ("engine", "rules"):
            continue  # a folder's own paragraph; a rule module: the registry documents it
        named = f"`safe_queue/{relative.as_posix()}`" if len(relative.parts) == 1 else None
        if named is not None and named not in page:
            missing.append(named)
        elif named is None and f"`{module.name}`" not in page and f"`{module.stem}`" not in page:
            missing.append(relative.as_posix())
    assert sorted(missing) == []
