"""Finding ids of verify's apply checks: what Argo CD and Flux do with the rendered units (GS920–GS924)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

_ARGO = ("argoproj/argo-cd v3.5.1 pkg/apis/application/v1alpha1/app_project_types.go (IsGroupKindNamePermitted, "
         "isDestinationMatched, globMatch), controller/sync.go validateSyncPermissions")
_FLUX = ("fluxcd/kustomize-controller v1.9.4 api/v1/kustomization_types.go (targetNamespace), "
         "internal/controller/kustomization_controller.go (checkDependencies)")

ARGOCD_NAMESPACE_NOT_PERMITTED = Entry(
    id="GS920",
    title="namespace not permitted by the Argo CD project",
    severity=Severity.ERROR,
    rationale=(
        "Argo CD checks every namespaced object of a sync against its AppProject's destinations (server or name "
        "and namespace globs, `!` deny entries); one object in a namespace the project does not permit fails "
        "the whole sync, so none of the Application's objects apply."
    ),
    doc="""
For each Argo CD Application under `rendered/gitops/argocd/`, verify takes the objects of its sources (the kustomize
builds of its `path` sources, the chart's `helm template` output for a `chart` source) and evaluates each namespaced
object's namespace (the Application's destination namespace when it has none) against the AppProject's
`destinations` as Argo CD v3.5.1's `isDestinationMatched` does. The Application's own destination is checked too.

Failing: the overlay Application syncs the acceptance Jobs into `gpuspec-acceptance`, and the AppProject lists only
`gpu-operator`. Passing: the AppProject lists `gpuspec-acceptance` for the cluster (gpuspec renders it so).
""",
    source=_ARGO,
)

ARGOCD_KIND_NOT_PERMITTED = Entry(
    id="GS921",
    title="kind not permitted by the Argo CD project",
    severity=Severity.ERROR,
    rationale=(
        "Argo CD refuses a cluster-scoped kind its AppProject's clusterResourceWhitelist does not name (or its "
        "blacklist names), and a namespaced kind a namespaceResourceWhitelist misses or a blacklist names; the "
        "whole sync fails."
    ),
    doc="""
Cluster-scoped or namespaced comes from Kubernetes' built-in kinds and from the CRDs verify loads (the chart's,
the sync's own, `--crds`). Patterns are matched with Go's `filepath.Match`, as Argo CD does; `name` of a cluster
resource entry is honoured.

Failing: the chart Application renders a `ValidatingWebhookConfiguration`, which the project's
clusterResourceWhitelist does not name. Passing: the whitelist names it (or `{group: '*', kind: '*'}`).
""",
    source=_ARGO,
)

FLUX_TARGET_NAMESPACE = Entry(
    id="GS922",
    title="object moved by the Flux Kustomization's targetNamespace",
    severity=Severity.ERROR,
    rationale=(
        "A Flux Kustomization's targetNamespace sets or overrides the namespace of every namespaced object it "
        "applies: an object written for another namespace (a tenant's quota) lands in the target namespace and "
        "its own namespace never gets it."
    ),
    doc="""
Failing: a Kustomization with `targetNamespace: gpu-operator` whose path holds a tenant's ResourceQuota in
`research`. Passing: no targetNamespace (gpuspec's Kustomizations keep each object's namespace), or objects only in
the target namespace.
""",
    source=_FLUX,
)

FLUX_MISSING_DEPENDS_ON = Entry(
    id="GS923",
    title="custom resource applied without dependsOn on the Kustomization that installs its CRD",
    severity=Severity.ERROR,
    rationale=(
        "Flux applies Kustomizations independently unless dependsOn orders them; a custom resource whose CRD "
        "another Kustomization (or the HelmRelease in it) installs fails the first apply of its Kustomization."
    ),
    doc="""
Failing: the overlay Kustomization applies an NVIDIADriver while the release Kustomization (whose HelmRelease
installs the chart's CRDs) is not in its `dependsOn`. Passing: `dependsOn: [{name: <cluster>-gpu-operator}]`
(directly or through another Kustomization).
""",
    source=_FLUX,
)

OPTIONAL_CRD_IN_CORE_UNIT = Entry(
    id="GS924",
    title="object needing an optional CRD in the same sync as the GPU stack",
    severity=Severity.ERROR,
    rationale=(
        "An object whose kind is not built in and whose CRD nothing of the sync installs (a PrometheusRule, a "
        "ServiceMonitor without the Prometheus Operator) fails the apply of its whole Application or Kustomization "
        "where the CRD is missing; beside the device-plugin and MIG ConfigMaps the ClusterPolicy names, the GPU "
        "stack then never gets its configuration."
    ),
    doc="""
A unit (Argo CD Application, Flux Kustomization) may hold objects of optional kinds only when it holds nothing else:
kinds count as provided when they are built in, when the unit installs their CRD, or when a unit it depends on does
(Flux `dependsOn`; for Argo CD another Application of the same cluster, such as the chart's).

Failing: alerts.yaml (a PrometheusRule) listed in the overlay beside device-plugin-config.yaml. Passing: the alerts in
their own folder (`rendered/clusters/<cluster>/monitoring/`) delivered by their own Application / Kustomization.
""",
    source=_ARGO + "; " + _FLUX,
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    ARGOCD_NAMESPACE_NOT_PERMITTED,
    ARGOCD_KIND_NOT_PERMITTED,
    FLUX_TARGET_NAMESPACE,
    FLUX_MISSING_DEPENDS_ON,
    OPTIONAL_CRD_IN_CORE_UNIT,
)
