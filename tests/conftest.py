"""Shared test helpers: apps built with cdk.json's context, and small functions to consume."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# jsii starts its Node.js kernel at `import aws_cdk`: use the project's Node.js 24
# (node_modules/.bin, installed by `scripts/setup --node`) also when pytest is run directly.
_NODE_BIN = ROOT / "node_modules" / ".bin"
if (_NODE_BIN / "node").exists():
    os.environ["PATH"] = f"{_NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"

# The example's invoice handler reads its failure backoff from the function's environment
# when imported (FailureBackoff.from_env()). These are the values SafeQueueConsumer sets on
# that function; test_example_app checks the synthesized template has exactly these.
EXAMPLE_BACKOFF_ENV: dict[str, str] = {
    "SAFE_QUEUE_BACKOFF_BASE": "30",
    "SAFE_QUEUE_BACKOFF_CAP": "900",
    "SAFE_QUEUE_BACKOFF_JITTER": "true",
}
for _name, _value in EXAMPLE_BACKOFF_ENV.items():
    os.environ.setdefault(_name, _value)

import aws_cdk as cdk  # noqa: E402
from aws_cdk import aws_lambda as lambda_  # noqa: E402

CDK_CONTEXT: dict[str, Any] = json.loads((ROOT / "cdk.json").read_text())["context"]


def make_app() -> cdk.App:
    """An in-process App with the same feature flags as `cdk synth` of the example app."""
    return cdk.App(context=CDK_CONTEXT)


def make_stack(name: str = "Test") -> cdk.Stack:
    return cdk.Stack(make_app(), name)


def make_function(
    scope: cdk.Stack, construct_id: str = "Fn", timeout: cdk.Duration | None = None
) -> lambda_.Function:
    return lambda_.Function(
        scope,
        construct_id,
        runtime=lambda_.Runtime.PYTHON_3_13,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
        timeout=timeout,
    )
