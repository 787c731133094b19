"""YAML templates, with CloudFormation's short-form tags, read safely and with line numbers.

Imported only when a YAML template is read: PyYAML (the ``cli`` extra) is not needed to
read the JSON templates of a cloud assembly (the CDK plugin, ``safe-queue[cdk]``).
A ``SafeLoader`` subclass (libyaml's when available) turns each short-form tag (``!Ref``,
``!GetAtt``, ``!Sub``...) into its long form; lines come from the composed node tree
(``start_mark.line + 1``); the node tree is checked for depth, alias expansion and
duplicate keys before anything is built from it.
"""

from __future__ import annotations

from typing import Any

import yaml

from safe_queue.template._file import (
    LOOP_PREFIX,
    MAX_DEPTH,
    MAX_VALUES,
    TemplateError,
    duplicate_key,
    too_deep,
)

__all__ = ["load_yaml"]


_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CfnLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """SafeLoader (libyaml when available) that reads CloudFormation's short-form tags."""


def _long_form(name: str) -> Any:
    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
        value: Any
        if isinstance(node, yaml.ScalarNode):
            value = loader.construct_scalar(node)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        if name == "Fn::GetAtt" and isinstance(value, str):
            # !GetAtt Queue.Arn -> ["Queue", "Arn"] (the attribute may contain dots).
            value = value.split(".", 1)
        return {name: value}

    return construct


_TAGS = {
    "Ref": "Ref",
    "Condition": "Condition",
    **{
        tag: f"Fn::{tag}"
        for tag in (
            "And",
            "Base64",
            "Cidr",
            "Equals",
            "FindInMap",
            "GetAtt",
            "GetAZs",
            "If",
            "ImportValue",
            "Join",
            "Length",
            "Not",
            "Or",
            "Select",
            "Split",
            "Sub",
            "ToJsonString",
            "Transform",
            "ForEach",
            # The Rules section's functions: read, and never evaluated (they constrain
            # parameters, not resources).
            "Contains",
            "EachMemberEquals",
            "EachMemberIn",
            "RefAll",
            "ValueOf",
            "ValueOfAll",
        )
    },
}
for _tag, _name in _TAGS.items():
    _CfnLoader.add_constructor(f"!{_tag}", _long_form(_name))
# YAML 1.1 timestamps (AWSTemplateFormatVersion: 2010-09-09) stay strings, as in CloudFormation.
_CfnLoader.add_constructor("tag:yaml.org,2002:timestamp", _CfnLoader.construct_yaml_str)


def _yaml_lines(root: yaml.Node) -> dict[str, int]:
    """Lines of each resource and SAM event, from the composed (not yet built) node tree.

    Keys inside an ``Fn::ForEach`` loop are recorded under the loop's path
    (``Fn::ForEach::Tenants/Queue${Tenant}``), for the expansion to place what it makes.
    """
    lines: dict[str, int] = {}
    resources = _child(root, "Resources")
    if isinstance(resources, yaml.MappingNode):
        _yaml_resource_lines(resources, "", lines)
    return lines


def _yaml_resource_lines(node: yaml.MappingNode, prefix: str, lines: dict[str, int]) -> None:
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode) or not isinstance(key.value, str):
            continue
        name = f"{prefix}{key.value}"
        lines[name] = key.start_mark.line + 1
        if key.value.startswith(LOOP_PREFIX):
            if isinstance(value, yaml.SequenceNode) and len(value.value) == 3:
                fragment = value.value[2]
                if isinstance(fragment, yaml.MappingNode):
                    _yaml_resource_lines(fragment, f"{name}/", lines)
            continue
        events = _child(_child(value, "Properties"), "Events")
        if isinstance(events, yaml.MappingNode):
            for event_key, _ in events.value:
                if isinstance(event_key, yaml.ScalarNode):
                    lines[f"{name}/Events/{event_key.value}"] = event_key.start_mark.line + 1


def _child(node: yaml.Node | None, name: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == name:
            return value  # type: ignore[no-any-return]
    return None


def _check_yaml_nodes(path: str, root: yaml.Node) -> None:
    """Refuse what would make building the template unbounded or ambiguous.

    One iterative pass over the composed node graph (aliases are shared nodes there, not
    copies, so the pass is linear in the text): the number of values once aliases are
    expanded, the nesting depth, an alias inside its own anchor, and duplicate keys.
    """
    resources = _child(root, "Resources")
    done: dict[int, tuple[int, int]] = {}  # id(node) -> (values expanded, depth)
    active: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children: list[yaml.Node]
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        if finished:
            active.discard(key)
            values = 1 + sum(done[id(child)][0] for child in children)
            depth = 1 + max((done[id(child)][1] for child in children), default=0)
            if values > MAX_VALUES:
                raise TemplateError(
                    path,
                    node.start_mark.line + 1,
                    f"its YAML aliases expand to more than {MAX_VALUES:,} values (an alias"
                    " bomb?); safe-queue does not read it. Fix: write the values out, or"
                    " use fewer nested aliases.",
                )
            if depth > MAX_DEPTH:
                raise too_deep(path, node.start_mark.line + 1)
            done[key] = (values, depth)
            continue
        if key in done:
            continue
        if key in active:
            raise TemplateError(
                path,
                node.start_mark.line + 1,
                "a YAML alias refers to the value that contains it (a recursive structure),"
                " which no template can hold. Fix: remove the alias.",
            )
        active.add(key)
        stack.append((node, True))
        if isinstance(node, yaml.MappingNode):
            _check_duplicate_keys(path, node, node is resources)
        stack.extend((child, False) for child in reversed(children) if id(child) not in done)


def _check_duplicate_keys(path: str, node: yaml.MappingNode, is_resources: bool) -> None:
    seen: dict[str, int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        line = key.start_mark.line + 1
        if key.value in seen:
            raise duplicate_key(path, str(key.value), seen[key.value], line, is_resources)
        seen[key.value] = line


def load_yaml(path: str, text: str) -> tuple[Any, dict[str, int]]:
    loader = _CfnLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, {}
        _check_yaml_nodes(path, root)
        return loader.construct_document(root), _yaml_lines(root)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = error.problem or error.context or "invalid YAML"
        if "maximum nesting depth" in str(problem):
            raise too_deep(path, line) from None
        raise TemplateError(path, line, f"could not parse YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise TemplateError(path, None, f"could not parse YAML: {error}") from None
    except RecursionError:  # the pure-Python parser, without libyaml
        raise too_deep(path, None) from None
    except TemplateError:
        raise
    except ValueError as error:  # e.g. an integer of more than 4,300 digits
        raise TemplateError(path, None, f"could not read a value: {error}") from None
    finally:
        loader.dispose()
