"""Where a first render's CPU goes: one in-process `gpuspec render` of a fleetgen fleet, CPU seconds per phase.

A wrapper takes ``time.process_time()`` around each probed function (the outermost call only); the render runs
in this process with ``GPUSPEC_JOBS=1`` and an empty user cache, so every phase is counted here.  Pin it to one
CPU on a shared machine (``taskset -c 0``): the render then uses no worker processes either.

Usage: nice taskset -c 0 python -m benchmarks.render_phases [--clusters 1000] [--pools 10]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.fleetgen import generate

#: (module, function, label, other modules that imported the function by name): label indented under its phase.
PROBES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("gpuspec.handover.documents", "cluster_document", "handover documents", ()),
    ("gpuspec.handover.documents", "cluster_facts", "  their facts", ()),
    ("gpuspec.templating.environment", "redact_text", "  redaction of the page", ()),
    ("gpuspec.handover.documents", "_finish", "  tidying the Markdown", ()),
    ("gpuspec.pipeline.render", "compile_cluster", "compiling clusters", ()),
    ("gpuspec.render.compile", "acceptance_checks", "  acceptance Jobs", ()),
    ("gpuspec.pipeline.render", "serialize", "serializing files", ()),
    ("yaml", "dump", "  PyYAML", ()),
    ("gpuspec.render.serialize", "wrap_long_words", "  wrap_long_words", ()),
    ("gpuspec.pipeline.render_chunked", "validate_chunk", "validating", ()),
    ("gpuspec.pipeline.render", "validate_fleet", "validating", ()),
    ("gpuspec.render.writer", "write_output", "writing the output", ("gpuspec.cli.render_cmd",)),
)


#: Per label, how many probed calls of it are running (only the outermost is timed).
_ACTIVE: dict[str, int] = {}


def _probe(spent: dict[str, float], label: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _ACTIVE.get(label):
            return function(*args, **kwargs)
        _ACTIVE[label] = 1
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - start
            _ACTIVE[label] = 0

    return wrapper


def main() -> int:
    """Generate the fleet, render it once in this process, print CPU seconds per phase."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--pools", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuspec-render-phases-") as tmp:
        root = Path(tmp)
        fleet = generate(root, args.clusters, args.pools)
        os.environ["GPUSPEC_CACHE_DIR"] = str(root / "user-cache")
        os.environ["GPUSPEC_JOBS"] = "1"
        spent: dict[str, float] = {}
        for module_name, name, label, also in PROBES:
            module = importlib.import_module(module_name)
            wrapped = _probe(spent, label, getattr(module, name))
            for target in (module_name, *also):
                setattr(importlib.import_module(target), name, wrapped)
        from gpuspec.cli.main import run

        sys.argv = ["gpuspec", "render", str(fleet), "--policies", str(root / "policies"), "--out",
                    str(root / "rendered")]
        start = time.process_time()
        code = run()
        total = time.process_time() - start
    print(f"first render of {args.clusters} clusters x {args.pools} pools, in-process: {total:.2f} s CPU, "
          f"exit {code}, load average {os.getloadavg()[0]:.2f}")
    for label in dict.fromkeys(label for _, _, label, _ in PROBES):
        seconds = spent.get(label, 0.0)
        print(f"  {label:<26} {seconds:6.2f} s {100 * seconds / total:5.1f}%")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
