"""Hostile input is an input error, found in bounded time and memory (issues 17 and 21).

Each case exits 2 from ``safe-queue check`` with one line naming the file (the CLI side is in
``tests/test_cli_check.py``); here the loader's errors, and the bound on time and memory
measured from outside, in a process with an address-space limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from safe_queue.template import TemplateError, mappings
from safe_queue.template._load import MAX_DEPTH, MAX_TEMPLATE_BYTES, expand_paths

FIXTURES = Path(__file__).parent / "fixtures" / "templates"


def alias_bomb() -> str:
    """1 KB of YAML: 9 levels of 10 aliases each, 10**9 values once expanded."""
    lines = ['b0: &b0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        lines.append(f"b{level}: &b{level} [{', '.join([f'*b{level - 1}'] * 10)}]")
    anchors = "\n".join(f"  {line}" for line in lines)
    return f"""\
Metadata:
{anchors}
Resources:
  Queue: {{Type: AWS::SQS::Queue}}
  Fn: {{Type: AWS::Lambda::Function}}
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      EventSourceArn: !GetAtt Queue.Arn
      FunctionName: !Ref Fn
      FilterCriteria: {{Filters: *b9}}
"""


def hostile_files(directory: Path) -> dict[str, tuple[Path, str]]:
    """Each hostile input, written to ``directory``, with the words its error must have."""
    cases: dict[str, tuple[str | bytes, str]] = {
        "alias-bomb.yaml": (alias_bomb(), "YAML aliases expand to more than 1,000,000 values"),
        "deep.json": (
            '{"Resources": ' + "[" * 50_000 + "]" * 50_000 + "}",
            f"nested more than {MAX_DEPTH} levels deep",
        ),
        "deep-terraform-sniffed.json": (  # `check` first asks whether it is a Terraform plan
            '{"format_version": "1.2", "Resources": ' + "[" * 50_000 + "]" * 50_000 + "}",
            f"nested more than {MAX_DEPTH} levels deep",
        ),
        "deep.yaml": (
            "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    P: " + "[" * 999 + "]" * 999,
            f"nested more than {MAX_DEPTH} levels deep",
        ),
        "deep-block.yaml": (
            "Resources:\n" + "".join(" " * (2 * i) + "k:\n" for i in range(1, 300)) + "  x: 1\n",
            f"nested more than {MAX_DEPTH} levels deep",
        ),
        "recursive.yaml": (
            "Resources:\n  Q: &q {Type: AWS::SQS::Queue, Properties: {Self: [*q]}}\n",
            "a YAML alias refers to the value that contains it",
        ),
        "large.yaml": (
            "Resources: {}\n#" + "x" * MAX_TEMPLATE_BYTES,
            "is larger than 1,048,576 bytes (1 MB), CloudFormation's limit",
        ),
        "latin1.yaml": (
            "Resources:\n  Q: {Type: AWS::SQS::Queue}\n# caf\xe9\n".encode("latin-1"),
            "is not UTF-8 text (byte 0xe9 at offset",
        ),
        "utf16.json": (
            '{"Resources": {}}'.encode("utf-16"),
            "is not UTF-8 text",
        ),
        "duplicate.yaml": (
            "Resources:\n  Queue: {Type: AWS::SQS::Queue}\n  Queue: {Type: AWS::SQS::Queue}\n",
            "duplicate logical id 'Queue' (also at line 2)",
        ),
        "duplicate.json": (
            '{"Resources": {\n "Queue": {"Type": "AWS::SQS::Queue"},\n'
            ' "Queue": {"Type": "AWS::SQS::Queue"}\n}}',
            "duplicate logical id 'Queue' (also at line 2)",
        ),
        "duplicate-key.yaml": (
            "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties: {A: 1, A: 2}\n",
            "duplicate key 'A'",
        ),
        "huge-integer.json": (
            '{"Resources": {"Q": {"Type": "AWS::SQS::Queue", "P": ' + "9" * 5000 + "}}}",
            "could not read a value",
        ),
    }
    written: dict[str, tuple[Path, str]] = {}
    for name, (content, words) in cases.items():
        path = directory / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        written[name] = (path, words)
    loop = directory / "loop.yaml"
    loop.symlink_to(loop)
    written["loop.yaml"] = (loop, "is a symbolic link loop")
    return written


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    return hostile_files(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize(
    "name",
    [
        "alias-bomb.yaml",
        "deep.json",
        "deep-terraform-sniffed.json",
        "deep.yaml",
        "deep-block.yaml",
        "recursive.yaml",
        "large.yaml",
        "latin1.yaml",
        "utf16.json",
        "duplicate.yaml",
        "duplicate.json",
        "duplicate-key.yaml",
        "huge-integer.json",
        "loop.yaml",
    ],
)
def test_hostile_input_is_a_template_error_naming_the_file(
    hostile: dict[str, tuple[Path, str]], name: str
) -> None:
    path, words = hostile[name]
    with pytest.raises(TemplateError) as caught:
        mappings([path])
    assert caught.value.path == str(path)
    assert words in str(caught.value)


def test_a_duplicate_logical_id_is_named_with_both_lines(
    hostile: dict[str, tuple[Path, str]],
) -> None:
    path, _ = hostile["duplicate.yaml"]
    with pytest.raises(TemplateError) as caught:
        mappings([path])
    assert caught.value.line == 3
    assert "Fix: rename or remove one." in caught.value.message


def test_a_directory_that_is_a_symlink_loop_is_named(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(TemplateError, match="is a symbolic link loop"):
        expand_paths([tmp_path / "a"])


def test_a_cloud_assembly_that_nests_itself_is_refused(tmp_path: Path) -> None:
    # GIVEN a cdk.out whose nested stage directory is a symbolic link back to itself
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "artifacts": {
                    "Stage": {
                        "type": "cdk:cloud-assembly",
                        "properties": {"directoryName": "assembly-Stage"},
                    }
                }
            }
        )
    )
    (tmp_path / "assembly-Stage").symlink_to(tmp_path)
    with pytest.raises(TemplateError, match="a loop of nested assemblies or symbolic links"):
        expand_paths([tmp_path])


def test_a_manifest_template_that_is_a_symlink_loop_is_named(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "artifacts": {
                    "S": {
                        "type": "aws:cloudformation:stack",
                        "properties": {"templateFile": "S.template.json"},
                    }
                }
            }
        )
    )
    (tmp_path / "S.template.json").symlink_to(tmp_path / "S.template.json")
    with pytest.raises(TemplateError, match=r"S\.template\.json: is a symbolic link loop"):
        expand_paths([tmp_path])


def test_a_nested_stack_that_contains_itself_is_refused(tmp_path: Path) -> None:
    template = {
        "Resources": {
            "Self": {
                "Type": "AWS::CloudFormation::Stack",
                "Metadata": {"aws:asset:path": "S.template.json"},
            }
        }
    }
    (tmp_path / "S.template.json").write_text(json.dumps(template))
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "artifacts": {
                    "S": {
                        "type": "aws:cloudformation:stack",
                        "properties": {"templateFile": "S.template.json"},
                    }
                }
            }
        )
    )
    with pytest.raises(TemplateError, match="a loop of nested stacks"):
        expand_paths([tmp_path])


LIMITED = textwrap.dedent(
    """\
    import resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (512 * 2**20, 512 * 2**20))
    from safe_queue.cli import main
    for path in sys.argv[1:]:
        started = time.perf_counter()
        code = main(["check", path])
        print(f"{code} {time.perf_counter() - started:.3f}", flush=True)
    # The peak resident memory of this process (ru_maxrss would include the forking parent's)
    status = open("/proc/self/status").read()
    print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
    """
)


def test_hostile_input_is_refused_in_bounded_time_and_memory(
    hostile: dict[str, tuple[Path, str]],
) -> None:
    # GIVEN a process limited to 512 MB of address space (the alias bomb took 3 GB)
    paths = [str(path) for path, _ in hostile.values()]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    # WHEN it checks every hostile file
    result = subprocess.run(
        [sys.executable, "-c", LIMITED, *paths],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    # THEN each exits 2 within seconds (the bomb took 54 s before), one line naming the file
    assert result.returncode == 0, result.stderr
    *timings, maxrss = result.stdout.split("\n")[:-1]
    for path, timing in zip(paths, timings, strict=True):
        code, seconds = timing.split()
        assert (path, code) == (path, "2")
        assert float(seconds) < 5.0, (path, seconds)
    errors = result.stderr.splitlines()
    assert len(errors) == len(paths)
    for path, line in zip(paths, errors, strict=True):
        assert line.startswith(f"safe-queue check: error: {path}")
    assert "Traceback" not in result.stderr
    # AND the whole process stayed small (VmHWM, in KiB)
    assert int(maxrss) < 200 * 1024
