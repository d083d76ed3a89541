"""Findings of `gpuspec verify`'s custom-resource check (GS950): a ClusterPolicy gpuspec writes itself (OpenShift)
says what the chart would write for the same values."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

CUSTOM_RESOURCE_DIFFERS = Entry(
    id="GS950",
    title="custom resource differs from the chart's object for the same values",
    severity=Severity.ERROR,
    rationale=(
        "On OpenShift OLM installs the operator and gpuspec writes the ClusterPolicy (and the chart's default "
        "NVIDIADriver) itself, from the chart's values.yaml defaults and the compiled values. A field the chart would "
        "write that the custom resource lacks or changes configures the operands differently from a Helm cluster "
        "with the same spec, and from what the values, the plan and the handover say."
    ),
    doc="""
When a cluster's overlay carries a ClusterPolicy, or an NVIDIADriver named `default`, `verify` compares it with the
object of that kind (the chart's `default` NVIDIADriver) that `helm template` renders from the cluster's values with
the chart of the pinned release, field by field below `spec`, both as the API server stores them (CRD defaults
applied). Every differing path is one finding. Compared as the operator reads the fields: null, `""`, `[]`, `{}` and
an absent field are alike, numbers equal their text, and the `helm.sh/chart` and `app.kubernetes.io/managed-by`
labels the chart's operand-labels helper adds to `spec.daemonsets.labels` for Helm are not compared.

Failing: the overlay's ClusterPolicy sets `driver.upgradePolicy.drain.enable: true` while the values (and so the
chart) leave drain off.  Passing: the custom resource as `gpuspec render` writes it.
""",
    source="docs/openshift.md; NVIDIA/gpu-operator deployments/gpu-operator/templates/clusterpolicy.yaml and "
           "nvidiadriver.yaml at the release tag",
)

#: This module's entries, in id order.
ENTRIES: tuple[Entry, ...] = (CUSTOM_RESOURCE_DIFFERS,)
