"""Golden files: the whole output of small fleets covering every kind of cluster.

Covered: online (Argo CD) and air-gapped (Flux, OCI chart mirror) clusters, Argo CD with a mirror, Flux online
(HelmRepository), custom MIG, time-slicing and MPS sharing, multi-driver (NVIDIADriver mode) with a precompiled
pool, host-installed drivers only.  Regenerate with ``GPUSPEC_UPDATE_GOLDEN=1 pytest tests/render``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .fleets import GOLDEN_SETTINGS, coverage_clusters, render_dir, write_fleet

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("GPUSPEC_UPDATE_GOLDEN") == "1"
CASES = {"v26.7.0": "v26.7.0", "v24.6.2": "v24.6.2"}


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, tmp_path: Path) -> None:
    out = render_dir(write_fleet(tmp_path, coverage_clusters(CASES[case]), settings=GOLDEN_SETTINGS))
    target = GOLDEN / case
    if UPDATE:
        shutil.rmtree(target, ignore_errors=True)
        for rel, data in out.items():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            (target / rel).write_bytes(data)
    assert target.is_dir(), f"no golden files for {case}; run with GPUSPEC_UPDATE_GOLDEN=1"
    golden = _files(target)
    assert sorted(out) == sorted(golden), "set of output files differs from the golden set"
    for rel, data in out.items():
        assert data == golden[rel], f"{rel} differs from tests/render/golden/{case}/{rel}"
