"""Change-set findings about updates the Kubernetes API server refuses (GS810–GS811)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

UPDATE_REFUSED = Entry(
    id="GS810",
    title="Update the API server refuses (immutable field)",
    severity=Severity.ERROR,
    rationale=(
        "Argo CD and Flux apply a change as an update of the object that exists. An update that changes an "
        "immutable field (a CRD transition rule such as `self == oldSelf`, or a built-in kind's immutable field) "
        "is refused by the API server and the sync fails, while the plan expects the change to roll out."
    ),
    doc="""
`lint --base` and `plan --base` render the base and the head revision of every changed cluster (pure, no
files written), pair their objects by kind, namespace and name, and check each update against the API
server's update validation: the immutable fields of built-in kinds (Job `spec.selector`/`spec.template`,
Deployment/DaemonSet/StatefulSet `spec.selector`, RoleBinding `roleRef`, PriorityClass `value` and
`preemptionPolicy`, ConfigMap/Secret data once `immutable: true`, Service `clusterIP`, StorageClass parameters,
…) and the transition rules of the GPU Operator's CRDs (NVIDIADriver `spec.usePrecompiled` and
`spec.driverType`: `self == oldSelf`).

Failing: changing a cluster PriorityClass's `value` (immutable; the API server refuses the update). Passing:
a PriorityClass under a new name. A pool's switch between compiled and precompiled drivers is not an update:
gpuspec names the NVIDIADriver after the variant (`<pool>` / `<pool>-precompiled`), so the switch creates a new
NVIDIADriver and removes the old one (see `plan`).
""",
    tags=("change-set", "apiserver"),
    source="kubernetes v1.35 pkg/apis/*/validation/validation.go (Validate*Update); the GPU Operator CRDs' "
    "x-kubernetes-validations (nvidia.com_nvidiadrivers.yaml: usePrecompiled and driverType are immutable)",
)

UPDATE_NOT_VERIFIED = Entry(
    id="GS811",
    title="CRD transition rule not verified offline",
    severity=Severity.INFO,
    rationale=(
        "A transition rule of a CRD (naming `oldSelf`) uses CEL beyond the subset gpuspec evaluates, or cannot be "
        "evaluated on the objects: gpuspec says so instead of claiming the update passes."
    ),
    doc="""
Informational: the API server evaluates the rule when the update is applied. Failing: a transition rule
outside the subset on a field the change touches. Passing: every transition rule evaluated.
""",
    tags=("change-set", "apiserver"),
    source="apiextensions-apiserver pkg/apiserver/schema/cel",
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (UPDATE_REFUSED, UPDATE_NOT_VERIFIED)
