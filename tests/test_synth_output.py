"""`scripts/synth > template.yaml` writes a template and nothing else.

Running `python app.py` again would cost a whole process (about 8 s), so the test gives
`scripts/synth` the example app's cloud assembly, synthesized in-process
(`cdk synth --app <directory>` reads an existing assembly): what is tested is the script,
its set-up and the CDK CLI on the project's Node.js, and what they print on stdout.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml
from aws_cdk import App

from example.stack import InvoiceRenderingStack

from .conftest import CDK_CONTEXT, ROOT


def test_scripts_synth_stdout_is_only_the_template(tmp_path: Path):
    # GIVEN the example app's cloud assembly
    app = App(context=CDK_CONTEXT, outdir=str(tmp_path / "cdk.out"))
    InvoiceRenderingStack(app, "InvoiceRendering")
    assembly = app.synth()
    template = json.loads(
        Path(assembly.get_stack_artifact("InvoiceRendering").template_full_path).read_text()
    )

    # WHEN scripts/synth prints it, as `scripts/synth > template.yaml` would write it
    result = subprocess.run(
        [str(ROOT / "scripts" / "synth"), "--app", assembly.directory],
        capture_output=True,
        text=True,
        timeout=120,
    )

    # THEN stdout parses as YAML and is the template (the CLI leaves out the bootstrap-version
    # rule when it prints), with no set-up or CLI chatter around it
    assert result.returncode == 0, result.stderr
    printed = yaml.safe_load(result.stdout)
    assert isinstance(printed, dict), result.stdout[:500]
    assert printed["Resources"] == template["Resources"]
    assert set(printed) == set(template) - {"Rules"}
    assert result.stdout.startswith("Resources:")


def test_setup_prints_nothing_on_stdout():
    # GIVEN a set-up machine (scripts/test ran scripts/setup --node before pytest)
    # WHEN the set-up runs again THEN it writes nothing on stdout (messages go to stderr)
    result = subprocess.run(
        [str(ROOT / "scripts" / "setup"), "--node"], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


def test_setup_refuses_an_unknown_option_on_stderr():
    result = subprocess.run(
        [str(ROOT / "scripts" / "setup"), "--nod"], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "unknown option '--nod'" in result.stderr
