"""Time ``safe-queue audit`` against a moto server with many SQS mappings; count its API calls.

Run by hand (not in CI):

    .venv/bin/python -m benchmarks.bench_audit               # 1,000 mappings per scenario
    .venv/bin/python -m benchmarks.bench_audit --mappings 2000 --runs 5

Two scenarios, each in its own region of one moto server (started in a subprocess on
127.0.0.1, a free port, so that its work does not share this process's GIL):

- distinct: every mapping has its own queue, its own dead-letter queue and its own
  function (the worst case: nothing to share);
- shared: every mapping has its own queue; ten queues share a dead-letter queue and ten
  mappings share a function.

It prints the wall time of ``audit()`` (median of ``--runs``, with 1 and with the default
workers; and, for the distinct scenario, with ``--latency-ms`` added to every call, as a
round trip to AWS would, which shows what the thread pool is for) and the API calls per
mapping beyond the ``ListEventSourceMappings`` pages.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import botocore
import moto

from safe_queue.live import audit
from safe_queue.live.account import MAX_WORKERS

ACCOUNT = "123456789012"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1)
            return process, endpoint
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("moto server did not start")


def build(region: str, mappings: int, share: int) -> None:
    """Create ``mappings`` SQS mappings; ``share`` mappings per function and per DLQ."""
    session = boto3.Session(region_name=region)
    sqs, lambda_, iam = session.client("sqs"), session.client("lambda"), session.client("iam")
    try:
        role = iam.create_role(RoleName="bench", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    except iam.exceptions.EntityAlreadyExistsException:
        role = iam.get_role(RoleName="bench")["Role"]["Arn"]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("index.py", "def handler(event, context):\n    return None\n")

    def one(index: int) -> None:
        group = index // share
        if index % share == 0:
            lambda_.create_function(
                FunctionName=f"fn-{group}",
                Runtime="python3.13",
                Role=role,
                Handler="index.handler",
                Code={"ZipFile": archive.getvalue()},
                Timeout=180,
            )
            sqs.create_queue(
                QueueName=f"dlq-{group}", Attributes={"MessageRetentionPeriod": "1209600"}
            )
        redrive = {
            "deadLetterTargetArn": f"arn:aws:sqs:{region}:{ACCOUNT}:dlq-{group}",
            "maxReceiveCount": 5,
        }
        visibility = "60" if index % 2 else "1082"  # half of them the seed's mistake
        sqs.create_queue(
            QueueName=f"q-{index}",
            Attributes={"VisibilityTimeout": visibility, "RedrivePolicy": json.dumps(redrive)},
        )
        lambda_.create_event_source_mapping(
            EventSourceArn=f"arn:aws:sqs:{region}:{ACCOUNT}:q-{index}",
            FunctionName=f"fn-{group}",
            BatchSize=5,
            MaximumBatchingWindowInSeconds=2,
            FunctionResponseTypes=["ReportBatchItemFailures"],
        )

    # the function and DLQ of a group come first, then its queues and mappings
    heads = range(0, mappings, share)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(one, heads))
        list(pool.map(one, [i for i in range(mappings) if i % share]))


def measure(
    region: str, workers: int, runs: int, latency: float
) -> tuple[float, Counter[str], int, int]:
    times: list[float] = []
    calls: Counter[str] = Counter()
    checked = findings = 0
    for _ in range(runs):
        session = boto3.Session(region_name=region)
        calls = Counter()

        def record(model: Any, counter: Counter[str] = calls, **_: Any) -> None:
            counter[f"{model.service_model.signing_name}:{model.name}"] += 1

        session.events.register("provide-client-params", record)
        if latency:
            # a network round trip to AWS, which a local moto server does not have
            session.events.register("before-send", lambda **_: time.sleep(latency))
        start = time.perf_counter()
        report = audit(session, [region], max_workers=workers)
        times.append(time.perf_counter() - start)
        checked, findings = report.mappings_checked, len(report.findings)
    return statistics.median(times), calls, checked, findings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mappings", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--latency-ms", type=float, default=30.0, help="added per call in one extra run"
    )
    args = parser.parse_args()
    args.latency = args.latency_ms / 1000
    process, endpoint = start_server()
    os.environ.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
    )
    try:
        print(
            f"{time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, {os.cpu_count()}"
            f" cores, {platform.machine()}, boto3 {boto3.__version__}, botocore"
            f" {botocore.__version__}, moto {moto.__version__} (server in a subprocess)"
        )
        for scenario, region, share in (("distinct", "us-east-1", 1), ("shared", "us-west-2", 10)):
            start = time.perf_counter()
            build(region, args.mappings, share)
            built = time.perf_counter() - start
            print(f"\n{scenario}: built {args.mappings} mappings in {built:.1f} s")
            for workers, latency in ((1, 0.0), (MAX_WORKERS, 0.0), (MAX_WORKERS, args.latency)):
                if workers == MAX_WORKERS and latency and scenario == "shared":
                    continue
                wall, calls, checked, findings = measure(region, workers, args.runs, latency)
                pages = calls["lambda:ListEventSourceMappings"]
                lookups = sum(calls.values()) - pages
                print(
                    f"  workers={workers}, +{latency * 1000:.0f} ms: {wall:.2f} s for {checked}"
                    f" mappings ({checked / wall:.0f}/s), {findings} findings,"
                    f" {pages} listing page(s),"
                    f" {lookups} lookups = {lookups / checked:.2f} calls per mapping:"
                    f" {dict(sorted(calls.items()))}"
                )
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    main()
