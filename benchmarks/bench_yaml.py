"""Issue 49: what the second YAML writer (render/blockyaml.py) buys over PyYAML's C emitter alone.

Every YAML document a render of a benchmarks/fleetgen.py fleet writes is dumped twice in this process: through
serialize.dump_document as render runs it (the block writer, PyYAML where it declines), and through the PyYAML
path alone (the C SafeDumper with serialize's own node builder and post-passes). The outputs must be byte-identical;
CPU seconds of each (best of N) and their ratio are printed.

Usage: nice python -m benchmarks.bench_yaml [--clusters 100] [--pools 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks.fleetgen import generate
from gpuspec.loader.fleetload import load_fleet
from gpuspec.render import serialize
from gpuspec.render.compile import compile_cluster
from gpuspec.render.filetree import YamlFile


def _documents(clusters: int, pools: int) -> list[Any]:
    with tempfile.TemporaryDirectory(prefix="gpuspec-bench-yaml-") as tmp:
        generate(Path(tmp), clusters, pools)
        fleet = load_fleet(Path(tmp) / "fleet").fleet
        assert fleet is not None
        return [doc for c in fleet.clusters for f in compile_cluster(fleet, c, "").files.values()
                if isinstance(f, YamlFile) for doc in f.documents]


def _pyyaml(document: Any) -> str:
    dumped = yaml.dump(document, **serialize._DUMP_OPTIONS)
    return serialize.wrap_long_words(serialize.indent_sequences(str(dumped)))


def _cpu(dump: Any, documents: list[Any], runs: int) -> tuple[float, list[str]]:
    best, out = float("inf"), []
    for _ in range(runs):
        serialize._CACHE.clear()
        start = time.process_time()
        out = [dump(d) for d in documents]
        best = min(best, time.process_time() - start)
    return best, out


def main() -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--pools", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    documents = _documents(args.clusters, args.pools)
    fast, fast_out = _cpu(serialize._dump_document, documents, args.runs)
    slow, slow_out = _cpu(_pyyaml, documents, args.runs)
    same = fast_out == slow_out
    size = sum(map(len, fast_out)) / 2**20
    print(f"{len(documents)} documents, {size:.1f} MiB of YAML; byte-identical: {same}")
    print(f"  render's path (block writer, PyYAML where it declines) {fast:6.2f} s CPU")
    print(f"  PyYAML C emitter alone                                 {slow:6.2f} s CPU  ({slow / fast:.1f}x)")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
