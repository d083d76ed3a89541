"""Issue 44/48: `gpuspec upgrade` of one cluster scales with the clusters it plans, not the fleet.

Per fleet size (benchmarks/fleetgen.py, in a temporary folder): CPU of `gpuspec lint` of the whole fleet and of
`gpuspec upgrade --cluster <one wave-1 cluster> --driver-branch 595` (three steps: the NVIDIADriver switch, the
canary, the pool wave), each the best of N runs with the user cache off (GPUSPEC_NO_CACHE=1, every run cold), and
their ratio.  The planner lints the whole fleet once (the start must be clean), then every candidate step on the
selected cluster only, with the rest of the fleet as the fleet waves' context.

Target: one cluster's plan at 1,000 clusters at most 2x a lint of the fleet (CPU).
Usage: nice python -m benchmarks.bench_upgrade [--sizes 100,1000] [--pools 4] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from benchmarks.fleetgen import generate
from benchmarks.measure import Measurement, best_of

TARGET_RATIO = 2.0


def _gpuspec(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "gpuspec.cli.main", *args, str(root / "fleet"), "--policies", str(root / "policies")]


def run_size(work: Path, clusters: int, pools: int, runs: int) -> tuple[Measurement, Measurement]:
    """Lint of the fleet and the plan of one cluster, at one fleet size."""
    root = work / f"fleet-{clusters}"
    generate(root, clusters, pools)
    env = {**os.environ, "GPUSPEC_NO_CACHE": "1"}
    lint = best_of(_gpuspec(root, "lint"), runs, env=env)
    plan = best_of([*_gpuspec(root, "upgrade"), "--cluster", "cluster-0000", "--driver-branch", "595"], runs, env=env)
    assert plan.exit_code == 0, "the planner found no path"
    return lint, plan


def main() -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuspec-bench-upgrade-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            lint, plan = run_size(Path(tmp), size, args.pools, args.runs)
            ratio = plan.cpu / lint.cpu
            verdict = "meets" if ratio <= TARGET_RATIO else "misses"
            print(f"{size} clusters x {args.pools} pools: lint {lint.cpu:6.2f} s CPU ({lint.peak_mib:.0f} MiB), "
                  f"upgrade of one cluster {plan.cpu:6.2f} s CPU ({plan.peak_mib:.0f} MiB): {ratio:.2f}x lint "
                  f"({verdict} the {TARGET_RATIO:.0f}x target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
