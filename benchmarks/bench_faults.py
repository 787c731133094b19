"""Reliability under faults: the audit and the Config rule behind a proxy that fails requests.

Run by hand (not in CI):

    .venv/bin/python -m benchmarks.bench_faults                 # 20 seeds per rate
    .venv/bin/python -m benchmarks.bench_faults --seeds 50 --rates 0.3 0.6 0.8

A moto server runs in a subprocess on 127.0.0.1; ``tests/fault_proxy.py`` stands in front
of it and answers a seeded share of every request with 503 (botocore retries 5xx in every
mode, with its real backoff and retry quota: nothing is scaled here). The account is the one
of ``tests/test_faults.py``: 40 SQS mappings on 4 functions (180 s), 10 on the seed's 60 s
queue, 30 on a 1,082 s queue, one shared dead-letter queue.

For each rate and seed it runs ``safe_queue.live.audit()`` (the ``audit`` retry settings)
and the Config rule's ``evaluate_and_report()`` (``config-rule``), and counts:

- same: the verdicts (errors and warnings per mapping; compliance per queue) are those
  without faults, and the run is complete;
- incomplete: the audit names reads it could not do (``safe-queue audit`` exits 2); the
  handler reports queues it could not read as NON_COMPLIANT "Not evaluated", or fails the
  invocation (listing or PutEvaluations failed after retries);
- lost: a seed error neither found nor named as not read (audit); a queue of the baseline
  that is COMPLIANT or NOT_APPLICABLE without having been read in full (handler); or a
  finding that is not in the baseline. The contract is 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import botocore

from benchmarks.bench_audit import start_server
from safe_queue.live import audit
from safe_queue.live.config_handler import evaluate_and_report
from safe_queue.report import Report
from tests.fault_proxy import Faults, proxy
from tests.moto_world import CREDENTIALS, DLQ_RETENTION, Calls, World

REGION = "ap-southeast-2"
SEED_RULE = "safe-queue:visibility-below-function-timeout"
EVENT = {
    "invokingEvent": json.dumps(
        {"messageType": "ScheduledNotification", "notificationCreationTime": "2026-11-30T12:00:00Z"}
    ),
    "resultToken": "TESTMODE",
}


@dataclass
class Tally:
    runs: int = 0
    same: int = 0
    incomplete: int = 0
    failed: int = 0  # handler: the invocation failed (no evaluation sent)
    lost: int = 0
    times: list[float] = field(default_factory=list)

    def row(self, label: str, rate: float) -> str:
        median = statistics.median(self.times)
        return (
            f"| {label} | {rate:.0%} | {self.runs} | {self.same} | {self.incomplete}"
            f" | {self.failed} | **{self.lost}** | {median:.1f} s | {max(self.times):.1f} s |"
        )


@contextmanager
def endpoint(url: str) -> Iterator[None]:
    old = os.environ.get("AWS_ENDPOINT_URL")
    os.environ["AWS_ENDPOINT_URL"] = url
    try:
        yield
    finally:
        if old is not None:
            os.environ["AWS_ENDPOINT_URL"] = old


def build(mappings: int = 40, seeds: int = 10, functions: int = 4) -> set[str]:
    world = World(REGION)
    names = [world.function(f"fault-fn-{n}", 180) for n in range(functions)]
    dlq = world.queue("fault-dlq", MessageRetentionPeriod=DLQ_RETENTION)
    seed_mappings = set()
    for n in range(mappings):
        queue = world.queue(
            f"fault-q-{n:02d}",
            VisibilityTimeout=60 if n < seeds else 1082,
            RedrivePolicy=world.redrive(dlq),
        )
        uuid = world.mapping(
            queue,
            names[n % functions],
            BatchSize=5,
            MaximumBatchingWindowInSeconds=2,
            FunctionResponseTypes=["ReportBatchItemFailures"],
        )
        if n < seeds:
            seed_mappings.add(uuid)
    return seed_mappings


def verdicts(report: Report) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in report.findings:
        if finding.level.value in {"error", "warning"}:
            found.setdefault(finding.resource, []).append(finding.rule_id)
    return {uuid: sorted(rules) for uuid, rules in found.items()}


def handler(session: boto3.Session) -> tuple[dict[str, dict[str, Any]] | None, float]:
    calls = Calls(session)
    begin = time.monotonic()
    try:
        evaluate_and_report(EVENT, session)
    except Exception:  # the invocation fails; Config keeps the previous verdicts
        return None, time.monotonic() - begin
    elapsed = time.monotonic() - begin
    sent = calls.params("config:PutEvaluations")
    return {e["ComplianceResourceId"]: e for p in sent for e in p["Evaluations"]}, elapsed


def _lost(got: dict[str, Any] | None, verdict: str) -> bool:
    """A queue's evaluation hides what the baseline found, or claims what was not read."""
    if got is None or got["ComplianceType"] == "NOT_APPLICABLE":
        return True
    if got["ComplianceType"] == verdict:
        return False
    return not str(got["Annotation"]).startswith("Not evaluated")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--rates", type=float, nargs="+", default=[0.3, 0.6, 0.8])
    args = parser.parse_args()
    os.environ.update(CREDENTIALS)
    logging.getLogger("safe_queue").setLevel(logging.ERROR)  # the handler's per-read lines
    process, upstream = start_server()
    try:
        with endpoint(upstream):
            seeds = build()
        with proxy(upstream, Faults()) as clean, endpoint(clean.url):
            base = verdicts(audit(boto3.Session(region_name=REGION), [REGION]))
            base_eval, _ = handler(boto3.Session(region_name=REGION))
        assert base == {uuid: [SEED_RULE] for uuid in seeds}, base
        assert base_eval is not None
        base_types = {url: e["ComplianceType"] for url, e in base_eval.items()}
        print(
            f"{time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, boto3/botocore"
            f" {boto3.__version__}/{botocore.__version__}, {os.cpu_count()} cores,"
            f" {platform.machine()}; {args.seeds} seeds per rate\n"
        )
        print(
            "| run | failed requests | runs | same verdicts | incomplete, named | invocation"
            " failed | findings lost | median | max |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for rate in args.rates:
            audit_tally, rule_tally = Tally(), Tally()
            for seed in range(1, args.seeds + 1):
                with proxy(upstream, Faults(rate=rate, seed=seed)) as faulty, endpoint(faulty.url):
                    begin = time.monotonic()
                    report = audit(boto3.Session(region_name=REGION), [REGION])
                    audit_tally.times.append(time.monotonic() - begin)
                    evaluations, elapsed = handler(boto3.Session(region_name=REGION))
                    rule_tally.times.append(elapsed)
                audit_tally.runs += 1
                found = verdicts(report)
                unread = {u for failure in report.unreadable for u in failure.mappings}
                if any(not failure.mappings for failure in report.unreadable):
                    unread |= seeds  # the region could not be listed: none of it was read
                if report.complete and found == base:
                    audit_tally.same += 1
                elif not report.complete:
                    audit_tally.incomplete += 1
                lost = [u for u in seeds if SEED_RULE not in found.get(u, []) and u not in unread]
                false = [u for u, rules in found.items() if not set(rules) <= set(base.get(u, []))]
                audit_tally.lost += len(lost) + len(false)
                rule_tally.runs += 1
                if evaluations is None:
                    rule_tally.failed += 1
                    continue
                types = {url: e["ComplianceType"] for url, e in evaluations.items()}
                if types == base_types and not any(
                    e["Annotation"].startswith("Not evaluated") for e in evaluations.values()
                ):
                    rule_tally.same += 1
                else:
                    rule_tally.incomplete += 1
                rule_tally.lost += sum(
                    _lost(evaluations.get(url), verdict) for url, verdict in base_types.items()
                )
            print(audit_tally.row("`safe-queue audit` (`audit`)", rate))
            print(rule_tally.row("Config rule handler (`config-rule`)", rate))
            sys.stdout.flush()
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    main()
