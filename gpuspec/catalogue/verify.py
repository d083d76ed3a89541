"""Findings of `gpuspec verify` (GS9xx): what helm, kustomize and the schemas say about rendered/."""

from __future__ import annotations

from gpuspec.catalogue import verify_apiserver
from gpuspec.catalogue.entry import Entry
from gpuspec.catalogue.verify_intent import ENTRIES as INTENT_ENTRIES
from gpuspec.catalogue.verify_openshift import ENTRIES as OPENSHIFT_ENTRIES
from gpuspec.findings import Severity

HELM_TEMPLATE_FAILED = Entry(
    id="GS901",
    title="helm template failed",
    severity=Severity.ERROR,
    rationale=(
        "helm template of the GPU Operator chart with the cluster's rendered values and Kubernetes version "
        "failed (template error, kubeVersion constraint, invalid output). Argo CD / Flux would fail the same "
        "way."
    ),
)

CHART_VERSION_MISMATCH = Entry(
    id="GS902",
    title="chart version differs from the cluster's operator pin",
    severity=Severity.ERROR,
    rationale=(
        "The chart given with --chart has another version than the GPU Operator release the cluster pins, so "
        "the helm checks of that cluster were skipped. Pass the chart of the pinned release (--chart may be "
        "repeated)."
    ),
)

UNKNOWN_VALUES_KEY = Entry(
    id="GS903",
    title="values key the chart does not know",
    severity=Severity.ERROR,
    rationale=(
        "helm ignores values keys its chart does not read; the setting silently has no effect. Keys are "
        "compared with the chart's own values.yaml (including keys it documents in comments)."
    ),
)

IMAGE_OUTSIDE_MIRROR = Entry(
    id="GS904",
    title="image outside the cluster's mirror",
    severity=Severity.ERROR,
    rationale=(
        "An air-gapped cluster pulls an image whose reference does not start with one of its mirror's "
        "registry prefixes (fleet.yaml mirrors[].registries); the pull would fail or leave the air gap."
    ),
)

IMAGE_VERSION_NOT_PINNED = Entry(
    id="GS905",
    title="operand image version differs from the release pin",
    severity=Severity.ERROR,
    rationale=(
        "An operand image version in what helm renders (ClusterPolicy spec, Deployments, DaemonSets, Jobs) or "
        "in an NVIDIADriver differs from the version gpuspec's support matrix pins for the cluster's GPU "
        "Operator release (drivers: the versions the cluster's pools choose)."
    ),
)

CONFIG_NOT_FOUND = Entry(
    id="GS906",
    title="MIG or device-plugin config name without a ConfigMap",
    severity=Severity.ERROR,
    rationale=(
        "migManager.config.name or devicePlugin.config.name in the values names a ConfigMap that neither the "
        "cluster's overlay nor the chart creates in the operator namespace, or its default key is missing "
        "from it."
    ),
)

KUSTOMIZE_FAILED = Entry(
    id="GS907",
    title="kustomize build of the overlay failed",
    severity=Severity.ERROR,
    rationale=(
        "`kubectl kustomize` (or `kustomize build`) of rendered/clusters/<cluster> failed; Argo CD / Flux "
        "would fail to sync it."
    ),
)

BUILTIN_SCHEMA_INVALID = Entry(
    id="GS908",
    title="object invalid against the Kubernetes schema",
    severity=Severity.ERROR,
    rationale=(
        "A built-in object (ConfigMap, Deployment, ResourceQuota, …) does not validate against the strict "
        "Kubernetes JSON schema of the cluster's Kubernetes version; the API server would reject it."
    ),
)

CRD_SCHEMA_INVALID = Entry(
    id="GS909",
    title="custom resource invalid against its CRD",
    severity=Severity.ERROR,
    rationale=(
        "A custom resource (ClusterPolicy, NVIDIADriver, Argo CD / Flux / Prometheus Operator objects) does "
        "not validate against the openAPIV3Schema of its CRD (the chart's crds/ plus --crds directories), or "
        "uses a version the CRD does not serve."
    ),
)

NO_SCHEMA = Entry(
    id="GS910",
    title="no schema for an object",
    severity=Severity.WARNING,
    rationale=(
        "Neither a built-in Kubernetes schema nor a loaded CRD knows the object's kind and apiVersion, so it "
        "was not validated. Declare the Argo CD, Flux or Prometheus Operator release in fleet.yaml `platform:` and run "
        "`gpuspec tools install`, or point --crds at their CRDs."
    ),
)

PLATFORM_CRDS_MISSING = Entry(
    id="GS916",
    title="CRDs of a declared platform release are not available",
    severity=Severity.WARNING,
    rationale=(
        "fleet.yaml declares the Argo CD, Flux or Prometheus Operator release its clusters run, but that release's "
        "pinned CRDs are not in gpuspec's user cache (or gpuspec pins none for it), so its objects are not validated."
    ),
    doc="""
`platform:` in fleet.yaml names the releases of the controllers that apply and watch the rendered output. `gpuspec
tools install` downloads the CRDs of each declared release (pinned URL at the release tag, size and sha256 checked)
into the user cache, where `verify` loads them beside the chart's own CRDs and any `--crds` folder. When a declared
release's CRDs are missing, verify says so once (beside the GS910 warnings of the objects it could not validate),
unless `--crds DIR` (vendored CRDs, offline) holds every CRD of that project.

Failing: `platform: {argocd: v3.5.1}` before `gpuspec tools install`.  Passing: no `platform:`, or its CRDs installed.
""",
)

RENDERED_MISSING = Entry(
    id="GS911",
    title="rendered output missing or unreadable",
    severity=Severity.ERROR,
    rationale=(
        "rendered/clusters/<cluster>/ lacks a file verify needs (gpu-operator.values.yaml, "
        "kustomization.yaml, images.txt), or a rendered file is not valid YAML. Run `gpuspec render`."
    ),
)

RELEASE_UNKNOWN = Entry(
    id="GS912",
    title="release not in the support matrix",
    severity=Severity.WARNING,
    rationale=(
        "The cluster's GPU Operator release is not in gpuspec's support matrix, so operand image versions "
        "could not be compared with its pins."
    ),
)

IMAGE_NOT_LISTED = Entry(
    id="GS913",
    title="image missing from images.txt",
    severity=Severity.ERROR,
    rationale=(
        "An image the cluster pulls (per helm's output and the overlay) is not listed in the cluster's "
        "images.txt, the list an air-gap mirror sync works from."
    ),
)

CHART_PULL_FAILED = Entry(
    id="GS914",
    title="chart could not be pulled",
    severity=Severity.ERROR,
    rationale=(
        "helm pull of the GPU Operator chart at the cluster's pinned version failed: the source (--chart "
        "reference, else fleet.yaml mirrors[].chart.repository, else NGC) is unreachable, does not have that "
        "version, or needs a login. The helm checks of that cluster were skipped."
    ),
)

MIRRORED_IMAGE_WITHOUT_SECRET = Entry(
    id="GS915",
    title="mirrored image pulled without the mirror's pull secret",
    severity=Severity.ERROR,
    rationale=(
        "An image of an air-gapped cluster comes from the mirror, but the pod or operand that pulls it carries "
        "none of the mirror's pull secrets: the kubelet's pull is refused (ErrImagePull) when the mirror needs them."
    ),
    doc="""
In helm's output and the overlay of an air-gapped cluster whose mirror names `pullSecrets`, every image from the
mirror is pulled by something that carries one of them: a pod's `imagePullSecrets`, or the `imagePullSecrets` of
the ClusterPolicy / NVIDIADriver operand block (or of the block it belongs to: `driver.manager` runs in the
driver pod).

Failing: a values file whose `dcgmExporter` has no `imagePullSecrets` while the exporter image comes from the
mirror.  Passing: `dcgmExporter.imagePullSecrets: [harbor-pull]` (the chart's template reads it).
""",
    source="cloud-native-docs gpu-operator/install-gpu-operator-air-gapped.rst (local registry with pull secrets)",
)

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
    HELM_TEMPLATE_FAILED,
    CHART_VERSION_MISMATCH,
    UNKNOWN_VALUES_KEY,
    IMAGE_OUTSIDE_MIRROR,
    IMAGE_VERSION_NOT_PINNED,
    CONFIG_NOT_FOUND,
    KUSTOMIZE_FAILED,
    BUILTIN_SCHEMA_INVALID,
    CRD_SCHEMA_INVALID,
    NO_SCHEMA,
    RENDERED_MISSING,
    RELEASE_UNKNOWN,
    IMAGE_NOT_LISTED,
    CHART_PULL_FAILED,
    MIRRORED_IMAGE_WITHOUT_SECRET,
    PLATFORM_CRDS_MISSING,
    ARGOCD_NAMESPACE_NOT_PERMITTED,
    ARGOCD_KIND_NOT_PERMITTED,
    FLUX_TARGET_NAMESPACE,
    FLUX_MISSING_DEPENDS_ON,
    OPTIONAL_CRD_IN_CORE_UNIT,
    *INTENT_ENTRIES,  # GS930-GS931
    *verify_apiserver.ENTRIES,  # GS940-GS945, declared in their own module
    *OPENSHIFT_ENTRIES,  # GS950
)
