"""The handler-side helpers import without aws-cdk-lib, constructs or jsii.

Run in a fresh interpreter (this test process has imported aws_cdk already, through
conftest) in which those three packages are made unimportable.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import safe_queue

from .conftest import ROOT

BLOCK_CDK = textwrap.dedent(
    """
    import importlib.abc, sys

    class NoCdk(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"aws_cdk", "constructs", "jsii"}:
                raise ImportError(f"{name} is blocked: the runtime must not import it")
            return None

    sys.meta_path.insert(0, NoCdk())
    """
)


def run_without_cdk(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_CDK + textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_runtime_and_redrive_import_without_cdk():
    # GIVEN aws_cdk, constructs and jsii unimportable
    # WHEN the runtime helpers and the redrive command are imported and used
    result = run_without_cdk(
        """
        import safe_queue, safe_queue.runtime, safe_queue.redrive
        from safe_queue.runtime import *
        heartbeat = VisibilityHeartbeat([], interval=1, extension=3)
        with heartbeat:
            pass
        assert safe_queue.redrive.main(["--help"]) == 0
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"aws_cdk", "constructs", "jsii"})
        print("loaded:", loaded, safe_queue.__version__)
        """
    )
    # THEN it works and none of them was loaded
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == f"loaded: [] {safe_queue.__version__}"


def test_the_blocker_does_block_the_construct():
    # GIVEN the same interpreter setup  WHEN the CDK construct is asked for
    result = run_without_cdk("import safe_queue\nsafe_queue.SafeQueueConsumer\n")
    # THEN it fails on the blocked import (so the test above proves something)
    assert result.returncode != 0
    assert "is blocked: the runtime must not import it" in result.stderr
