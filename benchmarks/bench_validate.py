"""Benchmark `gpuspec validate` on synthetic fleets of 10, 100 and 1,000 clusters × 10 pools.

Targets (issue 2): 1,000 × 10 validates in ≤ 2 s wall and ≤ 400 MB peak RSS.
Usage: python -m benchmarks.bench_validate [--sizes 10,100,1000] [--pools 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from benchmarks.fleetgen import generate
from benchmarks.measure import best_of


def main() -> int:
    """Generate fleets, time validate on each, print a table; exit 1 if the 1,000-cluster target is missed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--pools", type=int, default=10)
    args = parser.parse_args()
    print(f"{'clusters':>8} {'pools':>6} {'YAML MB':>8} {'wall s':>7} {'peak MiB':>9} exit")
    missed = False
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            fleet = generate(Path(tmp), size, args.pools)
            mb = sum(p.stat().st_size for p in fleet.rglob("*.yaml")) / 1e6
            m = best_of([sys.executable, "-m", "gpuspec.cli.main", "validate", str(fleet),
                         "--policies", str(Path(tmp) / "policies")])
            print(f"{size:>8} {args.pools:>6} {mb:>8.1f} {m.seconds:>7.2f} {m.peak_mib:>9.0f} {m.exit_code:>4}")
            if size >= 1000 and (m.seconds > 2.0 or m.peak_mib > 400):
                missed = True
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
