"""Fuzz the template reader: 10,000+ generated and hostile files, 0 crashes, 0 hangs.

    .venv/bin/python -m benchmarks.fuzz_loader                   # 10,000 files
    .venv/bin/python -m benchmarks.fuzz_loader --examples 20000 --seconds 5 --memory-mb 1024

Each file drawn by ``tests/template_fuzz.template_files`` (generated templates as JSON or
YAML, hostile ones: deep nesting, alias bombs, recursive aliases, duplicate keys, huge
numbers, non-UTF-8 bytes, unknown and unsafe tags, mangled bytes) goes through
``check_paths`` in this process, under an address-space limit (``--memory-mb``) and a
limit of CPU time per file (``--seconds``). A report or an input error (exit 2) is expected;
anything else is a crash, a time-out a hang. Prints the counts, the slowest file's time, the peak
memory, and the first crashes; exits 1 on any crash or hang. The sample is derandomized
(the same files every run).
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
import traceback
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings

from tests.template_fuzz import HangError, outcome, template_files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=5.0, help="time limit for one file")
    parser.add_argument("--memory-mb", type=int, default=1024, help="address-space limit")
    args = parser.parse_args()
    limit = args.memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    counts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    crashes: list[str] = []
    slowest: list[Any] = [0.0, b""]

    @settings(
        max_examples=args.examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(template_files())
    def fuzz(data: bytes) -> None:
        counts["files"] += 1
        try:
            result, seconds, message = outcome(data, args.seconds)
        except HangError:
            counts["hangs"] += 1
            crashes.append(f"hang: {data[:300]!r}")
            return
        except Exception:  # a crash: anything but a report or an input error
            counts["crashes"] += 1
            crashes.append(f"{data[:200]!r}\n{traceback.format_exc()}")
            return
        counts[result] += 1
        if seconds > slowest[0]:
            slowest[:] = [seconds, data[:120]]
        if result == "input error":
            kinds[_kind(message)] += 1

    started = time.perf_counter()
    fuzz()
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"Python {platform.python_version()}, {platform.machine()}, limit {args.memory_mb} MB")
    print(
        f"{counts['files']} files: {counts['report']} checked, {counts['input error']} input"
        f" errors (exit 2), {counts['crashes']} crashes, {counts['hangs']} hangs;"
        f" slowest {slowest[0]:.3f} s of CPU, peak memory {peak:.0f} MB, {elapsed:.0f} s in all"
    )
    print(f"slowest file: {slowest[1]!r}...")
    print("input errors:", ", ".join(f"{kind} {count}" for kind, count in kinds.most_common()))
    for crash in crashes[:3]:
        print(crash)
    return 1 if counts["crashes"] or counts["hangs"] else 0


_KINDS = {
    "nested more than": "nested too deep",
    "aliases expand": "YAML alias bomb",
    "alias refers to the value that contains it": "recursive YAML alias",
    "duplicate": "duplicate key",
    "not UTF-8": "not UTF-8",
    "larger than": "over 1 MB",
    "could not parse": "not JSON/YAML",
    "could not read a value": "value out of range",
    "not a CloudFormation template": "not a template",
    "is not a mapping": "not a template",
    "Fn::ForEach": "bad Fn::ForEach",
    "parameter": "bad parameter",
}


def _kind(message: str) -> str:
    """Group input errors by what they say."""
    for words, kind in _KINDS.items():
        if words in message:
            return kind
    return "other"


if __name__ == "__main__":
    sys.exit(main())
