"""Recognise and read the JSON that ``terraform show -json`` prints, and index its resources.

A saved plan (``terraform show -json plan.out``) has ``format_version`` 1.x,
``terraform_version``, ``planned_values`` (what each resource will be, values Terraform
knows only after apply left out), ``resource_changes`` (``after_unknown`` marks those
values) and ``configuration`` (each module's expressions with their ``references``, and
its ``module_calls``). A state (``terraform show -json``) has ``values`` instead: every
value known, no configuration. Both nest child modules under ``child_modules``.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = [
    "AFTER_APPLY",
    "Document",
    "Instance",
    "Key",
    "ModulePath",
    "TerraformError",
    "is_terraform_json",
    "load",
    "parse",
    "parse_module_address",
]

Key = str | int | None
"""An instance key: ``each.key`` (a string), ``count.index`` (an int), or none."""
ModulePath = tuple[tuple[str, Key], ...]
"""A module instance: ``module.a["x"].module.b`` is ``(("a", "x"), ("b", None))``."""


class TerraformError(ValueError):
    """A Terraform JSON file that cannot be checked: unreadable, or not what it should be.

    Examples
    --------
    >>> str(TerraformError("plan.json", "format_version 2.0 is not supported"))
    'plan.json: format_version 2.0 is not supported'
    """

    def __init__(self, path: str | Path, message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


class _AfterApply:
    """The marker of a value Terraform knows only after apply (``after_unknown``)."""

    def __repr__(self) -> str:
        return "(known after apply)"


AFTER_APPLY: Final = _AfterApply()
"""What :meth:`Instance.get` returns for a value marked ``after_unknown``."""

_SHOW_JSON = (
    "run `terraform show -json plan.out > plan.json` (a saved plan) or"
    " `terraform show -json > state.json` (the state) and check that file"
)


@dataclass(eq=False)
class Instance:
    """One resource instance of a plan or a state.

    Attributes
    ----------
    address
        Its resource address (``module.workers.aws_sqs_queue.this["orders"]``).
    module
        The module instance it belongs to.
    type, name, index
        Its resource type, name and instance key.
    values
        Its planned (or, in a state, current) values; unknown ones are absent.
    unknown
        The plan's ``after_unknown`` for it (empty for a state).
    config
        Its resource block from the plan's ``configuration`` (``None`` in a state).
    """

    address: str
    module: ModulePath
    type: str
    name: str
    index: Key
    values: dict[str, Any]
    unknown: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] | None = None

    def get(self, attribute: str) -> Any:
        """Return an attribute's value, or :data:`AFTER_APPLY` when it is not known yet."""
        if self.unknown.get(attribute) is True:
            return AFTER_APPLY
        return self.values.get(attribute)

    def expression(self, attribute: str) -> dict[str, Any] | None:
        """Return the configuration's expression of ``attribute``, if it is set there."""
        if self.config is None:
            return None
        expressions = self.config.get("expressions")
        if not isinstance(expressions, dict):
            return None
        expression = expressions.get(attribute)
        return expression if isinstance(expression, dict) else None


def has_unknown_inside(marker: Any) -> bool:
    """Whether ``after_unknown`` marks any value inside a nested block as unknown."""
    if marker is True:
        return True
    if isinstance(marker, dict):
        return any(has_unknown_inside(value) for value in marker.values())
    if isinstance(marker, list):
        return any(has_unknown_inside(value) for value in marker)
    return False


@dataclass(eq=False)
class Document:
    """One plan or state, its resource instances indexed for linking.

    Attributes
    ----------
    path
        The file, as given.
    kind
        ``"plan"`` or ``"state"``.
    instances
        Every managed resource instance, in file order.
    variables
        The root module's variable values (plans only).
    configuration
        The plan's ``configuration.root_module`` (``{}`` for a state).
    """

    path: str
    kind: str
    instances: list[Instance]
    variables: dict[str, Any] = field(default_factory=dict)
    configuration: dict[str, Any] = field(default_factory=dict)
    _by_resource: dict[tuple[ModulePath, str, str], list[Instance]] = field(
        default_factory=dict, repr=False
    )

    _by_type: dict[str, list[Instance]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for instance in self.instances:
            key = (instance.module, instance.type, instance.name)
            self._by_resource.setdefault(key, []).append(instance)
            self._by_type.setdefault(instance.type, []).append(instance)

    def resource(self, module: ModulePath, type_: str, name: str) -> list[Instance]:
        """Every instance of ``type_.name`` in one module instance."""
        return self._by_resource.get((module, type_, name), [])

    def of_type(self, type_: str) -> list[Instance]:
        """Every instance of a resource type, in file order."""
        return self._by_type.get(type_, [])

    def config_module(self, module: ModulePath) -> dict[str, Any] | None:
        """Return a module instance's configuration (``module_calls`` followed)."""
        return _config_module(self.configuration, module)

    def module_call(self, module: ModulePath) -> dict[str, Any] | None:
        """Return the ``module_calls`` entry (in its parent) of a child module instance."""
        if not module:
            return None
        parent = self.config_module(module[:-1])
        calls = parent.get("module_calls") if parent else None
        call = calls.get(module[-1][0]) if isinstance(calls, dict) else None
        return call if isinstance(call, dict) else None


def _config_module(configuration: dict[str, Any], module: ModulePath) -> dict[str, Any] | None:
    current: Any = configuration
    for name, _ in module:
        calls = current.get("module_calls") if isinstance(current, dict) else None
        call = calls.get(name) if isinstance(calls, dict) else None
        current = call.get("module") if isinstance(call, dict) else None
        if not isinstance(current, dict):
            return None
    return current if isinstance(current, dict) else None


_MODULE_STEP = re.compile(r'module\.([A-Za-z0-9_-]+)(?:\[(\d+|"(?:[^"\\]|\\.)*")\])?(?:\.|$)')


def parse_key(text: str) -> Key:
    """Turn an address's ``[0]`` or ``["orders"]`` (without the brackets) into its key.

    Examples
    --------
    >>> parse_key('"orders"'), parse_key("2")
    ('orders', 2)
    """
    if text.startswith('"'):
        key: str = json.loads(text)
        return key
    return int(text)


def parse_module_address(address: str) -> ModulePath:
    """Split a module instance address into its steps.

    Examples
    --------
    >>> parse_module_address('module.tenant["acme"].module.queue[0]')
    (('tenant', 'acme'), ('queue', 0))
    >>> parse_module_address("")
    ()
    """
    steps: list[tuple[str, Key]] = []
    position = 0
    while position < len(address):
        match = _MODULE_STEP.match(address, position)
        if match is None:
            raise ValueError(f"{address!r} is not a module address")
        steps.append(
            (match.group(1), None if match.group(2) is None else parse_key(match.group(2)))
        )
        position = match.end()
    return tuple(steps)


def _key_of(raw: Any) -> Key:
    return raw if isinstance(raw, str | int) and not isinstance(raw, bool) else None


def _walk(
    module: Any,
    unknown: dict[str, dict[str, Any]],
    configuration: dict[str, Any] | None,
    path: str,
) -> Iterator[Instance]:
    if not isinstance(module, dict):
        return
    try:
        module_path = parse_module_address(str(module.get("address") or ""))
    except ValueError as error:
        raise TerraformError(path, f"{error}. Fix: {_SHOW_JSON}") from None
    config = _config_module(configuration, module_path) if configuration is not None else None
    config_resources: dict[str, dict[str, Any]] = {}
    if config is not None:
        for resource in config.get("resources") or []:
            if isinstance(resource, dict) and isinstance(resource.get("address"), str):
                config_resources[resource["address"]] = resource
    for resource in module.get("resources") or []:
        if not isinstance(resource, dict) or resource.get("mode", "managed") != "managed":
            continue
        address, type_, name = resource.get("address"), resource.get("type"), resource.get("name")
        if not (isinstance(address, str) and isinstance(type_, str) and isinstance(name, str)):
            continue
        values = resource.get("values")
        yield Instance(
            address=address,
            module=module_path,
            type=type_,
            name=name,
            index=_key_of(resource.get("index")),
            values=values if isinstance(values, dict) else {},
            unknown=unknown.get(address, {}),
            config=config_resources.get(f"{type_}.{name}"),
        )
    for child in module.get("child_modules") or []:
        yield from _walk(child, unknown, configuration, path)


def _binary_plan(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return "tfplan" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _starts_an_object(path: str) -> bool:
    """Whether ``{`` comes first after a BOM and whitespace (else no JSON object: unread)."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(4096).removeprefix(codecs.BOM_UTF8)
            while head and not head.lstrip(b" \t\n\r"):
                head = stream.read(4096)
    except OSError:
        return False
    return head.lstrip(b" \t\n\r").startswith(b"{")


@functools.lru_cache(maxsize=16)
def _read(path: str, _mtime: int, _size: int) -> dict[str, Any] | None:
    """Return the file's top-level JSON object if it may be Terraform's, else ``None``."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    if '"terraform_version"' not in text and '"format_version"' not in text:
        return None
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):  # nested too deep: the template reader says so
        return None
    return body if isinstance(body, dict) else None


def _body(path: str | Path) -> dict[str, Any] | None:
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    if not Path(path).is_file() or not _starts_an_object(str(path)):
        return None
    return _read(str(path), stat.st_mtime_ns, stat.st_size)


def _raw_state(body: dict[str, Any]) -> bool:
    return "lineage" in body and "serial" in body and "format_version" not in body


def is_terraform_json(path: str | Path) -> bool:
    """Whether ``path`` is for the Terraform adapter (and not a CloudFormation template).

    True for the JSON of ``terraform show -json`` (a plan or a state: a top-level
    ``format_version``), and
    also for a saved binary plan or a raw ``terraform.tfstate``, which :func:`load` refuses
    with the command that turns them into JSON. False for anything else, a missing or
    unreadable file included (the template reader reports those).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     plan = pathlib.Path(directory, "plan.json")
    ...     _ = plan.write_text(json.dumps({"format_version": "1.2",
    ...         "terraform_version": "1.11.4", "planned_values": {}}))
    ...     template = pathlib.Path(directory, "template.json")
    ...     _ = template.write_text(json.dumps({"Resources": {}}))
    ...     is_terraform_json(plan), is_terraform_json(template)
    (True, False)
    """
    if not Path(path).is_file():
        return False
    body = _body(path)
    if body is None:
        return _binary_plan(Path(path))
    if _raw_state(body):
        return True
    # No CloudFormation template has a top-level format_version; an empty state has nothing
    # else (`terraform show -json` before the first apply prints {"format_version": "1.0"}).
    return isinstance(body.get("format_version"), str)


def load(path: str | Path) -> Document:
    """Read a plan or state JSON file into a :class:`Document`.

    Raises
    ------
    TerraformError
        The file is missing or unreadable, is a saved binary plan or a raw state file, has
        a ``format_version`` other than 1.x, or is no Terraform JSON at all.
    """
    if not Path(path).exists():
        raise TerraformError(path, "no such file")
    if _binary_plan(Path(path)):
        raise TerraformError(
            path,
            "is a saved plan in Terraform's binary format, not JSON. Fix: run"
            f" `terraform show -json {Path(path).name} > plan.json` and check plan.json",
        )
    body = _body(path)
    if body is None:
        raise TerraformError(path, f"is not JSON from `terraform show -json`. Fix: {_SHOW_JSON}")
    return parse(path, body)


def parse(path: str | Path, body: dict[str, Any]) -> Document:
    """Read the decoded JSON of a plan or state (``path`` names it in messages).

    Raises
    ------
    TerraformError
        ``body`` is a raw state file, or its ``format_version`` is not 1.x.
    """
    if _raw_state(body):
        raise TerraformError(
            path,
            "is a raw state file (terraform.tfstate), whose layout is internal to Terraform."
            " Fix: run `terraform show -json > state.json` in its working directory and"
            " check state.json",
        )
    version = body.get("format_version")
    if not isinstance(version, str) or version.split(".")[0] != "1":
        raise TerraformError(
            path,
            f"format_version {version!r} is not supported (1.x is, Terraform 0.12 and"
            f" later). Fix: {_SHOW_JSON}",
        )
    if "planned_values" in body or "resource_changes" in body:
        return _plan(path, body)
    return _state(path, body)


def _plan(path: str | Path, body: dict[str, Any]) -> Document:
    unknown: dict[str, dict[str, Any]] = {}
    for change in body.get("resource_changes") or []:
        if not isinstance(change, dict) or not isinstance(change.get("address"), str):
            continue
        details = change.get("change")
        marks = details.get("after_unknown") if isinstance(details, dict) else None
        if isinstance(marks, dict):
            unknown[change["address"]] = marks
    configuration = body.get("configuration")
    root_config = configuration.get("root_module") if isinstance(configuration, dict) else None
    root_config = root_config if isinstance(root_config, dict) else {}
    variables = body.get("variables")
    planned = body.get("planned_values")
    root = planned.get("root_module") if isinstance(planned, dict) else None
    return Document(
        path=str(path),
        kind="plan",
        instances=list(_walk(root, unknown, root_config, str(path))),
        variables=(
            {
                name: entry.get("value")
                for name, entry in variables.items()
                if isinstance(entry, dict)
            }
            if isinstance(variables, dict)
            else {}
        ),
        configuration=root_config,
    )


def _state(path: str | Path, body: dict[str, Any]) -> Document:
    values = body.get("values")
    root = values.get("root_module") if isinstance(values, dict) else None
    return Document(path=str(path), kind="state", instances=list(_walk(root, {}, None, str(path))))
