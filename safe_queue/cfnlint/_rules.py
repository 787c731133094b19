"""The cfn-lint rule classes: one per engine rule and level it gives, and the module's own two.

cfn-lint instantiates every ``CloudFormationLintRule`` subclass it finds in the module named
by ``--append-rules`` and calls each one's ``match(cfn)`` per template. The template is
judged once, by whichever of safe-queue's rules cfn-lint runs first (:class:`_Judged`
keeps that template's verdicts); every rule then returns the verdicts with its own id.

A match's path is ``["Resources", <mapping>]``, or for a SAM event ``["Resources",
<function>, "Properties", "Events", <event>]``: what cfn-lint's
``Metadata: {cfn-lint: {config: {ignore_checks: [...]}}}`` on that resource is matched
against. Its line is the adapter's (``safe-queue check``'s) when the template was read
from its file; otherwise cfn-lint finds it from the path.
"""

from __future__ import annotations

import os
from typing import Any, Final

from cfnlint.rules import CloudFormationLintRule, RuleMatch  # type: ignore[import-untyped]

from safe_queue.cfnlint._ids import ACKNOWLEDGED, UNREADABLE, cfn_lint_id
from safe_queue.cfnlint._verdicts import Verdict, judge_body, judge_file
from safe_queue.engine import RULES, Level, Rule

__all__ = ["PAGE", "RULE_CLASSES"]

PAGE: Final = "https://safe-queue.github.io/safe_queue/cfn-lint/"
"""The docs page of the cfn-lint rules (the module's own ids link to its sections)."""

_SAM_FUNCTION: Final = "AWS::Serverless::Function"


def _sam_event_path(resources: Any, logical_id: str) -> list[str] | None:
    """Return the path of the SAM event that generates mapping ``logical_id``, if any.

    SAM names the mapping of an SQS event ``<function><event>``, and that of an SNS event
    with ``SqsSubscription`` ``<function><event>EventSourceMapping``.
    """
    for function_id, resource in resources.items():
        if not isinstance(resource, dict) or resource.get("Type") != _SAM_FUNCTION:
            continue
        properties = resource.get("Properties")
        events = properties.get("Events") if isinstance(properties, dict) else None
        if not isinstance(events, dict):
            continue
        for event in events:
            if logical_id in (f"{function_id}{event}", f"{function_id}{event}EventSourceMapping"):
                return ["Resources", str(function_id), "Properties", "Events", str(event)]
    return None


def _path(template: Any, logical_id: str | None) -> list[str]:
    resources = template.get("Resources") if isinstance(template, dict) else None
    if logical_id is None or not isinstance(resources, dict):
        return []
    if logical_id in resources:
        return ["Resources", logical_id]
    return _sam_event_path(resources, logical_id) or ["Resources", logical_id]


def _rule_match(cfn: Any, verdict: Verdict) -> Any:
    """Return the cfn-lint ``RuleMatch`` of ``verdict`` in cfn-lint's template ``cfn``."""
    path = _path(cfn.template, verdict.logical_id)
    if verdict.line is None:
        return RuleMatch(path, verdict.message)  # cfn-lint finds the line from the path
    line = verdict.line - 1  # cfn-lint's locations count from 0
    found = cfn.get_location_yaml(cfn.template, path) if path else None
    # On the same line cfn-lint's location adds the key's columns; else the line alone.
    location = tuple(found) if found and found[0] == line else (line, 0, line, 0)
    return RuleMatch(path, verdict.message, location=location)


class _Judged:
    """The verdicts on the template cfn-lint is checking now, grouped by cfn-lint id.

    cfn-lint runs every rule on one template before it starts the next, so keeping the
    last template is enough for one judgement per template (and holds one in memory).
    """

    def __init__(self) -> None:
        self._cfn: Any = None
        self._matches: dict[str, list[Any]] = {}

    def matches(self, cfn: Any, cfn_lint_id: str) -> list[Any]:
        if cfn is not self._cfn:
            self._matches = {}
            try:
                for verdict in _judge(cfn):
                    match = _rule_match(cfn, verdict)
                    self._matches.setdefault(verdict.cfn_lint_id, []).append(match)
            except Exception as error:  # a bug of ours: one match saying so, not one per rule
                failure = (
                    f"safe-queue failed on this template ({type(error).__name__}: {error});"
                    " this is a bug in safe-queue, please report it with the template."
                )
                self._matches = {UNREADABLE: [RuleMatch([], failure)]}
            self._cfn = cfn
        return list(self._matches.get(cfn_lint_id, []))


def _judge(cfn: Any) -> list[Verdict]:
    """Judge the template by its file, as ``check`` would, else the decoded template."""
    filename = cfn.filename
    if isinstance(filename, str) and os.path.isfile(filename):
        return judge_file(filename)
    return judge_body(cfn.template)


_JUDGED = _Judged()


def _match(self: Any, cfn: Any) -> list[Any]:
    """Return this rule's matches in the template (cfn-lint calls it once per template)."""
    return _JUDGED.matches(cfn, self.id)


def _class_name(entry: Rule, level: Level) -> str:
    name = "".join(part.capitalize() for part in entry.name.split("-"))
    return name if len(entry.levels) == 1 else f"{name}{level.value.capitalize()}"


def _rule_class(
    name: str, *, id: str, shortdesc: str, description: str, source_url: str, tags: list[str]
) -> type:
    return type(
        name,
        (CloudFormationLintRule,),
        {
            "__module__": "safe_queue.cfnlint",
            "__doc__": f"{id}: {shortdesc}",
            "id": id,
            "shortdesc": shortdesc,
            "description": description,
            "source_url": source_url,
            "tags": tags,
            "match": _match,
        },
    )


def _engine_rule_classes() -> list[type]:
    classes = []
    for entry in RULES:
        for level in entry.levels:
            which = f" This id: its {level.value} findings." if len(entry.levels) > 1 else ""
            classes.append(
                _rule_class(
                    _class_name(entry, level),
                    id=cfn_lint_id(entry.id, level),
                    shortdesc=entry.summary,
                    description=f"{entry.id}: {entry.why} Fix: {entry.fix}{which}",
                    source_url=entry.docs_url,
                    tags=list(entry.tags),
                )
            )
    return classes


RULE_CLASSES: Final[tuple[type, ...]] = (
    _rule_class(
        "TemplateUnreadable",
        id=UNREADABLE,
        shortdesc="safe-queue could not read the template",
        description=(
            "The template adapter refused the template, as `safe-queue check` does with exit"
            " code 2 (e.g. a malformed `Metadata: safe-queue: acknowledge` entry): none of"
            " its SQS mappings was checked. The message says why, and the fix."
        ),
        source_url=f"{PAGE}#template-unreadable",
        tags=["safe-queue", "aws", "sqs", "lambda"],
    ),
    _rule_class(
        "AcknowledgedFinding",
        id=ACKNOWLEDGED,
        shortdesc="A safe-queue finding acknowledged in the template",
        description=(
            "A finding that `Metadata: safe-queue: acknowledge` on its mapping, function or"
            " queue accepts, with the reason: reported for the record, never an error or a"
            " warning (as `safe-queue check` reports it and never fails on it)."
        ),
        source_url=f"{PAGE}#acknowledgements",
        tags=["safe-queue", "aws", "sqs", "lambda", "acknowledged"],
    ),
    *_engine_rule_classes(),
)
"""Every rule class the module gives cfn-lint: the module's own two, then the engine's."""
