"""What the API server refuses, on the example fleet's rendered objects with the real v26.7.0 CRDs (../shared)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from gpuspec.loader.fleetload import load_fleet
from gpuspec.verify import checks
from gpuspec.verify.checks import Origin
from gpuspec.verify.rendered import read_cluster_output
from gpuspec.verify.schemas import CrdSet

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE_CRDS = Path(__file__).parent / "fixtures" / "crds"


@pytest.fixture(scope="module")
def crds(upstream_dir: Path) -> CrdSet:
    """The real v26.7.0 CRDs, Flux's and Argo CD's."""
    return CrdSet.from_paths([FIXTURE_CRDS, upstream_dir / "gpu-operator" / "v26.7.0" / "crds",
                              upstream_dir / "flux", upstream_dir / "argocd"])


def _objects() -> list[tuple[dict[str, Any], Origin]]:
    fleet = load_fleet(REPO_ROOT / "fleet").fleet
    assert fleet is not None
    out = []
    for cluster in fleet.clusters:
        output = read_cluster_output(REPO_ROOT / "rendered", "rendered", cluster.name)
        out += [(doc, Origin(f.display, f, i)) for f in output.resources for i, doc in enumerate(f.documents)
                if isinstance(doc, dict) and "kind" in doc]
    return out


def test_the_example_fleet_passes(crds: CrdSet) -> None:
    objects = _objects()
    assert any(o["kind"] == "NVIDIADriver" for o, _ in objects)
    findings = [f for obj, origin in objects for f in checks.check_apiserver(obj, origin, crds)]
    assert findings == [], [f.message for f in findings]


def test_the_real_nvidiadriver_rule_is_evaluated(crds: CrdSet) -> None:
    obj, origin = next((o, w) for o, w in _objects() if o["kind"] == "NVIDIADriver")
    broken = copy.deepcopy(obj)
    broken["spec"]["default"] = True
    found = checks.check_apiserver(broken, origin, crds)
    assert [(f.rule_id, f.severity.value) for f in found] == [("GS944", "error")]
    assert "default NVIDIADriver must not use nodeSelector" in found[0].message
    assert found[0].line is not None  # points into the rendered file


def test_a_case_no_named_rule_covers_an_over_long_tenant_label(crds: CrdSet) -> None:
    obj, origin = next((o, w) for o, w in _objects() if o["kind"] == "Namespace")
    broken = copy.deepcopy(obj)
    broken["metadata"]["labels"]["gpuspec.io/tenant"] = "t" * 64
    found = checks.check_apiserver(broken, origin, crds)
    assert [f.rule_id for f in found] == ["GS941"]
    assert "must be no more than 63 characters (is 64)" in found[0].message
