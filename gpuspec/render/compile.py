"""Compile a validated Fleet into a render plan: per cluster, output path → documents (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.redaction import redact_text
from gpuspec.render.acceptance import ACCEPTANCE_DIR, acceptance_checks, acceptance_files
from gpuspec.render.alerts import prometheus_rule
from gpuspec.render.autoscaling import AUTOSCALING_FILE, autoscaling_facts
from gpuspec.render.bootstrap import bootstrap_files, entries_digest, fleet_entries
from gpuspec.render.chart_reads import drop_unread
from gpuspec.render.context import ClusterContext, cluster_context
from gpuspec.render.deviations import apply_overrides, deviation_records
from gpuspec.render.filetree import ClusterPlan, RenderPlan, TextFile, YamlFile
from gpuspec.render.gitops import MONITORING_DIR, argocd_applications, flux_kustomizations, flux_release_files
from gpuspec.render.inputs import InputDigests
from gpuspec.render.openshift import (
    custom_resources,
    is_openshift,
    olm_objects,
    openshift_images,
    openshift_values,
)
from gpuspec.render.operand_images import cluster_images
from gpuspec.render.overlay import (
    OPERATOR_PSA,
    PREREQUISITES_DIR,
    device_plugin_configmap,
    kustomization,
    mig_configmap,
    namespace,
    node_labels,
    nvidia_driver,
    priority_class_quota,
    priority_classes,
    rbac,
    tenant_objects,
)
from gpuspec.render.roles import access_roles
from gpuspec.render.values import helm_values

#: The overlay file that lists the overlay's resources.
KUSTOMIZATION = "kustomization.yaml"
#: OpenShift: the folder of the OLM objects (Namespace, OperatorGroup, Subscriptions), applied before the overlay.
OLM_DIR = "olm"
#: The record of the cluster's deliberate deviations (written when it has any).
DEVIATIONS_FILE = "deviations.yaml"
#: The PrometheusRule's file, in the monitoring folder.
ALERTS_FILE = "alerts.yaml"


def redact_strings(data: Any) -> Any:
    """``data`` with every string passed through :func:`gpuspec.redaction.redact_text`: the free text of deviation
    records (reasons, justifications) is written as people wrote it, and a credential-shaped part of it
    (``apiKey: ...`` inside a sentence, which GS405 does not refuse in prose) never reaches rendered/."""
    if isinstance(data, str):
        return redact_text(data)
    if isinstance(data, dict):
        return {key: redact_strings(value) for key, value in data.items()}
    if isinstance(data, list):
        return [redact_strings(value) for value in data]
    return data


def _overlay(ctx: ClusterContext) -> dict[str, list[Any]]:
    """Overlay resource file name → its documents."""
    files: dict[str, list[Any]] = {}
    if ctx.cluster.gitops.tool == "flux" and priority_class_quota(ctx) is None and not is_openshift(ctx):
        # Argo CD creates the namespace with these labels (managedNamespaceMetadata) before the chart installs;
        # with a prerequisites folder, Flux applies the namespace there; on OpenShift the OLM folder has it.
        files["namespace.yaml"] = [namespace(ctx, ctx.namespace, OPERATOR_PSA)]
    for driver in ctx.pool_drivers:
        doc = nvidia_driver(ctx, driver)
        apply_overrides(doc["spec"], driver.pool.driver_overrides)
        files[f"nvidiadriver-{driver.pool.name}.yaml"] = [doc]
    if ctx.custom_mig:
        files["mig-config.yaml"] = [mig_configmap(ctx)]
    if ctx.sharing_pools:
        files["device-plugin-config.yaml"] = [device_plugin_configmap(ctx)]
    for tenant in ctx.cluster.tenants:
        files[f"tenant-{tenant.name}.yaml"] = tenant_objects(ctx, tenant)
    if ctx.cluster.priority_classes:
        files["priorityclasses.yaml"] = priority_classes(ctx)
    files["rbac.yaml"] = [*rbac(ctx), *access_roles(ctx)]
    return files


def _prerequisites(ctx: ClusterContext) -> dict[str, list[Any]]:
    """Prerequisites file name → its documents: what the platform needs before the chart's pods are admitted."""
    quota = priority_class_quota(ctx)
    if quota is None:
        return {}
    files: dict[str, list[Any]] = {}
    if ctx.cluster.gitops.tool == "flux":
        files["namespace.yaml"] = [namespace(ctx, ctx.namespace, OPERATOR_PSA)]
    files["operator-quota.yaml"] = [quota]
    return files


def compile_cluster(fleet: Fleet, cluster: Cluster, digest: str,
                    accepted: Sequence[Mapping[str, Any]] = ()) -> ClusterPlan:
    """The plan of one cluster: values, overlay, images.txt and its GitOps objects.

    ``accepted``: records of the findings policy exceptions accept in this cluster (rule, message, spec path,
    owner, reason, expiry), written with the deliberate deviations into ``deviations.yaml``.
    """
    ctx = cluster_context(fleet, cluster)
    plan = ClusterPlan(name=cluster.name, digest=digest)
    base = f"clusters/{cluster.name}"
    overlay = _overlay(ctx)
    values = helm_values(ctx)
    if is_openshift(ctx):
        openshift_values(values)
    values = apply_overrides(values, cluster.overrides)
    drop_unread(values, ctx.facts.tag, [o.path for o in cluster.overrides])  # only what the pinned chart reads
    if is_openshift(ctx):
        # OLM installs the operator; the ClusterPolicy (and the chart's default NVIDIADriver) are custom resources,
        # written as the chart would write them for the same values.
        overlay.update(custom_resources(ctx, values))
        olm = olm_objects(ctx)
        for name, docs in olm.items():
            plan.files[f"{base}/{OLM_DIR}/{name}"] = YamlFile(tuple(docs))
        plan.files[f"{base}/{OLM_DIR}/{KUSTOMIZATION}"] = YamlFile((kustomization(list(olm)),))
    for name, docs in overlay.items():
        plan.files[f"{base}/{name}"] = YamlFile(tuple(docs))
    plan.files[f"{base}/{KUSTOMIZATION}"] = YamlFile((kustomization(list(overlay)),))
    prerequisites = _prerequisites(ctx)
    for name, docs in prerequisites.items():
        plan.files[f"{base}/{PREREQUISITES_DIR}/{name}"] = YamlFile(tuple(docs))
    if prerequisites:
        plan.files[f"{base}/{PREREQUISITES_DIR}/{KUSTOMIZATION}"] = YamlFile((kustomization(list(prerequisites)),))
    plan.files[f"{base}/gpu-operator.values.yaml"] = YamlFile((values,))
    labels = node_labels(ctx)
    plan.files[f"{base}/node-labels.yaml"] = YamlFile((labels,))
    nvidiadriver_pools = {d.pool.name for d in ctx.pool_drivers}
    plan.deviations = deviation_records(cluster, ctx.facts, nvidiadriver_pools)
    plan.accepted = [dict(a) for a in accepted]
    if plan.deviations or plan.accepted:
        record: dict[str, Any] = {"cluster": cluster.name, "release": ctx.facts.tag, "deviations": plan.deviations}
        if plan.accepted:
            record["accepted"] = plan.accepted
        plan.files[f"{base}/{DEVIATIONS_FILE}"] = YamlFile((redact_strings(record),))
    checks = acceptance_checks(ctx, {p: f.documents for p, f in plan.files.items() if isinstance(f, YamlFile)})
    plan.acceptance = [c.to_data() for c in checks]
    autoscaling = autoscaling_facts(ctx, labels)  # after the checks: autoscaler bounds rename no acceptance Job
    if autoscaling is not None:
        plan.files[f"{base}/{AUTOSCALING_FILE}"] = YamlFile((autoscaling,))
    accept = acceptance_files(ctx, checks)
    for name, docs in accept.items():
        plan.files[f"{base}/{ACCEPTANCE_DIR}/{name}"] = YamlFile(tuple(docs))
    if accept:
        plan.files[f"{base}/{ACCEPTANCE_DIR}/{KUSTOMIZATION}"] = YamlFile((kustomization(list(accept)),))
    monitoring = bool(cluster.operator.operands.alerts)
    if monitoring:
        # Objects that need optional CRDs (the Prometheus Operator's) sync on their own, after the overlay:
        # where the CRDs are missing only they fail, never the ConfigMaps the ClusterPolicy names.
        plan.files[f"{base}/{MONITORING_DIR}/{ALERTS_FILE}"] = YamlFile((prometheus_rule(ctx),))
        plan.files[f"{base}/{MONITORING_DIR}/{KUSTOMIZATION}"] = YamlFile((kustomization([ALERTS_FILE]),))
    plan.images = cluster_images(ctx)
    if is_openshift(ctx):
        plan.images.update(openshift_images(ctx))
    plan.files[f"{base}/images.txt"] = TextFile(tuple(sorted(set(plan.images.values()))))
    if cluster.gitops.tool == "argocd":
        for name, app in argocd_applications(ctx, acceptance=bool(checks), prerequisites=bool(prerequisites),
                                             monitoring=monitoring).items():
            plan.files[f"gitops/argocd/{cluster.name}/{name}"] = YamlFile((app,))
    else:
        flux_dir = f"gitops/flux/{cluster.name}"
        if not is_openshift(ctx):  # OpenShift: OLM installs the operator, from clusters/<name>/olm
            for name, doc in flux_release_files(ctx).items():
                plan.files[f"{flux_dir}/release/{name}"] = YamlFile((doc,))
        plan.files[f"{flux_dir}/kustomizations.yaml"] = YamlFile(
            tuple(flux_kustomizations(ctx, checks, prerequisites=bool(prerequisites), monitoring=monitoring)))
        plan.files[f"{flux_dir}/{KUSTOMIZATION}"] = YamlFile((kustomization(["kustomizations.yaml"]),))
    return plan


def compile_fleet(fleet: Fleet, inputs: InputDigests, only: Iterable[str] | None = None) -> RenderPlan:
    """The render plan of every cluster of ``fleet`` (or of the clusters named in ``only``)."""
    wanted = set(only) if only is not None else None
    clusters = sorted(fleet.clusters, key=lambda c: c.name)
    plan = RenderPlan([
        compile_cluster(fleet, c, inputs.for_cluster(c.source_file))
        for c in clusters if wanted is None or c.name in wanted
    ])
    if wanted is None:
        entries = fleet_entries(fleet)
        plan.shared = {path: YamlFile((doc,)) for path, doc in bootstrap_files(fleet, entries).items()}
        plan.shared_digest = entries_digest(inputs.for_shared(), entries)
    return plan
