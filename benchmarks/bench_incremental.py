"""Issue 28: render at the speed of what changed.  Same-run ratios, whole processes, on a fleet of
`benchmarks/fleetgen.py` (in a temporary folder):

- first render (empty output, empty user cache) against the floor of writing the same bytes (a fresh
  interpreter that creates every file of the output with its bytes, into a new folder);
- re-render after one cluster changed (the user cache of the first render) against the first render;
- the pull-request gate: `render --check --base HEAD^` of a fresh clone (empty user cache) after a commit that
  changed one cluster, against the floor of reading and comparing the bytes (a fresh interpreter that reads every
  output file and compares it with a copy of the tree) plus a first render of that one cluster alone;
- `render --check` of a fresh clone (every cluster rendered: a push to a protected branch) against the read floor;
- peak RSS of each, and of `validate` with an empty user cache (above 512 clusters both validate a chunk
  of clusters at a time, so neither holds the whole fleet's models).

Usage: nice python -m benchmarks.bench_incremental [--sizes 1000,5000] [--pools 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.fleetgen import generate
from benchmarks.measure import Measurement, measure

_SNAPSHOT = """
import os, sys, pickle
root = sys.argv[1]
files = {}
for folder, dirs, names in os.walk(root):
    for name in names:
        path = os.path.join(folder, name)
        with open(path, "rb") as fh:
            files[os.path.relpath(path, root)] = fh.read()
pickle.dump(files, open(sys.argv[2], "wb"))
print(len(files), sum(map(len, files.values())))
"""

_WRITE_FLOOR = """
import os, sys, pickle
src, dst = sys.argv[1], sys.argv[2]
files = pickle.load(open(src, "rb"))
made = set()
for rel, data in files.items():
    path = os.path.join(dst, rel)
    folder = os.path.dirname(path)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)
    with open(path, "wb") as fh:
        fh.write(data)
"""

_READ_FLOOR = """
import os, sys
a, b = sys.argv[1], sys.argv[2]
for root, dirs, files in os.walk(a):
    for name in files:
        path = os.path.join(root, name)
        with open(path, "rb") as fh, open(os.path.join(b, os.path.relpath(path, a)), "rb") as other:
            assert fh.read() == other.read()
"""


def _render(root: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gpuspec.cli.main",
        "render",
        str(root / "fleet"),
        "--policies",
        str(root / "policies"),
        "--out",
        str(root / "rendered"),
        *extra,
    ]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args],
                   check=True, capture_output=True)


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "GPUSPEC_CACHE_DIR": str(cache)}


def _fmt(m: Measurement, base: Measurement | None = None) -> str:
    ratio = f"  {m.seconds / base.seconds:6.3f}× wall  {m.cpu / base.cpu:6.3f}× CPU" if base else ""
    return f"{m.seconds:7.2f} s wall {m.cpu:7.2f} s CPU {m.peak_mib:7.0f} MiB{ratio}"


def run_size(work: Path, clusters: int, pools: int, runs: int) -> None:
    """Measure one fleet size and print the rows (this process stays small: a child's peak RSS counts the
    parent's pages it was forked with)."""
    root = work / f"fleet-{clusters}"
    generate(root, clusters, pools)
    cache = work / f"cache-{clusters}"
    first = measure(_render(root), env=_env(cache))
    assert first.exit_code == 0, "first render failed"
    data = work / "files.pickle"
    count, size = map(
        int,
        subprocess.run(
            [sys.executable, "-c", _SNAPSHOT, str(root / "rendered"), str(data)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split(),
    )
    floor_out = work / "floor-write"
    write_floor = measure([sys.executable, "-c", _WRITE_FLOOR, str(data), str(floor_out)])
    assert write_floor.exit_code == 0
    data.unlink()
    print(f"{clusters} clusters × {pools} pools: {count} files, {size / 2**20:.1f} MiB of output")
    print(f"  write floor                      {_fmt(write_floor)}")
    print(f"  first render                     {_fmt(first, write_floor)} (against the write floor)")
    # Render validates the whole fleet before it renders a cluster: the memory it holds at least.
    validate = measure([sys.executable, "-m", "gpuspec.cli.main", "validate", str(root / "fleet"), "--policies",
                        str(root / "policies")], env=_env(work / f"validate-cache-{clusters}"))
    print(f"  validate, empty user cache       {_fmt(validate, first)} (against the first render)")
    target = sorted((root / "fleet" / "clusters").iterdir())[clusters // 2]
    for i in range(runs):
        target.write_text(target.read_text() + f"# change {i}\n")
        again = measure(_render(root), env=_env(cache))
        assert again.exit_code == 0
        print(f"  re-render, one cluster changed   {_fmt(again, first)} (against the first render)")
    clone = work / f"clone-{clusters}"
    for name in ("fleet", "policies", "rendered"):
        shutil.copytree(root / name, clone / name)
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "base")
    changed = clone / "fleet" / "clusters" / target.name
    changed.write_text(changed.read_text() + "# the pull request\n")
    assert measure(_render(clone), env=_env(work / f"pr-cache-{clusters}")).exit_code == 0
    _git(clone, "commit", "-qam", "one cluster changed")
    shutil.copytree(clone / "rendered", work / f"copy-{clusters}")
    read_floor = measure([sys.executable, "-c", _READ_FLOOR, str(clone / "rendered"), str(work / f"copy-{clusters}")])
    assert read_floor.exit_code == 0
    print(f"  read-and-compare floor           {_fmt(read_floor)}")
    alone = work / f"alone-{clusters}"
    (alone / "fleet" / "clusters").mkdir(parents=True)
    shutil.copy(clone / "fleet" / "fleet.yaml", alone / "fleet" / "fleet.yaml")
    shutil.copy(changed, alone / "fleet" / "clusters" / changed.name)
    shutil.copytree(clone / "policies", alone / "policies")
    one = measure(_render(alone), env=_env(work / f"alone-cache-{clusters}"))
    assert one.exit_code == 0
    print(f"  first render of that cluster     {_fmt(one)}")
    floor = Measurement(read_floor.seconds + one.seconds, max(read_floor.peak_mib, one.peak_mib), 0,
                        read_floor.cpu + one.cpu)
    for i in range(runs):
        check = measure(_render(clone, "--check", "--base", "HEAD^"), env=_env(work / f"ci-cache-{clusters}-{i}"))
        assert check.exit_code == 0
        print(f"  render --check --base, one change {_fmt(check, floor)} (against read floor + that render)")
    full = measure(_render(clone, "--check"), env=_env(work / f"ci-cache-full-{clusters}"))
    print(f"  render --check, fresh clone      {_fmt(full, read_floor)} (against the read floor)")
    shutil.rmtree(floor_out, ignore_errors=True)


def main() -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--pools", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuspec-bench-incremental-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            run_size(Path(tmp), size, args.pools, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
