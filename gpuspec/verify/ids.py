"""The GS9xx finding ids of ``gpuspec verify``: title, default severity and help text of each."""

from __future__ import annotations

from dataclasses import dataclass

from gpuspec.findings import Severity
from gpuspec.report.base import RuleDoc


@dataclass(frozen=True, slots=True)
class VerifyCheck:
    """One class of verify finding: its id, title, default severity and a help paragraph."""

    id: str
    title: str
    severity: Severity
    help: str

    def doc(self) -> RuleDoc:
        """The reporter-facing description of this id."""
        return RuleDoc(self.id, self.title, self.severity.value, self.help)


HELM_TEMPLATE_FAILED = VerifyCheck(
    "GS901", "helm template failed", Severity.ERROR,
    "helm template of the GPU Operator chart with the cluster's rendered values and Kubernetes version failed "
    "(template error, kubeVersion constraint, invalid output). Argo CD / Flux would fail the same way.",
)
CHART_VERSION_MISMATCH = VerifyCheck(
    "GS902", "chart version differs from the cluster's operator pin", Severity.ERROR,
    "The chart given with --chart has another version than the GPU Operator release the cluster pins, so the "
    "helm checks of that cluster were skipped. Pass the chart of the pinned release (--chart may be repeated).",
)
UNKNOWN_VALUES_KEY = VerifyCheck(
    "GS903", "values key the chart does not know", Severity.ERROR,
    "helm ignores values keys its chart does not read; the setting silently has no effect. Keys are compared "
    "with the chart's own values.yaml (including keys it documents in comments).",
)
IMAGE_OUTSIDE_MIRROR = VerifyCheck(
    "GS904", "image outside the cluster's mirror", Severity.ERROR,
    "An air-gapped cluster pulls an image whose reference does not start with one of its mirror's registry "
    "prefixes (fleet.yaml mirrors[].registries); the pull would fail or leave the air gap.",
)
IMAGE_VERSION_NOT_PINNED = VerifyCheck(
    "GS905", "operand image version differs from the release pin", Severity.ERROR,
    "An operand image version in what helm renders (ClusterPolicy spec, Deployments, DaemonSets, Jobs) or in an "
    "NVIDIADriver differs from the version gpuspec's support matrix pins for the cluster's GPU Operator release "
    "(drivers: the versions the cluster's pools choose).",
)
CONFIG_NOT_FOUND = VerifyCheck(
    "GS906", "MIG or device-plugin config name without a ConfigMap", Severity.ERROR,
    "migManager.config.name or devicePlugin.config.name in the values names a ConfigMap that neither the "
    "cluster's overlay nor the chart creates in the operator namespace, or its default key is missing from it.",
)
KUSTOMIZE_FAILED = VerifyCheck(
    "GS907", "kustomize build of the overlay failed", Severity.ERROR,
    "`kubectl kustomize` (or `kustomize build`) of rendered/clusters/<cluster> failed; Argo CD / Flux would "
    "fail to sync it.",
)
BUILTIN_SCHEMA_INVALID = VerifyCheck(
    "GS908", "object invalid against the Kubernetes schema", Severity.ERROR,
    "A built-in object (ConfigMap, Deployment, ResourceQuota, …) does not validate against the strict "
    "Kubernetes JSON schema of the cluster's Kubernetes version; the API server would reject it.",
)
CRD_SCHEMA_INVALID = VerifyCheck(
    "GS909", "custom resource invalid against its CRD", Severity.ERROR,
    "A custom resource (ClusterPolicy, NVIDIADriver, Argo CD / Flux / Prometheus Operator objects) does not "
    "validate against the openAPIV3Schema of its CRD (the chart's crds/ plus --crds directories), or uses a "
    "version the CRD does not serve.",
)
NO_SCHEMA = VerifyCheck(
    "GS910", "no schema for an object", Severity.WARNING,
    "Neither a built-in Kubernetes schema nor a loaded CRD knows the object's kind and apiVersion, so it was "
    "not validated. Point --crds at the CRDs of Argo CD, Flux or the Prometheus Operator.",
)
RENDERED_MISSING = VerifyCheck(
    "GS911", "rendered output missing or unreadable", Severity.ERROR,
    "rendered/clusters/<cluster>/ lacks a file verify needs (gpu-operator.values.yaml, kustomization.yaml, "
    "images.txt), or a rendered file is not valid YAML. Run `gpuspec render`.",
)
RELEASE_UNKNOWN = VerifyCheck(
    "GS912", "release not in the support matrix", Severity.WARNING,
    "The cluster's GPU Operator release is not in gpuspec's support matrix, so operand image versions could "
    "not be compared with its pins.",
)
IMAGE_NOT_LISTED = VerifyCheck(
    "GS913", "image missing from images.txt", Severity.ERROR,
    "An image the cluster pulls (per helm's output and the overlay) is not listed in the cluster's images.txt, "
    "the list an air-gap mirror sync works from.",
)
CHART_PULL_FAILED = VerifyCheck(
    "GS914", "chart could not be pulled", Severity.ERROR,
    "helm pull of the GPU Operator chart at the cluster's pinned version failed: the source (--chart reference, "
    "else fleet.yaml mirrors[].chart.repository, else NGC) is unreachable, does not have that version, or needs "
    "a login. The helm checks of that cluster were skipped.",
)

ALL_CHECKS: tuple[VerifyCheck, ...] = (
    HELM_TEMPLATE_FAILED, CHART_VERSION_MISMATCH, UNKNOWN_VALUES_KEY, IMAGE_OUTSIDE_MIRROR,
    IMAGE_VERSION_NOT_PINNED, CONFIG_NOT_FOUND, KUSTOMIZE_FAILED, BUILTIN_SCHEMA_INVALID, CRD_SCHEMA_INVALID,
    NO_SCHEMA, RENDERED_MISSING, RELEASE_UNKNOWN, IMAGE_NOT_LISTED,
    CHART_PULL_FAILED,
)


def rule_docs() -> dict[str, RuleDoc]:
    """Every GS9xx id → its reporter-facing description."""
    return {check.id: check.doc() for check in ALL_CHECKS}
