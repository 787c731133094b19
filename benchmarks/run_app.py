"""Build and synthesize one benchmark app, as `cdk synth` runs `python app.py`.

python -m benchmarks.run_app COUNT [--hand-wired] [--checks] [--split]
"""

from __future__ import annotations

import argparse
import tempfile

from benchmarks.apps import consumers_app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("count", type=int)
    parser.add_argument("--hand-wired", action="store_true")
    parser.add_argument("--checks", action="store_true")
    parser.add_argument("--split", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as outdir:
        consumers_app(
            args.count,
            hand_wired=args.hand_wired,
            checks=args.checks,
            split=args.split,
            outdir=outdir,
        ).synth()


if __name__ == "__main__":
    main()
