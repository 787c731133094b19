"""MkDocs hook: write the rules reference from the rule registry.

``docs/rules.md`` holds the line ``<!-- rules-reference -->``; this hook replaces it with
one section per rule of :data:`safe_queue.engine.rules.RULES` (id, level, what it
catches, why, the fix) and a summary table, so that no rule can be missing from the
documentation. The page is the only one that needs it; a missing marker fails the build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mkdocs.exceptions import PluginError

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

__all__ = ["MARKER", "on_page_markdown", "rules_reference"]

MARKER = "<!-- rules-reference -->"
RULES_PAGE = "rules.md"


def _cell(text: str) -> str:
    """Make text safe for one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", r"\|")


def _anchor(rule_id: str) -> str:
    """Return the page anchor of a rule: its id without the ``safe-queue:`` prefix."""
    return rule_id.split(":", 1)[-1]


def rules_reference(rules: Any = None) -> str:
    """Return the Markdown of the rules reference.

    Parameters
    ----------
    rules
        Objects with ``id``, ``level`` (an enum whose ``value`` is ``"error"``,
        ``"warning"`` or ``"info"``), ``summary``, ``why`` and ``fix``; by default the
        registry ``safe_queue.engine.rules.RULES``.

    Returns
    -------
    str
        A summary table linking to one section per rule, in registry order.
    """
    if rules is None:
        from safe_queue.engine.rules import RULES

        rules = RULES
    lines = ["| id | level | what it catches |", "|---|---|---|"]
    lines += [
        f"| [`{rule.id}`](#{_anchor(rule.id)}) | {rule.level.value} | {_cell(rule.summary)} |"
        for rule in rules
    ]
    for rule in rules:
        lines += [
            "",
            f"## `{rule.id}` {{#{_anchor(rule.id)}}}",
            "",
            f"**Level:** {rule.level.value}",
            "",
            f"**What it catches.** {rule.summary}",
            "",
            f"**Why.** {rule.why}",
            "",
            f"**Fix.** {rule.fix}",
        ]
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Replace the marker on the rules page with the generated reference."""
    if page.file.src_uri != RULES_PAGE:
        return markdown
    if MARKER not in markdown:
        raise PluginError(f"docs/{RULES_PAGE}: the line {MARKER} is missing; put it back")
    return markdown.replace(MARKER, rules_reference())
