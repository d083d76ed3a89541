"""Benchmark `gpuspec verify`: a cold run (empty helm cache) against warm re-runs over an unchanged fleet.

A synthetic fleet (benchmarks.fleetgen, GPU Operator v26.7.0 via its `stable` channel) is rendered with
`gpuspec render`, then verified.  Without --chart the project's mini test chart is used, relabelled as
v26.7.0 (its findings do not matter here, only the time); pass --chart with a real gpu-operator chart
checkout for realistic numbers.

Usage: python -m benchmarks.bench_verify [--clusters 20] [--pools 4] [--chart PATH] [--jobs 0]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.fleetgen import generate
from benchmarks.measure import Measurement, best_of, measure

REPO = Path(__file__).resolve().parent.parent
MINI_CHART = REPO / "tests" / "fixtures" / "charts" / "gpu-operator-mini"
RELEASE = "v26.7.0"


def mini_chart_as(release: str, out: Path, crds: Path | None = None) -> Path:
    """A copy of the project's mini test chart at ``out/gpu-operator`` whose Chart.yaml says ``release``.

    Both version and appVersion are set, as in a published chart; the tests use it too.  ``crds``: a
    folder of real CRDs (e.g. ../shared/upstream/gpu-operator/v26.7.0/crds) that replace the mini
    chart's, so that helm's output has the real chart's size (its CRDs are most of it).
    """
    chart = out / "gpu-operator"
    shutil.copytree(MINI_CHART, chart)
    if crds is not None:
        shutil.rmtree(chart / "crds")
        shutil.copytree(crds, chart / "crds")
    meta = chart / "Chart.yaml"
    lines = [f"version: {release}" if line.startswith("version:") else
             f"appVersion: {release}" if line.startswith("appVersion:") else line
             for line in meta.read_text().splitlines()]
    meta.write_text("\n".join(lines) + "\n")
    return chart


def main() -> int:
    """Render a synthetic fleet, time one cold and the best of three warm verify runs, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--chart", type=Path, default=None, help="gpu-operator chart of v26.7.0 (default: mini)")
    parser.add_argument("--jobs", type=int, default=0)
    args = parser.parse_args()
    gpuspec = [sys.executable, "-m", "gpuspec.cli.main"]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fleet = generate(tmp, args.clusters, args.pools)
        render = subprocess.run([*gpuspec, "render", str(fleet), "--policies", str(tmp / "policies"),
                                 "--out", str(tmp / "rendered")], capture_output=True, text=True, check=False)
        if render.returncode != 0:
            print(f"render failed ({render.returncode}):\n{render.stdout}{render.stderr}", file=sys.stderr)
            return 1
        chart = args.chart.resolve() if args.chart else mini_chart_as(RELEASE, tmp)
        verify = [*gpuspec, "verify", str(fleet), "--rendered", str(tmp / "rendered"), "--chart", str(chart),
                  "--jobs", str(args.jobs), "--cache-dir", str(tmp / "verify-cache"),
                  "--format", "json", "--output", str(tmp / "report.json")]
        cold = measure(verify, cwd=str(tmp))
        warm = best_of(verify, runs=3, cwd=str(tmp))
        no_cache = best_of([*verify, "--no-cache"], runs=1, cwd=str(tmp))
    print(f"gpuspec verify: {args.clusters} clusters x {args.pools} pools, chart {'--chart' if args.chart else 'mini'}")
    print(f"{'run':<24} {'wall s':>7} {'peak MiB':>9} exit")
    rows: list[tuple[str, Measurement]] = [("cold (empty helm cache)", cold), ("warm (best of 3)", warm),
                                           ("--no-cache", no_cache)]
    for label, m in rows:
        print(f"{label:<24} {m.seconds:>7.2f} {m.peak_mib:>9.0f} {m.exit_code:>4}")
    print(f"warm / cold: {warm.seconds / cold.seconds:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
