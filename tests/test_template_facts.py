"""The facts the template adapter builds: what it resolves, what it leaves unknown, and why."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from safe_queue.engine import FunctionFacts, QueueFacts, RedriveFacts, Unknown
from safe_queue.template import CheckedMapping, check_paths, mappings

FIXTURES = Path(__file__).parent / "fixtures" / "templates"


def unkeyed(function: object) -> object:
    """A function's facts without its identity key (test_function_keys_name_template_and_id)."""
    return (
        dataclasses.replace(function, key="") if isinstance(function, FunctionFacts) else function
    )


def by_id(*names: str, parameters: dict[str, str] | None = None) -> dict[str, CheckedMapping]:
    _, checked = mappings([FIXTURES / name for name in names], parameters)
    return {mapping.source.logical_id: mapping for mapping in checked}


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_seed_000_broken_alone_leaves_the_imported_queue_unknown() -> None:
    # GIVEN the seed's SAM template, whose queue is imported from a stack not given
    mapping = by_id("seed000_broken.yaml")["RenderFnQueue"]
    facts = mapping.facts
    # THEN the mapping id is SAM's (function id + event name) and its line is the event's
    assert mapping.source.line == 14
    assert facts.batch_size == 5
    assert facts.batching_window == 2
    assert facts.report_batch_item_failures is None
    assert unkeyed(facts.function) == FunctionFacts(name="RenderFn", timeout=180)
    # AND the queue is unknown, with the reason, never guessed
    assert isinstance(facts.queue, Unknown)
    assert "invoice-render-queue-arn" in facts.queue.why
    assert "no template of this run exports" in facts.queue.why
    assert mapping.where.fields() == {"function": "RenderFn"}  # the queue: not known


def test_two_templates_joined_by_an_export() -> None:
    # GIVEN the queue's stack that exports the ARN WHEN both are checked as one deployment
    mapping = by_id("seed000_broken.yaml", "seed000_queue_stack.yaml")["RenderFnQueue"]
    # THEN Fn::ImportValue resolves to the other template's queue
    assert mapping.facts.queue == QueueFacts(
        name="InvoiceRenderQueue", visibility_timeout=60, queue_name="invoice-render"
    )
    assert mapping.where.queue == "InvoiceRenderQueue"


def test_seed_000_fixed_uses_parameter_defaults_and_says_so() -> None:
    mapping = by_id("seed000_fixed.yaml")["RenderFnQueue"]
    facts = mapping.facts
    assert isinstance(facts.queue, QueueFacts)
    assert facts.queue.visibility_timeout == 1110
    assert facts.queue.redrive == RedriveFacts(
        5, QueueFacts(name="RenderDLQ", retention_period=1_209_600)
    )
    assert isinstance(facts.function, FunctionFacts)
    assert facts.function.timeout == 180
    assert facts.report_batch_item_failures is True
    assert "Assumed parameter RenderTimeout = 180, its Default." in facts.notes
    assert "Assumed parameter RenderVisibilityTimeout = 1110, its Default." in facts.notes
    assert mapping.where.parameters == {
        "RenderVisibilityTimeout": "1110",
        "RenderTimeout": "180",
    }


def test_parameter_value_from_the_command_line_wins_over_the_default() -> None:
    facts = by_id("seed000_fixed.yaml", parameters={"RenderTimeout": "300"})["RenderFnQueue"].facts
    assert isinstance(facts.function, FunctionFacts)
    assert facts.function.timeout == 300
    assert "Used parameter RenderTimeout = 300 from --parameter." in facts.notes


def test_parameter_without_default_or_value_is_unknown() -> None:
    facts = by_id("parameters.yaml")["Mapping"].facts
    assert isinstance(facts.queue, QueueFacts)
    assert facts.queue.visibility_timeout == Unknown(
        "the queue's VisibilityTimeout",
        "is parameter QueueVisibility, which has no Default; pass --parameter QueueVisibility=VALUE",
    )


def test_seed_001_template() -> None:
    facts = by_id("seed001.yaml")["WorkMapping"].facts
    assert facts.queue == QueueFacts(
        name="WorkQueue",
        visibility_timeout=365,
        retention_period=345_600,
        redrive=RedriveFacts(5, QueueFacts(name="WorkDlq", retention_period=1_209_600)),
    )
    assert unkeyed(facts.function) == FunctionFacts(name="WorkFunction", timeout=60)
    assert (facts.batch_size, facts.batching_window) == (10, 5)


@pytest.mark.parametrize(
    "mapping_id",
    ["AliasMapping", "VersionMapping", "SubArnMapping", "LiteralArnMapping", "GetAttArnMapping"],
)
def test_every_way_of_naming_the_queue_and_function_is_followed(mapping_id: str) -> None:
    # GIVEN aliases, versions, Fn::Sub/Fn::Join ARNs, literal ARNs and list-form GetAtt
    facts = by_id("intrinsics.yaml")[mapping_id].facts
    # THEN each reaches the same queue (RedrivePolicy as a JSON string) and function
    assert unkeyed(facts.function) == FunctionFacts(name="SlowFn", timeout=120)
    assert isinstance(facts.queue, QueueFacts)
    assert facts.queue.name == "ShortQueue"
    assert facts.queue.visibility_timeout == 60
    assert facts.queue.redrive == RedriveFacts(
        5, QueueFacts(name="Dlq", retention_period=1_209_600)
    )


def test_literal_arn_of_a_queue_outside_the_run_is_unknown() -> None:
    mapping = by_id("intrinsics.yaml")["ForeignQueueMapping"]
    assert mapping.facts.queue == Unknown(
        "the queue",
        "arn:aws:sqs:eu-west-1:123456789012:someone-elses-queue is not defined in these templates",
    )
    assert mapping.where.queue == "arn:aws:sqs:eu-west-1:123456789012:someone-elses-queue"
    assert unkeyed(mapping.facts.function) == FunctionFacts(name="SlowFn", timeout=120)


def test_mappings_of_streams_kafka_and_mq_are_ignored_and_not_counted() -> None:
    checked = by_id("intrinsics.yaml")
    assert not {"TableMapping", "KafkaMapping", "BrokerMapping"} & set(checked)
    assert "StreamMapping" not in by_id("rules.json")
    assert check_paths([FIXTURES / "intrinsics.yaml"]).mappings_checked == 6


def test_a_mapping_with_a_condition_is_assumed_created_and_noted() -> None:
    facts = by_id("intrinsics.yaml")["SubArnMapping"].facts
    assert "The mapping has Condition Always; checked as if it is created." in facts.notes


def test_sam_globals_are_overridden_by_the_function_and_events_keep_their_settings() -> None:
    checked = by_id("sam_globals.yaml")
    assert set(checked) == {"GlobalsFnOrders", "OwnFnOrders", "AliasConsumer"}
    globals_fn = checked["GlobalsFnOrders"].facts
    assert unkeyed(globals_fn.function) == FunctionFacts(
        name="GlobalsFn", timeout=120, reserved_concurrency=5
    )
    assert globals_fn.batch_size is None  # SAM's default is AWS's: the engine applies 10
    own = checked["OwnFnOrders"].facts
    assert unkeyed(own.function) == FunctionFacts(name="OwnFn", timeout=30, reserved_concurrency=2)
    assert (own.batch_size, own.max_concurrency, own.has_filters) == (1, 2, True)
    assert "The mapping is disabled with Enabled: false; checked as if enabled." in own.notes
    # AND a Ref to SAM's generated alias (AutoPublishAlias: live) reaches the function
    alias = checked["AliasConsumer"]
    assert alias.facts.function == globals_fn.function
    assert alias.where.function == "GlobalsFn"


def test_sam_function_without_globals_defaults_are_left_to_the_engine(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Transform: AWS::Serverless-2016-10-31
Resources:
  Queue: {Type: AWS::SQS::Queue}
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Work: {Type: SQS, Properties: {Queue: !GetAtt Queue.Arn}}
""",
    )
    (mapping,) = mappings([path])[1]
    assert mapping.source.logical_id == "FnWork"
    assert unkeyed(mapping.facts.function) == FunctionFacts(name="Fn")
    assert mapping.facts.queue == QueueFacts(name="Queue")


def test_cloud_assembly_metadata_and_stack() -> None:
    mapping = by_id("cloud-assembly")["ConsumerMapping1A2B3C4D"]
    assert mapping.facts.derived_function_timeout == 60
    assert mapping.reported_by_construct == {"safe-queue:function-timeout-changed"}
    assert mapping.where.stack == "ProdConsumer1A2B3C4D"
    imported = by_id("cloud-assembly")["FnSqsEventSourceQueuesQueue1A2B3C4D"]
    assert imported.facts.queue == QueueFacts(name="Queue4A7E3555", visibility_timeout=30)


def test_skip_reported_by_construct_drops_only_the_listed_rules() -> None:
    # GIVEN a consumer's mapping whose metadata says the construct reported the drift
    path = FIXTURES / "cloud-assembly"
    everything = {(f.resource, f.rule_id) for f in check_paths([path]).findings}
    skipped = {
        (f.resource, f.rule_id)
        for f in check_paths([path], skip_reported_by_construct=True).findings
    }
    # THEN only that finding is dropped: one verdict, not two
    assert everything - skipped == {
        ("ConsumerMapping1A2B3C4D", "safe-queue:function-timeout-changed")
    }
    assert ("ConsumerMapping1A2B3C4D", "safe-queue:visibility-below-guidance") in skipped


def test_report_contents_for_the_cdk_plugin() -> None:
    report = check_paths([str(FIXTURES / "cloud-assembly")])
    assert report.mappings_checked == 2
    assert len(report.sources) == 3
    finding = next(
        f for f in report.findings if f.rule_id.endswith("visibility-below-function-timeout")
    )
    assert finding.resource == "FnSqsEventSourceQueuesQueue1A2B3C4D"
    assert finding.template == str(FIXTURES / "cloud-assembly" / "Consumers.template.json")
    assert finding.line == 15
    assert finding.where.fields() == {
        "queue": "Queue4A7E3555",
        "function": "Fn9270CBC0",
        "stack": "Consumers",
    }


CASES = {
    "string numbers": ("VisibilityTimeout: '45'", 45),
    "Fn::If on a parameter condition": ("VisibilityTimeout: !If [IsProd, 900, 45]", 45),
    "Fn::FindInMap": ("VisibilityTimeout: !FindInMap [Timeouts, !Ref Env, Visibility]", 600),
    "AWS::NoValue": ("VisibilityTimeout: !Ref AWS::NoValue", None),
    "Fn::Select": ("VisibilityTimeout: !Select [1, [10, 20]]", 20),
}


@pytest.mark.parametrize("case", CASES)
def test_values_resolve_through_intrinsics(tmp_path: Path, case: str) -> None:
    line, expected = CASES[case]
    path = write(
        tmp_path,
        f"""\
Parameters:
  Env: {{Type: String, Default: dev}}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
Mappings:
  Timeouts:
    dev: {{Visibility: 600}}
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      {line}
  Fn: {{Type: AWS::Lambda::Function, Properties: {{Timeout: 10}}}}
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties: {{EventSourceArn: !GetAtt Queue.Arn, FunctionName: !Ref Fn}}
""",
    )
    (mapping,) = mappings([path])[1]
    assert isinstance(mapping.facts.queue, QueueFacts)
    assert mapping.facts.queue.visibility_timeout == expected


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("VisibilityTimeout: !If [Unknowable, 900, 45]", "depends on condition Unknowable"),
        ("VisibilityTimeout: !Ref Secret", "read from SSM at deploy time"),
        ("VisibilityTimeout: !Base64 '60'", "is computed with Fn::Base64"),
        ("VisibilityTimeout: sixty", "is sixty, not a whole number"),
        ("VisibilityTimeout: !Ref Nowhere", "a Ref to Nowhere, which the template does not define"),
    ],
)
def test_values_that_cannot_be_known_are_unknown_with_the_reason(
    tmp_path: Path, line: str, why: str
) -> None:
    path = write(
        tmp_path,
        f"""\
Parameters:
  Secret: {{Type: "AWS::SSM::Parameter::Value<String>", Default: /queue/visibility}}
Conditions:
  Unknowable: !Equals [!Ref AWS::Region, eu-west-1]
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      {line}
  Fn: {{Type: AWS::Lambda::Function, Properties: {{Timeout: 10}}}}
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties: {{EventSourceArn: !GetAtt Queue.Arn, FunctionName: !Ref Fn}}
""",
    )
    (mapping,) = mappings([path])[1]
    assert isinstance(mapping.facts.queue, QueueFacts)
    visibility = mapping.facts.queue.visibility_timeout
    assert isinstance(visibility, Unknown)
    assert visibility.what == "the queue's VisibilityTimeout"
    assert why in visibility.why


def test_function_in_another_template_by_import_and_unknown_function(tmp_path: Path) -> None:
    write(
        tmp_path,
        """\
Resources:
  Fn: {Type: AWS::Lambda::Function, Properties: {Timeout: 30}}
Outputs:
  FnArn: {Value: !GetAtt Fn.Arn, Export: {Name: !Sub "${AWS::StackName}-fn"}}
""",
        "functions.yaml",
    )
    consumer = write(
        tmp_path,
        """\
Resources:
  Queue: {Type: AWS::SQS::Queue}
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties: {EventSourceArn: !GetAtt Queue.Arn, FunctionName: !ImportValue fns-fn}
  Unknown:
    Type: AWS::Lambda::EventSourceMapping
    Properties: {EventSourceArn: !GetAtt Queue.Arn, FunctionName: other-teams-fn}
""",
        "consumer.yaml",
    )
    # GIVEN an export name built from AWS::StackName, which a plain file does not know
    checked = {m.source.logical_id: m for m in mappings([consumer, tmp_path / "functions.yaml"])[1]}
    assert isinstance(checked["Mapping"].facts.function, Unknown)
    assert checked["Unknown"].facts.function == Unknown(
        "the function", "other-teams-fn is not defined in these templates"
    )


def test_sam_sns_sqs_subscription_generates_a_queue_and_a_mapping() -> None:
    # GIVEN SNS events with SqsSubscription (true, and an existing queue), and one without
    checked = by_id("sam_sns_subscription.yaml")
    # THEN SAM's mapping ids, its generated queue with AWS's defaults, or the given queue
    assert set(checked) == {
        "NotifyFnGeneratedEventSourceMapping",
        "NotifyFnExistingEventSourceMapping",
    }
    generated = checked["NotifyFnGeneratedEventSourceMapping"]
    assert generated.facts.queue == QueueFacts(name="NotifyFnGeneratedQueue")
    assert generated.source.line == 20
    existing = checked["NotifyFnExistingEventSourceMapping"].facts
    assert existing.queue == QueueFacts(name="OwnQueue", visibility_timeout=360)
    assert existing.batch_size == 1
    assert unkeyed(existing.function) == FunctionFacts(name="NotifyFn", timeout=60)


def test_sam_sqs_event_without_a_queue_is_unchecked(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Work: {Type: SQS, Properties: {BatchSize: 1}}
""",
    )
    (mapping,) = mappings([path])[1]
    assert mapping.facts.queue == Unknown(
        "the queue", "is not set (the mapping has no EventSourceArn, the event no Queue)"
    )


def test_each_nested_stage_resolves_its_own_exports(tmp_path: Path) -> None:
    # GIVEN two stages of one app, each exporting the same name from its own queue stack
    import json

    stages = {"Dev": 60, "Prod": 900}
    artifacts = {}
    for stage, visibility in stages.items():
        directory = tmp_path / f"assembly-{stage}"
        directory.mkdir()
        queues = {
            "Resources": {
                "Q": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": visibility}}
            },
            "Outputs": {
                "Arn": {"Value": {"Fn::GetAtt": ["Q", "Arn"]}, "Export": {"Name": "queue-arn"}}
            },
        }
        consumer = {
            "Resources": {
                "Fn": {"Type": "AWS::Lambda::Function", "Properties": {"Timeout": 100}},
                "Mapping": {
                    "Type": "AWS::Lambda::EventSourceMapping",
                    "Properties": {
                        "EventSourceArn": {"Fn::ImportValue": "queue-arn"},
                        "FunctionName": {"Ref": "Fn"},
                    },
                },
            }
        }
        (directory / "Queues.template.json").write_text(json.dumps(queues))
        (directory / "Consumer.template.json").write_text(json.dumps(consumer))
        manifest = {
            "artifacts": {
                name: {
                    "type": "aws:cloudformation:stack",
                    "properties": {"templateFile": f"{name}.template.json"},
                }
                for name in ("Queues", "Consumer")
            }
        }
        (directory / "manifest.json").write_text(json.dumps(manifest))
        artifacts[f"assembly-{stage}"] = {
            "type": "cdk:cloud-assembly",
            "properties": {"directoryName": f"assembly-{stage}"},
        }
    (tmp_path / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    # WHEN the app's cloud assembly is checked
    _, checked = mappings([tmp_path])
    # THEN each stage's consumer reaches its own stage's queue
    visibility = {
        Path(mapping.source.template.path).parent.name: mapping.facts.queue.visibility_timeout
        for mapping in checked
        if isinstance(mapping.facts.queue, QueueFacts)
    }
    assert visibility == {"assembly-Dev": 60, "assembly-Prod": 900}


def test_a_source_that_cannot_be_read_is_unknown_not_ignored(tmp_path: Path) -> None:
    # GIVEN a queue ARN from a custom resource, and a queue name two templates define
    path = write(
        tmp_path,
        """\
Resources:
  Lookup: {Type: "Custom::QueueLookup", Properties: {ServiceToken: arn:aws:lambda:r:1:function:x}}
  Fn: {Type: AWS::Lambda::Function}
  FromCustom:
    Type: AWS::Lambda::EventSourceMapping
    Properties: {EventSourceArn: !GetAtt Lookup.Arn, FunctionName: !Ref Fn}
  ByName:
    Type: AWS::Lambda::EventSourceMapping
    Properties: {EventSourceArn: "arn:aws:sqs:eu-west-1:123456789012:jobs", FunctionName: !Ref Fn}
""",
    )
    for name in ("a.yaml", "b.yaml"):
        write(
            tmp_path,
            "Resources:\n  Jobs: {Type: AWS::SQS::Queue, Properties: {QueueName: jobs}}\n",
            name,
        )
    checked = {
        m.source.logical_id: m
        for m in mappings([path, tmp_path / "a.yaml", tmp_path / "b.yaml"])[1]
    }
    # THEN both are counted and unknown, with the reason
    assert checked["FromCustom"].facts.queue == Unknown(
        "the queue", "is Custom::QueueLookup Lookup, not an SQS queue"
    )
    queue = checked["ByName"].facts.queue
    assert isinstance(queue, Unknown)
    assert "is defined more than once in these templates (Jobs in" in queue.why


def test_check_paths_signature_is_the_one_the_cdk_plugin_calls() -> None:
    import inspect

    signature = inspect.signature(check_paths)
    assert list(signature.parameters) == ["paths", "parameters", "skip_reported_by_construct"]
    assert signature.parameters["parameters"].default is None
    skip = signature.parameters["skip_reported_by_construct"]
    assert (skip.kind, skip.default) == (inspect.Parameter.KEYWORD_ONLY, False)


def test_cdk_nested_stacks_are_read_and_take_their_parameters_from_the_parent() -> None:
    # GIVEN a stack with two NestedStacks: one found through the asset manifest (the
    # TemplateURL's hash), one through aws:asset:path metadata
    checked = by_id("nested-assembly")
    # THEN both nested templates are checked, under their parent's artifact id
    assert set(checked) == {"FnSqsEventSourceParentQueue1A2B3C4D", "JobsMapping"}
    assert {m.where.stack for m in checked.values()} == {"Parent"}
    # AND a parameter the parent passes (the queue's ARN) resolves in the parent
    consumer = checked["FnSqsEventSourceParentQueue1A2B3C4D"]
    assert consumer.facts.queue == QueueFacts(name="Queue4A7E3555", visibility_timeout=30)
    assert consumer.source.template.path.endswith("ParentConsumers1A2B3C4D.nested.template.json")
    assert consumer.where.parameters is None  # nothing assumed: the parent gives the value


def test_function_keys_name_template_and_id() -> None:
    # GIVEN the seed template  WHEN its mapping is read
    (mapping,) = mappings([FIXTURES / "seed000_broken.yaml"])[1]
    # THEN the function's key is its template and logical id: mappings of one function share it
    assert isinstance(mapping.facts.function, FunctionFacts)
    assert mapping.facts.function.key == f"{FIXTURES / 'seed000_broken.yaml'}#RenderFn"
