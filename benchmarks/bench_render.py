"""Benchmark `gpuspec render` on synthetic fleets of 10, 100 and 1,000 clusters × 10 pools.

Targets (issue 5): 1,000 × 10 renders in ≤ 3 s wall and ≤ 500 MB peak RSS, and re-rendering after one
cluster changed rewrites only that cluster's files.  For scale: real `helm template` of the GPU Operator
chart costs about 0.13 s per cluster on the reference machine.
Usage: python -m benchmarks.bench_render [--sizes 10,100,1000] [--pools 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from benchmarks.fleetgen import generate
from benchmarks.measure import best_of, measure

HELM_TEMPLATE_PER_CLUSTER_S = 0.13


def _render_argv(root: Path) -> list[str]:
    return [sys.executable, "-m", "gpuspec.cli.main", "render", str(root / "fleet"),
            "--policies", str(root / "policies"), "--out", str(root / "rendered")]


def _inodes(out: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(out).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in out.rglob("*") if p.is_file()}


def _in_process_cost(root: Path) -> float:
    """Seconds per cluster of compile + serialize alone (no validation, no writing), single process."""
    from gpuspec.loader.fleetload import load_fleet
    from gpuspec.pipeline.render import render_fleet
    from gpuspec.render.inputs import read_input_digests

    fleet = load_fleet(root / "fleet").fleet
    assert fleet is not None
    inputs = read_input_digests(root / "fleet", root / "policies")
    start = time.perf_counter()
    render_fleet(fleet, inputs, jobs=1)
    return (time.perf_counter() - start) / len(fleet.clusters)


def main() -> int:
    """Generate fleets, time render on each, print a table; exit 1 if a 1,000-cluster target is missed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--pools", type=int, default=10)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    print(f"{'clusters':>8} {'pools':>6} {'files':>6} {'cold s':>7} {'warm s':>7} {'peak MiB':>9} "
          f"{'ms/cluster':>10} {'render-only ms/cluster':>22} {'rewritten after 1 change':>25}")
    missed = False
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            generate(root, size, args.pools)
            cold = measure(_render_argv(root))
            files = sum(1 for p in (root / "rendered").rglob("*") if p.is_file())
            warm = best_of(_render_argv(root))
            before = _inodes(root / "rendered")
            target = root / "fleet" / "clusters" / "cluster-0001.yaml"
            doc = yaml.safe_load(target.read_text())
            doc["pools"][0]["nodes"] += 1
            doc["rollout"]["maxUnavailable"] = "20%"
            target.write_text(yaml.safe_dump(doc, sort_keys=False))
            changed = measure(_render_argv(root))
            after = _inodes(root / "rendered")
            rewritten = sorted(p for p in after if before.get(p) != after[p])
            # The fleet index of the handover documents summarises every cluster, so it changes with any of them.
            only_one = bool(rewritten) and all("cluster-0001" in p or p == "handover/README.md" for p in rewritten)
            per_cluster = _in_process_cost(root)
            print(f"{size:>8} {args.pools:>6} {files:>6} {cold.seconds:>7.2f} {warm.seconds:>7.2f} "
                  f"{max(cold.peak_mib, warm.peak_mib):>9.0f} {1000 * cold.seconds / size:>10.2f} "
                  f"{1000 * per_cluster:>22.2f} {len(rewritten):>5} ({'only that cluster' if only_one else 'OTHERS'})")
            if cold.exit_code or warm.exit_code or changed.exit_code:
                print(f"  render exited {cold.exit_code}/{warm.exit_code}/{changed.exit_code}")
                missed = True
            if size >= 1000 and (cold.seconds > 3.0 or max(cold.peak_mib, warm.peak_mib) > 500 or not only_one):
                missed = True
            shutil.rmtree(root / "rendered", ignore_errors=True)
    print(f"helm template of the real chart: ~{1000 * HELM_TEMPLATE_PER_CLUSTER_S:.0f} ms/cluster "
          "(issue 5 reference figure, median of 5, warm)")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
