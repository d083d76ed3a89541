"""Hybrid mode: a `managed: false` pool gets the operands-off node label, no driver object, no acceptance Job."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gpuspec.model.cluster import Pool
from gpuspec.render.overlay import DEPLOY_OPERANDS_LABEL
from gpuspec.render.poolresources import has_acceptance_check

POOL = {
    "name": "legacy",
    "nodeSelector": {"eks.amazonaws.com/nodegroup": "legacy-a100"},
    "nodes": 2,
    "gpu": {"product": "A100-SXM4-80GB", "count": 8},
    "os": {"distribution": "ubuntu", "version": "22.04"},
}


def test_unmanaged_pool_needs_a_host_driver() -> None:
    with pytest.raises(ValidationError, match=r"driver\.source: host"):
        Pool.model_validate({**POOL, "managed": False})
    with pytest.raises(ValidationError, match="cannot have MIG"):
        Pool.model_validate({**POOL, "managed": False, "driver": {"source": "host"}, "mig": {"strategy": "mixed",
                             "layout": "all-1g.10gb"}})
    pool = Pool.model_validate({**POOL, "managed": False, "driver": {"source": "host"}})
    assert not pool.managed
    assert not has_acceptance_check(pool)
    assert has_acceptance_check(Pool.model_validate(POOL))


def test_rendered_node_labels_switch_operands_off(tmp_path: Path) -> None:
    import shutil

    from gpuspec.loader.fleetload import load_fleet
    from gpuspec.render.context import cluster_context
    from gpuspec.render.overlay import node_labels

    repo = Path(__file__).resolve().parents[2]
    shutil.copytree(repo / "tests" / "audit" / "fixtures" / "fleet", tmp_path / "fleet")
    shutil.copyfile(repo / "tests" / "rules" / "fixtures" / "GS789" / "pass" / "fleet" / "clusters" / "lab.yaml",
                    tmp_path / "fleet" / "clusters" / "lab.yaml")
    load = load_fleet(tmp_path / "fleet")
    assert load.fleet is not None, load.findings
    ctx = cluster_context(load.fleet, load.fleet.clusters[0])
    labels = node_labels(ctx)["pools"]
    assert labels["l40s"]["labels"][DEPLOY_OPERANDS_LABEL] == "false"
    assert DEPLOY_OPERANDS_LABEL not in labels["h100"]["labels"]
    assert all(d.pool.name != "l40s" for d in ctx.drivers)
