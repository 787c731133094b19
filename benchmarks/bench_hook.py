"""Measure the CloudFormation hook's whole evaluation of a 480-resource template. Run by hand.

    .venv/bin/python -m benchmarks.bench_hook              # 7 runs of each case
    .venv/bin/python -m benchmarks.bench_hook --repeat 15

The template: 96 consumers of 5 resources each (queue, dead-letter queue, role, function,
event source mapping), 480 resources; every mapping gets findings (the same template as
``bench_check``). Each case times ``safe_queue.hook.handler`` on a stack-target request
whose payload is served from 127.0.0.1, as S3 serves the presigned URL: fetching the
payload, reading the template, judging, writing the response (message and annotations).

- "in process": this interpreter, libyaml's binding if installed; medians after a warm-up.
- "as deployed": the handler's bundled asset (``copy_hook_code``) in a fresh interpreter with
  aws_cdk and libyaml's binding blocked, as in Lambda (PyYAML's pure-Python loader); the
  first invocation ("cold", imports included) and the median of the next ones ("warm").
- "96 live lookups": the same template whose 96 mappings import their queue
  (``Fn::ImportValue``) and name their function by ARN, all read from a moto server on
  127.0.0.1 (``ListExports``, 96 queues, 96 dead-letter queues, 96 functions and their
  concurrency): the thread pool and the per-call overhead, not AWS's latency.

CPU time is the process's (user + system) during the timed calls.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from pathlib import Path
from typing import Any

from benchmarks.bench_check import template, to_yaml

CONSUMERS = 96
REGION = "eu-west-1"


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(call: Any, repeat: int) -> tuple[float, float, dict[str, Any]]:
    call()  # warm-up
    walls, cpus = [], []
    response: dict[str, Any] = {}
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), cpu()
        response = call()
        walls.append(time.perf_counter() - started)
        cpus.append(cpu() - started_cpu)
    return statistics.median(walls), statistics.median(cpus), response


def in_process(payloads: Any, text: str, repeat: int) -> tuple[float, float, dict[str, Any]]:
    from safe_queue.hook import handler
    from tests.hook_events import Context, stack_event

    url = payloads.serve({"template": text, "previousTemplate": None})
    return timed(lambda: handler(stack_event(url), Context()), repeat)


def as_deployed(payloads: Any, text: str, repeat: int) -> tuple[float, float, float, str]:
    from safe_queue.cdk.hook import copy_hook_code
    from tests.hook_events import stack_event

    url = payloads.serve({"template": text, "previousTemplate": None})
    with tempfile.TemporaryDirectory() as directory:
        copy_hook_code(Path(directory))
        program = textwrap.dedent(
            f"""\
            import json, resource, statistics, sys, time
            class Block:
                def find_spec(self, name, path=None, target=None):
                    if name.split('.')[0] in {{'aws_cdk', 'jsii', '_yaml'}} or name == 'yaml._yaml':
                        raise ImportError(name)
            sys.meta_path.insert(0, Block())
            sys.path.insert(0, {directory!r})
            event = json.loads(sys.argv[1])
            started = time.perf_counter()
            from safe_queue.hook import handler
            handler(event, None)
            cold = time.perf_counter() - started
            walls, cpus = [], []
            for _ in range({repeat}):
                r = resource.getrusage(resource.RUSAGE_SELF)
                c0, t0 = r.ru_utime + r.ru_stime, time.perf_counter()
                answer = handler(event, None)
                walls.append(time.perf_counter() - t0)
                r = resource.getrusage(resource.RUSAGE_SELF)
                cpus.append(r.ru_utime + r.ru_stime - c0)
            import yaml
            assert not yaml.__with_libyaml__
            print(json.dumps([cold, statistics.median(walls), statistics.median(cpus),
                              answer.get("errorCode") or answer["hookStatus"]]))
            """
        )
        completed = subprocess.run(
            [sys.executable, "-c", program, json.dumps(stack_event(url))],
            capture_output=True,
            text=True,
            check=True,
        )
    cold, warm, cpu_warm, verdict = json.loads(completed.stdout)
    return cold, warm, cpu_warm, verdict


def with_imports(body: dict[str, Any]) -> dict[str, Any]:
    """The template, each mapping importing its queue and naming its function by ARN."""
    resources = {k: v for k, v in body["Resources"].items() if not k.startswith(("Queue", "Dlq"))}
    for index in range(CONSUMERS):
        mapping = resources[f"Mapping{index}"]["Properties"]
        mapping["EventSourceArn"] = {"Fn::ImportValue": f"bench-queue-{index}"}
        mapping["FunctionName"] = {
            "Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}"
            f":function:bench-{index}"
        }
        del resources[f"Fn{index}"]
        del resources[f"Role{index}"]
    return {"Resources": resources}


def seed_moto(endpoint: str) -> None:
    import boto3

    session = boto3.Session(region_name=REGION)
    sqs, lambda_ = session.client("sqs"), session.client("lambda")
    cloudformation = session.client("cloudformation")
    role = session.client("iam").create_role(RoleName="bench", AssumeRolePolicyDocument="{}")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("index.py", "def handler(event, context):\n    return None\n")
    outputs = {}
    queues: dict[str, Any] = {}
    for index in range(CONSUMERS):
        lambda_.create_function(
            FunctionName=f"bench-{index}",
            Runtime="python3.13",
            Role=role["Role"]["Arn"],
            Handler="index.handler",
            Code={"ZipFile": archive.getvalue()},
            Timeout=90,
        )
        dlq = f"arn:aws:sqs:{REGION}:123456789012:bench-dlq-{index}"
        sqs.create_queue(
            QueueName=f"bench-dlq-{index}", Attributes={"MessageRetentionPeriod": "1209600"}
        )
        queues[f"Queue{index}"] = {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "VisibilityTimeout": 60 + index,
                "RedrivePolicy": {"deadLetterTargetArn": dlq, "maxReceiveCount": 3},
            },
        }
        outputs[f"Queue{index}"] = {
            "Value": {"Fn::GetAtt": [f"Queue{index}", "Arn"]},
            "Export": {"Name": f"bench-queue-{index}"},
        }
    cloudformation.create_stack(
        StackName="bench-queues",
        TemplateBody=json.dumps({"Resources": queues, "Outputs": outputs}),
    )


def live_lookups(payloads: Any, repeat: int) -> tuple[float, float, dict[str, Any], int]:
    from moto.server import ThreadedMotoServer

    from tests.moto_world import CREDENTIALS

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    saved = dict(os.environ)
    os.environ.update(CREDENTIALS, AWS_ENDPOINT_URL=endpoint)
    try:
        seed_moto(endpoint)
        body = with_imports(template(CONSUMERS))
        wall, cpu_time, response = in_process(payloads, json.dumps(body), repeat)
        return wall, cpu_time, response, len(body["Resources"])
    finally:
        os.environ.clear()
        os.environ.update(saved)
        server.stop()


def main() -> None:
    import logging

    logging.disable(logging.WARNING)  # moto's request log
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    from safe_queue.retries import settings
    from tests.hook_events import PayloadServer

    print(f"Python {platform.python_version()}, {platform.machine()}, repeat {args.repeat}")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    body = template(CONSUMERS)
    print(f"template: {len(body['Resources'])} resources, {CONSUMERS} SQS mappings")
    payloads = PayloadServer()
    try:
        print("| case | input | wall (median) | CPU | verdict | annotations | message |")
        print("|---|---|---|---|---|---|---|")
        for label, text in (("JSON", json.dumps(body)), ("YAML", to_yaml(body))):
            wall, cpu_time, response = in_process(payloads, text, args.repeat)
            print(
                f"| in process | {label} | {wall:.3f} s | {cpu_time:.3f} s |"
                f" {response.get('errorCode')} | {len(response['annotations'])} |"
                f" {len(response['message'])} chars |"
            )
        for label, text in (("JSON", json.dumps(body)), ("YAML", to_yaml(body))):
            cold, warm, cpu_warm, verdict = as_deployed(payloads, text, args.repeat)
            print(
                f"| as deployed, warm (cold: {cold:.3f} s) | {label} | {warm:.3f} s |"
                f" {cpu_warm:.3f} s | {verdict} | | |"
            )
        wall, cpu_time, response, count = live_lookups(payloads, args.repeat)
        print(
            f"| live lookups (moto) | JSON, {count} mappings, all outside | {wall:.3f} s |"
            f" {cpu_time:.3f} s | {response.get('errorCode') or response['hookStatus']} |"
            f" {len(response['annotations'])} | {len(response['message'])} chars |"
        )
    finally:
        payloads.close()
    hook = settings("hook")
    print()
    print(
        f"one AWS call at worst (hook retry settings): {hook.worst_case_seconds():.1f} s;"
        " the handler's budget: 25 s of CloudFormation's 30 s"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
