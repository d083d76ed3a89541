"""Emit the PrometheusRule with GPU and GPU Operator alerts of a cluster (pure).

Metric sources: DCGM exporter (``DCGM_FI_*``; ECC counters need the exporter's
metrics config to include them), the operator's own metrics
(``gpu_operator_*``) and kube-state-metrics (``kube_*``).

An alert is rendered only where what it watches is on (:func:`alert_sources`): the DCGM alerts where the
exporter runs and the chart's ServiceMonitor has Prometheus scrape it (else ``absent(up{...})`` fires forever and
the ``DCGM_FI_*`` alerts never can); the driver DaemonSet alert where the operator installs a driver; the upgrade
alert where its upgrade controller rolls driver upgrades (``autoUpgrade``).
"""

from __future__ import annotations

import re
from typing import Any

from gpuspec.model.cluster import Pool
from gpuspec.model.resolve import cluster_owners, pool_owner
from gpuspec.render.context import ClusterContext
from gpuspec.render.overlay import AFTER_CRDS, metadata

#: Name of the DCGM exporter's scrape job (its Service, which the chart's ServiceMonitor selects).
DCGM_JOB = "nvidia-dcgm-exporter"
#: GPU temperature (°C) above which the HighTemperature alert fires.
HIGH_TEMPERATURE_C = 85
#: Alerts about the GPUs themselves: the hardware owner's (every other alert is the platform owner's).
HARDWARE_ALERTS = frozenset({"GPUXidError", "GPUUncorrectableECCErrors", "GPUHighTemperature"})
#: The labels Alertmanager routes on, besides ``severity``.
CLUSTER_LABEL, TEAM_LABEL, POOL_LABEL = "cluster", "team", "pool"
#: What an alert watches (see :func:`alert_sources`); kube-state-metrics and the operator's own metrics are always on.
DCGM, DRIVER, DRIVER_UPGRADES, ALWAYS = "dcgm-exporter", "driver", "driver-upgrades", "always"
#: Each alert's source.
ALERT_SOURCE = {
    "GPUOperatorDCGMExporterTargetMissing": DCGM,
    "GPUXidError": DCGM,
    "GPUUncorrectableECCErrors": DCGM,
    "GPUHighTemperature": DCGM,
    "GPUOperatorOperandCrashLooping": ALWAYS,
    "GPUOperatorDriverValidationFailing": ALWAYS,
    "GPUOperatorClusterPolicyNotReady": ALWAYS,
    "GPUOperatorDriverNotReady": DRIVER,
    "GPUOperatorDriverUpgradeFailed": DRIVER_UPGRADES,
}


def alert_sources(ctx: ClusterContext) -> frozenset[str]:
    """What the cluster's values turn on that alerts watch: the DCGM exporter with its ServiceMonitor
    (``dcgmExporter.enabled`` and ``dcgmExporter.serviceMonitor.enabled``), operator-installed drivers (some pool's
    driver from the operator: the driver DaemonSets exist) and their upgrade controller (``autoUpgrade``)."""
    exporter = ctx.cluster.operator.operands.dcgm_exporter
    on = {ALWAYS}
    if exporter.enabled and exporter.service_monitor:
        on.add(DCGM)
    if ctx.driver_mode != "none":
        on.add(DRIVER)
        if ctx.cluster.rollout.auto_upgrade:
            on.add(DRIVER_UPGRADES)
    return frozenset(on)


def _rule(name: str, expr: str, duration: str, severity: str, summary: str, description: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": duration,
        "labels": {"severity": severity},
        "annotations": {"summary": summary, "description": description},
    }


def _vector(metric: str, *matchers: str, indent: int = 2) -> str:
    """A PromQL vector selector with one label matcher per line (rendered files keep lines short)."""
    pad = " " * indent
    inner = ",\n".join(f"{pad}  {m}" for m in matchers)
    return f"{metric}{{\n{inner}\n{pad}}}"


def alert_rules(ctx: ClusterContext) -> list[dict[str, Any]]:
    """The alerting rules of what the cluster runs (:func:`alert_sources`), scoped to its operator namespace."""
    ns = ctx.namespace
    sel = f'namespace="{ns}"'
    up = _vector("up", f'job="{DCGM_JOB}"', sel)
    rules = [
        _rule(
            "GPUOperatorDCGMExporterTargetMissing",
            f"absent(\n  {up} == 1\n)\nor (\n  {up} == 0\n)",
            "10m", "warning",
            "DCGM exporter target missing or down",
            "Prometheus scrapes no healthy DCGM exporter in namespace " + ns
            + "; GPU health metrics and the alerts below are blind.",
        ),
        _rule(
            "GPUXidError",
            "max by (Hostname, gpu, UUID, modelName) (DCGM_FI_DEV_XID_ERRORS) > 0",
            "0m", "warning",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} reported XID {{ $value }}",
            "An XID error indicates a driver, application or hardware fault; see the NVIDIA XID catalogue.",
        ),
        _rule(
            "GPUUncorrectableECCErrors",
            "increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[10m]) > 0",
            "0m", "critical",
            "Uncorrectable ECC errors on GPU {{ $labels.gpu }} of {{ $labels.Hostname }}",
            "Double-bit ECC errors were counted in the last 10 minutes; drain the node and check row remapping.",
        ),
        _rule(
            "GPUHighTemperature",
            f"DCGM_FI_DEV_GPU_TEMP > {HIGH_TEMPERATURE_C}",
            "10m", "warning",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} is at {{ $value }} °C",
            f"GPU temperature above {HIGH_TEMPERATURE_C} °C for 10 minutes; check cooling and throttling.",
        ),
        _rule(
            "GPUOperatorOperandCrashLooping",
            "max by (pod, container) (\n  "
            + _vector("kube_pod_container_status_waiting_reason", sel, 'reason="CrashLoopBackOff"')
            + "\n) > 0",
            "10m", "critical",
            "GPU Operator pod {{ $labels.pod }} ({{ $labels.container }}) is crash-looping",
            f"An operand in namespace {ns} restarts repeatedly; GPUs on its node may be unusable.",
        ),
        _rule(
            "GPUOperatorDriverValidationFailing",
            "max by (pod) (\n  "
            + _vector("kube_pod_init_container_status_waiting", sel, 'pod=~"nvidia-operator-validator-.*"')
            + "\n) > 0",
            "30m", "critical",
            "Driver/toolkit validation on {{ $labels.pod }} has not completed for 30 minutes",
            "The operator validator is stuck in its init containers: the driver or container toolkit on that node "
            "did not become ready.",
        ),
        _rule(
            "GPUOperatorClusterPolicyNotReady",
            "gpu_operator_reconciliation_status != 1",
            "30m", "critical",
            "GPU Operator ClusterPolicy is not ready",
            "The operator reports operands not ready, no ClusterPolicy, or a reconcile error for 30 minutes.",
        ),
        _rule(
            "GPUOperatorDriverNotReady",
            "max by (daemonset) (\n  "
            + _vector("kube_daemonset_status_number_unavailable", sel,
                      'daemonset=~"nvidia-driver-daemonset.*|nvidia-gpu-driver-.*"')
            + "\n) > 0",
            "30m", "critical",
            "Driver DaemonSet {{ $labels.daemonset }} has unavailable pods",
            "Driver pods of the ClusterPolicy or of an NVIDIADriver resource are not ready for 30 minutes.",
        ),
        _rule(
            "GPUOperatorDriverUpgradeFailed",
            "gpu_operator_nodes_upgrades_failed > 0",
            "0m", "warning",
            "{{ $value }} node(s) failed the driver upgrade",
            "The upgrade controller marked nodes upgrade-failed; see label nvidia.com/gpu-driver-upgrade-state.",
        ),
    ]
    on = alert_sources(ctx)
    return _routed(ctx, [r for r in rules if ALERT_SOURCE[r["alert"]] in on])


def alert_owner(alert: str) -> str:
    """The ownership role an alert belongs to: ``hardware`` for GPU faults, else ``platform``."""
    return "hardware" if alert in HARDWARE_ALERTS else "platform"


def node_label_name(key: str) -> str:
    """The kube-state-metrics label of node label ``key`` in ``kube_node_labels`` (``label_`` + sanitized key)."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)


def _pool_nodes(pools: list[Pool]) -> str:
    """The nodes of ``pools`` as a vector with a ``Hostname`` label (DCGM's), from kube_node_labels."""
    parts = []
    for pool in pools:
        matchers = [f'{node_label_name(k)}="{v}"' for k, v in sorted(pool.node_selector.items())]
        parts.append(f'label_replace(\n    {_vector("kube_node_labels", *matchers, indent=4)},\n'
                     '    "Hostname", "$1", "node", "(.*)"\n  )')
    return "\nor\n  ".join(parts)


def split_pools(ctx: ClusterContext) -> list[Pool]:
    """The managed pools whose hardware owner differs from the cluster's: their hardware alerts are their own."""
    owners = cluster_owners(ctx.fleet, ctx.cluster)
    return [p for p in ctx.cluster.pools if p.managed and pool_owner(ctx.fleet, ctx.cluster, p) != owners.hardware]


def _routed(ctx: ClusterContext, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every rule with the labels Alertmanager routes on: cluster and owner team; hardware alerts of pools whose
    hardware owner differs from the cluster's are split off per pool (labelled with the pool and its team),
    matched through ``kube_node_labels`` (kube-state-metrics must export the pools' selector labels; without
    them the pool copies stay silent and the cluster-wide rule, which excludes those nodes by the same join,
    still fires for them)."""
    owners = cluster_owners(ctx.fleet, ctx.cluster)
    own_pools = split_pools(ctx)
    out: list[dict[str, Any]] = []
    for rule in rules:
        team = owners.get(alert_owner(rule["alert"]))
        labels = {**rule["labels"], CLUSTER_LABEL: ctx.name}
        if team:
            labels[TEAM_LABEL] = team
        if alert_owner(rule["alert"]) != "hardware" or not own_pools:
            out.append({**rule, "labels": labels})
            continue
        out.append({**rule, "expr": f"(\n{rule['expr']}\n)\nunless on (Hostname) (\n  {_pool_nodes(own_pools)}\n)",
                    "labels": labels})
        for pool in own_pools:
            pool_labels = {**rule["labels"], CLUSTER_LABEL: ctx.name, POOL_LABEL: pool.name}
            pool_team = pool_owner(ctx.fleet, ctx.cluster, pool)
            if pool_team:
                pool_labels[TEAM_LABEL] = pool_team
            out.append({**rule, "expr": f"(\n{rule['expr']}\n)\nand on (Hostname) (\n  {_pool_nodes([pool])}\n)",
                        "labels": pool_labels})
    return out


def prometheus_rule(ctx: ClusterContext) -> dict[str, Any]:
    """The PrometheusRule object (monitoring.coreos.com/v1) in the operator namespace."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": metadata(ctx, "gpuspec-gpu-alerts", ctx.namespace, annotations=AFTER_CRDS),
        "spec": {"groups": [{"name": "gpuspec.gpu-operator", "rules": alert_rules(ctx)}]},
    }
