"""Benchmark `gpuspec lint` on the example fleet (fleet/ with policies/): target < 0.5 s wall.

Measures the whole command in a child process (interpreter start-up, imports,
support-matrix load, every rule, report) under the default and the strict
pack, best of five runs each.
Usage: python -m benchmarks.bench_lint [--runs 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.measure import best_of

REPO = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 0.5


def main() -> int:
    """Time lint of the example fleet under each pack, print a table; exit 1 if the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{'pack':>8} {'wall s':>7} {'peak MiB':>9} exit")
    missed = False
    for pack in ("default", "strict"):
        argv = [sys.executable, "-m", "gpuspec.cli.main", "lint", "fleet", "--policies", "policies", "--pack", pack]
        m = best_of(argv, runs=args.runs, cwd=str(REPO))
        print(f"{pack:>8} {m.seconds:>7.3f} {m.peak_mib:>9.0f} {m.exit_code:>4}")
        missed = missed or m.seconds >= TARGET_SECONDS or m.exit_code == 2
    print(f"target: < {TARGET_SECONDS} s wall per lint of the example fleet: {'MISSED' if missed else 'met'}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
