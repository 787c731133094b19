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
from pathlib import Path
from typing import Any, Final

from safe_queue.template._file import (
    LOOP_PREFIX,
    MAX_DEPTH,
    MAX_RESOURCES,
    MAX_TEMPLATE_BYTES,
    MAX_VALUES,
    TemplateError,
    TemplateFile,
    TemplateLimitWarning,
    link_loop,
    read_text,
    too_deep,
)
from safe_queue.template._json import load_json

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
    "read_text",
    "warn_over_limits",
]


def _decode(name: str, text: str) -> tuple[Any, dict[str, int]]:
    """Decode JSON or YAML (chosen by the first character); YAML's reader is loaded on use."""
    if text.lstrip()[:1] == "{":
        return load_json(name, text)
    try:
        from safe_queue.template._yaml import load_yaml
    except ModuleNotFoundError as missing:  # PyYAML comes with the `cli` extra
        raise TemplateError(
            name,
            None,
            f"is YAML, and reading YAML needs {missing.name}, which is not installed. Fix:"
            " pip install 'safe-queue[cli]' (JSON templates and cdk.out need nothing more).",
        ) from None
    return load_yaml(name, text)


_SECTIONS: Final = frozenset(
    {
        "AWSTemplateFormatVersion",
        "Description",
        "Metadata",
        "Parameters",
        "Rules",
        "Mappings",
        "Conditions",
        "Transform",
        "Outputs",
    }
)
"""CloudFormation's template sections besides ``Resources``."""


def _without_resources(body: Any) -> bool:
    """Whether ``body`` is a template of other sections only, with no ``Resources`` key."""
    return (
        isinstance(body, dict)
        and "Resources" not in body
        and bool(body)
        and all(key in _SECTIONS for key in body)
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
    body, lines = _decode(name, text)
    if _without_resources(body):
        # A template of other sections only (CDK synthesizes an empty stack so: its bootstrap
        # version parameter and rule): nothing in it to check, and no reason to refuse it.
        body = {**body, "Resources": {}}
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
            raise link_loop(shown) from None
        raise TemplateError(shown, None, f"could not read: {error.strerror or error}") from None
    if len(data) > _MAX_MANIFEST_BYTES:
        raise TemplateError(shown, None, "is larger than 64 MB: not a cloud assembly manifest")
    try:
        return json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as error:
        raise TemplateError(shown, error.lineno, f"could not parse JSON: {error.msg}") from None
    except RecursionError:
        raise too_deep(shown, None) from None
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
