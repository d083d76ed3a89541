"""Scaling curve of every gpuspec command on synthetic fleets, against the YAML parse floor and peers.

For each size (clusters × 10 pools) one synthetic fleet is generated in a git repository and every
command runs as a whole child process (Python start-up included).  Printed per command: wall and CPU
seconds, peak RSS (and per cluster), the ratio to the *parse floor* — a bare PyYAML CSafeLoader parse
of the same fleet files in a fresh interpreter, measured in the same run — in wall time (/floor) and in
CPU time (CPU/fl: CPU of the whole process tree over the floor's CPU), and where one exists the
ratio to a peer measured in the same run: check-jsonschema (JSON Schema only) for validate, yamllint
for lint, `python -c "import yaml, pydantic"` for lint after one file changed (issue 48's floor of an
edit-lint loop), a bare `helm template` shell loop (one run per cluster, same chart and values) for verify.
The last table divides each command's growth between consecutive sizes by the growth of the fleet:
about 1.0 (or below, start-up amortised) is linear; the target is ≤ 1.1.

Commands: validate and lint (cold: empty gpuspec cache, also once with GPUSPEC_JOBS=1 — no child process
parsing half of the files; warm: cache filled, report replayed or one file changed), render
(first into an empty folder; re-render with nothing changed), render --check, images (all clusters and
--cluster one), plan --base HEAD after a one-line change, verify (cold: empty helm cache; warm).

Usage: nice python -m benchmarks.bench_scaling [--sizes 10,100,1000] [--with-5000] [--verify-sizes 10,100]
       [--chart PATH] [--runs 1]
Run it with `nice` on a shared machine; the load average is printed at start and end.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.bench_verify import RELEASE, mini_chart_as
from benchmarks.fleetgen import generate
from benchmarks.measure import Measurement, best_of, measure
from gpuspec.tools.goenv import short_run_env

#: A bare parse of every fleet file with libyaml, in a fresh interpreter: the floor validate is compared with.
PARSE_FLOOR = (
    "import sys, yaml\n"
    "from pathlib import Path\n"
    "root = Path(sys.argv[1])\n"
    "for p in [root / 'fleet.yaml', *sorted((root / 'clusters').glob('*.yaml'))]:\n"
    "    yaml.load(p.read_bytes(), Loader=yaml.CSafeLoader)\n"
)
#: The bare helm loop verify is compared with: `helm template` of each cluster's values, one after another.
_HELM_TEMPLATE = (
    '"$2" template gpu-operator "$3" --namespace gpu-operator --kube-version "$4" '
    '--values "$d/gpu-operator.values.yaml" --include-crds > /dev/null || exit 1'
)
HELM_LOOP = f'for d in "$1"/clusters/*/; do {_HELM_TEMPLATE}; done'
#: The tools a cold verify must run, and nothing else: the helm loop plus `kubectl kustomize` of each cluster's
#: overlay (verify builds the overlay and its acceptance folder in one kubectl run), with verify's Go settings.
TOOLS_LOOP = f'for d in "$1"/clusters/*/; do {_HELM_TEMPLATE}; "$5" kustomize "$d" > /dev/null || exit 1; done'
KUBE_VERSION = "v1.34.0"
#: Command-label prefixes to run (empty: all); set from --only.
ONLY: list[str] = []


def wanted(label: str) -> bool:
    """Whether the command labelled ``label`` is to be measured."""
    return not ONLY or any(label.startswith(prefix) for prefix in ONLY)


@dataclass
class Row:
    """One measured command at one size."""

    command: str
    result: Measurement
    peer: str = ""
    peer_result: Measurement | None = None


@dataclass
class SizeRun:
    """Everything measured at one fleet size."""

    clusters: int
    yaml_mb: float
    floor: Measurement
    rows: list[Row] = field(default_factory=list)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _tool(name: str) -> str | None:
    local = Path(sys.executable).parent / name
    return str(local) if local.is_file() else shutil.which(name)


def _pinned_tool(name: str) -> str:
    """``name`` from the environment or PATH, else the project's pinned copy in .tools/bin."""
    return _tool(name) or str(Path(__file__).resolve().parent.parent / ".tools" / "bin" / name)


_EDITS = [0]


def _touch(fleet: Path) -> None:
    """Append a comment to one cluster file: its bytes change, its meaning does not."""
    _EDITS[0] += 1
    with (fleet / "clusters" / "cluster-0002.yaml").open("a", encoding="utf-8") as fh:
        fh.write(f"# edit {_EDITS[0]}\n")


def _one_line_change(cluster_file: Path) -> None:
    text = cluster_file.read_text()
    cluster_file.write_text(text.replace("maxUnavailable: 10%", "maxUnavailable: 20%", 1))


def run_size(size: int, pools: int, runs: int, verify: bool, chart: Path | None, crds: Path | None,
             peers: bool) -> SizeRun:
    """Generate a fleet of ``size`` clusters and measure every command on it."""
    with tempfile.TemporaryDirectory(prefix=f"gpuspec-scale-{size}-") as tmp_name:
        root = Path(tmp_name)
        fleet = generate(root, size, pools)
        cache = root / "user-cache"
        env = {**os.environ, "GPUSPEC_CACHE_DIR": str(cache)}
        _git(root, "init", "-q")
        _git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "add", "-A")
        _git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qm", "fleet")
        yaml_mb = sum(p.stat().st_size for p in fleet.rglob("*.yaml")) / 1e6
        floor = best_of([sys.executable, "-c", PARSE_FLOOR, str(fleet)], runs, env=env)
        run = SizeRun(size, yaml_mb, floor)
        gpuspec = [sys.executable, "-m", "gpuspec.cli.main"]
        common = [str(fleet), "--policies", str(root / "policies")]

        def timed(label: str, argv: list[str], *, fresh_cache: bool = False, repeat: int = runs,
                  before: Callable[[], None] | None = None, jobs: str | None = None) -> Measurement | None:
            if not wanted(label):
                return None

            def once() -> Measurement:
                if fresh_cache:
                    shutil.rmtree(cache, ignore_errors=True)
                if before is not None:
                    before()
                return measure(argv, str(root), env if jobs is None else {**env, "GPUSPEC_JOBS": jobs})
            result = min((once() for _ in range(repeat)), key=lambda m: m.seconds)
            run.rows.append(Row(label, result))
            print(f"  [{size}] {label}: {result.seconds:.2f} s", file=sys.stderr, flush=True)
            return result

        schema = root / "cluster.schema.json"
        schema.write_text(subprocess.run([*gpuspec, "schema", "--kind", "cluster"], capture_output=True,
                                         text=True, check=True, env=env).stdout)
        # "1 process": GPUSPEC_JOBS=1, no child process parsing half of the files (same run, for the gain).
        timed("validate (cold, 1 process)", [*gpuspec, "validate", *common], fresh_cache=True, jobs="1")
        timed("validate (cold)", [*gpuspec, "validate", *common], fresh_cache=True)
        # warm: the caches filled; with the inputs unchanged the last report is replayed (gpuspec/cli/resultcache.py),
        # with one cluster file changed the fleet is checked again from the per-file caches.
        timed("validate (warm, report replayed)", [*gpuspec, "validate", *common])
        timed("validate (warm, one file changed)", [*gpuspec, "validate", *common], before=lambda: _touch(fleet))
        if peers and wanted("validate") and (check := _tool("check-jsonschema")):
            cluster_files = sorted(str(p) for p in (fleet / "clusters").glob("*.yaml"))
            run.rows[-3].peer = "check-jsonschema"
            run.rows[-3].peer_result = best_of([check, "--schemafile", str(schema), *cluster_files], runs, env=env)
        timed("lint (cold, 1 process)", [*gpuspec, "lint", *common], fresh_cache=True, jobs="1")
        timed("lint (cold)", [*gpuspec, "lint", *common], fresh_cache=True)
        timed("lint (warm, report replayed)", [*gpuspec, "lint", *common])
        if timed("lint (warm, one file changed)", [*gpuspec, "lint", *common], before=lambda: _touch(fleet)):
            # Issue 48's floor for an edit-lint loop: the bare import of the two libraries lint is built on.
            run.rows[-1].peer = "import yaml,pydantic"
            run.rows[-1].peer_result = best_of([sys.executable, "-c", "import yaml, pydantic"], runs, env=env)
        if peers and wanted("lint") and (yamllint := _tool("yamllint")):
            run.rows[-3].peer = "yamllint"
            run.rows[-3].peer_result = best_of([yamllint, "-s", str(fleet)], runs, env=env)
        out = root / "rendered"
        render = [*gpuspec, "render", *common, "--out", str(out)]
        timed("render (first)", render, fresh_cache=True, before=lambda: shutil.rmtree(out, ignore_errors=True))
        timed("render (no change)", render)
        timed("render --check", [*render, "--check"])
        timed("render --check (no cache)", [*render, "--check"], fresh_cache=True)
        timed("images", [*gpuspec, "images", *common])
        timed("images --cluster one", [*gpuspec, "images", *common, "--cluster", "cluster-0001"])
        target = fleet / "clusters" / "cluster-0001.yaml"
        _one_line_change(target)
        timed("plan --base (1 line)", [*gpuspec, "plan", "--base", "HEAD", str(fleet)])
        _git(root, "checkout", "-q", "--", str(target))
        if verify and wanted("verify"):
            _verify_rows(run, root, fleet, out, chart, crds, env, gpuspec)
    return run


def _verify_rows(run: SizeRun, root: Path, fleet: Path, out: Path, chart: Path | None, crds: Path | None,
                 env: dict[str, str], gpuspec: list[str]) -> None:
    helm = _pinned_tool("helm")
    if not out.is_dir():  # render was not measured (--only verify): render untimed, verify needs its output
        subprocess.run([*gpuspec, "render", str(fleet), "--policies", str(root / "policies"), "--out", str(out)],
                       check=True, capture_output=True, env=env)
    chart = chart.resolve() if chart else mini_chart_as(RELEASE, root, crds)
    verify_cache = root / "verify-cache"  # verify's own caches, emptied for the cold run
    argv = [*gpuspec, "verify", str(fleet), "--rendered", str(out), "--chart", str(chart),
            "--cache-dir", str(verify_cache), "--format", "json", "--output", str(root / "report.json")]
    loop_argv = ["bash", "-c", HELM_LOOP, "loop", str(out), helm, str(chart), KUBE_VERSION]
    loop = measure(loop_argv, str(root), env)
    # verify runs helm and kubectl with Go's collector held off (gpuspec.tools.goenv): the same loop so tuned,
    # to show how much of verify's gain is that tuning, which the bare loop could use too
    loop_tuned = measure(loop_argv, str(root), short_run_env(env))
    run.rows.append(Row("helm loop, verify's Go env", loop_tuned, "helm loop", loop))
    tools = measure(["bash", "-c", TOOLS_LOOP, "loop", str(out), helm, str(chart), KUBE_VERSION,
                     _pinned_tool("kubectl")],
                    str(root), short_run_env(env))
    run.rows.append(Row("helm+kustomize loop", tools, "helm loop", loop))
    shutil.rmtree(verify_cache, ignore_errors=True)
    cold = measure(argv, str(root), env)
    run.rows.append(Row("verify (cold)", cold, "helm loop", loop))
    warm = measure(argv, str(root), env)
    run.rows.append(Row("verify (warm)", warm, "helm loop", loop))


def _fmt_ratio(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def print_size(run: SizeRun) -> None:
    """The table of one size."""
    floor = run.floor
    print(f"\n{run.clusters} clusters x 10 pools, {run.yaml_mb:.1f} MB YAML; parse floor (bare CSafeLoader, "
          f"fresh interpreter): {floor.seconds:.2f} s wall, {floor.cpu:.2f} s CPU, {floor.peak_mib:.0f} MiB")
    print(f"{'command':<26} {'wall s':>7} {'CPU s':>6} {'peak MiB':>8} {'KiB/cl':>7} {'/floor':>7} {'CPU/fl':>7} "
          f"{'peer':>20} {'peer s':>7} {'peer CPU':>8} {'/peer':>6} {'CPU/peer':>8} exit")
    for row in run.rows:
        m = row.result
        peer = row.peer_result
        print(f"{row.command:<26} {m.seconds:>7.2f} {m.cpu:>6.2f} {m.peak_mib:>8.0f} "
              f"{1024 * m.peak_mib / run.clusters:>7.0f} {_fmt_ratio(m.seconds / floor.seconds):>7} "
              f"{_fmt_ratio(m.cpu / floor.cpu if floor.cpu else None):>7} "
              f"{row.peer or '-':>20} {peer.seconds if peer else 0:>7.2f} {peer.cpu if peer else 0:>8.2f} "
              f"{_fmt_ratio(m.seconds / peer.seconds if peer else None):>6} "
              f"{_fmt_ratio(m.cpu / peer.cpu if peer and peer.cpu else None):>8} {m.exit_code:>4}")


def print_growth(runs: list[SizeRun]) -> None:
    """Per command, wall growth between consecutive sizes divided by the fleet's growth (1.0 = linear)."""
    if len(runs) < 2:
        return
    steps = list(itertools.pairwise(runs))
    print("\ngrowth beyond linear (wall ratio / size ratio; <= 1.1 per step is linear):")
    print(f"{'command':<26} " + " ".join(f"{a.clusters:>5}->{b.clusters:<5}" for a, b in steps))
    for index, row in enumerate(runs[0].rows):
        cells = []
        for a, b in steps:
            if index >= len(a.rows) or index >= len(b.rows) or a.rows[index].command != row.command:
                cells.append(f"{'-':>11}")
                continue
            ratio = (b.rows[index].result.seconds / a.rows[index].result.seconds) / (b.clusters / a.clusters)
            cells.append(f"{ratio:>11.2f}")
        print(f"{row.command:<26} " + " ".join(cells))


def main() -> int:
    """Measure every size, print one table per size and the growth table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--with-5000", action="store_true", help="also 5,000 clusters (several minutes)")
    parser.add_argument("--pools", type=int, default=10)
    parser.add_argument("--runs", type=int, default=1, help="best of N for each command")
    parser.add_argument("--verify-sizes", default="10,100", help="sizes at which verify runs (helm is slow)")
    parser.add_argument("--chart", type=Path, default=None, help="gpu-operator chart of v26.7.0 (default: mini)")
    parser.add_argument("--real-crds", type=Path, default=None, metavar="DIR",
                        help="with the mini chart: use these CRDs (e.g. ../shared/upstream/gpu-operator/v26.7.0/crds) "
                             "so helm's output has the real chart's size")
    parser.add_argument("--only", default="", help="comma-separated command prefixes to run (default: all)")
    parser.add_argument("--no-peers", action="store_true", help="skip check-jsonschema and yamllint")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.with_5000 and 5000 not in sizes:
        sizes.append(5000)
    verify_sizes = {int(s) for s in args.verify_sizes.split(",") if s}
    ONLY.extend(p for p in args.only.split(",") if p)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start, nice "
          f"{os.nice(0)}; chart {'--chart ' + str(args.chart) if args.chart else 'mini test chart as ' + RELEASE}")
    runs = []
    for size in sizes:
        run = run_size(size, args.pools, args.runs, size in verify_sizes, args.chart, args.real_crds,
                       not args.no_peers)
        print_size(run)
        sys.stdout.flush()
        runs.append(run)
    print_growth(runs)
    print(f"\nload average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
