"""Reading templates: YAML short-form tags, JSON, lines, cloud assemblies, and unreadable input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from safe_queue.template import TemplateError, load_template
from safe_queue.template._load import expand_paths

FIXTURES = Path(__file__).parent / "fixtures" / "templates"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


SHORT_FORMS = """\
AWSTemplateFormatVersion: 2010-09-09
Resources:
  Thing:
    Type: AWS::SQS::Queue
    Properties:
      Ref: !Ref Other
      GetAttDotted: !GetAtt Queue.Arn
      GetAttList: !GetAtt [Queue, Arn]
      GetAttNestedDots: !GetAtt Db.Endpoint.Address
      Sub: !Sub "arn:${AWS::Partition}:sqs"
      SubList: !Sub ["${X}", {X: !Ref Y}]
      Join: !Join [":", [a, b]]
      If: !If [Cond, 1, 2]
      Select: !Select [0, !Split [",", "a,b"]]
      Import: !ImportValue shared-arn
      FindInMap: !FindInMap [M, K, V]
      Base64: !Base64 text
      GetAZs: !GetAZs ""
      Equals: !Equals [a, b]
      Not: !Not [!Condition C]
      And: !And [!Condition C, !Condition D]
      Or: !Or [!Condition C, !Condition D]
      Cidr: !Cidr ["10.0.0.0/16", 2, 8]
      Transform: !Transform {Name: AWS::Include, Parameters: {Location: s3://b/k}}
"""


def test_yaml_short_form_tags_become_their_long_form(tmp_path: Path) -> None:
    # GIVEN every short-form tag WHEN the template is read
    template = load_template(write(tmp_path, "t.yaml", SHORT_FORMS))
    properties = template.resources["Thing"]["Properties"]
    # THEN each is the long form CloudFormation would see
    assert properties["Ref"] == {"Ref": "Other"}
    assert properties["GetAttDotted"] == {"Fn::GetAtt": ["Queue", "Arn"]}
    assert properties["GetAttList"] == {"Fn::GetAtt": ["Queue", "Arn"]}
    assert properties["GetAttNestedDots"] == {"Fn::GetAtt": ["Db", "Endpoint.Address"]}
    assert properties["Sub"] == {"Fn::Sub": "arn:${AWS::Partition}:sqs"}
    assert properties["SubList"] == {"Fn::Sub": ["${X}", {"X": {"Ref": "Y"}}]}
    assert properties["Join"] == {"Fn::Join": [":", ["a", "b"]]}
    assert properties["If"] == {"Fn::If": ["Cond", 1, 2]}
    assert properties["Select"] == {"Fn::Select": [0, {"Fn::Split": [",", "a,b"]}]}
    assert properties["Import"] == {"Fn::ImportValue": "shared-arn"}
    assert properties["FindInMap"] == {"Fn::FindInMap": ["M", "K", "V"]}
    assert properties["Base64"] == {"Fn::Base64": "text"}
    assert properties["GetAZs"] == {"Fn::GetAZs": ""}
    assert properties["Equals"] == {"Fn::Equals": ["a", "b"]}
    assert properties["Not"] == {"Fn::Not": [{"Condition": "C"}]}
    assert properties["And"] == {"Fn::And": [{"Condition": "C"}, {"Condition": "D"}]}
    assert properties["Or"] == {"Fn::Or": [{"Condition": "C"}, {"Condition": "D"}]}
    assert properties["Cidr"] == {"Fn::Cidr": ["10.0.0.0/16", 2, 8]}
    assert properties["Transform"]["Fn::Transform"]["Name"] == "AWS::Include"
    # AND the unquoted format version stays a string, as in CloudFormation
    assert template.body["AWSTemplateFormatVersion"] == "2010-09-09"


def test_yaml_lines_of_resources_and_sam_events() -> None:
    template = load_template(FIXTURES / "seed000_broken.yaml")
    assert template.lines["RenderFn"] == 6
    assert template.lines["RenderFn/Events/Queue"] == 14


def test_json_lines_of_resources() -> None:
    template = load_template(FIXTURES / "rules.json")
    text = (FIXTURES / "rules.json").read_text().splitlines()
    for logical_id in ("Fn", "GuidanceMapping", "StreamMapping"):
        line = template.lines[logical_id]
        assert text[line - 1].strip().startswith(f'"{logical_id}": {{')


def test_json_and_yaml_are_told_apart_by_content_not_name(tmp_path: Path) -> None:
    path = write(tmp_path, "template.template", '{"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}')
    assert load_template(path).resources["Q"]["Type"] == "AWS::SQS::Queue"


@pytest.mark.parametrize(
    ("name", "line", "words"),
    [
        ("broken.yaml", 6, "could not parse YAML"),
        ("broken.json", 3, "could not parse JSON"),
        ("not_a_template.yaml", None, "is not a CloudFormation template"),
    ],
)
def test_unparseable_input_names_the_file_and_line(name: str, line: int | None, words: str) -> None:
    with pytest.raises(TemplateError) as caught:
        load_template(FIXTURES / name)
    assert caught.value.path.endswith(name)
    assert caught.value.line == line
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_template_of_other_sections_only_has_no_resources_and_is_read(tmp_path: Path) -> None:
    # GIVEN what CDK writes for an empty stack: Parameters and Rules, no Resources
    path = write(
        tmp_path,
        "Empty.template.json",
        json.dumps({"Parameters": {"BootstrapVersion": {"Type": "String"}}, "Rules": {}}),
    )
    # THEN it is a template without resources, not an error
    assert load_template(path).resources == {}
    # AND a document of other keys, or an empty one, is still no template
    for body in ({"name": "settings", "Parameters": {}}, {}):
        other = write(tmp_path, "other.json", json.dumps(body))
        with pytest.raises(TemplateError, match="is not a CloudFormation template"):
            load_template(other)


def test_missing_file_and_directory_without_manifest(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match=r"missing\.yaml: no such file"):
        expand_paths([tmp_path / "missing.yaml"])
    with pytest.raises(TemplateError, match=r"manifest\.json: no such file"):
        expand_paths([tmp_path])


def test_resource_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "t.yaml", "Resources:\n  Q: just-a-string\n")
    with pytest.raises(TemplateError, match="resource Q is not a mapping") as caught:
        load_template(path)
    assert caught.value.line == 2


def test_cloud_assembly_reads_stacks_and_nested_stages() -> None:
    # GIVEN a cdk.out with two stacks and a nested stage assembly (asset and tree artifacts too)
    templates = expand_paths([FIXTURES / "cloud-assembly"])
    by_stack = {template.stack: template for template in templates}
    # THEN every stack template is read, with its artifact id and scope
    assert set(by_stack) == {"Queues", "Consumers", "ProdConsumer1A2B3C4D"}
    nested = by_stack["ProdConsumer1A2B3C4D"]
    assert nested.path.endswith("assembly-Prod/ProdConsumer1A2B3C4D.template.json")
    assert nested.scope != by_stack["Queues"].scope
    assert nested.pseudo == {"AWS::StackName": "Prod-Consumer"}
    # AND the manifest file itself is accepted in place of its directory
    assert len(expand_paths([FIXTURES / "cloud-assembly" / "manifest.json"])) == 3


def test_broken_manifest_is_reported_with_its_line(tmp_path: Path) -> None:
    write(tmp_path, "manifest.json", '{\n "artifacts": [\n')
    with pytest.raises(TemplateError, match="could not parse JSON") as caught:
        expand_paths([tmp_path])
    assert caught.value.line == 3


def test_a_path_given_twice_is_read_once() -> None:
    path = FIXTURES / "seed000_queue_stack.yaml"
    assert len(expand_paths([path, str(path), FIXTURES / "." / path.name])) == 1


def test_json_lines_of_sam_events(tmp_path: Path) -> None:
    text = """{
  "Transform": "AWS::Serverless-2016-10-31",
  "Resources": {
    "Fn": {
      "Type": "AWS::Serverless::Function",
      "Properties": {
        "Events": {
          "Api": {"Type": "Api"},
          "Work": {
            "Type": "SQS",
            "Properties": {"Queue": "arn:aws:sqs:eu-west-1:123456789012:work"}
          }
        }
      }
    }
  }
}
"""
    template = load_template(write(tmp_path, "t.json", text))
    assert template.lines == {"Fn": 4, "Fn/Events/Api": 8, "Fn/Events/Work": 9}
