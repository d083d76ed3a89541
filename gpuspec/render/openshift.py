"""What OLM and GitOps apply on OpenShift (pure): the operator Namespace, OperatorGroup and pinned Subscription, the
NFD Operator's Subscription and NodeFeatureDiscovery instance, and the ClusterPolicy custom resource.

NVIDIA installs the GPU Operator on OpenShift through OLM (cloud-native-docs openshift/install-nfd.rst,
openshift/install-gpu-ocp.rst): the certified ``gpu-operator-certified`` package, after the Node Feature Discovery
Operator, with the ClusterPolicy created as a custom resource.  The ClusterPolicy (and the chart's default
NVIDIADriver, when the values deploy one) is what the chart's templates would write for the same compiled values over
the chart's values.yaml defaults (``chart_objects``), so both paths configure the operator alike.
"""

from __future__ import annotations

from typing import Any

from gpuspec.errors import GpuspecError
from gpuspec.matrix import openshift as ocp
from gpuspec.matrix.chartintent import chart_intent
from gpuspec.matrix.chartspec import ChartSpec, chart_spec, defaults_tree
from gpuspec.matrix.chartvalues import chart_index
from gpuspec.render.context import ClusterContext
from gpuspec.render.operand_images import rewrite
from gpuspec.render.overlay import AFTER_CRDS, KEEP_NAMESPACE, metadata

#: Name of the ClusterPolicy NVIDIA's OpenShift procedure creates (CSV alm-examples).
CLUSTER_POLICY = "gpu-cluster-policy"
#: Name of the chart's default NVIDIADriver (templates/nvidiadriver.yaml).
DEFAULT_NVIDIADRIVER = "default"
#: OLM objects apply first; the ClusterPolicy after the CSV brings its CRD.
OLM_WAVE = {"argocd.argoproj.io/sync-wave": "0"}


def is_openshift(ctx: ClusterContext) -> bool:
    """True for ``kubernetes.distribution: openshift``."""
    return ctx.cluster.kubernetes.distribution.value == "openshift"


def openshift_values(values: dict[str, Any]) -> None:
    """The OpenShift switches of the Helm values: the chart's OpenShift templates (SCCs), the driver toolkit build
    (entitlement-free RHCOS drivers), no chart NFD beside the NFD Operator, SCCs instead of PSA labels."""
    values.setdefault("platform", {})["openshift"] = True
    values.setdefault("operator", {})["use_ocp_driver_toolkit"] = True
    values["nfd"] = {"enabled": False}
    values.pop("node-feature-discovery", None)
    values["psa"] = {"enabled": False}


def chart_objects(values: dict[str, Any], tag: str) -> dict[str, ChartSpec]:
    """What the chart of release ``tag`` writes for ``values`` over its values.yaml defaults, per kind (the
    ClusterPolicy and the default NVIDIADriver), computed from the packaged chart data.

    The chart's values.yaml defaults matter: ``helm install`` merges them under the values, so a ClusterPolicy
    built from the values alone would miss every setting only the defaults carry (driver upgrade policy, operand
    images, ``daemonsets.priorityClassName`` …).  The CSV's ``alm-examples`` are OLM's sample, not these defaults.
    """
    intent, index = chart_intent(tag), chart_index(tag)
    if intent is None or index is None:
        missing = " and ".join(n for n, d in (("chart-intent", intent), ("chart-values", index)) if d is None)
        raise GpuspecError(f"GPU Operator {tag}: gpuspec has no {missing} data for this release, so it cannot build "
                           "the ClusterPolicy the chart would (OpenShift); pin a release it has (GS510)")
    defaults = defaults_tree(index)
    return {kind: chart_spec(values, defaults, intent, tag, kind) for kind in ("ClusterPolicy", "NVIDIADriver")}


def clusterpolicy_spec(values: dict[str, Any], tag: str) -> dict[str, Any]:
    """The ClusterPolicy ``spec`` the chart of release ``tag`` renders from ``values`` (defaults merged in)."""
    return chart_objects(values, tag)["ClusterPolicy"].spec


def custom_resources(ctx: ClusterContext, values: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Overlay file -> the custom resources the chart would create from ``values`` and OLM does not: the
    ClusterPolicy, and the chart's default NVIDIADriver when the values deploy it (NVIDIADriver management with
    ``deployDefaultCR``)."""
    objects = chart_objects(values, ctx.facts.tag)
    files = {"clusterpolicy.yaml": [{
        "apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
        "metadata": metadata(ctx, CLUSTER_POLICY, annotations=AFTER_CRDS),
        "spec": objects["ClusterPolicy"].spec,
    }]}
    driver = objects["NVIDIADriver"]
    if driver.rendered:  # the file name has a dot: no pool's nvidiadriver-<pool>.yaml (a DNS label) clashes
        files["nvidiadriver.default.yaml"] = [{
            "apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver",
            "metadata": metadata(ctx, DEFAULT_NVIDIADRIVER, annotations=AFTER_CRDS),
            "spec": driver.spec,
        }]
    return files


def _catalog(ctx: ClusterContext, default: str) -> str:
    """The CatalogSource a Subscription uses: the default catalog, or its mirror on a disconnected cluster."""
    if ctx.mirror is None:
        return default
    return ctx.mirror.catalog_sources.get(default, default)


def olm_objects(ctx: ClusterContext) -> dict[str, list[dict[str, Any]]]:
    """File name → documents OLM needs: Namespace, OperatorGroup, the pinned Subscription; the NFD Operator's."""
    olm = ocp.olm()
    ns = ctx.namespace
    version = ctx.facts.version
    ns_meta = metadata(ctx, ns, annotations={**KEEP_NAMESPACE, **OLM_WAVE})
    ns_meta["labels"]["openshift.io/cluster-monitoring"] = "true"  # the CSV's operatorframework.io/cluster-monitoring
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": ns_meta}
    group = {
        "apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
        "metadata": metadata(ctx, "nvidia-gpu-operator-group", ns, annotations=OLM_WAVE),
        "spec": {"targetNamespaces": [ns]},
    }
    subscription = {
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
        "metadata": metadata(ctx, olm.package, ns, annotations=OLM_WAVE),
        "spec": {
            "name": olm.package,
            "channel": ocp.channel(version),
            "startingCSV": ocp.csv_name(version),
            "installPlanApproval": "Manual",
            "source": _catalog(ctx, olm.catalog_source),
            "sourceNamespace": olm.catalog_namespace,
        },
    }
    files: dict[str, list[dict[str, Any]]] = {
        "gpu-operator.olm.yaml": [namespace, group, subscription],
        "installplan-approval.yaml": installplan_approval(ctx),
    }
    if ctx.cluster.operator.operands.nfd:
        files["nfd.olm.yaml"] = nfd_objects(ctx)
    return files


def nfd_objects(ctx: ClusterContext) -> list[dict[str, Any]]:
    """The NFD Operator (Namespace, OperatorGroup, Subscription) and its NodeFeatureDiscovery instance."""
    nfd = ocp.nfd()
    ns = nfd.namespace
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": metadata(ctx, ns, annotations={**KEEP_NAMESPACE, **OLM_WAVE})},
        {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
         "metadata": metadata(ctx, f"{ns}-group", ns, annotations=OLM_WAVE),
         "spec": {"targetNamespaces": [ns]}},
        {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
         "metadata": metadata(ctx, nfd.package, ns, annotations=OLM_WAVE),
         "spec": {"name": nfd.package, "channel": nfd.channel, "installPlanApproval": "Automatic",
                  "source": _catalog(ctx, nfd.catalog_source), "sourceNamespace": nfd.catalog_namespace}},
        {"apiVersion": "nfd.openshift.io/v1", "kind": "NodeFeatureDiscovery",
         "metadata": metadata(ctx, nfd.instance, ns, annotations=AFTER_CRDS),
         "spec": {"workerConfig": {"configData": ""}}},
    ]


#: The approval Job's image: Red Hat's OpenShift CLI image of the cluster's OpenShift minor (``oc``).
CLI_IMAGE = "registry.redhat.io/openshift4/ose-cli"
APPROVER = "gpuspec-installplan-approver"

#: Approve exactly the InstallPlan that installs the pinned CSV; wait for OLM to create it (bounded).
APPROVE_SCRIPT = """set -eu
for attempt in $(seq 1 60); do
  plan=$(oc get installplans -n "$NAMESPACE" \\
    -o jsonpath="{range .items[*]}{.metadata.name}{' '}{.spec.clusterServiceVersionNames}{'\\n'}{end}" \\
    | awk -v csv="\\"$CSV\\"" 'index($0, csv) {print $1; exit}')
  if [ -n "$plan" ]; then
    oc patch installplan "$plan" -n "$NAMESPACE" --type merge -p '{"spec":{"approved":true}}'
    echo "approved InstallPlan $plan for $CSV"
    exit 0
  fi
  echo "waiting for the InstallPlan of $CSV ($attempt/60)"
  sleep 10
done
echo "no InstallPlan for $CSV after 10 minutes" >&2
exit 1
"""


def installplan_approval(ctx: ClusterContext) -> list[dict[str, Any]]:
    """The Job that approves the Manual InstallPlan of the pinned CSV (and only that one), with its minimal RBAC.

    Argo CD runs it as a Sync hook in the Subscription's wave (the Subscription turns healthy once the plan is
    approved and the CSV installs); Flux applies it with the OLM objects and waits for it (``wait: true``).
    """
    ns = ctx.namespace
    csv = ocp.csv_name(ctx.facts.version)
    openshift_version = ctx.cluster.kubernetes.openshift_version
    if openshift_version is None:
        raise GpuspecError(f"cluster {ctx.name}: OpenShift clusters need kubernetes.openshiftVersion (the approval Job "
                           "runs the OpenShift CLI image of that release)")
    image = rewrite(f"{CLI_IMAGE}:v{ocp.openshift_minor(openshift_version)}", ctx.mirror)
    rbac_wave = {"argocd.argoproj.io/sync-wave": "-1"}
    job_name = f"approve-{csv}".replace(".", "-")[:63].rstrip("-")
    hook = {
        "argocd.argoproj.io/hook": "Sync",
        "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
        "argocd.argoproj.io/sync-wave": "0",
    }
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata(ctx, APPROVER, ns, annotations=rbac_wave)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": metadata(ctx, APPROVER, ns, annotations=rbac_wave),
         "rules": [{"apiGroups": ["operators.coreos.com"], "resources": ["installplans"],
                    "verbs": ["get", "list", "patch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": metadata(ctx, APPROVER, ns, annotations=rbac_wave),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": APPROVER},
         "subjects": [{"kind": "ServiceAccount", "name": APPROVER, "namespace": ns}]},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata(ctx, job_name, ns, annotations=hook),
         "spec": {
             "backoffLimit": 2,
             "template": {"spec": {
                 **({"imagePullSecrets": [{"name": s} for s in ctx.pull_secrets]} if ctx.pull_secrets else {}),
                 "serviceAccountName": APPROVER,
                 "restartPolicy": "Never",
                 "containers": [{
                     "name": "approve",
                     "image": image,
                     "command": ["/bin/bash", "-c", APPROVE_SCRIPT],
                     "env": [{"name": "NAMESPACE", "value": ns}, {"name": "CSV", "value": csv}],
                     "securityContext": {
                         "allowPrivilegeEscalation": False, "runAsNonRoot": True,
                         "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"},
                     },
                 }],
             }},
         }},
    ]


def openshift_images(ctx: ClusterContext) -> dict[str, str]:
    """Images an OpenShift cluster needs beyond the operands: the approval Job's CLI image and the operator catalog
    indexes a disconnected cluster mirrors (oc-mirror).  The Driver Toolkit image is part of the OpenShift release
    payload (per z-stream digest) and is mirrored with the release, so it is named in docs/openshift.md, not here."""
    version = ctx.cluster.kubernetes.openshift_version
    if version is None:
        return {}
    refs = [f"{CLI_IMAGE}:v{ocp.openshift_minor(version)}", ocp.catalog_image(version, ocp.olm().catalog_index)]
    if ctx.cluster.operator.operands.nfd:
        refs.append(ocp.catalog_image(version, ocp.nfd().catalog_index))
    # The approval Job pulls through the mirror like every operand; the catalog indexes are what oc-mirror copies.
    return {ref: rewrite(ref, ctx.mirror) if ref.startswith(CLI_IMAGE + ":") else ref for ref in refs}
