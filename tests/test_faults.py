"""Faults never turn a finding into silence: the audit, the Config rule and redrive through a
proxy that fails a seeded share of AWS requests (tests/fault_proxy.py, in front of moto).

The faults come over HTTP, so botocore's own retries (as safe_queue.retries sets them per
caller, with botocore's real backoff and retry quota: nothing is scaled), error parsing
and exceptions run as against AWS. Only botocore's waits are virtual: each retry's backoff
and each wait of adaptive mode's token bucket moves a clock forward instead of sleeping
(``clock``), and the time bound holds on the waits summed over threads as well as on the
wall time; ``benchmarks/bench_faults.py`` runs the same account with real waits. The account: 40 SQS mappings on 4 functions (180 s),
10 of them on the seed's 60 s queue, the other 30 on a 1,082 s queue; one shared
dead-letter queue. Without faults that is exactly 10 errors (10 NON_COMPLIANT queues).

- 30 % of requests failing: the same verdicts as without faults, exit 1, complete.
- 60 %: the same verdicts, or exit 2 naming every read that failed, and then no finding
  lost: each seed mapping either shows its error or is named as not read; a mapping read
  in full has its verdict; a mapping read in part shows only true findings. In bounded time.
- The Config rule at the same rates: the same evaluations, or a queue not read is
  NON_COMPLIANT ("Not evaluated"), never NOT_APPLICABLE, never COMPLIANT by omission; or the
  invocation fails with one logged line.
- Redrive meeting a 500 HTML page: one line, exit 2.

The fault pattern is fixed by the seed (the proxy draws per request and attempt), the
seeds are chosen to keep the module fast and to reach both outcomes (seed 8 at 60 % leaves
reads failed); benchmarks/bench_faults.py runs 20 seeds per rate and records the figures.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import boto3
import botocore.endpoint
import pytest
from botocore.retries import bucket

from safe_queue.cli import main
from safe_queue.live import queue_url
from safe_queue.live.config_handler import evaluate_and_report
from safe_queue.retries import settings
from tests import moto_world
from tests.fault_proxy import FaultProxy, Faults, proxy
from tests.moto_world import DLQ_RETENTION, Calls, World

moto_endpoint = moto_world.moto_endpoint  # fixtures
aws_environment = moto_world.aws_environment

REGION = "ap-southeast-2"  # this module's own region of the shared moto server
MAPPINGS = 40
SEEDS = 10  # mappings on the seed's 60 s queue
FUNCTIONS = 4
SEED_RULE = "safe-queue:visibility-below-function-timeout"
BOUND_S = 60.0  # wall time allowed to one audit or one handler run under faults
SETTINGS = {
    "BatchSize": 5,
    "MaximumBatchingWindowInSeconds": 2,
    "FunctionResponseTypes": ["ReportBatchItemFailures"],
}


@dataclass
class Account:
    mappings: dict[str, str]  # UUID -> queue ARN
    seeds: set[str]  # UUIDs of the seed's mappings
    queues: list[str]


@dataclass
class VirtualClock:
    """The seconds botocore would have slept, summed over threads."""

    waited: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.waited += max(0.0, seconds)


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    """botocore's waits counted instead of slept: the retry backoff (``botocore.endpoint``
    sleeps between attempts) and adaptive mode's token bucket, whose clock moves on by what
    it waits (a wait still lets the other threads take the bucket's lock)."""
    virtual = VirtualClock()

    class EndpointTime:  # the ``time`` module as botocore.endpoint sees it
        def __getattr__(self, name: str) -> Any:
            return getattr(time, name)

        @staticmethod
        def sleep(seconds: float) -> None:
            virtual.advance(seconds)

    class Condition(threading.Condition):
        def wait(self, timeout: float | None = None) -> bool:
            if timeout is None:
                return super().wait()
            virtual.advance(timeout)
            return super().wait(0)

    monkeypatch.setattr(botocore.endpoint, "time", EndpointTime())
    monkeypatch.setattr(bucket.Clock, "current_time", lambda _: time.time() + virtual.waited)
    monkeypatch.setattr(bucket.Clock, "sleep", lambda _, seconds: virtual.advance(seconds))
    monkeypatch.setattr(
        bucket, "threading", SimpleNamespace(Lock=threading.Lock, Condition=Condition)
    )
    return virtual


@pytest.fixture(scope="module")
def account(aws_environment: str) -> Account:
    """GIVEN 40 mappings, 10 of them with the seed's mistake (60 s queue, 180 s function)."""
    world = World(REGION)
    functions = [world.function(f"fault-fn-{n}", 180) for n in range(FUNCTIONS)]
    dlq = world.queue("fault-dlq", MessageRetentionPeriod=DLQ_RETENTION)

    def one(n: int) -> tuple[str, str]:
        visibility = 60 if n < SEEDS else 1082
        queue = world.queue(
            f"fault-q-{n:02d}", VisibilityTimeout=visibility, RedrivePolicy=world.redrive(dlq)
        )
        return world.mapping(queue, functions[n % FUNCTIONS], **SETTINGS), queue

    with ThreadPoolExecutor(max_workers=8) as pool:
        made = list(pool.map(one, range(MAPPINGS)))
    return Account(
        mappings={uuid: queue for uuid, queue in made},
        seeds={uuid for uuid, _ in made[:SEEDS]},
        queues=[queue for _, queue in made],
    )


@pytest.fixture(scope="module")
def baseline(account: Account) -> dict[str, list[str]]:
    """The verdicts without faults, from the account's definition: the 10 seed errors."""
    return {uuid: [SEED_RULE] for uuid in account.seeds}


@pytest.fixture(scope="module")
def config_baseline(account: Account) -> dict[str, str]:
    """Each queue's evaluation without faults: the seed's 10 NON_COMPLIANT, 30 COMPLIANT."""
    seeds = {account.mappings[uuid] for uuid in account.seeds}
    return {queue_url(q): "NON_COMPLIANT" if q in seeds else "COMPLIANT" for q in account.queues}


@pytest.fixture
def through(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Start a proxy with the faults given, and point boto3 at it."""
    started: list[Any] = []

    def start(faults: Faults) -> FaultProxy:
        context = proxy(moto_endpoint, faults)
        state = context.__enter__()
        started.append(context)
        monkeypatch.setenv("AWS_ENDPOINT_URL", state.url)
        return state

    yield start
    for context in reversed(started):
        context.__exit__(None, None, None)


def audit_cli(
    capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, Any], list[str], float]:
    begin = time.monotonic()
    code = main(["audit", "--region", REGION, "--format", "json", *args])
    elapsed = time.monotonic() - begin
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else {}, err.splitlines(), elapsed


def verdicts(document: dict[str, Any]) -> dict[str, list[str]]:
    """Each mapping's errors and warnings (rule ids), as the JSON report gives them."""
    found: dict[str, list[str]] = {}
    for finding in document["findings"]:
        if finding["level"] in {"error", "warning"}:
            found.setdefault(finding["resource"], []).append(finding["rule_id"])
    return {uuid: sorted(rules) for uuid, rules in found.items()}


def test_at_30_percent_failures_the_audit_gives_the_same_verdicts(
    clock: VirtualClock,
    account: Account,
    baseline: dict[str, list[str]],
    through: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN 30 % of every request answered 503 (retried by botocore in every mode)
    faults = through(Faults(rate=0.3, seed=2))
    made = record_clients(monkeypatch)
    # WHEN the account is audited
    code, document, err, elapsed = audit_cli(capsys)
    # THEN the faults happened, and the verdicts are those without faults, complete, exit 1
    assert faults.failed.total() >= 10, faults.failed
    assert (code, err) == (1, [])
    assert document["summary"]["complete"] is True
    assert verdicts(document) == baseline
    assert elapsed < BOUND_S
    assert 0 < clock.waited < BOUND_S  # botocore backed off, within the bound
    # AND every client it made retries as the audit caller says
    assert {m.meta.service_model.service_name for m in made} == {"lambda", "sqs"}
    assert {retry_config(m) for m in made} == {expected("audit")}


@pytest.mark.parametrize("seed", [8])  # a seed whose faults exhaust some reads
def test_at_60_percent_failures_no_finding_is_lost(
    clock: VirtualClock,
    account: Account,
    baseline: dict[str, list[str]],
    through: Any,
    capsys: pytest.CaptureFixture[str],
    seed: int,
) -> None:
    # GIVEN 60 % of every request answered 503
    faults = through(Faults(rate=0.6, seed=seed))
    # WHEN the account is audited
    code, document, err, elapsed = audit_cli(capsys)
    # THEN it ends in bounded time
    assert elapsed < BOUND_S
    assert 0 < clock.waited < BOUND_S  # botocore backed off, within the bound
    assert faults.failed.total() >= 20, faults.failed
    summary = document["summary"]
    found = verdicts(document)
    if code == 1:  # every read succeeded within its retries: the same verdicts
        assert (summary["complete"], err) == (True, [])
        assert found == baseline
        return
    # OR exit 2, naming what it could not read: one line per failed read, then the summary
    assert code == 2
    assert summary["complete"] is False
    unreadable = summary["unreadable"]
    assert len(err) == len(unreadable) + 1
    for line, failure in zip(err, unreadable, strict=False):
        assert line.startswith(f"safe-queue audit: could not read: {failure['operation']} on")
        assert "HTTP 503: Service Unavailable" in line
        assert "Fix: " in line
    assert err[-1].startswith("safe-queue audit: error: incomplete audit: ")
    unread = {uuid for failure in unreadable for uuid in failure["mappings"]}
    if any(not failure["mappings"] for failure in unreadable):  # the region was not listed
        unread = set(account.mappings)
    # AND no finding is lost: every seed error is found, or its mapping is named as not read
    for uuid in account.seeds:
        assert SEED_RULE in found.get(uuid, []) or uuid in unread, uuid
    # AND what was read is true: full reads give the baseline's verdict, partial reads a part
    for uuid in account.mappings:
        if uuid in unread:
            assert set(found.get(uuid, [])) <= set(baseline.get(uuid, [])), uuid
        else:
            assert found.get(uuid, []) == baseline.get(uuid, []), uuid


# --- the AWS Config rule's handler ---------------------------------------------------


def scheduled_event() -> dict[str, Any]:
    invoking = {
        "messageType": "ScheduledNotification",
        "notificationCreationTime": "2026-11-30T12:00:00.000Z",
    }
    return {"invokingEvent": json.dumps(invoking), "resultToken": "TESTMODE"}


def handler_run(
    caplog: pytest.LogCaptureFixture,
) -> tuple[dict[str, dict[str, Any]] | None, BaseException | None, list[str], float]:
    session = boto3.Session(region_name=REGION)
    calls = Calls(session)
    begin = time.monotonic()
    raised: BaseException | None = None
    with caplog.at_level(logging.WARNING, logger="safe_queue.live.config_handler"):
        try:
            evaluate_and_report(scheduled_event(), session)
        except Exception as error:  # the invocation fails: tested below
            raised = error
    elapsed = time.monotonic() - begin
    sent = calls.params("config:PutEvaluations")
    evaluations = {e["ComplianceResourceId"]: e for p in sent for e in p["Evaluations"]}
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return (evaluations if sent else None), raised, logged, elapsed


@pytest.mark.parametrize(("rate", "seed"), [(0.3, 2), (0.6, 11)])
def test_the_config_rule_under_faults_never_reports_a_queue_it_did_not_read_as_fine(
    clock: VirtualClock,
    account: Account,
    config_baseline: dict[str, str],
    through: Any,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    rate: float,
    seed: int,
) -> None:
    # GIVEN a share of every request (PutEvaluations included) answered 503
    through(Faults(rate=rate, seed=seed))
    made = record_clients(monkeypatch)
    evaluations, raised, logged, elapsed = handler_run(caplog)
    assert elapsed < BOUND_S
    assert 0 < clock.waited < BOUND_S  # botocore backed off, within the bound
    # every client the handler made retries as the config-rule caller says
    assert {retry_config(m) for m in made} == {expected("config-rule")}
    assert all("\n" not in line for line in logged)  # one line per failure
    if raised is not None:
        # EITHER the invocation fails (listing or PutEvaluations failed after retries), said
        # in one logged line: Config shows the failed run and keeps the previous verdicts
        assert rate > 0.3, raised
        assert any("HTTP 503" in line and "Fix: " in line for line in logged), logged
        return
    assert evaluations is not None
    if rate == 0.3:  # THEN at 30 %: the same evaluations
        assert {k: e["ComplianceType"] for k, e in evaluations.items()} == config_baseline
        return
    # OR at 60 %: each queue has its verdict, or is NON_COMPLIANT naming what was not read
    assert set(evaluations) == set(config_baseline)
    for url, evaluation in evaluations.items():
        verdict, note = evaluation["ComplianceType"], evaluation["Annotation"]
        assert verdict != "NOT_APPLICABLE", note
        if verdict != config_baseline[url]:
            assert verdict == "NON_COMPLIANT", note
            assert note.startswith("Not evaluated: "), note
            assert "HTTP 503" in note, note
        elif config_baseline[url] == "NON_COMPLIANT" and not note.startswith("Not evaluated"):
            assert note.startswith(f"Breaks {SEED_RULE}"), note
    not_read = [e for e in evaluations.values() if e["Annotation"].startswith("Not evaluated")]
    assert len([line for line in logged if "not evaluated" in line]) >= bool(not_read)


# --- redrive -------------------------------------------------------------------------


def test_redrive_meeting_a_500_html_page_prints_one_line(
    account: Account, through: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    operation = "ListMessageMoveTasks"  # after the queues were read from moto
    # GIVEN every call of one operation answered by a 500 HTML page (after redrive's retries)
    faults = through(Faults(html={operation}))
    # WHEN the shared dead-letter queue is redriven
    code = main(["redrive", "fault-dlq", "--region", REGION, "--all-sources"])
    out, err = capsys.readouterr()
    # THEN exit 2, nothing started, and one line: the operation, the status, what the body
    # was (never the page itself), what to do
    assert code == 2
    assert out == ""
    (line,) = [line for line in err.splitlines() if "warning: redrive replays" not in line]
    attempts = settings("redrive").max_attempts
    assert faults.failed[operation] == attempts
    assert line == (
        f"safe-queue redrive: sqs:{operation} on 'fault-dlq' failed after {attempts} attempts:"
        " HTTP 500: an HTML page ('500 Internal Server Error') instead of an AWS error response:"
        " a proxy, a load balancer or an outage is in between. Fix: AWS, or a proxy in between,"
        " answered every attempt with a server error; run again later, and check the AWS Health"
        " Dashboard or the proxy."
    )
    assert "<" not in err


# --- every client retries as its caller ------------------------------------------------


def retry_config(client: Any) -> tuple[str, int, int]:
    config = client.meta.config
    return json.dumps(config.retries, sort_keys=True), config.connect_timeout, config.read_timeout


def expected(caller: Any) -> tuple[str, int, int]:
    chosen = settings(caller)
    retries = {"mode": chosen.mode, "total_max_attempts": chosen.max_attempts}
    return json.dumps(retries, sort_keys=True), chosen.connect_timeout, chosen.read_timeout


def record_clients(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every client made by a boto3 session from now on."""
    made: list[Any] = []
    original = boto3.Session.client

    def client(self: boto3.Session, *args: Any, **kwargs: Any) -> Any:
        made.append(original(self, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(boto3.Session, "client", client)
    return made


def test_redrive_and_the_heartbeat_clients_retry_as_their_callers() -> None:
    from safe_queue.redrive import _make_client
    from safe_queue.runtime._sqs import sqs_client

    assert retry_config(_make_client(REGION)) == expected("redrive")
    assert retry_config(sqs_client(REGION, "heartbeat")) == expected("heartbeat")
    assert retry_config(sqs_client(REGION, "backoff")) == expected("backoff")


def test_the_hook_caller_fits_in_a_hook_invocation() -> None:
    # A CloudFormation hook handler has 30 s per invocation in all: one call at its very
    # worst (every attempt timing out, the longest throttling backoff) must leave time.
    assert settings("hook").worst_case_seconds() < 30
