"""The rendered roles, judged by the offline RBAC authorizer: who may do what in the example fleet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.kube.rbac import Authorizer, Request

from .fleets import EXAMPLE_FLEET, cluster, example_settings, pool, render_dir, write_fleet

PLATFORM = ("acme:gpu-platform", "system:authenticated")
HARDWARE = ("acme:gpu-hardware", "system:authenticated")
DC_OPS = ("acme:dc-north-ops", "system:authenticated")
OBSERVABILITY = ("acme:sre-observability", "system:authenticated")
RESEARCH = ("acme:ml-research", "system:authenticated")
SERVING = ("acme:ml-serving", "system:authenticated")


def _objects(out: dict[str, bytes], cluster_name: str) -> list[dict[str, Any]]:
    prefix = f"clusters/{cluster_name}/"
    docs: list[dict[str, Any]] = []
    for path, data in sorted(out.items()):
        if path.startswith(prefix) and path.endswith(".yaml") and "values" not in path:
            docs.extend(d for d in yaml.safe_load_all(data) if isinstance(d, dict))
    return docs


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Authorizer]:
    root = tmp_path_factory.mktemp("example")
    import shutil

    shutil.copytree(EXAMPLE_FLEET, root / "fleet")
    out = render_dir(root / "fleet")
    return {name: Authorizer(_objects(out, name)) for name in ("train-east", "infer-north")}


def _can(
    auth: Authorizer,
    groups: tuple[str, ...],
    verb: str,
    resource: str,
    *,
    group: str = "",
    namespace: str = "",
    sub: str = "",
    name: str = "",
) -> bool:
    return auth.allowed(Request(verb, resource, group, sub, name, namespace, groups=groups))


@pytest.mark.parametrize("verb", ["update", "patch", "delete", "create"])
def test_no_one_edits_the_cluster_policy_or_nvidia_drivers(example: dict[str, Authorizer], verb: str) -> None:
    for auth in example.values():
        for groups in (PLATFORM, HARDWARE, DC_OPS, OBSERVABILITY, RESEARCH, SERVING):
            assert not _can(auth, groups, verb, "clusterpolicies", group="nvidia.com", name="cluster-policy")
            assert not _can(auth, groups, verb, "nvidiadrivers", group="nvidia.com", name="default")


def test_tenants_cannot_reach_operator_objects(example: dict[str, Authorizer]) -> None:
    auth = example["train-east"]
    for verb in ("get", "list", "delete"):
        assert not _can(auth, RESEARCH, verb, "pods", namespace="gpu-operator")
        assert not _can(auth, RESEARCH, verb, "daemonsets", group="apps", namespace="gpu-operator")
        assert not _can(auth, RESEARCH, verb, "configmaps", namespace="gpu-operator")
    assert not _can(auth, RESEARCH, "get", "clusterpolicies", group="nvidia.com", name="cluster-policy")
    assert not _can(auth, RESEARCH, "patch", "nodes", name="gpu-node-1")
    assert not _can(auth, RESEARCH, "create", "pods", sub="eviction", namespace="gpu-operator")
    assert not _can(auth, RESEARCH, "update", "resourcequotas", namespace="research-train", name="gpuspec-gpu-quota")


def test_tenants_see_their_quota_and_gpu_node_state(example: dict[str, Authorizer]) -> None:
    train, infer = example["train-east"], example["infer-north"]
    assert _can(train, RESEARCH, "get", "resourcequotas", namespace="research-train", name="gpuspec-gpu-quota")
    assert _can(train, RESEARCH, "list", "limitranges", namespace="notebooks")
    assert _can(train, RESEARCH, "list", "nodes")
    assert _can(infer, SERVING, "get", "resourcequotas", namespace="inference")
    # one tenant team does not read another's namespaces
    assert not _can(infer, SERVING, "get", "resourcequotas", namespace="batch-etl")
    assert not _can(train, SERVING, "list", "nodes")  # ml-serving is no tenant of train-east


def test_operations_cordon_drain_and_restart_operands(example: dict[str, Authorizer]) -> None:
    auth = example["infer-north"]
    for groups in (PLATFORM, DC_OPS, HARDWARE):  # platform, the cluster's and the t4-batch pool's hardware team
        assert _can(auth, groups, "patch", "nodes", name="gpu-node-1")
        assert _can(auth, groups, "create", "pods", sub="eviction", namespace="inference")
        assert _can(auth, groups, "delete", "pods", namespace="gpu-operator")
        assert _can(auth, groups, "patch", "daemonsets", group="apps", namespace="gpu-operator")
        assert _can(auth, groups, "get", "clusterpolicies", group="nvidia.com", name="cluster-policy")
        # restart operands only in the operator namespace, and never delete tenant pods directly
        assert not _can(auth, groups, "delete", "pods", namespace="inference")
        assert not _can(auth, groups, "patch", "daemonsets", group="apps", namespace="kube-system")
        assert not _can(auth, groups, "delete", "nodes", name="gpu-node-1")
        assert not _can(auth, groups, "get", "secrets", namespace="gpu-operator")
    assert not _can(example["train-east"], DC_OPS, "patch", "nodes", name="gpu-node-1")


def test_observability_reads_metrics_and_rules_only(example: dict[str, Authorizer]) -> None:
    auth = example["train-east"]
    assert _can(auth, OBSERVABILITY, "list", "prometheusrules", group="monitoring.coreos.com", namespace="gpu-operator")
    assert _can(auth, OBSERVABILITY, "list", "servicemonitors", group="monitoring.coreos.com")
    assert _can(auth, OBSERVABILITY, "get", "nodes", group="metrics.k8s.io")
    assert _can(auth, OBSERVABILITY, "list", "nodes")
    assert _can(auth, OBSERVABILITY, "get", "pods", sub="log", namespace="gpu-operator")
    assert not _can(auth, OBSERVABILITY, "delete", "pods", namespace="gpu-operator")
    assert not _can(auth, OBSERVABILITY, "patch", "nodes")
    assert not _can(
        auth, OBSERVABILITY, "update", "prometheusrules", group="monitoring.coreos.com", namespace="gpu-operator"
    )


def test_teams_without_groups_get_no_bindings(tmp_path: Path) -> None:
    settings = example_settings()
    for team in settings["teams"]:
        team.pop("groups", None)
    doc = cluster(
        "solo",
        pools=[pool("gpu")],
        tenants=[{"name": "t", "namespaces": ["t"], "gpuQuota": 1, "pools": ["gpu"], "team": "ml-research"}],
    )
    out = render_dir(write_fleet(tmp_path, [doc], settings=settings))
    docs = _objects(out, "solo")
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs if str(d.get("kind", "")).endswith("Binding")}
    assert kinds == {("RoleBinding", "gpuspec-gpu-operator-view"), ("ClusterRoleBinding", "gpuspec-gpu-operator-view")}
    assert not Authorizer(docs).allowed(Request("patch", "nodes", groups=PLATFORM))
