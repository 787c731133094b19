"""What every benchmark here needs: the machine, its load, and whole processes timed.

The machine is shared (2 cores, several people): each benchmark interleaves its variants
run by run, samples the load average around every run, and reports medians with their
spread (min-max) of the wall time and of the CPU time of the whole process tree (user +
system of the process and of every descendant it waited for: the jsii kernel is two node
processes), which moves less with other people's load than the wall time does.
"""

from __future__ import annotations

import gc
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / "node_modules" / ".bin"


def use_project_node() -> None:
    """Put the project's Node.js (``scripts/setup --node``) first on PATH, for jsii here
    and in the processes timed."""
    if str(NODE_BIN) not in os.environ["PATH"].split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([str(NODE_BIN), os.environ["PATH"]])


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def machine(*packages: str) -> str:
    """One line: date and time (UTC), cores, CPU model, Python, node, the packages given."""
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    versions = "".join(f", {name} {_version(name)}" for name in packages)
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, nproc {os.cpu_count()}, {cpu_model()}"
        f" ({platform.machine()}), Python {platform.python_version()}, node"
        f" {node.stdout.strip() or 'missing'}{versions}"
    )


_TICKS = os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (``/proc/<pid>/task/<tid>/children``, all threads)."""
    found = []
    try:
        threads = [entry.name for entry in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return found
    for thread in threads:
        try:
            children = Path(f"/proc/{pid}/task/{thread}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *_descendants(child)]
    return found


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its descendants still running: the
    jsii kernel is a node process (``jsii-runtime``) that starts another node process, which
    does the work. On a shared machine CPU time moves far less than the wall time."""
    own = os.times()
    total = own.user + own.system
    for child in _descendants(os.getpid()):
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime
    return total


@dataclass
class Loads:
    """The 1-minute load average, sampled before and after every run."""

    samples: list[float] = field(default_factory=list)

    def sample(self) -> None:
        self.samples.append(os.getloadavg()[0])

    def __str__(self) -> str:
        if not self.samples:
            return "load average not sampled"
        low, high = min(self.samples), max(self.samples)
        return f"load average {low:.1f}-{high:.1f} (median {statistics.median(self.samples):.1f})"


@dataclass
class Runs:
    """Wall and CPU seconds of the runs of one variant."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, wall: float, cpu: float) -> None:
        self.wall.append(wall)
        self.cpu.append(cpu)

    @staticmethod
    def spread(values: Sequence[float]) -> str:
        return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def ratio(a: Sequence[float], b: Sequence[float]) -> float:
    return statistics.median(a) / statistics.median(b)


def pair_ratios(a: Sequence[float], b: Sequence[float]) -> str:
    """Median and range of the ratios of runs made side by side (a[i] / b[i])."""
    ratios = [x / y for x, y in zip(a, b, strict=True)]
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"


@contextmanager
def bytecode_cache(enabled: bool = True) -> Iterator[dict[str, str]]:
    """The environment for timed processes: Python's bytecode cache on, in a temporary
    directory (``PYTHONPYCACHEPREFIX``), so that the source tree gets no ``__pycache__``.

    This workplace sets ``PYTHONDONTWRITEBYTECODE=1``: every process would compile
    safe_queue's modules again (about 30 ms), which an installed package never does
    (pip compiles them at install), while aws-cdk-lib's bytecode is in site-packages.
    ``enabled=False`` keeps the environment as it is.
    """
    env = dict(os.environ)
    if not enabled:
        yield env
        return
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="pycache-") as prefix:
        env["PYTHONPYCACHEPREFIX"] = prefix
        yield env


def run_process(
    command: Sequence[str],
    env: dict[str, str],
    *,
    ok: int | Callable[[int], bool] = 0,
    cwd: Path = ROOT,
) -> tuple[float, float]:
    """Run ``command`` to its end; return its wall seconds and the CPU seconds (user +
    system) of it and every descendant it waited for. Its exit code must be ``ok`` (or
    satisfy it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not (ok(completed.returncode) if callable(ok) else completed.returncode == ok):
        sys.exit(
            f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout[-1000:]}"
            f"{completed.stderr[-2000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def round_trips(build: Callable[[str], Any]) -> Counter[str]:
    """Requests sent to the jsii kernel to build and synthesize an app, by kind (create, get,
    invoke, static invoke, callback completion...). ``build(outdir)`` returns the app.

    Deterministic, unlike times on a shared machine, and the dominant cost of a CDK app in
    Python: each is a message to the node process and back (~0.2-0.5 ms).
    """
    from jsii._kernel.providers import process

    original = process._NodeProcess.send
    kinds: Counter[str] = Counter()

    def counting(self: Any, request: Any, response_type: Any) -> Any:
        kinds[type(request).__name__.removeprefix("_").removesuffix("Request")] += 1
        return original(self, request, response_type)

    process._NodeProcess.send = counting  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as outdir:
            build(outdir).synth()
    finally:
        process._NodeProcess.send = original  # type: ignore[method-assign]
    return kinds


def synth_in_process(build: Callable[[str], Any]) -> tuple[float, float]:
    """Wall and CPU seconds (this process + the jsii kernel) of ``build(outdir).synth()``."""
    with tempfile.TemporaryDirectory() as outdir:
        gc.collect()
        cpu, wall = cpu_seconds(), time.perf_counter()
        build(outdir).synth()
        return time.perf_counter() - wall, cpu_seconds() - cpu
