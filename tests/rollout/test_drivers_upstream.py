"""The rollout model's driver ownership (gpuspec/rollout/drivers.py) on rendered objects of the real chart data:
the NVIDIADrivers it reads an owner from validate against GPU Operator's own CRD, and the CRD says what the model
assumes of the chart's default NVIDIADriver (the fallback for nodes no other NVIDIADriver selects)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.loader.fleetload import load_fleet
from gpuspec.render.compile import compile_cluster
from gpuspec.render.filetree import YamlFile
from gpuspec.rollout.drivers import CHART_DEFAULT, NVIDIA_DRIVER, ownership
from gpuspec.verify.schemas import CrdSet, validate_object

REPO = Path(__file__).resolve().parents[2]
CASE = REPO / "tests" / "rules" / "fixtures" / "GS814" / "fail"
BASE = REPO / "tests" / "rules" / "fixtures" / "_base" / "fleet"


@pytest.fixture
def upstream(shared_dir: Path) -> Path:
    return shared_dir / "upstream"


def _fleet(tmp_path: Path, side: str) -> Any:
    root = tmp_path / side
    shutil.copytree(BASE, root / "fleet")
    shutil.copytree(CASE / side / "fleet", root / "fleet", dirs_exist_ok=True)
    fleet = load_fleet(root / "fleet").fleet
    assert fleet is not None
    return fleet


def test_the_chart_default_nvidiadriver_is_the_fallback_the_model_assumes(upstream: Path) -> None:
    crd = yaml.safe_load(next((upstream / "gpu-operator" / "v26.7.0" / "crds").glob("*nvidiadriver*")).read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert "do not match any non-default NVIDIADriver nodeSelector" in spec["default"]["description"]
    values = yaml.safe_load((upstream / "gpu-operator" / "v26.7.0" / "values.yaml").read_text())
    assert values["driver"]["nvidiaDriverCRD"]["deployDefaultCR"] is True  # the chart's default NVIDIADriver


def test_the_owners_come_from_objects_the_real_crd_accepts(tmp_path: Path, upstream: Path) -> None:
    crds = CrdSet.from_paths([upstream / "gpu-operator" / "v26.7.0" / "crds"])
    for side in ("base", "head"):
        fleet = _fleet(tmp_path, side)
        cluster = fleet.clusters[0]
        plan = compile_cluster(fleet, cluster, "")
        drivers = [doc for f in plan.files.values() if isinstance(f, YamlFile) for doc in f.documents
                   if isinstance(doc, dict) and doc.get("kind") == NVIDIA_DRIVER]
        for doc in drivers:
            assert validate_object(doc, crds=crds, kube_version="1.33") == [], doc["metadata"]["name"]
            assert doc["spec"]["default"] is False and doc["spec"]["nodeSelector"]
        owned = ownership(fleet, cluster)
        assert owned is not None and owned.chart_default
        owners = {p.name: owned.owner({str(k): str(v) for k, v in p.node_selector.items()}) for p in cluster.pools}
        assert owners["main"] is not None and owners["main"].name == CHART_DEFAULT  # the most nodes' driver
        own = owners["canary"]
        assert own is not None and (own.name == "canary") == (side == "base")
