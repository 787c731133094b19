"""safe-queue audit against a moto server: the facts it reads, partial failures, the calls it makes.

The rules themselves are tested once in test_rules.py; here each case checks that the
live adapter reads the right values (a finding that only a correct read can give) and
that nothing is read twice or outside the documented IAM policy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from safe_queue.cli import main
from safe_queue.engine import UNCHECKED, Level
from safe_queue.live import IAM_ACTIONS, audit, iam_policy, queue_url
from safe_queue.report import Report, ReportedFinding
from tests import moto_world
from tests.moto_world import DLQ_RETENTION, Calls, World, deny, paginate_like_aws

moto_endpoint = moto_world.moto_endpoint  # fixtures
aws_environment = moto_world.aws_environment

REGION = "eu-west-1"
OTHER_REGION = "eu-west-2"
FIXED_VISIBILITY = 1082  # 6 x 180 s + 2 s
SEED_MAPPING = {
    "BatchSize": 5,
    "MaximumBatchingWindowInSeconds": 2,
    "FunctionResponseTypes": ["ReportBatchItemFailures"],
}


@dataclass
class Audited:
    world: World
    mappings: dict[str, str]  # case -> mapping UUID
    queues: dict[str, str]  # case -> queue ARN
    functions: dict[str, str]  # name -> function ARN
    report: Report
    calls: Calls

    def findings(self, case: str) -> list[ReportedFinding]:
        return [f for f in self.report.findings if f.resource == self.mappings[case]]

    def rule_ids(self, case: str) -> list[str]:
        return [f.rule_id for f in self.findings(case)]


@pytest.fixture(scope="module")
def audited(aws_environment: str) -> Audited:
    """GIVEN one region with a mapping per case, sharing functions and a dead-letter queue,
    WHEN it is audited once (calls recorded)."""
    world = World(REGION)
    functions = {
        "render": world.function("render", 180),
        "limited": world.function("limited", 180),
        "versioned": world.function("versioned", 180, publish=True),
    }
    world.lambda_.put_function_concurrency(FunctionName="limited", ReservedConcurrentExecutions=5)
    alias = world.lambda_.create_alias(FunctionName="versioned", Name="live", FunctionVersion="1")
    # $LATEST moves on to 900 s: only a read that follows the qualifier sees 180 s.
    world.lambda_.update_function_configuration(FunctionName="versioned", Timeout=900)
    dlq = world.queue("render-dlq", MessageRetentionPeriod=DLQ_RETENTION)
    redrive = world.redrive(dlq)
    queues = {
        "seed": world.queue("invoice-render", VisibilityTimeout=60, RedrivePolicy=redrive),
        "fixed": world.queue(
            "invoice-render-fixed", VisibilityTimeout=FIXED_VISIBILITY, RedrivePolicy=redrive
        ),
        "fixed-2": world.queue(
            "fixed-2", VisibilityTimeout=FIXED_VISIBILITY, RedrivePolicy=redrive
        ),
        "reserved": world.queue(
            "reserved", VisibilityTimeout=FIXED_VISIBILITY, RedrivePolicy=redrive
        ),
        "equal-retention": world.queue(
            "equal-retention",
            VisibilityTimeout=FIXED_VISIBILITY,
            MessageRetentionPeriod=DLQ_RETENTION,
            RedrivePolicy=redrive,
        ),
        "qualified": world.queue(
            "qualified", VisibilityTimeout=FIXED_VISIBILITY, RedrivePolicy=redrive
        ),
        "deleted": world.queue(
            "deleted", VisibilityTimeout=FIXED_VISIBILITY, RedrivePolicy=redrive
        ),
        "denied": world.queue("denied", VisibilityTimeout=FIXED_VISIBILITY, RedrivePolicy=redrive),
    }
    mappings = {
        case: world.mapping(queues[case], "render", **SEED_MAPPING)
        for case in ("seed", "fixed", "fixed-2", "equal-retention", "deleted", "denied")
    }
    mappings["fixed-again"] = world.mapping(queues["fixed"], "render", **SEED_MAPPING)
    mappings["reserved"] = world.mapping(queues["reserved"], "limited", **SEED_MAPPING)
    mappings["qualified"] = world.mapping(queues["qualified"], alias["AliasArn"], **SEED_MAPPING)
    world.delete_queue(queues["deleted"])

    session = boto3.Session(region_name=REGION)
    calls = Calls(session)
    report = audit(session, [REGION])
    return Audited(world, mappings, queues, functions, report, calls)


def test_the_seed_incident_is_an_error(audited: Audited) -> None:
    # GIVEN the seed's pair: 60 s visibility, 180 s function, batch 5, 2 s window
    # THEN exactly the incident's rule fires, as an error, located at the mapping's UUID
    (finding,) = audited.findings("seed")
    assert finding.rule_id == "safe-queue:visibility-below-function-timeout"
    assert finding.level is Level.ERROR
    assert finding.template is None
    assert finding.where.fields() == {
        "queue_arn": audited.queues["seed"],
        "function_arn": audited.functions["render"],
        "queue_name": "invoice-render",
        "function_name": "render",
        "region": REGION,
    }


def test_the_fixed_pair_has_no_finding(audited: Audited) -> None:
    assert audited.findings("fixed") == []
    assert audited.findings("fixed-again") == []
    assert audited.findings("fixed-2") == []


def test_reserved_concurrency_without_maximum_concurrency_is_read(audited: Audited) -> None:
    assert audited.rule_ids("reserved") == [
        "safe-queue:reserved-concurrency-without-max-concurrency"
    ]


def test_dead_letter_retention_equal_to_the_source_is_read_from_the_dead_letter_queue(
    audited: Audited,
) -> None:
    (finding,) = audited.findings("equal-retention")
    assert finding.rule_id == "safe-queue:dead-letter-retention-too-short"
    assert finding.level is Level.WARNING


def test_a_qualified_function_arn_is_followed_to_its_version(audited: Audited) -> None:
    # GIVEN a mapping on an alias of version 1 (180 s) while $LATEST has 900 s
    (mapping,) = [
        m
        for m in audited.world.lambda_.list_event_source_mappings()["EventSourceMappings"]
        if m["UUID"] == audited.mappings["qualified"]
    ]
    assert mapping["FunctionArn"].startswith(audited.functions["versioned"] + ":")
    # THEN the qualified configuration was read, so 1082 s of visibility is enough
    assert audited.findings("qualified") == []
    assert mapping["FunctionArn"] in [
        p["FunctionName"] for p in audited.calls.params("lambda:GetFunctionConfiguration")
    ]
    # AND reserved concurrency, which is per function, was asked of the function itself
    assert audited.functions["versioned"] in [
        p["FunctionName"] for p in audited.calls.params("lambda:GetFunctionConcurrency")
    ]


def test_a_deleted_queue_makes_its_mapping_unchecked_and_the_audit_goes_on(
    audited: Audited,
) -> None:
    (finding,) = audited.findings("deleted")
    assert finding.rule_id == UNCHECKED
    assert finding.level is Level.INFO
    assert audited.queues["deleted"] in finding.message
    assert "does not exist" in finding.message
    assert "sqs:GetQueueAttributes" in finding.message
    # AND the report is incomplete, naming that read, its error and the mapping it leaves
    assert not audited.report.complete
    (failure,) = audited.report.unreadable
    assert (failure.operation, failure.resource) == (
        "sqs:GetQueueAttributes",
        audited.queues["deleted"],
    )
    assert (failure.kind, failure.code) == ("not-found", "AWS.SimpleQueueService.NonExistentQueue")
    assert failure.mappings == (audited.mappings["deleted"],)
    assert "delete-event-source-mapping" in failure.fix


def test_every_sqs_mapping_is_counted(audited: Audited) -> None:
    assert audited.report.mappings_checked == len(audited.mappings)
    assert audited.report.sources == [REGION]


def test_each_queue_and_function_is_read_once(audited: Audited) -> None:
    # GIVEN 9 mappings on 8 queues (one deleted), one shared dead-letter queue, and three
    # functions, one of them through a qualifier
    actions = audited.calls.actions
    assert actions["sqs:GetQueueAttributes"] == len(audited.queues) + 1
    assert actions["lambda:GetFunctionConfiguration"] == 3
    assert actions["lambda:GetFunctionConcurrency"] == 3
    assert actions["lambda:ListEventSourceMappings"] == 1
    # AND no queue URL was looked up: it is built from the ARN
    urls = {p["QueueUrl"] for p in audited.calls.params("sqs:GetQueueAttributes")}
    assert queue_url(audited.queues["seed"]) in urls


def test_every_call_is_in_the_documented_iam_policy(audited: Audited) -> None:
    # the README's policy is iam_policy(); every operation called is one of its actions
    assert set(audited.calls.actions) == set(IAM_ACTIONS)
    (statement,) = iam_policy()["Statement"]
    assert sorted(statement["Action"]) == sorted(IAM_ACTIONS)


def test_the_readme_and_docs_print_the_policy_the_audit_needs() -> None:
    policy = json.dumps(iam_policy(), indent=2)
    from tests.conftest import ROOT

    for document in ("README.md", "docs/audit.md"):
        assert policy in (ROOT / document).read_text(), document


def test_access_denied_makes_that_mapping_unchecked_naming_the_action(audited: Audited) -> None:
    # GIVEN sqs:GetQueueAttributes is denied on one queue only
    session = boto3.Session(region_name=REGION)
    deny(session, "sqs.GetQueueAttributes", when="123456789012/denied")
    report = audit(session, [REGION])
    # THEN that mapping is unchecked, naming the action, and every other one is audited
    (finding,) = [f for f in report.findings if f.resource == audited.mappings["denied"]]
    assert finding.rule_id == UNCHECKED
    assert "sqs:GetQueueAttributes" in finding.message
    assert "denied (AccessDenied: injected AccessDenied)" in finding.message
    assert report.mappings_checked == len(audited.mappings)
    # AND the denial makes the audit incomplete (with the deleted queue)
    denied = [u for u in report.unreadable if u.kind == "denied"]
    assert [u.mappings for u in denied] == [(audited.mappings["denied"],)]
    assert [f.rule_id for f in report.findings if f.resource == audited.mappings["seed"]] == [
        "safe-queue:visibility-below-function-timeout"
    ]


def test_a_deleted_dead_letter_queue_is_named_with_its_own_fix(audited: Audited) -> None:
    # GIVEN the shared dead-letter queue answers NonExistentQueue (deleted under the sources)
    session = boto3.Session(region_name=REGION)
    deny(session, "sqs.GetQueueAttributes", when="render-dlq", code="QueueDoesNotExist")
    report = audit(session, [REGION])
    (failure,) = [u for u in report.unreadable if u.resource.endswith(":render-dlq")]
    # THEN it is named once, for every mapping whose queue sends to it, with the fix of a
    # dead-letter queue (not "delete the mapping")
    assert failure.kind == "not-found"
    assert failure.fix.startswith("a RedrivePolicy names this dead-letter queue: create it")
    assert audited.mappings["seed"] in failure.mappings
    assert len(failure.mappings) == len(audited.mappings) - 1  # all but the deleted queue's
    # AND the seed's visibility error is still found (it needs no dead-letter queue)
    seed = [f.rule_id for f in report.findings if f.resource == audited.mappings["seed"]]
    assert "safe-queue:visibility-below-function-timeout" in seed


def test_a_denied_function_read_leaves_the_queue_rules_checked(audited: Audited) -> None:
    session = boto3.Session(region_name=REGION)
    deny(session, "lambda.GetFunctionConfiguration", code="AccessDeniedException")
    report = audit(session, [REGION])
    findings = [f for f in report.findings if f.resource == audited.mappings["fixed"]]
    (unchecked,) = findings
    assert "lambda:GetFunctionConfiguration" in unchecked.message
    assert "safe-queue:visibility-below-function-timeout" in unchecked.message  # skipped
    # AND one failed read, listed once, leaves every mapping of the shared function unchecked
    (failure,) = [u for u in report.unreadable if u.resource == audited.functions["render"]]
    assert failure.operation == "lambda:GetFunctionConfiguration"
    assert audited.mappings["fixed"] in failure.mappings
    assert audited.mappings["fixed-again"] in failure.mappings


def test_a_region_that_cannot_be_listed_is_reported_and_the_others_audited(
    audited: Audited,
) -> None:
    session = boto3.Session(region_name=REGION)
    deny(
        session,
        "lambda.ListEventSourceMappings",
        when=f'"client_region": "{OTHER_REGION}"',
        code="AccessDeniedException",
    )
    report = audit(session, [OTHER_REGION, REGION])
    (region_finding,) = [f for f in report.findings if f.resource == OTHER_REGION]
    assert region_finding.rule_id == UNCHECKED
    assert "lambda:ListEventSourceMappings" in region_finding.message
    assert report.mappings_checked == len(audited.mappings)
    (listing,) = [u for u in report.unreadable if u.operation == "lambda:ListEventSourceMappings"]
    assert (listing.resource, listing.kind, listing.mappings) == (OTHER_REGION, "denied", ())


def test_more_than_one_page_of_mappings(audited: Audited, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the server pages like AWS (moto does not), and pages of 2
    paginate_like_aws(monkeypatch)
    session = boto3.Session(region_name=REGION)
    calls = Calls(session)
    report = audit(session, [REGION], page_size=2)
    # THEN every page was read and every mapping audited, with the same findings
    assert calls.actions["lambda:ListEventSourceMappings"] == 5  # 9 mappings, 2 a page
    assert report.mappings_checked == len(audited.mappings)
    assert sorted(f.rule_id for f in report.findings) == sorted(
        f.rule_id for f in audited.report.findings
    )


# --- the command ---------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["audit", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_output_and_exit_codes(
    audited: Audited, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the region's deleted queue (its mapping cannot be read), accepted as partial
    code, out, _ = run_cli(capsys, "--region", REGION, "--format", "json", "--allow-incomplete")
    assert code == 1  # the seed's error
    document = json.loads(out)
    assert document["summary"]["mappings_checked"] == len(audited.mappings)
    seed = [f for f in document["findings"] if f["resource"] == audited.mappings["seed"]]
    assert [f["rule_id"] for f in seed] == ["safe-queue:visibility-below-function-timeout"]
    assert seed[0]["queue_name"] == "invoice-render"
    assert document["summary"]["complete"] is False
    (unreadable,) = document["summary"]["unreadable"]
    assert unreadable["operation"] == "sqs:GetQueueAttributes"
    assert unreadable["mappings"] == [audited.mappings["deleted"]]
    code, _, err = run_cli(capsys, "--region", REGION, "--fail-on", "never", "--allow-incomplete")
    assert code == 0
    # AND what was not read is still named, the summary as a warning
    failed, summary = err.splitlines()
    assert failed.startswith("safe-queue audit: could not read: sqs:GetQueueAttributes on")
    assert summary == (
        f"safe-queue audit: warning: incomplete audit: 1 of {len(audited.mappings)} mappings"
        " could not be read (failed reads: 1 not found); their findings are unknown; accepted"
        " by --allow-incomplete, so the exit code is --fail-on's for what was read"
    )


@pytest.mark.parametrize("fail_on", ["error", "never"])
def test_cli_an_incomplete_audit_exits_2_whatever_fail_on_says(
    audited: Audited, capsys: pytest.CaptureFixture[str], fail_on: str
) -> None:
    # GIVEN a mapping whose queue was deleted  WHEN audited without --allow-incomplete
    code, out, err = run_cli(capsys, "--region", REGION, "--fail-on", fail_on)
    # THEN exit 2: one line for the failed read (operation, resource, error, fix, mapping)
    assert code == 2
    failed, summary = err.splitlines()
    assert failed == (
        f"safe-queue audit: could not read: sqs:GetQueueAttributes on {audited.queues['deleted']}"
        " failed: AWS.SimpleQueueService.NonExistentQueue: The specified queue does not exist."
        " Fix: if it was deleted for good, delete the event source mappings that still name it"
        " (aws lambda delete-event-source-mapping --uuid <mapping UUID>), else audit again once"
        " it exists."
        f" Unchecked: 1 mapping ({audited.mappings['deleted']})."
    )
    # AND a one-line summary naming how many could not be read and why
    assert summary == (
        f"safe-queue audit: error: incomplete audit: 1 of {len(audited.mappings)} mappings could"
        " not be read (failed reads: 1 not found); their findings are unknown. Fix: see the"
        " lines above, then audit again; or pass --allow-incomplete to accept a partial audit"
    )
    # AND the report still shows what was read, and says it is incomplete
    assert "safe-queue:visibility-below-function-timeout" in out
    assert out.rstrip().endswith(
        f"in {len(audited.mappings)} mappings in 1 region; incomplete: 1 of"
        f" {len(audited.mappings)} mappings could not be read"
    )


def test_a_qualified_mapping_names_its_function_with_the_alias(audited: Audited) -> None:
    (finding,) = [
        f
        for f in audited.report.findings
        if f.resource == audited.mappings["reserved"]  # any mapping with a finding
    ]
    assert finding.where.function_name == "limited"
    from safe_queue.live.account import AuditedMapping

    qualified = AuditedMapping(
        "u", REGION, audited.queues["qualified"], audited.functions["versioned"] + ":live"
    )
    assert (qualified.queue_name, qualified.function_name) == ("qualified", "versioned:live")


def test_cli_text_names_the_queue_and_the_function(
    audited: Audited, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run_cli(capsys, "--region", REGION, "--allow-incomplete")
    (line,) = [line for line in out.splitlines() if audited.mappings["seed"] in line]
    assert line.startswith(
        f"  {REGION}: error safe-queue:visibility-below-function-timeout invoice-render -> render"
        f" (mapping {audited.mappings['seed']}) Queue VisibilityTimeout 60 s"
    )
    (deleted,) = [line for line in out.splitlines() if audited.mappings["deleted"] in line]
    assert (
        f"info safe-queue:unchecked deleted -> render (mapping {audited.mappings['deleted']})"
        in (deleted)
    )


def test_cli_progress_on_stderr(audited: Audited, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run_cli(capsys, "--region", REGION, "--progress", "--fail-on", "never")
    total = len(audited.mappings)
    assert f"audited {total}/{total} mappings" in err


def test_cli_region_from_the_environment(
    audited: Audited, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    code, out, _ = run_cli(capsys, "--format", "json", "--allow-incomplete")
    assert code == 1
    assert json.loads(out)["summary"]["sources"] == [REGION]


def test_cli_all_regions_reads_every_lambda_region_of_the_partition(
    audited: Audited, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    code, out, _ = run_cli(capsys, "--all-regions", "--format", "json", "--allow-incomplete")
    sources = json.loads(out)["summary"]["sources"]
    assert sources == boto3.Session().get_available_regions("lambda")
    assert REGION in sources
    assert code == 1


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--region", "eu-wset-1"], "unknown region 'eu-wset-1'"),
        (["--region", "eu-wset-1"], "did you mean 'eu-west-1'?"),
        (["--profile", "no-such-profile"], "no-such-profile"),
    ],
)
def test_cli_usage_errors_exit_2_with_one_line(
    audited: Audited, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert out == ""
    assert expected in err
    assert err.count("\n") == 1
    assert err.startswith("safe-queue audit: error:")


def test_cli_without_a_region_exits_2(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
    aws_environment: str,
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    code, _, err = run_cli(capsys)
    assert code == 2
    assert "no region to audit" in err


def test_cli_without_credentials_exits_2(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
    aws_environment: str,
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    monkeypatch.delenv("AWS_WEB_IDENTITY_TOKEN_FILE", raising=False)
    code, out, err = run_cli(capsys, "--region", REGION)
    assert code == 2
    assert out == ""
    assert "no AWS credentials found" in err
    assert err.count("\n") == 1


def test_cli_refused_credentials_exit_2(
    audited: Audited, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN credentials the account refuses in the region asked for
    original = boto3.Session

    def refusing_session(*args: Any, **kwargs: Any) -> boto3.Session:
        session = original(*args, **kwargs)
        deny(session, "lambda.ListEventSourceMappings", code="UnrecognizedClientException")
        return session

    monkeypatch.setattr(boto3, "Session", refusing_session)
    code, _, err = run_cli(capsys, "--region", REGION)
    assert code == 2
    assert "credentials were refused (UnrecognizedClientException)" in err


def test_cli_unreachable_endpoint_exits_2(
    audited: Audited, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the Lambda endpoint cannot be reached (raised at once instead of after retries)
    from botocore.exceptions import EndpointConnectionError

    original = boto3.Session

    def offline_session(*args: Any, **kwargs: Any) -> boto3.Session:
        session = original(*args, **kwargs)

        def unreachable(**_: Any) -> None:
            raise EndpointConnectionError(endpoint_url="http://127.0.0.1:9")

        session.events.register("before-call.lambda.ListEventSourceMappings", unreachable)
        return session

    monkeypatch.setattr(boto3, "Session", offline_session)
    code, out, err = run_cli(capsys, "--region", REGION)
    # THEN the region is reported as not read, in one line and a summary; exit 2
    assert code == 2
    failed, summary = err.splitlines()
    assert failed.startswith(
        f"safe-queue audit: could not read: lambda:ListEventSourceMappings on {REGION} failed:"
        ' EndpointConnectionError: Could not connect to the endpoint URL: "http://127.0.0.1:9".'
        " Fix: check the network, the region, and AWS_ENDPOINT_URL"
    )
    assert failed.endswith(f"Unchecked: every mapping of {REGION}.")
    assert summary.startswith(
        f"safe-queue audit: error: incomplete audit: the mappings of 1 region ({REGION}) could"
        " not be read (failed reads: 1 endpoint unreachable)"
    )
    assert "0 mappings in 1 region; incomplete: the mappings of 1 region" in out


def test_the_live_modules_import_without_cdk() -> None:
    # GIVEN aws_cdk, constructs and jsii cannot be imported
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'aws_cdk', 'constructs', 'jsii'}:\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import safe_queue, safe_queue.live, safe_queue.live.account, safe_queue.live.command\n"
        "import safe_queue.live.config_handler, safe_queue.cli, safe_queue.formats\n"
        "assert 'SafeQueueConsumer' in safe_queue.__all__\n"
        "assert not any(m.split('.')[0] in {'aws_cdk', 'constructs', 'jsii'} for m in sys.modules)\n"
        "print('ok')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", blocker], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


def test_an_exception_that_is_not_an_expected_aws_error_is_a_bug_not_an_unknown() -> None:
    # GIVEN a reader whose value is in a shape the audit does not expect
    from safe_queue.live.account import _audit_one

    class Reader:
        def queue(self, arn: str, region: str) -> Any:
            raise ValueError("invalid literal for int() with base 10: 'abc'")

    mapping = {
        "UUID": "1234",
        "EventSourceArn": f"arn:aws:sqs:{REGION}:123456789012:q",
        "FunctionArn": f"arn:aws:lambda:{REGION}:123456789012:function:f",
        "BatchSize": 1,
    }
    # WHEN its facts are built  THEN the exception goes on (no Unknown), naming the mapping
    with pytest.raises(ValueError, match="abc") as raised:
        _audit_one(mapping, REGION, Reader())  # type: ignore[arg-type]
    assert raised.value.__notes__ == [
        f"safe-queue: while auditing event source mapping 1234 in {REGION} (queue"
        f" {mapping['EventSourceArn']}, function {mapping['FunctionArn']})"
    ]


@pytest.mark.parametrize("debug", [False, True])
def test_cli_an_unexpected_aws_error_fails_loudly_with_a_traceback_under_debug(
    audited: Audited,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    debug: bool,
) -> None:
    # GIVEN GetQueueAttributes answers an error code no AWS read here should give (a request
    # the audit built wrong: a bug, not something about the account)
    original = boto3.Session

    def buggy_session(*args: Any, **kwargs: Any) -> boto3.Session:
        session = original(*args, **kwargs)
        deny(session, "sqs.GetQueueAttributes", when="fixed-2", code="InvalidAttributeName")
        return session

    monkeypatch.setattr(boto3, "Session", buggy_session)
    code, out, err = run_cli(capsys, "--region", REGION, *(["--debug"] if debug else []))
    # THEN exit 2, no report, and one line that says it is a bug (plus the traceback)
    assert code == 2
    assert out == ""
    last = err.splitlines()[-1]
    assert last.startswith(
        "safe-queue audit: internal error: InvalidAttributeName: An error occurred"
        " (InvalidAttributeName) when calling the GetQueueAttributes operation"
    )
    assert "while auditing event source mapping" in last
    assert "This is a bug in safe-queue, not a finding about the account" in last
    assert ("Traceback (most recent call last)" in err) is debug
    assert ("run again with --debug" in last) is not debug
    assert len(err.splitlines()) == 1 or debug
