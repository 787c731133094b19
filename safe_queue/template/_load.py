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

Hostile input is an input error (:class:`TemplateError`, exit 2), found in bounded time and
memory before anything is built from it: a file over CloudFormation's 1 MB template limit is
not read past that limit; bytes that are not UTF-8, a key written twice, nesting deeper than
:data:`MAX_DEPTH` levels, YAML aliases that expand past :data:`MAX_VALUES` values (an alias
bomb) or refer to themselves, and a symbolic-link loop are refused with the file named.
"""

from __future__ import annotations

import errno
import json
import os
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "MAX_DEPTH",
    "MAX_RESOURCES",
    "MAX_TEMPLATE_BYTES",
    "MAX_VALUES",
    "TemplateError",
    "TemplateFile",
    "TemplateLimitWarning",
    "expand_paths",
    "load_template",
    "warn_over_limits",
]

MAX_TEMPLATE_BYTES = 1_048_576
"""CloudFormation's largest template body (1 MB, from S3; AWS CloudFormation User Guide,
"Understand CloudFormation quotas"). A larger file is refused, and never read past this."""
MAX_DEPTH = 100
"""The deepest nesting of objects and lists read; real templates stay far below it."""
MAX_VALUES = 1_000_000
"""Values a YAML template may hold once its aliases are expanded: more than 1 MB of text can
write without aliases (about 2 bytes per value), so only an alias bomb reaches it."""
MAX_RESOURCES = 500
"""CloudFormation's resources per stack (same quotas page). More is a warning, not a refusal:
the template is still read (its mappings still get a verdict), each ``cdk.out`` stack and
nested stack is counted on its own, and a SAM template is counted before SAM's transform."""
LOOP_PREFIX = "Fn::ForEach::"


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


class TemplateLimitWarning(UserWarning):
    """A template over one of CloudFormation's quotas that is still read (500 resources)."""


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
    unexpanded
        Resources of an ``Fn::ForEach`` loop that could not be expanded (logical id as
        written, ``Queue${Tenant}``), with the reason: they are reported as unchecked.
    loops
        Resources an ``Fn::ForEach`` loop made, with what reading its collection assumed
        (a :class:`~safe_queue.template._resolve.Trace`: parameter values).
    """

    path: str
    body: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)
    stack: str | None = None
    scope: str = ""
    pseudo: dict[str, str] = field(default_factory=dict)
    parent: tuple[TemplateFile, str] | None = None
    unexpanded: dict[str, str] = field(default_factory=dict)
    loops: dict[str, Any] = field(default_factory=dict)

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
                raise _too_deep(path, node.start_mark.line + 1)
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
            raise _duplicate(path, str(key.value), seen[key.value], line, is_resources)
        seen[key.value] = line


def _duplicate(path: str, key: str, first: int | None, line: int | None, resource: bool) -> Any:
    what = "logical id" if resource else "key"
    where = f" (also at line {first})" if first else ""
    return TemplateError(
        path,
        line,
        f"duplicate {what} {key!r}{where}: a {what} written twice is ambiguous (a parser keeps"
        " one of them silently). Fix: rename or remove one.",
    )


def _too_deep(path: str, line: int | None) -> TemplateError:
    return TemplateError(
        path,
        line,
        f"is nested more than {MAX_DEPTH} levels deep, deeper than any CloudFormation"
        " template needs; safe-queue does not read it. Fix: flatten the nesting.",
    )


def _load_yaml(path: str, text: str) -> tuple[Any, dict[str, int]]:
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
            raise _too_deep(path, line) from None
        raise TemplateError(path, line, f"could not parse YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise TemplateError(path, None, f"could not parse YAML: {error}") from None
    except RecursionError:  # the pure-Python parser, without libyaml
        raise _too_deep(path, None) from None
    except TemplateError:
        raise
    except ValueError as error:  # e.g. an integer of more than 4,300 digits
        raise TemplateError(path, None, f"could not read a value: {error}") from None
    finally:
        loader.dispose()


# --- JSON --------------------------------------------------------------------------------

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


def _load_json(path: str, text: str) -> tuple[Any, dict[str, int]]:
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
        raise _duplicate(path, error.key, first, line, resource) from None
    except RecursionError:
        raise _too_deep(path, None) from None
    except ValueError as error:  # e.g. an integer of more than 4,300 digits
        raise TemplateError(path, None, f"could not read a value: {error}") from None
    if _json_depth(body) > MAX_DEPTH:
        raise _too_deep(path, None)
    return body, _json_lines(text, body) if isinstance(body, dict) else {}


def _is_resource_key(text: str, key: str) -> bool:
    """Whether a duplicate JSON key is (by its shape) a resource: ``"<key>": {"Type"``."""
    pattern = rf'"{re.escape(json.dumps(key)[1:-1])}"\s*:\s*\{{\s*"Type"'
    return re.search(pattern, text) is not None


# --- files and cloud assemblies ----------------------------------------------------------


def read_text(path: str | Path, shown: str | None = None) -> str:
    """Read a template file as UTF-8, never past :data:`MAX_TEMPLATE_BYTES`.

    Raises
    ------
    TemplateError
        The file is missing, unreadable, a symbolic-link loop, larger than CloudFormation's
        1 MB template limit, or not UTF-8 text.
    """
    name = shown or str(path)
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_TEMPLATE_BYTES + 1)
    except FileNotFoundError:
        raise TemplateError(name, None, "no such file") from None
    except IsADirectoryError:
        raise TemplateError(name, None, "is a directory without manifest.json") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _link_loop(name) from None
        raise TemplateError(name, None, f"could not read: {error.strerror or error}") from None
    if len(data) > MAX_TEMPLATE_BYTES:
        raise TemplateError(
            name,
            None,
            f"is larger than {MAX_TEMPLATE_BYTES:,} bytes (1 MB), CloudFormation's limit for a"
            " template: CloudFormation would refuse it, and safe-queue reads no further. Fix:"
            " split the stack (nested stacks), or move inline code and data out of it.",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise TemplateError(
            name,
            line,
            f"is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}):"
            " CloudFormation reads templates as UTF-8. Fix: save the file as UTF-8.",
        ) from None


def _link_loop(name: str) -> TemplateError:
    return TemplateError(
        name,
        None,
        "is a symbolic link loop (too many levels of symbolic links). Fix: point the link"
        " at a file or directory.",
    )


def load_template(
    path: str | Path, *, stack: str | None = None, scope: str = "", stack_name: str | None = None
) -> TemplateFile:
    """Read one template file (JSON or YAML, chosen by its first character).

    Raises
    ------
    TemplateError
        The file is missing, unreadable, unparseable, hostile (see the module's notes), or
        has no ``Resources`` section.
    """
    name = str(path)
    text = read_text(path)
    body, lines = (_load_json if text.lstrip()[:1] == "{" else _load_yaml)(name, text)
    if not isinstance(body, dict) or not isinstance(body.get("Resources"), dict):
        raise TemplateError(
            name,
            None,
            "is not a CloudFormation template (no Resources section). Fix: pass template"
            " files (JSON or YAML) or a cdk.out directory.",
        )
    for logical_id, resource in body["Resources"].items():
        if not isinstance(logical_id, str):
            raise TemplateError(name, None, f"resource id {logical_id!r} is not a name")
        if logical_id.startswith(LOOP_PREFIX):
            continue  # an Fn::ForEach loop (AWS::LanguageExtensions), expanded later
        if not isinstance(resource, dict):
            raise TemplateError(
                name, lines.get(logical_id), f"resource {logical_id} is not a mapping"
            )
    pseudo = {"AWS::StackName": stack_name} if stack_name else {}
    return TemplateFile(name, body, lines, stack, scope, pseudo)


_MAX_MANIFEST_BYTES = 64 * 1_048_576  # a manifest is not a template; CDK's can be large


def _read_json(path: Path) -> Any:
    """Read a cloud assembly's own JSON file (manifest, asset manifest), bounded."""
    shown = str(path)
    try:
        with open(path, "rb") as stream:
            data = stream.read(_MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise TemplateError(
            shown, None, "no such file: a directory must be a cloud assembly (cdk.out)"
        ) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _link_loop(shown) from None
        raise TemplateError(shown, None, f"could not read: {error.strerror or error}") from None
    if len(data) > _MAX_MANIFEST_BYTES:
        raise TemplateError(shown, None, "is larger than 64 MB: not a cloud assembly manifest")
    try:
        return json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as error:
        raise TemplateError(shown, error.lineno, f"could not parse JSON: {error.msg}") from None
    except RecursionError:
        raise _too_deep(shown, None) from None
    except ValueError as error:  # not UTF-8, or an integer of more than 4,300 digits
        raise TemplateError(shown, None, f"could not read: {error}") from None


def _load_assembly(directory: Path, scope: str, seen: set[str]) -> Iterator[TemplateFile]:
    real = os.path.realpath(directory)
    if real in seen:
        raise TemplateError(
            str(directory),
            None,
            "is a cloud assembly already being read (a loop of nested assemblies or symbolic"
            " links). Fix: point each nested assembly at its own directory.",
        )
    seen.add(real)
    shown = str(directory / "manifest.json")
    manifest = _read_json(directory / "manifest.json")
    artifacts = manifest.get("artifacts") if isinstance(manifest, dict) else None
    if not isinstance(artifacts, dict):
        raise TemplateError(shown, None, "is not a cloud assembly manifest (no artifacts)")
    assets = _asset_paths(directory, artifacts)
    for artifact_id, artifact in artifacts.items():
        if not isinstance(artifact, dict):
            continue
        properties = artifact.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        kind = artifact.get("type")
        template_file = properties.get("templateFile")
        if kind == "aws:cloudformation:stack" and isinstance(template_file, str):
            stack_name = properties.get("stackName")
            template = load_template(
                directory / template_file,
                stack=artifact_id,
                scope=scope,
                stack_name=stack_name if isinstance(stack_name, str) else artifact_id,
            )
            yield template
            yield from _nested_stacks(
                directory, template, assets, {os.path.realpath(template.path)}
            )
        elif kind == "cdk:cloud-assembly" and isinstance(properties.get("directoryName"), str):
            nested = directory / properties["directoryName"]
            yield from _load_assembly(nested, str(nested), seen)


_ASSET_HASH = re.compile(r"([0-9a-f]{64})\.json")


def _asset_paths(directory: Path, artifacts: dict[str, Any]) -> dict[str, str]:
    """Asset hash -> file in the cloud assembly, from its asset manifests (nested templates)."""
    paths: dict[str, str] = {}
    for artifact in artifacts.values():
        if not isinstance(artifact, dict) or artifact.get("type") != "cdk:asset-manifest":
            continue
        properties = artifact.get("properties")
        name = properties.get("file") if isinstance(properties, dict) else None
        try:
            files = _read_json(directory / str(name)).get("files")
        except (TemplateError, AttributeError):
            continue  # an asset manifest is not needed for the stacks themselves
        for asset_hash, asset in (files if isinstance(files, dict) else {}).items():
            source = asset.get("source") if isinstance(asset, dict) else None
            if isinstance(source, dict) and isinstance(source.get("path"), str):
                paths[str(asset_hash)] = source["path"]
    return paths


def _nested_stacks(
    directory: Path, parent: TemplateFile, assets: dict[str, str], ancestors: set[str]
) -> Iterator[TemplateFile]:
    """Yield the templates of a stack's CDK ``NestedStack``s (and theirs) in the assembly."""
    for logical_id, resource in parent.resources.items():
        if not isinstance(resource, dict) or resource.get("Type") != "AWS::CloudFormation::Stack":
            continue
        metadata = resource.get("Metadata")
        path = metadata.get("aws:asset:path") if isinstance(metadata, dict) else None
        if not isinstance(path, str):
            properties = resource.get("Properties")
            url = properties.get("TemplateURL") if isinstance(properties, dict) else None
            found = _ASSET_HASH.search(json.dumps(url))
            path = assets.get(found.group(1)) if found else None
        if not path or not (directory / path).is_file():
            continue
        real = os.path.realpath(directory / path)
        if real in ancestors:
            raise TemplateError(
                parent.path,
                parent.lines.get(logical_id),
                f"nested stack {logical_id} is this template or one that contains it (a loop"
                " of nested stacks). Fix: give the nested stack its own template.",
            )
        nested = load_template(directory / path, stack=parent.stack, scope=parent.scope)
        nested.parent = (parent, logical_id)
        yield nested
        yield from _nested_stacks(directory, nested, assets, ancestors | {real})


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
    seen: set[str] = set()
    assemblies: set[str] = set()
    for given in paths:
        path = Path(given)
        key = os.path.realpath(path)  # never raises on a symbolic-link loop
        if key in seen:  # the same file twice would export every name twice
            continue
        seen.add(key)
        if path.is_dir():
            templates.extend(_load_assembly(path, str(path), assemblies))
        elif path.name == "manifest.json" and path.is_file():
            templates.extend(_load_assembly(path.parent, str(path.parent), assemblies))
        else:
            templates.append(load_template(given))
    return templates


def warn_over_limits(templates: Sequence[TemplateFile]) -> None:
    """Warn (:class:`TemplateLimitWarning`) for each stack over CloudFormation's resources.

    Examples
    --------
    >>> import warnings
    >>> big = TemplateFile("big.json", {"Resources": {f"Q{i}": {} for i in range(501)}})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_over_limits([big])
    >>> print(caught[0].message)
    big.json: 501 resources, more than CloudFormation's 500 for each stack: CloudFormation \
would refuse to create it (checked anyway). Fix: split the stack (nested stacks).
    """
    for template in templates:
        count = len(template.resources)
        if count > MAX_RESOURCES:
            warnings.warn(
                TemplateLimitWarning(
                    f"{template.path}: {count} resources, more than CloudFormation's"
                    f" {MAX_RESOURCES} for each stack: CloudFormation would refuse to create"
                    " it (checked anyway). Fix: split the stack (nested stacks)."
                ),
                stacklevel=2,
            )
