"""The diff engine on real git repositories: every change class, its disruption, wave and rollback note."""

from __future__ import annotations

from gpuspec.matrix.query import default_driver
from gpuspec.rollout.records import Change, ChangeKind, Dimension, Disruption

from .helpers import FleetRepo, pool, tenant


def only(changes: list[Change], kind: ChangeKind) -> Change:
    """The single change of ``kind`` (and fail when there is not exactly one)."""
    found = [c for c in changes if c.kind is kind]
    assert len(found) == 1, [(c.kind.value, c.summary) for c in changes]
    return found[0]


def kinds(changes: list[Change]) -> list[tuple[str | None, str | None, str]]:
    return [(c.cluster, c.pool, c.kind.value) for c in changes]


def test_no_changes_no_plan(repo: FleetRepo) -> None:
    assert repo.changes() == []


def test_operator_upgrade_through_a_pin(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.3.3"
    repo.commit("older base")
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    change = only(repo.changes(), ChangeKind.OPERATOR_UPGRADE)
    assert (change.before, change.after) == ("v26.3.3", "v26.7.0")
    assert change.disruption is Disruption.OPERAND_RESTART
    assert change.dimension is Dimension.OPERATOR
    assert change.file == "fleet/clusters/infer-north.yaml" and change.path == ("operator", "version")
    assert "Helm does not downgrade CRDs" in change.rollback and "Revert the chart to v26.3.3" in change.rollback
    assert "from mirror dc-north" in change.rollback


def test_operator_downgrade_through_a_channel_points_at_fleet_yaml(repo: FleetRepo) -> None:
    with repo.fleet_settings() as data:
        data["channels"][0]["operator"] = "v26.3.3"
    changes = repo.changes()
    change = only(changes, ChangeKind.OPERATOR_DOWNGRADE)
    assert change.cluster == "train-east" and change.downgrade
    assert change.file == "fleet/fleet.yaml" and change.path == ("channels", 0, "operator")
    assert "itself a rollback" in change.rollback


def test_release_default_driver_moves_with_the_operator(repo: FleetRepo) -> None:
    """Pools that pin no driver follow the release default: an operator change reloads their driver."""
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.3.3"
        for p in data["pools"]:
            p["driver"] = {"source": "operator"}
    repo.commit("unpinned drivers")
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    derived = [c for c in repo.changes() if c.kind is ChangeKind.DRIVER]
    assert [c.pool for c in derived] == ["l40s-canary", "l40s", "t4-batch"]
    assert all(c.derived and c.dimension is Dimension.DRIVER for c in derived)  # a driver layer change (GS801)
    assert all(c.disruption is Disruption.DRIVER_RELOAD for c in derived)
    assert (derived[0].before, derived[0].after) == (default_driver("v26.3.3"), default_driver("v26.7.0"))
    assert derived[0].file == "fleet/clusters/infer-north.yaml" and derived[0].path == ("operator", "version")


def test_switching_pin_to_channel_of_the_same_release_is_harmless(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["operator"].pop("channel")
        data["operator"]["version"] = "v26.7.0"
        for p in data["pools"]:
            p["driver"] = {"source": "operator", "branch": "580", "version": "580.173.02"}
    change = only(repo.changes(), ChangeKind.OPERATOR_PIN)
    assert change.disruption is Disruption.NONE and change.summary.endswith("(still v26.7.0)")


def test_driver_branch_bump_reloads_with_the_clusters_drain_settings(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        pool(data, "l40s")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    change = only(repo.changes(), ChangeKind.DRIVER)
    assert change.disruption is Disruption.DRIVER_RELOAD and change.dimension is Dimension.DRIVER
    assert not change.downgrade and not change.canary and change.pool_wave == 2
    assert "12 node(s) x 4 GPU(s)" in change.impact
    assert "nodes are drained (timeout 600s)" in change.impact and "maxUnavailable 1" in change.impact
    assert "harbor.dc-north.acme.internal/nvcr/nvidia/driver:580.173.02-ubuntu22.04" in change.rollback
    assert "in mirror dc-north" in change.rollback
    assert change.path == ("pools", 1, "driver")


def test_driver_ownership_change_and_online_rollback_image(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        pool(data, "h100")["driver"] = {"source": "host"}
    change = only(repo.changes(), ChangeKind.DRIVER)
    assert "source changed" in change.details
    assert change.after == "580.173.02 (host)"  # the channel's driver, now preinstalled on the host
    assert "nvcr.io/nvidia/driver:580.173.02-ubuntu22.04 must still be pullable" in change.rollback


def test_driver_downgrade_is_marked(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["driver"]["version"] = "535.288.01"
    change = only(repo.changes(), ChangeKind.DRIVER)
    assert change.downgrade and change.summary.startswith("driver downgrade")


def test_mig_layout_change_repartitions(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        pool(data, "a100-mig")["mig"] = {"strategy": "mixed", "layout": "all-balanced"}
    change = only(repo.changes(), ChangeKind.MIG)
    assert change.disruption is Disruption.MIG_REPARTITION
    assert change.after == "mixed, layout all-balanced"
    assert change.before == "mixed, custom GPUs 0,1,2,3: 7x1g.10gb; GPUs 4,5,6,7: 2x3g.40gb"
    assert "repartitions the GPUs again" in change.rollback


def test_mig_strategy_only_restarts_operands(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        pool(data, "a100-mig")["mig"]["strategy"] = "single"
    change = only(repo.changes(), ChangeKind.MIG)
    assert change.disruption is Disruption.OPERAND_RESTART and "resource names" in change.impact


def test_sharing_change_and_justification_only(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        pool(data, "l40s")["sharing"]["replicas"] = 8
        pool(data, "l40s-canary")["sharing"]["justification"] = "Reworded."
    changes = [c for c in repo.changes() if c.kind is ChangeKind.SHARING]
    by_pool = {c.pool: c for c in changes}
    assert by_pool["l40s"].disruption is Disruption.OPERAND_RESTART
    assert by_pool["l40s"].summary == "sharing time-slicing x4 -> time-slicing x8"
    assert by_pool["l40s-canary"].disruption is Disruption.NONE


def test_pools_added_and_removed(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        removed = pool(data, "t4-batch")
        data["pools"].remove(removed)
        added = dict(removed, name="t4-new", nodeSelector={"acme.example/gpu-pool": "t4-new"})
        data["pools"].append(added)
        tenant(data, "batch")["pools"] = ["t4-new"]
    changes = repo.changes()
    assert only(changes, ChangeKind.POOL_ADDED).disruption is Disruption.NONE
    gone = only(changes, ChangeKind.POOL_REMOVED)
    assert gone.pool == "t4-batch" and gone.disruption is Disruption.DRIVER_RELOAD
    assert "drain and decommission" in gone.impact
    assert only(changes, ChangeKind.TENANT_CHANGED).summary == "tenant batch: pools changed"


def test_clusters_added_and_removed(repo: FleetRepo) -> None:
    clusters = repo.fleet / "clusters"
    text = (clusters / "infer-north.yaml").read_text(encoding="utf-8").replace("name: infer-north", "name: infer-south")
    (clusters / "infer-south.yaml").write_text(text, encoding="utf-8")
    (clusters / "infer-north.yaml").unlink()
    changes = repo.changes()
    assert kinds(changes) == [("infer-north", None, "cluster-removed"), ("infer-south", None, "cluster-added")]
    assert changes[0].disruption is Disruption.DRIVER_RELOAD and "pruning" in changes[0].impact
    assert changes[1].disruption is Disruption.NONE


def test_tenants_added_removed_and_quota(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        tenant(data, "research")["gpuQuota"] = 128
        data["tenants"] = [t for t in data["tenants"] if t["name"] != "notebooks"]
        data["tenants"].append({"name": "eval", "namespaces": ["eval"], "gpuQuota": 8, "pools": ["h100"]})
    changes = repo.changes()
    changed = only(changes, ChangeKind.TENANT_CHANGED)
    assert (changed.before, changed.after) == ("192 GPUs; pools h100-canary, h100", "128 GPUs; pools h100-canary, h100")
    assert changed.path == ("tenants", 0, "gpuQuota")
    assert only(changes, ChangeKind.TENANT_ADDED).summary == "tenant eval added (8 GPUs; pools h100)"
    assert only(changes, ChangeKind.TENANT_REMOVED).before == "0 GPUs, 112 mig-1g.10gb, 16 mig-3g.40gb; pools a100-mig"
    assert all(c.disruption is Disruption.NONE for c in changes)


def test_cluster_mirror_change(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data.pop("mirror")
    change = only(repo.changes(), ChangeKind.MIRROR)
    assert change.summary == "mirror dc-north -> online (no mirror)"
    assert change.disruption is Disruption.DRIVER_RELOAD
    assert "every image must still be in mirror dc-north" in change.rollback


def test_fleet_mirror_definition_change(repo: FleetRepo) -> None:
    with repo.fleet_settings() as data:
        data["mirrors"][0]["registries"]["nvcr.io"] = "harbor2.dc-north.acme.internal/nvcr"
        data["mirrors"].append({"name": "spare", "registries": {"nvcr.io": "r.example/nvcr"},
                                "chart": {"repository": "oci://r.example/charts"}})
    changes = repo.changes()
    used = [c for c in changes if c.kind is ChangeKind.FLEET_MIRROR and c.cluster == "infer-north"]
    assert len(used) == 1 and used[0].disruption is Disruption.DRIVER_RELOAD
    assert used[0].file == "fleet/fleet.yaml" and used[0].path == ("mirrors", 0, "registries")
    unused = [c for c in changes if c.kind is ChangeKind.FLEET_MIRROR and c.cluster is None]
    assert [c.summary for c in unused] == ["mirror spare added (used by no cluster)"]


def test_chart_only_mirror_change_is_not_disruptive(repo: FleetRepo) -> None:
    with repo.fleet_settings() as data:
        data["mirrors"][0]["chart"]["repository"] = "oci://harbor.dc-north.acme.internal/charts/nvidia2"
    assert only(repo.changes(), ChangeKind.FLEET_MIRROR).disruption is Disruption.NONE


def test_kubernetes_os_and_kernel_changes(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["kubernetes"]["version"] = "1.35"
        pool(data, "h100")["os"]["kernel"] = "5.15.0-150-generic"
    changes = repo.changes()
    kube = only(changes, ChangeKind.KUBERNETES)
    assert kube.dimension is Dimension.KUBERNETES and kube.summary == "Kubernetes 1.34 -> 1.35"
    os_change = only(changes, ChangeKind.OS)
    assert os_change.dimension is Dimension.OS and os_change.disruption is Disruption.DRIVER_RELOAD
    assert os_change.path == ("pools", 1, "os", "kernel")


def test_operands_and_rollout_settings(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["operator"]["operands"]["dcgmExporter"]["serviceMonitor"] = False
        data["rollout"]["maxParallelUpgrades"] = 1
    changes = repo.changes()
    assert only(changes, ChangeKind.OPERANDS).disruption is Disruption.OPERAND_RESTART
    rollout = only(changes, ChangeKind.ROLLOUT)
    assert rollout.disruption is Disruption.NONE
    assert rollout.summary == "rollout settings changed: maxParallelUpgrades 2 -> 1"
    with repo.cluster("train-east") as data:
        data["operator"]["operands"]["rdma"] = False
    assert only(repo.changes(), ChangeKind.OPERANDS).disruption is Disruption.DRIVER_RELOAD


def test_pool_size_and_settings(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        pool(data, "h100")["nodes"] = 40
        pool(data, "h100")["taints"] = []
    changes = repo.changes()
    assert only(changes, ChangeKind.POOL_SIZE).summary == "pool size 32 x 8 H100-SXM5-80GB -> 40 x 8 H100-SXM5-80GB"
    assert only(changes, ChangeKind.POOL_SETTINGS).disruption is Disruption.NONE


def test_autoscaling_change_is_a_pool_setting(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        pool(data, "h100-canary")["autoscaling"] = {"autoscaler": "karpenter", "min": 0, "max": 4}
    change = only(repo.changes(), ChangeKind.POOL_SETTINGS)
    assert change.summary == "pool autoscaling changed" and change.disruption is Disruption.NONE


def test_rollout_order_is_fleet_wave_then_cluster_wide_then_canary_then_pool_waves(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["kubernetes"]["version"] = "1.35"
        for p in data["pools"]:
            p["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["nodes"] = 9
        pool(data, "l40s-canary")["nodes"] = 2
    order = [(c.cluster_wave, c.cluster, c.pool, c.stage, c.canary) for c in repo.changes()]
    assert order == [
        (1, "infer-north", "l40s-canary", 1, True),
        (1, "infer-north", "t4-batch", 5, False),
        (2, "train-east", None, 0, False),
        (2, "train-east", "h100-canary", 1, True),
        (2, "train-east", "a100-mig", 4, False),
        (2, "train-east", "h100", 4, False),
    ]


def _openshift(data: dict[str, object]) -> None:
    data["kubernetes"] = {"version": "1.32", "distribution": "openshift", "openshiftVersion": "4.19",
                          "runtime": "cri-o"}
    data.pop("mirror", None)
    data.pop("overrides", None)
    for p in data["pools"]:  # type: ignore[attr-defined]
        p["os"] = {"distribution": "rhcos", "version": "4.19"}


def test_openshift_operator_upgrade_is_an_olm_upgrade(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        _openshift(data)
        data["operator"]["version"] = "v26.3.3"
    repo.commit("older base on OpenShift")
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    change = only(repo.changes(), ChangeKind.OPERATOR_UPGRADE)
    assert change.disruption is Disruption.OPERAND_RESTART
    assert "channel v26.7 and startingCSV gpu-operator-certified.v26.7.0" in change.impact
    assert "replaces CSV gpu-operator-certified.v26.3.3" in change.impact and "helm" not in change.impact
    assert "OLM does not downgrade a CSV" in change.rollback
