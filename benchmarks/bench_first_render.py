"""Issue 48, part A: what a first render costs against what it writes, in one run.

On a benchmarks/fleetgen.py fleet of N clusters x 10 pools, each command runs as a whole child process (Python
start-up included, an empty user cache, the default worker processes) and is measured by
:func:`benchmarks.measure.measure`: CPU seconds of the process tree (user + system, from ``wait4``), wall seconds
and the peak RSS of its largest process.  Printed per size, as CPU ratios:

- **first render / write floor**: ``gpuspec render`` into an empty folder against the *write floor*, a fresh
  Python process that writes the same tree (the same files, bytes and folders, from one marshal file holding
  them) into an empty folder: the least any renderer written in Python pays for its output.
- **handover / first render**: ``gpuspec handover --output`` of every cluster against the first render.
- **first render at the largest size against linear from the first size** (CPU and wall) and its peak memory.

A measured child's peak RSS can be no lower than this process's own peak (Linux keeps the larger across fork
and exec), so this process never reads the rendered tree: child processes pack and compare it.

The machine's load average is printed at start and end: on a shared machine read the CPU ratios, not the wall
times.  Usage: ``nice python -m benchmarks.bench_first_render [--sizes 1000,5000] [--runs 1]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.fleetgen import generate
from benchmarks.measure import Measurement, measure

#: Every file of a tree, packed into one marshal file (path relative to the tree, bytes), sorted by path.
PACK = (
    "import marshal, os, sys\n"
    "root = sys.argv[1]\n"
    "files = []\n"
    "for folder, _, names in os.walk(root):\n"
    "    for name in names:\n"
    "        path = os.path.join(folder, name)\n"
    "        with open(path, 'rb') as fh:\n"
    "            files.append((os.path.relpath(path, root), fh.read()))\n"
    "with open(sys.argv[2], 'wb') as fh:\n"
    "    marshal.dump(sorted(files), fh)\n"
)
#: The write floor: every file of a packed tree written into an empty folder by a fresh interpreter.
WRITE_FLOOR = (
    "import marshal, os, sys\n"
    "with open(sys.argv[1], 'rb') as fh:\n"
    "    files = marshal.load(fh)\n"
    "out = sys.argv[2]\n"
    "made = set()\n"
    "for rel, data in files:\n"
    "    path = os.path.join(out, rel)\n"
    "    folder = os.path.dirname(path)\n"
    "    if folder not in made:\n"
    "        os.makedirs(folder, exist_ok=True)\n"
    "        made.add(folder)\n"
    "    with open(path, 'wb') as fh:\n"
    "        fh.write(data)\n"
)


@dataclass
class SizeRun:
    """What was measured at one fleet size."""

    clusters: int
    files: int
    mib: float
    floor: Measurement
    render: Measurement
    handover: Measurement | None


def _best(runs: int, once: Callable[[], Measurement]) -> Measurement:
    return min((once() for _ in range(runs)), key=lambda m: m.cpu)


def run_size(size: int, pools: int, runs: int, handover: bool) -> SizeRun:
    """Generate a fleet of ``size`` clusters and measure its first render, the write floor and handover."""
    with tempfile.TemporaryDirectory(prefix=f"gpuspec-first-render-{size}-") as tmp_name:
        root = Path(tmp_name)
        fleet = generate(root, size, pools)
        env = {**os.environ, "GPUSPEC_CACHE_DIR": str(root / "user-cache")}
        gpuspec = [sys.executable, "-m", "gpuspec.cli.main"]
        out = root / "rendered"

        def first_render() -> Measurement:
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(root / "user-cache", ignore_errors=True)
            result = measure([*gpuspec, "render", str(fleet), "--policies", str(root / "policies"), "--out", str(out)],
                             str(root), env)
            print(f"  [{size}] first render: {result.cpu:.2f} s CPU, {result.seconds:.2f} s wall", file=sys.stderr)
            return result

        render = _best(runs, first_render)
        names = [p for p in out.rglob("*") if p.is_file()]
        size_mib = sum(p.stat().st_size for p in names) / 2**20
        # The tree is packed and compared by child processes: a child's peak RSS starts at its parent's
        # (Linux keeps the larger across fork and exec), so this process never holds the output's bytes.
        packed = root / "tree.marshal"
        subprocess.run([sys.executable, "-c", PACK, str(out), str(packed)], check=True)
        copy = root / "copy"

        def floor_once() -> Measurement:
            shutil.rmtree(copy, ignore_errors=True)
            return measure([sys.executable, "-c", WRITE_FLOOR, str(packed), str(copy)], str(root), env)

        floor = _best(runs, floor_once)
        same = subprocess.run(["diff", "-r", "-q", str(out), str(copy)], capture_output=True, text=True)
        assert same.returncode == 0, f"the write floor did not write the rendered tree: {same.stdout[:500]}"
        packed.unlink()
        result = SizeRun(size, len(names), size_mib, floor, render, None)
        if handover:
            docs = root / "handover"

            def handover_once() -> Measurement:
                shutil.rmtree(docs, ignore_errors=True)
                shutil.rmtree(root / "user-cache", ignore_errors=True)
                return measure([*gpuspec, "handover", str(fleet), "--policies", str(root / "policies"),
                                "--output", str(docs)], str(root), env)

            result.handover = _best(runs, handover_once)
        return result


def _exit_codes(run: SizeRun) -> list[int]:
    return [m.exit_code for m in (run.floor, run.render, run.handover) if m is not None]


def report(runs: list[SizeRun]) -> None:
    """Print the table of every size and the ratios."""
    print(f"{'clusters':>8} {'files':>6} {'MiB':>5} {'command':<13} {'CPU s':>7} {'wall s':>7} {'peak MiB':>8} "
          f"{'CPU ratio':>18}")
    for run in runs:
        rows = [("write floor", run.floor, ""),
                ("first render", run.render, f"{run.render.cpu / run.floor.cpu:.1f}x floor")]
        if run.handover is not None:
            rows.append(("handover", run.handover, f"{run.handover.cpu / run.render.cpu:.2f}x render"))
        for label, m, ratio in rows:
            print(f"{run.clusters:>8} {run.files:>6} {run.mib:>5.0f} {label:<13} {m.cpu:>7.2f} {m.seconds:>7.2f} "
                  f"{m.peak_mib:>8.0f} {ratio:>18}")
    if len(runs) > 1:
        first, last = runs[0], runs[-1]
        scale = last.clusters / first.clusters
        print(f"first render at {last.clusters} against linear from {first.clusters}: "
              f"CPU {last.render.cpu / (scale * first.render.cpu):.2f}x, "
              f"wall {last.render.seconds / (scale * first.render.seconds):.2f}x; "
              f"peak {last.render.peak_mib:.0f} MiB")


def main() -> int:
    """Measure every size, print the table; exit 1 when a command failed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,5000", help="fleet sizes; the first is the base of linearity")
    parser.add_argument("--pools", type=int, default=10)
    parser.add_argument("--runs", type=int, default=1, help="least CPU of N runs of each command")
    parser.add_argument("--handover-sizes", default="1000", help="sizes at which handover is measured")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    handover_sizes = {int(s) for s in args.handover_sizes.split(",") if s}
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start, nice {os.nice(0)}")
    runs = [run_size(size, args.pools, args.runs, size in handover_sizes) for size in sizes]
    report(runs)
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    return 1 if any(code for run in runs for code in _exit_codes(run)) else 0


if __name__ == "__main__":
    raise SystemExit(main())
