"""Build and synthesize one benchmark app, as `cdk synth` runs `python app.py`.

python -m benchmarks.run_app COUNT [--per-stack N] [--hand-wired] [--checks] [--nag] [--split]
"""

from __future__ import annotations

import argparse
import tempfile

from benchmarks.apps import consumers_app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("count", type=int)
    parser.add_argument("--per-stack", type=int, default=40)
    parser.add_argument("--hand-wired", action="store_true")
    parser.add_argument("--checks", action="store_true")
    parser.add_argument("--nag", action="store_true")
    parser.add_argument("--split", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as outdir:
        app = consumers_app(
            args.count,
            per_stack=args.per_stack,
            hand_wired=args.hand_wired,
            checks=args.checks,
            nag=args.nag,
            split=args.split,
            outdir=outdir,
        )
        try:
            app.synth()
        except RuntimeError as error:
            # cdk-nag reports the benchmark functions' managed policies: the work is done
            if not (args.nag and str(error).startswith("ValidationFailed")):
                raise


if __name__ == "__main__":
    main()
