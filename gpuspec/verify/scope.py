"""Whether a kind is namespaced or cluster-scoped: built-in kinds from Kubernetes' API, others from CRDs (pure).

source: Kubernetes v1.35 API reference (``kubectl api-resources --namespaced=false`` of a v1.35 API server):
the built-in cluster-scoped kinds below; every other built-in kind is namespaced.  A CRD says it in
``spec.scope`` (``Namespaced`` or ``Cluster``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: Built-in cluster-scoped (group, kind) pairs of Kubernetes v1.35.
BUILTIN_CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset({
    ("", "ComponentStatus"), ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "SelfSubjectReview"), ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"), ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"), ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("networking.k8s.io", "IngressClass"), ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"), ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"), ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"), ("storage.k8s.io", "VolumeAttributesClass"),
})
#: Groups served by the Kubernetes API server itself (kinds of these groups never need a CRD).
BUILTIN_GROUPS: frozenset[str] = frozenset({
    "", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "apps",
    "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
    "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io", "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io", "policy", "rbac.authorization.k8s.io",
    "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io",
})


def group_of(api_version: str) -> str:
    """The API group of ``apiVersion`` (``""`` for the core group ``v1``)."""
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def is_builtin(group: str) -> bool:
    """True when the Kubernetes API server serves ``group`` itself (no CRD provides its kinds)."""
    return group in BUILTIN_GROUPS


def crd_kinds(objects: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], bool]:
    """(group, kind) → namespaced, for every CustomResourceDefinition among ``objects``."""
    out: dict[tuple[str, str], bool] = {}
    for obj in objects:
        if obj.get("kind") != "CustomResourceDefinition":
            continue
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            continue
        names = spec.get("names")
        kind = names.get("kind") if isinstance(names, Mapping) else None
        if isinstance(kind, str) and isinstance(spec.get("group"), str):
            out[(str(spec["group"]), kind)] = spec.get("scope", "Namespaced") != "Cluster"
    return out


def namespaced(group: str, kind: str, crd_scopes: Mapping[tuple[str, str], bool]) -> bool | None:
    """Whether (group, kind) is namespaced; None when neither Kubernetes nor a known CRD serves it."""
    if is_builtin(group):
        return (group, kind) not in BUILTIN_CLUSTER_SCOPED
    return crd_scopes.get((group, kind))
