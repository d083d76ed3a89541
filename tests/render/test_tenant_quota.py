"""Tenant quotas cap the resource names the tenant's pools really advertise (renameByDefault: nvidia.com/gpu.shared)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from render.fleets import cluster, pool, render_dir, write_fleet

SHARED = {"mode": "time-slicing", "replicas": 4, "renameByDefault": True, "justification": "inference"}


def _tenant_docs(tmp_path: Path, pools: list[dict[str, Any]], tenant_pools: list[str]) -> dict[str, Any]:
    doc = cluster("c1", pools=pools, tenants=[{"name": "t", "namespaces": ["t"], "gpuQuota": 8,
                                               "pools": tenant_pools}])
    out = render_dir(write_fleet(tmp_path, [doc]))
    docs = [d for d in yaml.safe_load_all(out["clusters/c1/tenant-t.yaml"]) if isinstance(d, dict)]
    return {d["kind"]: d for d in docs}


def test_quota_and_limits_cap_the_shared_name_of_a_renamed_pool(tmp_path: Path) -> None:
    docs = _tenant_docs(tmp_path, [pool("shared", "L40S", 4, sharing=SHARED)], ["shared"])
    assert docs["ResourceQuota"]["spec"]["hard"] == {"requests.nvidia.com/gpu.shared": "8"}
    limits = docs["LimitRange"]["spec"]["limits"][0]
    assert limits["max"] == {"nvidia.com/gpu.shared": "1"}  # time-slicing fails requests above one replica
    assert limits["default"] == {"nvidia.com/gpu.shared": "0"}


def test_a_tenant_on_plain_and_renamed_pools_is_capped_on_both_names(tmp_path: Path) -> None:
    docs = _tenant_docs(tmp_path, [pool("whole", "L40S", 4), pool("shared", "L40S", 4, sharing=SHARED)],
                        ["whole", "shared"])
    assert docs["ResourceQuota"]["spec"]["hard"] == {"requests.nvidia.com/gpu": "8",
                                                     "requests.nvidia.com/gpu.shared": "8"}
    assert docs["LimitRange"]["spec"]["limits"][0]["max"] == {"nvidia.com/gpu": "4", "nvidia.com/gpu.shared": "1"}


def test_whole_gpu_pools_keep_the_plain_name(tmp_path: Path) -> None:
    docs = _tenant_docs(tmp_path, [pool("whole", "L40S", 4)], ["whole"])
    assert docs["ResourceQuota"]["spec"]["hard"] == {"requests.nvidia.com/gpu": "8"}
