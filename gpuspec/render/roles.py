"""Emit the access roles of a cluster from its ownership (pure): operations (break-glass), observability, tenants.

* operations, bound to the groups of the platform team and of every pool's hardware team: cordon, drain
  (evict pods anywhere), restart operand pods and DaemonSets in the operator namespace; the ClusterPolicy and
  NVIDIADriver objects stay read-only, so accelerator parameters change only through git;
* observability, bound to the observability team's groups: reads GPU node state, metrics, ServiceMonitors,
  PodMonitors and PrometheusRules, and (through the viewer Role) the operator namespace;
* tenants, bound to each tenant team's groups: read their namespaces' GPU quota and LimitRange, and GPU node
  state; nothing in the operator namespace, nothing on drivers.

A role whose team names no groups gets no binding (RBAC without subjects grants nothing).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpuspec.model.ownership import team_index
from gpuspec.model.resolve import cluster_owners, pool_owner
from gpuspec.render.context import ClusterContext
from gpuspec.render.overlay import metadata

OPERATIONS_ROLE = "gpuspec-gpu-operations"
OBSERVABILITY_ROLE = "gpuspec-gpu-observability"
NODE_VIEW_ROLE = "gpuspec-gpu-node-view"
TENANT_ROLE = "gpuspec-gpu-tenant-quota-view"
#: The viewer Role of the operator namespace (``overlay.rbac``), also bound to the observability team.
VIEWER_ROLE = "gpuspec-gpu-operator-view"

_READ = ["get", "list", "watch"]
_RBAC = "rbac.authorization.k8s.io/v1"
_NVIDIA_READ = {"apiGroups": ["nvidia.com"], "resources": ["clusterpolicies", "nvidiadrivers"], "verbs": _READ}
_NODES_READ = {"apiGroups": [""], "resources": ["nodes"], "verbs": _READ}


def _subjects(groups: Iterable[str]) -> list[dict[str, str]]:
    return [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in sorted(set(groups))]


def _groups(ctx: ClusterContext, teams: Iterable[str | None]) -> list[str]:
    """The groups of the named teams (unknown teams contribute none; lint reports them, GS611)."""
    index = team_index(ctx.fleet.settings.teams)
    return sorted({g for t in teams if t and t in index for g in index[t].groups})


def operations_teams(ctx: ClusterContext) -> list[str]:
    """The teams bound to the operations role: the platform owner and every pool's hardware owner."""
    owners = cluster_owners(ctx.fleet, ctx.cluster)
    teams = {owners.platform} | {pool_owner(ctx.fleet, ctx.cluster, p) for p in ctx.cluster.pools}
    return sorted(t for t in teams if t)


def _binding(
    kind: str,
    name: str,
    role_kind: str,
    groups: list[str],
    namespace: str | None,
    ctx: ClusterContext,
    role_name: str | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": _RBAC,
        "kind": kind,
        "metadata": metadata(ctx, name, namespace),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name or name},
        "subjects": _subjects(groups),
    }


def _operations(ctx: ClusterContext) -> list[dict[str, Any]]:
    groups = _groups(ctx, operations_teams(ctx))
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": _RBAC,
            "kind": "ClusterRole",
            "metadata": metadata(ctx, OPERATIONS_ROLE),
            "rules": [
                # cordon/uncordon and drain's node update
                {"apiGroups": [""], "resources": ["nodes"], "verbs": [*_READ, "patch", "update"]},
                # drain: find the node's pods and evict them (PodDisruptionBudgets are honoured)
                {"apiGroups": [""], "resources": ["pods"], "verbs": _READ},
                {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": _READ},
                {"apiGroups": ["apps"], "resources": ["daemonsets", "replicasets", "statefulsets"], "verbs": _READ},
                {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _READ},
                # accelerator parameters: read only (they change in git)
                _NVIDIA_READ,
            ],
        },
        {
            "apiVersion": _RBAC,
            "kind": "Role",
            "metadata": metadata(ctx, OPERATIONS_ROLE, ctx.namespace),
            "rules": [
                # restart an operand pod, read its logs
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]},
                {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
                # kubectl rollout restart daemonset/deployment (patches the pod template's annotation)
                {"apiGroups": ["apps"], "resources": ["daemonsets", "deployments"], "verbs": [*_READ, "patch"]},
            ],
        },
    ]
    if groups:
        docs.append(_binding("ClusterRoleBinding", OPERATIONS_ROLE, "ClusterRole", groups, None, ctx))
        docs.append(_binding("RoleBinding", OPERATIONS_ROLE, "Role", groups, ctx.namespace, ctx))
    return docs


def _observability(ctx: ClusterContext) -> list[dict[str, Any]]:
    groups = _groups(ctx, [cluster_owners(ctx.fleet, ctx.cluster).observability])
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": _RBAC,
            "kind": "ClusterRole",
            "metadata": metadata(ctx, OBSERVABILITY_ROLE),
            "rules": [
                _NODES_READ,
                {"apiGroups": ["metrics.k8s.io"], "resources": ["nodes", "pods"], "verbs": _READ},
                {
                    "apiGroups": ["monitoring.coreos.com"],
                    "resources": ["podmonitors", "prometheusrules", "servicemonitors"],
                    "verbs": _READ,
                },
                _NVIDIA_READ,
            ],
        }
    ]
    if groups:
        docs.append(_binding("ClusterRoleBinding", OBSERVABILITY_ROLE, "ClusterRole", groups, None, ctx))
        docs.append(_binding("RoleBinding", OBSERVABILITY_ROLE, "Role", groups, ctx.namespace, ctx, VIEWER_ROLE))
    return docs


def _tenants(ctx: ClusterContext) -> list[dict[str, Any]]:
    if not ctx.cluster.tenants:
        return []
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": _RBAC,
            "kind": "ClusterRole",
            "metadata": metadata(ctx, NODE_VIEW_ROLE),
            "rules": [
                _NODES_READ,
                {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": _READ},
            ],
        },
        {
            "apiVersion": _RBAC,
            "kind": "ClusterRole",
            "metadata": metadata(ctx, TENANT_ROLE),
            "rules": [{"apiGroups": [""], "resources": ["limitranges", "resourcequotas"], "verbs": _READ}],
        },
    ]
    all_groups = _groups(ctx, [t.team for t in ctx.cluster.tenants])
    if all_groups:
        docs.append(_binding("ClusterRoleBinding", NODE_VIEW_ROLE, "ClusterRole", all_groups, None, ctx))
    for tenant in ctx.cluster.tenants:
        groups = _groups(ctx, [tenant.team])
        if not groups:
            continue
        for ns in tenant.namespaces:
            docs.append(_binding("RoleBinding", TENANT_ROLE, "ClusterRole", groups, ns, ctx))
    return docs


def access_roles(ctx: ClusterContext) -> list[dict[str, Any]]:
    """The operations, observability and tenant roles with their bindings, from the cluster's ownership."""
    return [*_operations(ctx), *_observability(ctx), *_tenants(ctx)]
