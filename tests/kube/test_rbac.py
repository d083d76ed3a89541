"""The offline RBAC authorizer decides as the Kubernetes one: rules, bindings, namespaces, aggregation."""

from __future__ import annotations

from typing import Any

from gpuspec.kube.rbac import Authorizer, Request

RBAC = "rbac.authorization.k8s.io/v1"


def _role(
    kind: str,
    name: str,
    rules: list[dict[str, Any]],
    namespace: str | None = None,
    labels: dict[str, str] | None = None,
    aggregate: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    doc: dict[str, Any] = {"apiVersion": RBAC, "kind": kind, "metadata": meta, "rules": rules}
    if aggregate is not None:
        doc["aggregationRule"] = {"clusterRoleSelectors": aggregate}
    return doc


def _binding(
    kind: str, name: str, role_kind: str, role: str, subjects: list[dict[str, str]], namespace: str | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": RBAC,
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }


def _group(name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def test_role_binding_grants_only_in_its_namespace() -> None:
    auth = Authorizer(
        [
            _role("Role", "reader", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], "team-a"),
            _binding("RoleBinding", "reader", "Role", "reader", [_group("devs")], "team-a"),
        ]
    )
    assert auth.allowed(Request("get", "pods", namespace="team-a", groups=("devs",)))
    assert not auth.allowed(Request("get", "pods", namespace="team-b", groups=("devs",)))
    assert not auth.allowed(Request("get", "pods", groups=("devs",)))  # all namespaces
    assert not auth.allowed(Request("list", "pods", namespace="team-a", groups=("devs",)))
    assert not auth.allowed(Request("get", "pods", namespace="team-a", groups=("others",)))


def test_role_binding_to_a_cluster_role_is_scoped_and_cannot_reach_cluster_resources() -> None:
    auth = Authorizer(
        [
            _role("ClusterRole", "view", [{"apiGroups": [""], "resources": ["pods", "nodes"], "verbs": ["get"]}]),
            _binding("RoleBinding", "view", "ClusterRole", "view", [_group("devs")], "team-a"),
        ]
    )
    assert auth.allowed(Request("get", "pods", namespace="team-a", groups=("devs",)))
    assert not auth.allowed(Request("get", "nodes", groups=("devs",)))
    assert auth.granting(Request("get", "pods", namespace="team-a", groups=("devs",))) == "RoleBinding team-a/view"


def test_wildcards_subresources_and_groups() -> None:
    auth = Authorizer(
        [
            _role(
                "ClusterRole",
                "scale",
                [
                    {"apiGroups": ["*"], "resources": ["*/scale"], "verbs": ["*"]},
                    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
                ],
            ),
            _binding("ClusterRoleBinding", "scale", "ClusterRole", "scale", [_group("ops")]),
        ]
    )
    ops = ("ops",)
    assert auth.allowed(Request("update", "deployments", "apps", "scale", namespace="x", groups=ops))
    assert not auth.allowed(Request("update", "deployments", "apps", namespace="x", groups=ops))
    assert auth.allowed(Request("create", "pods", "", "eviction", namespace="x", groups=ops))
    assert not auth.allowed(Request("delete", "pods", namespace="x", groups=ops))
    assert not auth.allowed(Request("create", "pods", "apps", "eviction", namespace="x", groups=ops))


def test_resource_names_restrict_and_do_not_match_collection_requests() -> None:
    auth = Authorizer(
        [
            _role(
                "ClusterRole",
                "one",
                [
                    {
                        "apiGroups": ["nvidia.com"],
                        "resources": ["clusterpolicies"],
                        "resourceNames": ["cluster-policy"],
                        "verbs": ["get", "list"],
                    }
                ],
            ),
            _binding("ClusterRoleBinding", "one", "ClusterRole", "one", [{"kind": "User", "name": "alice"}]),
        ]
    )
    assert auth.allowed(Request("get", "clusterpolicies", "nvidia.com", name="cluster-policy", user="alice"))
    assert not auth.allowed(Request("get", "clusterpolicies", "nvidia.com", name="other", user="alice"))
    assert not auth.allowed(Request("list", "clusterpolicies", "nvidia.com", user="alice"))
    assert not auth.allowed(Request("get", "clusterpolicies", "nvidia.com", name="cluster-policy", user="bob"))


def test_aggregated_cluster_role_gets_the_selected_roles_rules() -> None:
    auth = Authorizer(
        [
            _role("ClusterRole", "gpu-view", [], aggregate=[{"matchLabels": {"example.com/aggregate-to-gpu": "true"}}]),
            _role(
                "ClusterRole",
                "nodes",
                [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}],
                labels={"example.com/aggregate-to-gpu": "true"},
            ),
            _role(
                "ClusterRole",
                "secrets",
                [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
                labels={"example.com/aggregate-to-gpu": "false"},
            ),
            _binding("ClusterRoleBinding", "gpu-view", "ClusterRole", "gpu-view", [_group("viewers")]),
        ]
    )
    assert auth.allowed(Request("get", "nodes", groups=("viewers",)))
    assert not auth.allowed(Request("get", "secrets", namespace="x", groups=("viewers",)))


def test_service_accounts_and_non_resource_urls() -> None:
    auth = Authorizer(
        [
            _role("ClusterRole", "metrics", [{"nonResourceURLs": ["/metrics", "/debug/*"], "verbs": ["get"]}]),
            _binding(
                "ClusterRoleBinding",
                "metrics",
                "ClusterRole",
                "metrics",
                [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}],
            ),
        ]
    )
    sa = "system:serviceaccount:monitoring:prometheus"
    assert auth.allowed(Request("get", path="/metrics", user=sa))
    assert auth.allowed(Request("get", path="/debug/pprof", user=sa))
    assert not auth.allowed(Request("get", path="/healthz", user=sa))
    assert not auth.allowed(Request("get", path="/metrics", user="system:serviceaccount:other:prometheus"))


def test_a_role_binding_does_not_grant_non_resource_urls_and_a_missing_role_grants_nothing() -> None:
    auth = Authorizer(
        [
            _role("ClusterRole", "metrics", [{"nonResourceURLs": ["*"], "verbs": ["*"]}]),
            _binding("RoleBinding", "metrics", "ClusterRole", "metrics", [_group("g")], "ns"),
            _binding("ClusterRoleBinding", "ghost", "ClusterRole", "does-not-exist", [_group("g")]),
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "not-rbac"}},
        ]
    )
    assert not auth.allowed(Request("get", path="/metrics", groups=("g",)))
    assert not auth.allowed(Request("get", "pods", namespace="ns", groups=("g",)))
