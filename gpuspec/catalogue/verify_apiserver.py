"""Findings of `gpuspec verify` about what the Kubernetes API server would refuse (GS940–GS945)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

_APIMACHINERY = "Kubernetes v1.35 (apimachinery v0.35.2)"

NAME_REFUSED = Entry(
    id="GS940",
    title="object name or namespace the API server refuses",
    severity=Severity.ERROR,
    rationale=(
        "The API server validates every object's name by its kind: a DNS-1123 subdomain (253 characters) for most "
        "kinds and every custom resource, a DNS-1123 label (63) for Namespaces and namespaces, a DNS-1035 label for "
        "Services, a path segment for RBAC objects. A name it refuses fails the whole sync."
    ),
    doc="""
Checked offline on every object helm renders, the overlay builds and the GitOps folders hold (see
docs/verify.md, *What the API server refuses*).

Failing: a tenant namespace `ML_Team` (upper case and `_`; the Namespace and its ResourceQuota are refused).
Passing: `ml-team`.
""",
    tags=("apiserver",),
    source=f"{_APIMACHINERY} pkg/api/validation/objectmeta.go; kubernetes pkg/apis/core/validation/validation.go",
)

LABEL_REFUSED = Entry(
    id="GS941",
    title="label or annotation the API server refuses",
    severity=Severity.ERROR,
    rationale=(
        "Label keys are an optional DNS-1123 subdomain prefix and a name of at most 63 characters; label values "
        "at most 63 characters of [-A-Za-z0-9_.], starting and ending alphanumeric; annotation keys follow the "
        "label key rules and all annotations of an object fit in 256 KiB. The API server refuses the object."
    ),
    doc="""
Checked on `metadata.labels` and `metadata.annotations` of every object and on the labels of pod templates.

Failing: a pool whose `nodeSelector` value is 64 characters long (the NVIDIADriver's nodeSelector, the
operator's driver DaemonSet). Passing: a value of 63 characters or fewer.
""",
    tags=("apiserver",),
    source=f"{_APIMACHINERY} pkg/api/validate/content/kube.go (IsLabelKey, IsLabelValue), "
    "pkg/apis/meta/v1/validation/validation.go (ValidateLabels), pkg/api/validation/objectmeta.go",
)

SELECTOR_REFUSED = Entry(
    id="GS942",
    title="label selector the API server refuses",
    severity=Severity.ERROR,
    rationale=(
        "A label selector's matchLabels follow the label rules; a matchExpressions entry has a valid key, an "
        "operator In/NotIn (with values) or Exists/DoesNotExist (without values); node selectors are label maps; "
        "a Deployment/DaemonSet/StatefulSet/ReplicaSet selector is not empty and matches its pod template."
    ),
    doc="""
Failing: a Deployment whose `spec.selector.matchLabels` does not match `spec.template.metadata.labels`, or a
`matchExpressions` entry `operator: Exists` with `values`. Passing: the selector matches the template labels.
""",
    tags=("apiserver",),
    source=f"{_APIMACHINERY} pkg/apis/meta/v1/validation/validation.go (ValidateLabelSelector); kubernetes "
    "pkg/apis/apps/validation/validation.go",
)

RESERVED_REFUSED = Entry(
    id="GS943",
    title="reserved name or value only the system may use",
    severity=Severity.ERROR,
    rationale=(
        "Some names and values are the system's: PriorityClass names starting with `system-` (only the built-in "
        "classes), user PriorityClass values above 1000000000, and the Namespace label "
        "`kubernetes.io/metadata.name`, which the API server sets to the namespace's name. The first two are "
        "refused; the third is overwritten, so the object never matches git."
    ),
    doc="""
Failing: a cluster `priorityClasses` entry named `system-gpu` or with value 2000000000. Passing: `gpu-high`
with value 100000.
""",
    tags=("apiserver",),
    source="kubernetes v1.35 pkg/apis/scheduling/validation/validation.go (ValidatePriorityClass), "
    "pkg/registry/core/namespace/strategy.go",
)

CEL_RULE_FAILS = Entry(
    id="GS944",
    title="custom resource breaks a validation rule of its CRD",
    severity=Severity.ERROR,
    rationale=(
        "CRDs carry CEL rules (`x-kubernetes-validations`) that the API server evaluates on create and update. "
        "gpuspec evaluates the rules it can soundly (a CEL subset: field access, has(), size(), comparisons, "
        "logic, ?:) on the custom resources it checks; a rule that is false refuses the object."
    ),
    doc="""
Transition rules (those naming `oldSelf`) run only on updates; `lint --base` and `plan --base` check them
(GS810). Failing: an NVIDIADriver with `default: true` and a `nodeSelector` (v26.7.0: "default NVIDIADriver
must not use nodeSelector"). Passing: the per-pool NVIDIADrivers gpuspec renders (`default: false`).
""",
    tags=("apiserver",),
    source="apiextensions-apiserver pkg/apiserver/schema/cel (x-kubernetes-validations); the CRDs of the chart",
)

CEL_RULE_NOT_VERIFIED = Entry(
    id="GS945",
    title="CRD validation rule not verified offline",
    severity=Severity.INFO,
    rationale=(
        "A CRD validation rule uses CEL beyond the subset gpuspec evaluates (macros, regular expressions, other "
        "functions) or cannot be evaluated on the object: gpuspec says so instead of claiming it passed. The "
        "API server still evaluates it when the object is applied."
    ),
    doc="""
Informational: nothing is wrong with the object as far as gpuspec can tell; the rule is listed so a reviewer
knows it was not checked. Failing: a CRD rule `self.all(x, x.size() < 10)`. Passing: every rule evaluated.
""",
    tags=("apiserver",),
    source="apiextensions-apiserver pkg/apiserver/schema/cel",
)

NODE_LABEL_NOT_KUBELET = Entry(
    id="GS946",
    title="pool node label the kubelet may not set on its own node",
    severity=Severity.WARNING,
    rationale=(
        "A pool selects its nodes by a label in the kubernetes.io or k8s.io domains that is not one of the "
        "kubelet's own labels: the kubelet refuses it in --node-labels and the NodeRestriction admission plugin "
        "refuses it when the kubelet sets it on its Node, so the provisioning step that labels nodes must set it "
        "through the API as an administrator (kubectl label), or the nodes never match."
    ),
    doc="""
Allowed for the kubelet: `kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch`, the topology and
instance-type labels, and any key under `node.kubernetes.io/` or `kubelet.kubernetes.io/`. Every other key of
those domains (`node-role.kubernetes.io/gpu`, `node-restriction.kubernetes.io/pool`) is the administrator's.

Failing: a pool `nodeSelector` `node-role.kubernetes.io/gpu: ""` on nodes labelled at boot. Passing:
`example.com/gpu-pool: a100` (a domain of your own), or `node.kubernetes.io/instance-type`.
""",
    tags=("apiserver", "labels"),
    source="k8s.io/kubelet v0.35 pkg/apis/well_known_labels.go (IsKubeletLabel); kubernetes v1.35 "
    "plugin/pkg/admission/noderestriction/admission.go, cmd/kubelet/app/options/options.go",
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    NAME_REFUSED,
    LABEL_REFUSED,
    SELECTOR_REFUSED,
    RESERVED_REFUSED,
    CEL_RULE_FAILS,
    CEL_RULE_NOT_VERIFIED,
    NODE_LABEL_NOT_KUBELET,
)
