"""Read templates (JSON, YAML with CloudFormation short-form tags) and cloud assemblies.

Decoder choice, measured on this project's machine (Python 3.11, 2 cores, 2026-11-30,
``benchmarks/bench_check.py``): ``import cfnlint.decode`` costs 0.9-1.6 s, more than a
whole check; ``import yaml`` 0.06 s, and with its libyaml binding (``CSafeLoader``) a
500-resource YAML template is checked in 0.12-0.17 s in one process. So
YAML goes through a ``SafeLoader`` subclass that turns each short-form tag (``!Ref``,
``!GetAtt``, ``!Sub``...) into its long form (``{"Ref": ...}``), and JSON through
:mod:`json`. Line numbers are kept for the resources (and SAM events), which is all the
reports need: YAML from the composed node tree (``start_mark.line + 1``), JSON from one
scan for ``"<key>": {`` after the ``"Resources"`` key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["TemplateError", "TemplateFile", "expand_paths", "load_template"]


class TemplateError(ValueError):
    """A file that is missing, unreadable, unparseable, or not a CloudFormation template.

    Attributes
    ----------
    path
        The file (or directory) as given.
    line
        1-based line of a parse error, where known.
    message
        What is wrong, and the fix.

    Examples
    --------
    >>> str(TemplateError("t.yaml", 3, "could not parse YAML: found a tab"))
    't.yaml:3: could not parse YAML: found a tab'
    """

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        location = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{location}: {message}")


@dataclass(eq=False)
class TemplateFile:
    """One template as read, with where it came from.

    Attributes
    ----------
    path
        The template file's path, as given (or joined under a ``cdk.out`` directory).
    body
        The decoded template, short-form tags turned into their long form.
    lines
        1-based lines of each resource (``"Id"``) and SAM event (``"Id/Events/Name"``).
    stack
        The cloud assembly's artifact id, for a template read from ``cdk.out``.
    scope
        The (nested) cloud assembly directory it belongs to; ``""`` for a plain file.
    pseudo
        Known pseudo parameters (``AWS::StackName`` from the cloud assembly).
    parent
        For a CDK nested stack: the parent template and its ``AWS::CloudFormation::Stack``
        logical id, whose ``Parameters`` give the nested template's parameter values.
    """

    path: str
    body: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)
    stack: str | None = None
    scope: str = ""
    pseudo: dict[str, str] = field(default_factory=dict)
    parent: tuple[TemplateFile, str] | None = None

    @property
    def resources(self) -> dict[str, Any]:
        """The ``Resources`` section (every value a dict)."""
        resources = self.body.get("Resources")
        return resources if isinstance(resources, dict) else {}


# --- YAML --------------------------------------------------------------------------------

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
        )
    },
}
for _tag, _name in _TAGS.items():
    _CfnLoader.add_constructor(f"!{_tag}", _long_form(_name))
# YAML 1.1 timestamps (AWSTemplateFormatVersion: 2010-09-09) stay strings, as in CloudFormation.
_CfnLoader.add_constructor("tag:yaml.org,2002:timestamp", _CfnLoader.construct_yaml_str)


def _yaml_lines(root: yaml.Node) -> dict[str, int]:
    """Lines of each resource and SAM event, from the composed (not yet built) node tree."""
    lines: dict[str, int] = {}
    resources = _child(root, "Resources")
    if not isinstance(resources, yaml.MappingNode):
        return lines
    for key, value in resources.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        lines[key.value] = key.start_mark.line + 1
        events = _child(_child(value, "Properties"), "Events")
        if isinstance(events, yaml.MappingNode):
            for event_key, _ in events.value:
                if isinstance(event_key, yaml.ScalarNode):
                    lines[f"{key.value}/Events/{event_key.value}"] = event_key.start_mark.line + 1
    return lines


def _child(node: yaml.Node | None, name: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == name:
            return value  # type: ignore[no-any-return]
    return None


def _load_yaml(path: str, text: str) -> tuple[Any, dict[str, int]]:
    loader = _CfnLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, {}
        return loader.construct_document(root), _yaml_lines(root)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = error.problem or error.context or "invalid YAML"
        raise TemplateError(path, line, f"could not parse YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise TemplateError(path, None, f"could not parse YAML: {error}") from None
    finally:
        loader.dispose()


# --- JSON --------------------------------------------------------------------------------

_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*\{')
_RESOURCES_KEY = re.compile(r'"Resources"\s*:\s*\{')


def _json_lines(text: str, body: dict[str, Any]) -> dict[str, int]:
    """Lines of each resource (the first ``"<id>": {`` after ``"Resources": {``) and SAM event.

    One regex pass over the text; nested objects come after their resource's key, so the
    first match of an id is the resource itself (an id that is also a property name of an
    earlier resource could be placed early; lines are hints, not identities).
    """
    resources = body.get("Resources")
    start = _RESOURCES_KEY.search(text)
    if not isinstance(resources, dict) or start is None:
        return {}
    wanted = set(resources)
    offsets: dict[str, int] = {}
    for match in _JSON_KEY.finditer(text, start.end()):
        key = match.group(1)
        if key in wanted and key not in offsets:
            offsets[key] = match.start()
            if len(offsets) == len(wanted):
                break
    for logical_id, offset in list(offsets.items()):
        resource = resources[logical_id]
        properties = resource.get("Properties") if isinstance(resource, dict) else None
        events = properties.get("Events") if isinstance(properties, dict) else None
        if not isinstance(events, dict):
            continue
        events_key = re.compile(r'"Events"\s*:\s*\{').search(text, offset)
        for event_name in events if events_key else ():
            found = re.compile(rf'"{re.escape(str(event_name))}"\s*:\s*\{{').search(
                text, events_key.end() if events_key else offset
            )
            if found:
                offsets[f"{logical_id}/Events/{event_name}"] = found.start()
    lines: dict[str, int] = {}
    line, position = 1, 0
    for key, offset in sorted(offsets.items(), key=lambda item: item[1]):
        line += text.count("\n", position, offset)
        position = offset
        lines[key] = line
    return lines


def _load_json(path: str, text: str) -> tuple[Any, dict[str, int]]:
    try:
        body = json.loads(text)
    except json.JSONDecodeError as error:
        raise TemplateError(path, error.lineno, f"could not parse JSON: {error.msg}") from None
    return body, _json_lines(text, body) if isinstance(body, dict) else {}


# --- files and cloud assemblies ----------------------------------------------------------


def load_template(
    path: str | Path, *, stack: str | None = None, scope: str = "", stack_name: str | None = None
) -> TemplateFile:
    """Read one template file (JSON or YAML, chosen by its first character).

    Raises
    ------
    TemplateError
        The file is missing, unreadable, unparseable, or has no ``Resources`` section.
    """
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TemplateError(name, None, "no such file") from None
    except IsADirectoryError:
        raise TemplateError(name, None, "is a directory without manifest.json") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TemplateError(name, None, f"could not read: {error}") from None
    body, lines = (_load_json if text.lstrip()[:1] == "{" else _load_yaml)(name, text)
    if not isinstance(body, dict) or not isinstance(body.get("Resources"), dict):
        raise TemplateError(
            name,
            None,
            "is not a CloudFormation template (no Resources section). Fix: pass template"
            " files (JSON or YAML) or a cdk.out directory.",
        )
    for logical_id, resource in body["Resources"].items():
        if not isinstance(resource, dict):
            raise TemplateError(
                name, lines.get(logical_id), f"resource {logical_id} is not a mapping"
            )
    pseudo = {"AWS::StackName": stack_name} if stack_name else {}
    return TemplateFile(name, body, lines, stack, scope, pseudo)


def _load_assembly(directory: Path, scope: str) -> Iterator[TemplateFile]:
    manifest_path = directory / "manifest.json"
    shown = str(manifest_path)
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TemplateError(
            shown, None, "no such file: a directory must be a cloud assembly (cdk.out)"
        ) from None
    except json.JSONDecodeError as error:
        raise TemplateError(shown, error.lineno, f"could not parse JSON: {error.msg}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TemplateError(shown, None, f"could not read: {error}") from None
    artifacts = manifest.get("artifacts") if isinstance(manifest, dict) else None
    if not isinstance(artifacts, dict):
        raise TemplateError(shown, None, "is not a cloud assembly manifest (no artifacts)")
    assets = _asset_paths(directory, artifacts)
    for artifact_id, artifact in artifacts.items():
        if not isinstance(artifact, dict):
            continue
        properties = artifact.get("properties") or {}
        kind = artifact.get("type")
        if kind == "aws:cloudformation:stack" and properties.get("templateFile"):
            template = load_template(
                directory / properties["templateFile"],
                stack=artifact_id,
                scope=scope,
                stack_name=properties.get("stackName") or artifact_id,
            )
            yield template
            yield from _nested_stacks(directory, template, assets)
        elif kind == "cdk:cloud-assembly" and properties.get("directoryName"):
            nested = directory / properties["directoryName"]
            yield from _load_assembly(nested, str(nested))


_ASSET_HASH = re.compile(r"([0-9a-f]{64})\.json")


def _asset_paths(directory: Path, artifacts: dict[str, Any]) -> dict[str, str]:
    """Asset hash -> file in the cloud assembly, from its asset manifests (nested templates)."""
    paths: dict[str, str] = {}
    for artifact in artifacts.values():
        if not isinstance(artifact, dict) or artifact.get("type") != "cdk:asset-manifest":
            continue
        name = (artifact.get("properties") or {}).get("file")
        try:
            files = json.loads((directory / str(name)).read_text(encoding="utf-8")).get("files")
        except (OSError, ValueError, AttributeError):
            continue  # an asset manifest is not needed for the stacks themselves
        for asset_hash, asset in (files or {}).items():
            source = asset.get("source") if isinstance(asset, dict) else None
            if isinstance(source, dict) and isinstance(source.get("path"), str):
                paths[str(asset_hash)] = source["path"]
    return paths


def _nested_stacks(
    directory: Path, parent: TemplateFile, assets: dict[str, str]
) -> Iterator[TemplateFile]:
    """Yield the templates of a stack's CDK ``NestedStack``s (and theirs) in the assembly."""
    for logical_id, resource in parent.resources.items():
        if resource.get("Type") != "AWS::CloudFormation::Stack":
            continue
        metadata = resource.get("Metadata")
        path = metadata.get("aws:asset:path") if isinstance(metadata, dict) else None
        if not isinstance(path, str):
            found = _ASSET_HASH.search(
                json.dumps((resource.get("Properties") or {}).get("TemplateURL"))
            )
            path = assets.get(found.group(1)) if found else None
        if not path or not (directory / path).is_file():
            continue
        nested = load_template(directory / path, stack=parent.stack, scope=parent.scope)
        nested.parent = (parent, logical_id)
        yield nested
        yield from _nested_stacks(directory, nested, assets)


def expand_paths(paths: Sequence[str | Path]) -> list[TemplateFile]:
    """Read every path: template files, and ``cdk.out`` directories with their nested stages.

    A directory must hold a cloud assembly (``manifest.json``); its stack templates are
    read, and each nested assembly (a CDK ``Stage``) becomes its own scope.

    Raises
    ------
    TemplateError
        A path is missing, unreadable or unparseable.
    """
    templates: list[TemplateFile] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        key = path.resolve()
        if key in seen:  # the same file twice would export every name twice
            continue
        seen.add(key)
        if path.is_dir():
            templates.extend(_load_assembly(path, str(path)))
        elif path.name == "manifest.json" and path.is_file():
            templates.extend(_load_assembly(path.parent, str(path.parent)))
        else:
            templates.append(load_template(given))
    return templates
