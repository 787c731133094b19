"""Lambda code assets with safe_queue's CDK-free modules in them, bundled locally at synth.

A function that runs safe_queue's code (the AWS Config rule's audit, a handler using
:mod:`safe_queue.runtime`) needs the package in its asset, without aws-cdk-lib. CDK's
local bundling copies the chosen modules of the installed package, and optionally a
directory of the app's own handler code, into the asset's output: no Docker, no staging
directory left behind, and the asset's hash follows the copied files.

Examples
--------
>>> RUNTIME_MODULES[-1]
'runtime'
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

__all__ = ["AUDIT_MODULES", "RUNTIME_MODULES", "copy_package", "local_asset", "package_code"]

_PACKAGE: Final = Path(__file__).resolve().parent.parent
_ALWAYS: Final = ("__init__.py", "_version.py", "py.typed", "errors.py", "keys.py", "arn.py")
RUNTIME_MODULES: Final = (*_ALWAYS, "retries.py", "engine", "runtime")
"""What a handler using :mod:`safe_queue.runtime` needs."""
AUDIT_MODULES: Final = (*_ALWAYS, "report.py", "retries.py", "engine", "live")
"""What the live audit needs (the AWS Config rule's function)."""
_NEVER: Final = ("__pycache__", "*.pyc", "command.py")  # command.py: the CLI only


def copy_package(target: Path, modules: Sequence[str]) -> Path:
    """Copy ``modules`` of the installed package into ``target / "safe_queue"``."""
    package = target / "safe_queue"
    package.mkdir(parents=True, exist_ok=True)
    for name in modules:
        path = _PACKAGE / name
        if path.is_dir():
            shutil.copytree(
                path, package / name, ignore=shutil.ignore_patterns(*_NEVER), dirs_exist_ok=True
            )
        else:
            shutil.copy2(path, package / name)
    return target


@jsii.implements(ILocalBundling)
class _LocalCopy:
    """CDK local bundling by a Python function that writes the asset into its output."""

    def __init__(self, copy: Callable[[Path], object]) -> None:
        self._copy = copy

    def try_bundle(self, output_dir: str, *_options: Any, **_named: Any) -> bool:
        """Write the asset into ``output_dir``; CDK then needs no Docker."""
        self._copy(Path(output_dir))
        return True


def local_asset(copy: Callable[[Path], object], key: str, source: Path = _PACKAGE) -> lambda_.Code:
    """Return a code asset that ``copy(output_dir)`` writes at synth, hashed by its output.

    ``key`` names what ``copy`` writes. CDK keeps one bundled output per source directory
    and bundling options, in a cache shared by the whole process; the Python object that
    does the copying is not part of that key, so ``key`` is (as a bundling environment
    variable, which local bundling does not use otherwise). Without it, two assets of the
    same source directory would get the output of whichever was bundled first.
    """
    return lambda_.Code.from_asset(
        str(source),
        exclude=["__pycache__", "*.pyc"],
        asset_hash_type=AssetHashType.OUTPUT,
        bundling=BundlingOptions(
            # Never pulled: the local bundling always succeeds.
            image=DockerImage.from_registry("public.ecr.aws/sam/build-python3.13"),
            local=_LocalCopy(copy),
            environment={"SAFE_QUEUE_BUNDLE": key},
        ),
    )


def package_code(modules: Sequence[str], handler: Path | None = None) -> lambda_.Code:
    """Return a code asset of ``modules`` of safe_queue, beside ``handler``'s files if given.

    The asset's hash is that of the bundled output: it changes when the handler or the
    copied modules change, and only then.
    """
    chosen = tuple(modules)

    def copy(target: Path) -> None:
        if handler is not None:
            shutil.copytree(
                handler,
                target,
                ignore=shutil.ignore_patterns(*_NEVER, "__init__.py"),
                dirs_exist_ok=True,
            )
        copy_package(target, chosen)

    return local_asset(copy, ",".join(chosen), _PACKAGE if handler is None else handler)
