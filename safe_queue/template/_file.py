"""A template file as read: CloudFormation's limits, the errors, and bounded reading.

Shared by the decoders (:mod:`_yaml`, :mod:`_json`) and the loader (:mod:`_load`).
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "LOOP_PREFIX",
    "MAX_DEPTH",
    "MAX_RESOURCES",
    "MAX_TEMPLATE_BYTES",
    "MAX_VALUES",
    "TemplateError",
    "TemplateFile",
    "TemplateLimitWarning",
    "duplicate_key",
    "link_loop",
    "read_text",
    "too_deep",
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


def read_text(path: str | Path) -> str:
    """Read a template file as UTF-8, never past :data:`MAX_TEMPLATE_BYTES`.

    Raises
    ------
    TemplateError
        The file is missing, unreadable, a symbolic-link loop, larger than CloudFormation's
        1 MB template limit, or not UTF-8 text.
    """
    name = str(path)
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_TEMPLATE_BYTES + 1)
    except FileNotFoundError:
        raise TemplateError(name, None, "no such file") from None
    except IsADirectoryError:
        raise TemplateError(name, None, "is a directory without manifest.json") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise link_loop(name) from None
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


def duplicate_key(path: str, key: str, first: int | None, line: int | None, resource: bool) -> Any:
    what = "logical id" if resource else "key"
    where = f" (also at line {first})" if first else ""
    return TemplateError(
        path,
        line,
        f"duplicate {what} {key!r}{where}: a {what} written twice is ambiguous (a parser keeps"
        " one of them silently). Fix: rename or remove one.",
    )


def too_deep(path: str, line: int | None) -> TemplateError:
    return TemplateError(
        path,
        line,
        f"is nested more than {MAX_DEPTH} levels deep, deeper than any CloudFormation"
        " template needs; safe-queue does not read it. Fix: flatten the nesting.",
    )


def link_loop(name: str) -> TemplateError:
    return TemplateError(
        name,
        None,
        "is a symbolic link loop (too many levels of symbolic links). Fix: point the link"
        " at a file or directory.",
    )
