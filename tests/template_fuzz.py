"""Generated template files, hostile ones included, for fuzzing the template reader.

Used by ``tests/test_template_fuzz.py`` (a sample each run) and ``benchmarks/fuzz_loader.py``
(10,000 and more). :func:`template_files` draws the bytes of a file: a generated template
(resources, intrinsics, parameters, conditions, SAM events, ``Fn::ForEach`` loops, a
``Rules`` section) written as JSON or YAML with short-form tags, then possibly made hostile
(deep nesting, YAML alias bombs and recursive aliases, duplicate keys, huge numbers, bytes
that are not UTF-8, unknown or unsafe tags) or mangled (bytes cut, inserted, swapped).
:func:`outcome` runs one file through ``check_paths`` and names what happened.
"""

from __future__ import annotations

import json
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from safe_queue.template import ParameterError, TemplateError, check_paths

__all__ = ["HangError", "outcome", "template_files"]

NAMES = ["Queue", "Dlq", "Fn", "Alias", "Param", "Tenants", "Cond", "Nope", "Topic", "Stream"]
INTRINSICS = [
    "Ref",
    "Fn::GetAtt",
    "Fn::Sub",
    "Fn::Join",
    "Fn::Select",
    "Fn::Split",
    "Fn::If",
    "Fn::ImportValue",
    "Fn::FindInMap",
    "Fn::Length",
    "Fn::ToJsonString",
    "Fn::Base64",
    "Fn::Equals",
    "Fn::Not",
    "Condition",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 2_000_000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10),
    st.sampled_from(NAMES),
    st.sampled_from(
        [
            "Queue.Arn",
            "${Queue.Arn}",
            "${Tenant}",
            "&{Tenant}",
            "arn:aws:sqs:eu-west-1:123456789012:q",
            "arn:aws:lambda:eu-west-1:123456789012:function:f",
            "arn:aws:kinesis:eu-west-1:123456789012:stream/s",
            "AWS::NoValue",
            "AWS::Region",
            "60",
            "true",
            "ReportBatchItemFailures",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(INTRINSICS), children, min_size=1, max_size=1),
        st.dictionaries(st.text(max_size=8), children, max_size=3),
    ),
    max_leaves=10,
)
PROPERTY_NAMES = {
    "AWS::SQS::Queue": ["VisibilityTimeout", "MessageRetentionPeriod", "FifoQueue", "QueueName"],
    "AWS::Lambda::Function": ["Timeout", "ReservedConcurrentExecutions", "FunctionName"],
    "AWS::Lambda::EventSourceMapping": [
        "EventSourceArn",
        "FunctionName",
        "BatchSize",
        "MaximumBatchingWindowInSeconds",
        "FunctionResponseTypes",
        "ScalingConfig",
        "FilterCriteria",
        "StartingPosition",
    ],
    "AWS::Serverless::Function": ["Timeout", "Events", "AutoPublishAlias"],
    "AWS::SNS::Topic": ["FifoTopic"],
}


@st.composite
def _resource(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from([*PROPERTY_NAMES, "Custom::Thing"]))
    names = PROPERTY_NAMES.get(kind, ["ServiceToken"])
    properties = draw(st.fixed_dictionaries({}, optional=dict.fromkeys(names, VALUES)))
    if kind == "AWS::Serverless::Function" and draw(st.booleans()):
        event_type = draw(st.sampled_from(["SQS", "SNS", "Kinesis", "Api"]))
        event_properties = draw(
            st.fixed_dictionaries(
                {},
                optional=dict.fromkeys(
                    ["Queue", "Topic", "SqsSubscription", "BatchSize", "StartingPosition"], VALUES
                ),
            )
        )
        properties["Events"] = {"E": {"Type": event_type, "Properties": event_properties}}
    resource: dict[str, Any] = {"Type": kind, "Properties": properties}
    if draw(st.integers(0, 19)) == 0:
        resource["Properties"] = draw(VALUES)  # not a map: a value or an intrinsic
    if draw(st.booleans()) and draw(st.booleans()):
        resource["Condition"] = draw(st.one_of(st.sampled_from(["Cond", "Nope"]), VALUES))
    return resource


@st.composite
def _loop(draw: st.DrawFn) -> list[Any]:
    identifier = draw(st.sampled_from(["Tenant", "T", "Queue"]))
    collection = draw(
        st.one_of(
            st.lists(st.sampled_from(["a", "b", "c-d", "e.f", "1"]), max_size=4),
            st.just({"Ref": "Tenants"}),
            st.just({"Ref": "Param"}),
            VALUES,
        )
    )
    fragment = {
        draw(st.sampled_from(["Queue${Tenant}", "Fn&{T}", "Fixed", "M${T}${Tenant}"])): draw(
            _resource()
        )
        for _ in range(draw(st.integers(1, 3)))
    }
    return [identifier, collection, fragment]


@st.composite
def template_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A template (possibly invalid): every section safe-queue reads, filled at random."""
    resources: dict[str, Any] = {}
    for index in range(draw(st.integers(0, 6))):
        resources[f"{draw(st.sampled_from(NAMES))}{index}"] = draw(_resource())
    for name in ("Queue", "Fn"):
        if draw(st.booleans()):
            resources[name] = draw(_resource())
    if draw(st.booleans()) and draw(st.booleans()):
        resources[f"Fn::ForEach::{draw(st.sampled_from(['Tenants', 'X']))}"] = draw(_loop())
    body: dict[str, Any] = {"Resources": resources}
    if draw(st.booleans()):
        body["Transform"] = draw(
            st.sampled_from(
                [
                    "AWS::Serverless-2016-10-31",
                    "AWS::LanguageExtensions",
                    ["AWS::LanguageExtensions", "AWS::Serverless-2016-10-31"],
                ]
            )
        )
    if draw(st.booleans()):
        body["Parameters"] = {
            "Param": {
                "Type": draw(st.sampled_from(["Number", "String", "List<Number>"])),
                **({"Default": draw(SCALARS)} if draw(st.booleans()) else {}),
            },
            "Tenants": {"Type": "CommaDelimitedList", "Default": "a,b"},
        }
    if draw(st.booleans()):
        body["Conditions"] = {"Cond": {"Fn::Equals": [{"Ref": "Param"}, draw(SCALARS)]}}
    if draw(st.booleans()) and draw(st.booleans()):
        body["Mappings"] = {"M": {"K": {"V": draw(SCALARS)}}}
    if draw(st.booleans()) and draw(st.booleans()):
        body["Globals"] = {"Function": {"Timeout": draw(VALUES)}}
    if draw(st.booleans()) and draw(st.booleans()):
        body["Outputs"] = {"O": {"Value": draw(VALUES), "Export": {"Name": draw(VALUES)}}}
    return body


def _to_yaml(body: dict[str, Any]) -> str:
    text: str = yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
    # A few long forms as short-form tags, as people write them.
    return text.replace("Ref: ", "!Ref ").replace("Fn::Sub: ", "!Sub ")


def _alias_bomb(levels: int, width: int) -> str:
    lines = [f"  a0: &a0 [{', '.join(['x'] * width)}]"]
    for level in range(1, levels):
        lines.append(f"  a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "Metadata:\n" + "\n".join(lines) + f"\nResources:\n  Q: {{Type: X, P: *a{levels - 1}}}\n"


@st.composite
def _hostile(draw: st.DrawFn) -> bytes:
    kind = draw(
        st.sampled_from(
            ["deep-json", "deep-yaml", "bomb", "recursive", "duplicate", "number", "tag", "bytes"]
        )
    )
    if kind == "deep-json":
        depth = draw(st.integers(90, 60_000))
        return ('{"Resources": {"Q": ' + "[" * depth + "]" * depth + "}}").encode()
    if kind == "deep-yaml":
        depth = draw(st.integers(90, 1_200))
        return ("Resources:\n  Q: " + "[" * depth + "]" * depth + "\n").encode()
    if kind == "bomb":
        return _alias_bomb(draw(st.integers(2, 12)), draw(st.integers(2, 12))).encode()
    if kind == "recursive":
        return b"Resources:\n  Q: &q {Type: AWS::SQS::Queue, Properties: {P: [*q]}}\n"
    if kind == "duplicate":
        key = draw(st.sampled_from(["Queue", "Type", "Resources"]))
        return f"Resources:\n  {key}: {{Type: A}}\n  {key}: {{Type: B}}\n".encode()
    if kind == "number":
        digits = draw(st.integers(1, 9_000))
        return ('{"Resources": {"Q": {"Type": "T", "P": ' + "7" * digits + "}}}").encode()
    if kind == "tag":
        tag = draw(
            st.sampled_from(
                ["!Foo", "!!python/object/apply:os.system", "!!binary", "!Contains", "!ForEach"]
            )
        )
        return f"Resources:\n  Q: {tag} [a]\n".encode()
    return draw(st.binary(max_size=200))


@st.composite
def template_files(draw: st.DrawFn) -> bytes:
    """Draw the bytes of one template file: generated, then maybe hostile or mangled."""
    if draw(st.integers(0, 4)) == 0:
        return draw(_hostile())
    body = draw(template_bodies())
    text = json.dumps(body, indent=1) if draw(st.booleans()) else _to_yaml(body)
    data = text.encode("utf-8")
    mangle = draw(st.sampled_from(["none", "none", "cut", "insert", "swap", "bom", "latin1"]))
    if mangle == "cut" and data:
        data = data[: draw(st.integers(0, len(data)))]
    elif mangle == "insert":
        position = draw(st.integers(0, len(data)))
        data = data[:position] + draw(st.binary(min_size=1, max_size=8)) + data[position:]
    elif mangle == "swap" and len(data) > 1:
        position = draw(st.integers(0, len(data) - 1))
        data = data[:position] + bytes([draw(st.integers(0, 255))]) + data[position + 1 :]
    elif mangle == "bom":
        data = b"\xef\xbb\xbf" + data
    elif mangle == "latin1":
        data = data + "\n# \xe9\n".encode("latin-1")
    return data


class HangError(Exception):
    """One file took longer than the time allowed."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`HangError` after ``seconds`` of this process's CPU time.

    CPU time (``ITIMER_PROF``), not wall time: a machine shared with other work slows a
    file down without making it a hang.
    """

    def alarm(signum: int, frame: Any) -> None:
        raise HangError(f"more than {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def outcome(data: bytes, seconds: float = 5.0) -> tuple[str, float, str]:
    """Check one file's bytes; return what happened, its CPU time, and the error.

    ``"report"`` (checked), ``"input error"`` (:class:`TemplateError` or
    :class:`ParameterError`: exit 2, with its message), or an exception: a :class:`Hang`
    after ``seconds``, or anything else, which is a crash.
    """
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "template.yaml")
        path.write_bytes(data)
        started = time.process_time()
        try:
            with _time_limit(seconds):
                check_paths([path])
        except (TemplateError, ParameterError) as error:
            return "input error", time.process_time() - started, str(error)
        return "report", time.process_time() - started, ""
