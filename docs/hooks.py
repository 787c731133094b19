"""MkDocs hook: write the rules reference from the rules' own declarations.

``docs/rules.md`` holds the line ``<!-- rules-reference -->``; this hook replaces it with a
summary table and one section per rule of :data:`safe_queue.engine.RULES`: its id, levels,
kind, what it catches, why, the fix, the AWS page it rests on, and its compliant and
non-compliant examples as CloudFormation. Nothing on the page is written by hand, so no rule
can be missing or disagree with its check. A missing marker fails the build.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import yaml
from mkdocs.exceptions import PluginError

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

    from safe_queue.engine import Example, Rule

__all__ = ["MARKER", "on_page_markdown", "rules_reference"]

MARKER = "<!-- rules-reference -->"
RULES_PAGE = "rules.md"
_KINDS = {
    "aws-limit": "AWS limit (AWS rejects the template or the call)",
    "guidance": "guidance (AWS accepts it; messages are duplicated or lost)",
    "drift": "drift (a value changed after the queue was derived from it)",
    "engine": "engine (a value could not be known)",
}


def _cell(text: str) -> str:
    """Make text safe for one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", r"\|")


def _example(title: str, example: Example | None) -> list[str]:
    if example is None:
        return []
    body = yaml.safe_dump(example.template()["Resources"], sort_keys=False, width=88)
    indented = "\n".join(f"    {line}" if line else "" for line in body.splitlines())
    return [
        "",
        f'!!! example "{title}: {example.description}"',
        "",
        "    ```yaml",
        indented,
        "    ```",
    ]


def rules_reference(rules: Iterable[Rule] | None = None) -> str:
    """Return the Markdown of the rules reference.

    Parameters
    ----------
    rules
        Rule declarations (:class:`safe_queue.engine.Rule`); by default every rule,
        :data:`safe_queue.engine.RULES`, in report order.

    Returns
    -------
    str
        A summary table linking to one section per rule.
    """
    if rules is None:
        from safe_queue.engine import RULES

        rules = RULES
    rules = list(rules)
    lines = ["| id | level | what it catches |", "|---|---|---|"]
    lines += [
        f"| [`{rule.id}`](#{rule.name}) | {' or '.join(level.value for level in rule.levels)}"
        f" | {_cell(rule.summary)} |"
        for rule in rules
    ]
    for rule in rules:
        lines += [
            "",
            f"## `{rule.id}` {{#{rule.name}}}",
            "",
            f"**Level:** {' or '.join(level.value for level in rule.levels)} ·"
            f" **Kind:** {_KINDS.get(rule.kind, rule.kind)}",
            "",
            f"**What it catches.** {rule.summary}",
            "",
            f"**Why.** {rule.why}",
            "",
            f"**Fix.** {rule.fix}",
            "",
            f"**Source.** <{rule.source_url}>",
        ]
        lines += _example("Breaks it", rule.non_compliant)
        lines += _example("Passes", rule.compliant)
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Replace the marker on the rules page with the generated reference."""
    if page.file.src_uri != RULES_PAGE:
        return markdown
    if MARKER not in markdown:
        raise PluginError(f"docs/{RULES_PAGE}: the line {MARKER} is missing; put it back")
    return markdown.replace(MARKER, rules_reference())
