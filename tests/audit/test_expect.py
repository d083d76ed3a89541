"""Expected resources and MIG config per pool, driver defaults, and the GFD product map."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from audit_fixtures import FLEET_DIR, healthy, node_list

from gpuspec.audit.check import audit_cluster
from gpuspec.audit.expect import expected_mig_config, expected_resources
from gpuspec.audit.facts import driver_version, node_facts
from gpuspec.audit.inventory import parse_nodes
from gpuspec.audit.products import _table, lookup_product
from gpuspec.loader.fleetload import load_fleet
from gpuspec.matrix.query import default_driver, gpu_product
from gpuspec.model.cluster import Pool


def pool(**fields: Any) -> Pool:
    """A pool with the given fields over a minimal valid one."""
    base: dict[str, Any] = {"name": "p", "nodeSelector": {"a": "b"}, "nodes": 1,
                            "gpu": {"product": "H100-SXM5-80GB", "count": 8},
                            "os": {"distribution": "ubuntu", "version": "22.04"}}
    return Pool.model_validate(base | fields)


def test_plain_and_shared_pools() -> None:
    assert expected_resources(pool()).counts == {"nvidia.com/gpu": 8}
    shared = pool(sharing={"mode": "time-slicing", "replicas": 4, "renameByDefault": True})
    assert expected_resources(shared).counts == {"nvidia.com/gpu.shared": 32}


def test_named_mig_layout_uses_the_support_matrix() -> None:
    mixed = pool(mig={"strategy": "mixed", "layout": "all-1g.10gb"})
    assert expected_resources(mixed).counts == {"nvidia.com/mig-1g.10gb": 56}
    single = pool(mig={"strategy": "single", "layout": "all-3g.40gb"})
    assert expected_resources(single).counts == {"nvidia.com/gpu": 16}
    assert expected_mig_config(single) == "all-3g.40gb"


def test_custom_mixed_layout_counts_uncovered_gpus_as_full_gpus() -> None:
    custom = pool(mig={"strategy": "mixed", "custom": [{"devices": [0, 1], "profiles": {"1g.10gb": 7}}]})
    assert expected_resources(custom).counts == {"nvidia.com/mig-1g.10gb": 14, "nvidia.com/gpu": 6}
    assert expected_mig_config(custom) == f"custom-{custom.name}"
    assert expected_mig_config(pool()) == "all-disabled"


def test_unknown_named_layout_accepts_any_mig_resource() -> None:
    odd = pool(mig={"strategy": "mixed", "layout": "site-special"})
    want = expected_resources(odd)
    assert want.any_mig and not want.counts


@pytest.mark.parametrize(("gfd", "product"), [
    ("NVIDIA-H100-80GB-HBM3", "H100-SXM5-80GB"),
    ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "H100-SXM5-80GB"),
    ("NVIDIA-L40S-SHARED", "L40S"),
    ("Tesla-T4", "T4"),
    ("A100-SXM4-40GB", "A100-SXM4-40GB"),
    ("nvidia-a100-sxm4-80gb", "A100-SXM4-80GB"),
])
def test_gfd_product_lookup(gfd: str, product: str) -> None:
    match = lookup_product(gfd)
    assert match is not None and match.product_id == product


def test_unknown_gfd_product_is_not_guessed() -> None:
    assert lookup_product("NVIDIA-A10G") is None
    assert lookup_product("NVIDIA-GeForce-RTX-4090") is None


def test_every_mapped_product_is_in_the_support_matrix() -> None:
    for match in _table().values():
        assert gpu_product(match.product_id) is not None, match


def test_driver_version_from_old_labels() -> None:
    assert driver_version({"nvidia.com/cuda.driver.major": "550", "nvidia.com/cuda.driver.minor": "54",
                           "nvidia.com/cuda.driver.rev": "15"}) == "550.54.15"
    assert driver_version({}) is None


def test_unpinned_pool_is_compared_with_the_release_default(tmp_path: Path) -> None:
    fleet_dir = tmp_path / "fleet"
    shutil.copytree(FLEET_DIR, fleet_dir)
    spec = fleet_dir / "clusters" / "lab.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("      version: 580.95.05\n", "", 1))
    fleet = load_fleet(fleet_dir).fleet
    assert fleet is not None
    cluster = fleet.cluster("lab")
    assert cluster is not None and cluster.pools[0].driver.version is None
    nodes = [node_facts(n) for n in parse_nodes(json.dumps(node_list(healthy())), "nodes.json")]
    (finding,) = audit_cluster(fleet, cluster, nodes).findings
    assert finding.rule_id == "GS771"
    assert f"expects driver {default_driver('v26.7.0')} (the default of operator v26.7.0)" in finding.message
