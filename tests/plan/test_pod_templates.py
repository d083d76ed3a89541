"""plan derives disruption from the operand pod templates that change, not from the spec field that changed."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from gpuspec.rollout.podtemplates import changed_paths, template_data
from gpuspec.rollout.records import Change, ChangeKind, Disruption

from .helpers import FleetRepo, pool


def derived(changes: list[Change]) -> list[Change]:
    """The pod-templates records of a plan."""
    return [c for c in changes if c.kind is ChangeKind.POD_TEMPLATES]


def test_a_taint_on_one_pool_reloads_the_driver_on_every_gpu_node(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        pool(data, "a100-mig")["taints"].append({"key": "acme.example/team", "value": "research",
                                                  "effect": "NoSchedule"})
    plan = repo.plan()
    (record,) = derived(plan.changes)
    assert record.disruption is Disruption.DRIVER_RELOAD and record.pool is None and record.derived
    assert "nvidia-driver-daemonset" in record.summary and "daemonsets.tolerations" in record.summary
    assert "40 node(s) of pool(s) h100-canary, h100, a100-mig" in record.impact
    assert "GPU pods are evicted" in record.impact
    rolled = " ".join(record.details)
    for daemonset in ("nvidia-container-toolkit-daemonset", "nvidia-device-plugin-daemonset", "gpu-feature-discovery"):
        assert f"{daemonset}: daemonsets.tolerations" in rolled
    settings = next(c for c in plan.changes if c.kind is ChangeKind.POOL_SETTINGS)
    assert "nothing restarts" not in settings.impact and "cluster-wide" in settings.impact
    assert plan.worst is Disruption.DRIVER_RELOAD


def test_per_pool_nvidiadrivers_reload_where_their_templates_change(repo: FleetRepo) -> None:
    """infer-north: the chart's default NVIDIADriver (580, l40s pools) and t4-batch's own (535)."""
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["taints"].append({"key": "acme.example/batch", "effect": "NoExecute"})
    records = {c.pool: c for c in derived(repo.changes())}
    assert set(records) == {None, "t4-batch"}
    assert "NVIDIADriver default (chart)" in records[None].summary
    assert "pool(s) l40s-canary, l40s" in records[None].impact
    assert "NVIDIADriver t4-batch" in records["t4-batch"].summary and "(tolerations)" in records["t4-batch"].summary
    assert all(c.disruption is Disruption.DRIVER_RELOAD for c in records.values())


def test_a_pool_device_that_flips_a_cluster_wide_driver_value_is_caught_without_a_rule_of_its_own(
    repo: FleetRepo,
) -> None:
    """No named rule knows that dropping the last RDMA pool turns driver.rdma.enabled off for the whole cluster's
    driver DaemonSet: the spec record says "per-pool operand configuration", the derivation says driver reload."""
    with repo.cluster("train-east") as data:
        for p in data["pools"]:
            p.get("devices", {}).pop("rdma", None)
    changes = repo.changes()
    assert {c.disruption for c in changes if c.kind is ChangeKind.POOL_SETTINGS} == {Disruption.OPERAND_RESTART}
    (record,) = derived(changes)
    assert record.disruption is Disruption.DRIVER_RELOAD and "driver.rdma.enabled" in record.summary


def test_a_new_tainted_pool_reloads_the_drivers_of_the_running_pools(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        new = copy.deepcopy(pool(data, "a100-mig"))
        new.update(name="a100-b", nodeSelector={"acme.example/pool": "a100-b"},
                   taints=[{"key": "acme.example/gpu", "value": "a100-b", "effect": "NoSchedule"}])
        data["pools"].append(new)
    (record,) = derived(repo.changes())
    assert record.disruption is Disruption.DRIVER_RELOAD
    assert "h100-canary, h100, a100-mig" in record.impact and "a100-b" not in record.impact


@pytest.mark.parametrize("edit", ["quota", "rollout", "size"])
def test_changes_that_touch_no_pod_template_add_nothing(repo: FleetRepo, edit: str) -> None:
    with repo.cluster("train-east") as data:
        if edit == "quota":
            data["tenants"][0]["gpuQuota"] = 1
        elif edit == "rollout":
            data["rollout"]["maxParallelUpgrades"] = 1  # driver.upgradePolicy: read by the upgrade controller only
        else:
            pool(data, "h100")["nodes"] = 40
    changes = repo.changes()
    assert changes and derived(changes) == []


def test_a_driver_change_the_spec_records_already_claim_is_not_repeated(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["operator"]["driverManagement"] = "nvidiadriver"
    changes = repo.changes()
    assert any(c.kind is ChangeKind.DRIVER_MANAGEMENT for c in changes)
    assert derived(changes) == []


def test_changed_paths_name_the_leaves() -> None:
    assert changed_paths({"rdma": {"enabled": True}, "v": 1}, {"rdma": {"enabled": False}, "v": 1}, "driver") == [
        "driver.rdma.enabled"]
    assert changed_paths([1], [1, 2], "daemonsets.tolerations") == ["daemonsets.tolerations"]


@pytest.mark.parametrize("release", ["v25.10.1", "v26.3.3", "v26.7.0"])
def test_every_input_of_the_data_is_a_value_of_the_chart(release: str, shared_dir: Path) -> None:
    """The data names values of the real chart's values.yaml (labels, annotations and podSecurityContext of
    daemonsets are empty-by-default keys some releases leave out)."""
    values = yaml.safe_load((shared_dir / "upstream" / "gpu-operator" / release / "values.yaml").read_text())
    data = template_data()

    def known(path: str) -> bool:
        node = values
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    paths = [*data.common, *data.default_cr_values, *data.ignore]
    for operand in data.operands:
        paths += [operand.values, *operand.also, *([operand.enabled] if operand.enabled else [])]
    optional = {"daemonsets.labels", "daemonsets.annotations", "daemonsets.podSecurityContext"}
    assert sorted({p for p in paths if not known(p)} - optional) == []
    assert any("object_controls.go" in s for s in data.sources)


def test_an_upgrade_that_drops_a_pools_nvidiadriver_names_what_garbage_collection_removes(repo: FleetRepo) -> None:
    """infer-north on v26.3.3 has an NVIDIADriver per pool; on v26.7.0 the chart's default one serves the l40s
    pools, whose own NVIDIADrivers leave the overlay (GS813 is the change-set error)."""
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.3.3"
    repo.commit("infer-north on v26.3.3")
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    removed = [c for c in derived(repo.changes()) if "loses its driver at once" in c.summary]
    assert sorted(c.pool for c in removed) == ["l40s", "l40s-canary"]
    assert all(c.disruption is Disruption.DRIVER_LOST for c in removed)
    assert "garbage collection deletes its DaemonSet" in removed[0].impact
    assert "outside the upgrade policy" in removed[0].impact and "GS814" in removed[0].impact
    assert "the chart's default NVIDIADriver 'default' starts new ones" in removed[0].impact
    with repo.cluster("infer-north") as data:
        data["operator"]["defaultNVIDIADriver"] = False
    assert [c for c in derived(repo.changes()) if "loses its driver" in c.summary] == []
