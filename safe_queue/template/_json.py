"""JSON templates, read with :mod:`json`, with duplicate keys refused and line numbers kept.

Lines come from one scan for ``"<key>": {`` after the ``"Resources"`` key.
"""

from __future__ import annotations

import json
import re
from typing import Any

from safe_queue.template._file import (
    LOOP_PREFIX,
    MAX_DEPTH,
    TemplateError,
    duplicate_key,
    too_deep,
)

__all__ = ["load_json"]


_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*\{')
_RESOURCES_KEY = re.compile(r'"Resources"\s*:\s*\{')


def _json_lines(text: str, body: dict[str, Any]) -> dict[str, int]:
    """Lines of each resource (the first ``"<id>": {`` after ``"Resources": {``) and SAM event.

    One regex pass over the text; nested objects come after their resource's key, so the
    first match of an id is the resource itself (an id that is also a property name of an
    earlier resource could be placed early; lines are hints, not identities). Keys inside
    an ``Fn::ForEach`` loop are found after the loop's key, as in :func:`_yaml_lines`.
    """
    resources = body.get("Resources")
    start = _RESOURCES_KEY.search(text)
    if not isinstance(resources, dict) or start is None:
        return {}
    wanted = {key for key in resources if not str(key).startswith(LOOP_PREFIX)}
    offsets: dict[str, int] = {}
    if wanted:
        for match in _JSON_KEY.finditer(text, start.end()):
            key = match.group(1)
            if key in wanted and key not in offsets:
                offsets[key] = match.start()
                if len(offsets) == len(wanted):
                    break
    for key, value in resources.items():
        if str(key).startswith(LOOP_PREFIX):
            _json_loop_offsets(text, str(key), value, start.end(), "", offsets)
    for logical_id, offset in list(offsets.items()):
        resource = _resource_at(resources, logical_id)
        properties = resource.get("Properties") if isinstance(resource, dict) else None
        events = properties.get("Events") if isinstance(properties, dict) else None
        if not isinstance(events, dict):
            continue
        events_key = re.compile(r'"Events"\s*:\s*\{').search(text, offset)
        for event_name in events if events_key else ():
            found = _json_key(text, str(event_name), events_key.end() if events_key else offset)
            if found is not None:
                offsets[f"{logical_id}/Events/{event_name}"] = found
    lines: dict[str, int] = {}
    line, position = 1, 0
    for key, offset in sorted(offsets.items(), key=lambda item: item[1]):
        line += text.count("\n", position, offset)
        position = offset
        lines[key] = line
    return lines


def _json_key(text: str, key: str, start: int) -> int | None:
    found = re.compile(rf'"{re.escape(json.dumps(key)[1:-1])}"\s*:').search(text, start)
    return found.start() if found else None


def _json_loop_offsets(
    text: str, key: str, value: Any, start: int, prefix: str, offsets: dict[str, int]
) -> None:
    position = _json_key(text, key, start)
    if position is None:
        return
    name = f"{prefix}{key}"
    offsets[name] = position
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[2], dict)):
        return
    for inner_key, inner in value[2].items():
        if str(inner_key).startswith(LOOP_PREFIX):
            _json_loop_offsets(text, str(inner_key), inner, position, f"{name}/", offsets)
            continue
        found = _json_key(text, str(inner_key), position)
        if found is not None:
            offsets[f"{name}/{inner_key}"] = found


def _resource_at(resources: dict[str, Any], path: str) -> Any:
    """Return the resource (or loop fragment entry) a :func:`_json_lines` key names."""
    node: Any = resources
    for part in path.split("/"):
        if isinstance(node, list) and len(node) == 3:
            node = node[2]
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


class _DuplicateKeyError(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKeyError(key)
            seen.add(key)
    return result


def _json_depth(body: Any) -> int:
    """Return the nesting depth of decoded JSON (iterative: no recursion limit)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH:
            stack.extend((child, depth + 1) for child in node if isinstance(child, dict | list))
    return deepest


def load_json(path: str, text: str) -> tuple[Any, dict[str, int]]:
    try:
        body = json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as error:
        raise TemplateError(path, error.lineno, f"could not parse JSON: {error.msg}") from None
    except _DuplicateKeyError as error:
        matches = [
            text.count("\n", 0, match.start()) + 1
            for match in re.finditer(rf'"{re.escape(json.dumps(error.key)[1:-1])}"\s*:', text)
        ]
        first, line = (matches[0], matches[1]) if len(matches) >= 2 else (None, None)
        resource = _is_resource_key(text, error.key)
        raise duplicate_key(path, error.key, first, line, resource) from None
    except RecursionError:
        raise too_deep(path, None) from None
    except ValueError as error:  # e.g. an integer of more than 4,300 digits
        raise TemplateError(path, None, f"could not read a value: {error}") from None
    if _json_depth(body) > MAX_DEPTH:
        raise too_deep(path, None)
    return body, _json_lines(text, body) if isinstance(body, dict) else {}


def _is_resource_key(text: str, key: str) -> bool:
    """Whether a duplicate JSON key is (by its shape) a resource: ``"<key>": {"Type"``."""
    pattern = rf'"{re.escape(json.dumps(key)[1:-1])}"\s*:\s*\{{\s*"Type"'
    return re.search(pattern, text) is not None
