"""Every template CloudFormation accepts is read, and no SQS mapping is dropped (issue 24).

Classification after resolving conditions, the Rules section, AWS::LanguageExtensions
(Fn::ForEach, Fn::Length, Fn::ToJsonString, intrinsic policies), SAM's SNS details, and
Number parameters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from safe_queue.engine import FunctionFacts, QueueFacts, RedriveFacts, Unknown
from safe_queue.template import (
    CheckedMapping,
    ParameterError,
    TemplateError,
    check_paths,
    load_template,
    mappings,
)
from safe_queue.template._language import MAX_EXPANDED_RESOURCES

FIXTURES = Path(__file__).parent / "fixtures" / "templates"
VISIBILITY = "safe-queue:visibility-below-function-timeout"
UNCHECKED = "safe-queue:unchecked"


def by_id(
    *names: str | Path, parameters: dict[str, str] | None = None
) -> dict[str, CheckedMapping]:
    paths = [name if isinstance(name, Path) else FIXTURES / name for name in names]
    _, checked = mappings(paths, parameters)
    return {mapping.source.logical_id: mapping for mapping in checked}


def verdicts(*paths: Path, parameters: dict[str, str] | None = None) -> set[tuple[str, str]]:
    return {(f.resource, f.rule_id) for f in check_paths(list(paths), parameters).findings}


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- classification after conditions and AWS::NoValue ---------------------------------------


def test_a_stream_only_property_under_a_condition_does_not_drop_the_mapping() -> None:
    # GIVEN a mapping with StartingPosition: !If [IsKinesis, LATEST, NoValue] and, with the
    # default parameters, an SQS queue (visibility 10 s) for a 300 s function
    path = FIXTURES / "conditional_stream_property.yaml"
    checked = by_id(path)
    # THEN it is counted and judged on its queue
    either = checked["Either"].facts
    assert isinstance(either.queue, QueueFacts)
    assert either.queue.visibility_timeout == 10
    assert either.batch_size is None  # BatchSize is absent under Kind=sqs (AWS::NoValue)
    assert (("Either", VISIBILITY)) in verdicts(path)


def test_the_chosen_condition_values_decide_the_source() -> None:
    # GIVEN the same template with Kind=kinesis THEN that mapping reads a stream: not counted
    path = FIXTURES / "conditional_stream_property.yaml"
    checked = by_id(path, parameters={"Kind": "kinesis", "Mode": "slow"})
    assert set(checked) == {"Undecided"}
    assert check_paths([path], {"Kind": "kinesis", "Mode": "slow"}).mappings_checked == 1


def test_an_undecidable_condition_is_unchecked_naming_it_never_dropped() -> None:
    # GIVEN a source chosen by a condition on a parameter without a value
    facts = by_id("conditional_stream_property.yaml")["Undecided"].facts
    # THEN the mapping is counted, and its queue is unknown naming the condition
    assert isinstance(facts.queue, Unknown)
    assert "condition IsUndecided" in facts.queue.why
    assert "pass --parameter Mode=VALUE" in facts.queue.why


def test_sources_that_are_not_queues_are_neither_counted_nor_reported() -> None:
    # GIVEN mappings from a function (GetAtt and a literal ARN) and self-managed Kafka
    path = FIXTURES / "conditional_stream_property.yaml"
    checked = by_id(path)
    # THEN none of them is counted or named in a finding
    assert not {"FromFunction", "FromFunctionArn", "SelfManagedKafka"} & set(checked)
    assert not {"FromFunction", "FromFunctionArn", "SelfManagedKafka"} & {
        resource for resource, _ in verdicts(path)
    }
    assert check_paths([path]).mappings_checked == 2


def test_a_property_set_to_no_value_is_absent(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Resources:
  Queue: {Type: AWS::SQS::Queue, Properties: {VisibilityTimeout: 1200}}
  Fn: {Type: AWS::Lambda::Function, Properties: {Timeout: 60}}
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      EventSourceArn: !GetAtt Queue.Arn
      FunctionName: !Ref Fn
      FunctionResponseTypes: !Ref AWS::NoValue
      FilterCriteria: !Ref AWS::NoValue
""",
    )
    facts = by_id(path)["Mapping"].facts
    assert (facts.report_batch_item_failures, facts.has_filters) == (None, None)


def test_properties_chosen_by_fn_if_are_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Parameters: {Big: {Type: String, Default: "yes"}}
Conditions: {IsBig: !Equals [!Ref Big, "yes"]}
Resources:
  Queue: {Type: AWS::SQS::Queue, Properties: !If [IsBig, {VisibilityTimeout: 900}, {}]}
  Fn: {Type: AWS::Lambda::Function, Properties: {Timeout: 60}}
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties: !If
      - IsBig
      - {EventSourceArn: !GetAtt Queue.Arn, FunctionName: !Ref Fn, BatchSize: 1}
      - {EventSourceArn: !GetAtt Queue.Arn, FunctionName: !Ref Fn}
""",
    )
    facts = by_id(path)["Mapping"].facts
    assert facts.batch_size == 1
    assert isinstance(facts.queue, QueueFacts)
    assert facts.queue.visibility_timeout == 900


def test_a_mapping_without_event_source_arn_is_unchecked_not_dropped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Resources:
  Fn: {Type: AWS::Lambda::Function}
  Mapping: {Type: AWS::Lambda::EventSourceMapping, Properties: {FunctionName: !Ref Fn}}
""",
    )
    assert by_id(path)["Mapping"].facts.queue == Unknown(
        "the queue", "is not set (the mapping has no EventSourceArn, the event no Queue)"
    )


# --- the Rules section ------------------------------------------------------------------------


def test_rules_section_short_forms_are_read_and_ignored() -> None:
    # GIVEN every rule function in short form WHEN the template is checked
    report = check_paths([FIXTURES / "rules_section.yaml"])
    # THEN it is read (no exit 2) and its mapping judged as any other
    assert report.mappings_checked == 1
    assert {f.rule_id for f in report.findings} >= {VISIBILITY}


# --- AWS::LanguageExtensions ------------------------------------------------------------------


def test_for_each_checks_every_tenant_mapping_by_mapping() -> None:
    # GIVEN a per-tenant loop of queues, DLQs, functions and mappings
    checked = by_id("foreach_tenants.yaml")
    # THEN each tenant's mapping is checked under the id the expansion gives it (&{} drops
    # the non-alphanumeric character), at the line of its key in the loop
    assert set(checked) == {"Mappingacme", "Mappingglobexeu"}
    text = (FIXTURES / "foreach_tenants.yaml").read_text().splitlines()
    for mapping in checked.values():
        assert mapping.source.line is not None
        assert text[mapping.source.line - 1].strip() == "Mapping&{Tenant}:"
    # AND each reaches its own queue (FindInMap by the tenant), its DLQ through a
    # Fn::ToJsonString RedrivePolicy, and its function through Ref {Fn::Sub}
    acme = checked["Mappingacme"].facts
    assert acme.queue == QueueFacts(
        name="Queueacme",
        visibility_timeout=1110,
        queue_name="acme-jobs",
        redrive=RedriveFacts(
            5, QueueFacts(name="Dlqacme", retention_period=1_209_600, queue_name="acme-dlq")
        ),
    )
    assert isinstance(acme.function, FunctionFacts)
    assert (acme.function.name, acme.function.timeout) == ("Workeracme", 180)
    globex = checked["Mappingglobexeu"].facts
    assert isinstance(globex.queue, QueueFacts)
    assert globex.queue.visibility_timeout == 60
    # AND the collection's assumed parameter value is reported
    assert checked["Mappingacme"].where.parameters == {"Tenants": "acme,globex-eu"}
    assert "Assumed parameter Tenants = acme,globex-eu, its Default." in acme.notes


def test_for_each_verdicts_follow_the_collection_given() -> None:
    path = FIXTURES / "foreach_tenants.yaml"
    assert verdicts(path) == {("Mappingglobexeu", VISIBILITY)}
    # WHEN the collection is given on the command line THEN the loop follows it
    only_acme = by_id(path, parameters={"Tenants": "acme"})
    assert set(only_acme) == {"Mappingacme"}


def test_for_each_expansion_resolves_intrinsics_of_the_transform() -> None:
    templates, _ = mappings([FIXTURES / "foreach_tenants.yaml"])
    (template,) = templates
    worker = template.resources["Workeracme"]["Properties"]["Environment"]["Variables"]
    assert worker["TENANT"] == "acme"
    # DeletionPolicy: an intrinsic function, resolved (the Mappings lack the key: default)
    assert template.resources["Dlqacme"]["DeletionPolicy"] == "Retain"
    # Outputs loops too: one export per tenant
    assert set(template.body["Outputs"]) == {"QueueArnacme", "QueueArnglobexeu"}


def test_fn_length_and_to_json_string_are_evaluated(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Transform: AWS::LanguageExtensions
Parameters: {Items: {Type: CommaDelimitedList, Default: "a,b,c"}}
Resources:
  Dlq: {Type: AWS::SQS::Queue, Properties: {MessageRetentionPeriod: 1209600}}
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: {"Fn::Length": !Ref Items}
      RedrivePolicy:
        Fn::ToJsonString: {deadLetterTargetArn: !GetAtt Dlq.Arn, maxReceiveCount: 7}
  Fn: {Type: AWS::Lambda::Function, Properties: {Timeout: 2}}
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      EventSourceArn: !GetAtt Queue.Arn
      FunctionName: !Ref Fn
      BatchSize: {"Fn::Length": [1, 2]}
""",
    )
    facts = by_id(path)["Mapping"].facts
    assert facts.batch_size == 2
    assert facts.queue == QueueFacts(
        name="Queue",
        visibility_timeout=3,
        redrive=RedriveFacts(7, QueueFacts(name="Dlq", retention_period=1_209_600)),
    )


def test_a_loop_that_cannot_be_expanded_makes_its_mappings_unchecked() -> None:
    # GIVEN a loop over a parameter without a value, making a SAM function with an SQS event
    path = FIXTURES / "foreach_unknown_collection.yaml"
    report = check_paths([path])
    # THEN the run does not fail: the mapping is counted, unchecked, naming the loop
    assert report.mappings_checked == 1
    (finding,) = report.findings
    assert finding.rule_id == UNCHECKED
    assert finding.resource == "Worker${Tenant}Jobs${Tenant}"
    assert "loop Fn::ForEach::Tenants, which cannot be expanded" in finding.message
    assert "pass --parameter Tenants=VALUE" in finding.message
    # AND given the collection, it is expanded and checked
    checked = by_id(path, parameters={"Tenants": "a,b"})
    assert set(checked) == {"WorkeraJobsa", "WorkerbJobsb"}
    assert {(f.resource, f.rule_id) for f in check_paths([path], {"Tenants": "a"}).findings} >= {
        ("WorkeraJobsa", VISIBILITY)
    }


def test_nested_loops_and_loops_in_properties(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Transform: AWS::LanguageExtensions
Resources:
  Fn: {Type: AWS::Lambda::Function, Properties: {Timeout: 120}}
  Fn::ForEach::Regions:
    - Region
    - [eu, us]
    - Fn::ForEach::Sizes:
        - Size
        - [Small, Large]
        - ${Region}${Size}Queue:
            Type: AWS::SQS::Queue
            Properties:
              VisibilityTimeout: !FindInMap [Seconds, !Ref Size, Value]
              Fn::ForEach::Tags:
                - Key
                - [Owner]
                - Tag${Key}: !Sub "${Region}-${Key}"
          ${Region}${Size}Mapping:
            Type: AWS::Lambda::EventSourceMapping
            Properties:
              EventSourceArn: !GetAtt [!Sub "${Region}${Size}Queue", Arn]
              FunctionName: !Ref Fn
              BatchSize: 1
Mappings:
  Seconds:
    Small: {Value: 30}
    Large: {Value: 600}
""",
    )
    templates, checked = mappings([path])
    assert {m.source.logical_id for m in checked} == {
        "euSmallMapping",
        "euLargeMapping",
        "usSmallMapping",
        "usLargeMapping",
    }
    assert templates[0].resources["euSmallQueue"]["Properties"]["TagOwner"] == "eu-Owner"
    assert verdicts(path) == {
        ("euSmallMapping", VISIBILITY),
        ("usSmallMapping", VISIBILITY),
        ("euLargeMapping", "safe-queue:visibility-below-guidance"),
        ("usLargeMapping", "safe-queue:visibility-below-guidance"),
        ("euSmallMapping", "safe-queue:no-dead-letter-queue"),
        ("euLargeMapping", "safe-queue:no-dead-letter-queue"),
        ("usSmallMapping", "safe-queue:no-dead-letter-queue"),
        ("usLargeMapping", "safe-queue:no-dead-letter-queue"),
    }


def test_a_loop_writing_a_logical_id_twice_is_an_input_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Transform: AWS::LanguageExtensions
Resources:
  Fn::ForEach::Queues:
    - Name
    - [a, a]
    - Queue${Name}: {Type: AWS::SQS::Queue}
""",
    )
    with pytest.raises(TemplateError, match="writes the key Queuea twice"):
        mappings([path])


def test_a_loop_expanding_past_the_bound_is_refused_quickly(tmp_path: Path) -> None:
    # GIVEN nested loops that would make 100 x 100 x 100 resources
    items = json.dumps([f"i{index}" for index in range(100)])
    path = write(
        tmp_path,
        f"""\
Transform: AWS::LanguageExtensions
Resources:
  Fn::ForEach::A:
    - A
    - {items}
    - Fn::ForEach::B:
        - B
        - {items}
        - Fn::ForEach::C:
            - C
            - {items}
            - Q${{A}}${{B}}${{C}}: {{Type: AWS::SQS::Queue}}
""",
    )
    with pytest.raises(TemplateError, match=f"more than {MAX_EXPANDED_RESOURCES:,} resources"):
        mappings([path])


def test_a_stack_over_500_resources_is_warned_about_and_still_checked(tmp_path: Path) -> None:
    resources: dict[str, Any] = {f"Q{i}": {"Type": "AWS::SQS::Queue"} for i in range(501)}
    resources["Fn"] = {"Type": "AWS::Lambda::Function", "Properties": {"Timeout": 60}}
    resources["M"] = {
        "Type": "AWS::Lambda::EventSourceMapping",
        "Properties": {
            "EventSourceArn": {"Fn::GetAtt": ["Q0", "Arn"]},
            "FunctionName": {"Ref": "Fn"},
        },
    }
    path = write(tmp_path, json.dumps({"Resources": resources}), "big.json")
    with pytest.warns(UserWarning, match="503 resources, more than CloudFormation's 500"):
        report = check_paths([path])
    assert report.mappings_checked == 1


# --- SAM, as SAM does it -------------------------------------------------------------------


def test_sam_falsy_sqs_subscription_makes_no_queue_and_no_mapping() -> None:
    templates, checked = mappings([FIXTURES / "sam_sns_details.yaml"])
    ids = {mapping.source.logical_id for mapping in checked}
    assert ids == {"HandlerFifoOrdersEventSourceMapping", "HandlerPlainQueueEventSourceMapping"}
    assert "HandlerEmptySubscriptionQueue" not in templates[0].resources


def test_sam_fifo_topic_generates_a_fifo_queue() -> None:
    checked = by_id("sam_sns_details.yaml")
    fifo = checked["HandlerFifoOrdersEventSourceMapping"].facts
    plain = checked["HandlerPlainQueueEventSourceMapping"].facts
    assert isinstance(fifo.queue, QueueFacts)
    assert isinstance(plain.queue, QueueFacts)
    assert (fifo.queue.fifo, plain.queue.fifo) == (True, None)
    assert fifo.batch_size == 10  # SAM writes BatchSize 10 for a subscription's mapping


def test_sam_sqs_event_from_a_stream_is_not_counted() -> None:
    report = check_paths([FIXTURES / "sam_sns_details.yaml"])
    assert report.mappings_checked == 2
    assert "HandlerStreamAsSqs" not in {f.resource for f in report.findings}


def test_sam_sqs_event_with_starting_position_is_still_checked(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
Transform: AWS::Serverless-2016-10-31
Resources:
  Queue: {Type: AWS::SQS::Queue}
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 60
      Events:
        Work: {Type: SQS, Properties: {Queue: !GetAtt Queue.Arn, StartingPosition: LATEST}}
""",
    )
    assert ("FnWork", VISIBILITY) in verdicts(path)


# --- Number parameters --------------------------------------------------------------------


def test_a_non_number_for_a_number_parameter_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"--parameter RenderTimeout=abc: .* Type Number"):
        mappings([FIXTURES / "seed000_fixed.yaml"], {"RenderTimeout": "abc"})


def test_a_non_number_default_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "Parameters: {Vis: {Type: Number, Default: lots}}\nResources: {}\n")
    with pytest.raises(TemplateError, match="parameter Vis has Type Number, and its Default"):
        mappings([path])
    lists = write(
        tmp_path, "Parameters: {V: {Type: List<Number>, Default: '1,x'}}\nResources: {}\n"
    )
    with pytest.raises(TemplateError, match="parameter V has Type List<Number>"):
        mappings([lists])


def test_for_each_lines_in_json_and_of_sam_events(tmp_path: Path) -> None:
    # GIVEN the tenant loop written as JSON
    (template,) = mappings([FIXTURES / "foreach_tenants.yaml"])[0]
    original = load_template(FIXTURES / "foreach_tenants.yaml").body
    assert template.body != original  # expanded in place; the file's own body is not
    path = write(tmp_path, json.dumps(original, indent=2), "t.json")
    text = path.read_text().splitlines()
    # THEN each expanded mapping is placed at its key in the loop
    for mapping in by_id(path).values():
        assert mapping.source.line is not None
        assert text[mapping.source.line - 1].strip() == '"Mapping&{Tenant}": {'
    # AND a SAM event inside a loop is placed at its event key
    (unexpanded,) = by_id("foreach_unknown_collection.yaml").values()
    lines = (FIXTURES / "foreach_unknown_collection.yaml").read_text().splitlines()
    assert unexpanded.source.line is not None
    assert lines[unexpanded.source.line - 1].strip() == "Jobs${Tenant}:"
