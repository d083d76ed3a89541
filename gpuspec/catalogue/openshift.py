"""OpenShift support-matrix findings (GS230-GS239): OpenShift and Kubernetes versions, RHCOS pools, precompiled
drivers and the OLM catalog of disconnected clusters."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

_SOURCE = (
    "Red Hat OpenShift release notes (Kubernetes version per OpenShift release); cloud-native-docs "
    "gpu-operator/platform-support.rst (RHCOS row), openshift/install-gpu-ocp.rst, "
    "openshift/gpu-operator-with-precompiled-drivers.rst, openshift/mirror-gpu-ocp-disconnected.rst"
)

OPENSHIFT_KUBERNETES = Entry(
    id="GS230",
    title="OpenShift version and Kubernetes version disagree",
    severity=Severity.ERROR,
    rationale="Each OpenShift release ships one Kubernetes minor; a spec that names both "
              "differently is wrong about one, and every Kubernetes-dependent check and render then "
              "judges the wrong cluster.",
    doc="""
`kubernetes.openshiftVersion` names an OpenShift release that ships a different Kubernetes minor than
`kubernetes.version`, or `openshiftVersion` is set on a cluster whose distribution is not `openshift`.
Where the matrix records the Kubernetes version of an OpenShift release as unknown, GS200 says it cannot verify.

Failing: `kubernetes: {distribution: openshift, openshiftVersion: "4.19", version: "1.33"}` (4.19 ships 1.32).
Passing: `version: "1.32"`.
""",
    tags=("support-matrix", "openshift"),
    source=_SOURCE,
)

OPENSHIFT_POOL_OS = Entry(
    id="GS231",
    title="Pool OS does not fit the OpenShift cluster",
    severity=Severity.ERROR,
    rationale="NVIDIA supports the GPU Operator on OpenShift only on RHCOS nodes, and RHCOS only on OpenShift; the "
              "RHCOS version follows the OpenShift release, so a different one is a stale or wrong spec.",
    doc="""
A pool of an OpenShift cluster runs an OS other than RHCOS (NVIDIA's matrix lists only Red Hat Core OS for
OpenShift), a pool of a non-OpenShift cluster runs RHCOS, or an RHCOS pool's version is not the cluster's
OpenShift version.

Failing: an `os: {distribution: ubuntu, version: "22.04"}` pool on `distribution: openshift`.
Passing: `os: {distribution: rhcos, version: "4.19"}` with `openshiftVersion: "4.19"`.
""",
    tags=("support-matrix", "openshift"),
    source=_SOURCE,
)

OPENSHIFT_PRECOMPILED = Entry(
    id="GS232",
    title="Precompiled driver on OpenShift",
    severity=Severity.ERROR,
    rationale="NVIDIA publishes precompiled driver images on nvcr.io for Ubuntu only; NVIDIA's OpenShift "
              "procedure takes the image from a custom build (or Red Hat's registry), whose tags follow "
              "no release gpuspec pins, so "
              "gpuspec cannot render a pinned precompiled RHCOS driver and render would otherwise point at no image.",
    doc="""
A pool of an OpenShift cluster sets `driver.source: precompiled`.  On OpenShift the operator builds the driver on
each node from the OpenShift Driver Toolkit image (`use_ocp_driver_toolkit`, no entitlement needed), which is what
gpuspec renders for `driver.source: operator`; precompiled RHCOS images are built per kernel outside the release
(NVIDIA's "Precompiled Drivers for the NVIDIA GPU Operator for RHCOS" procedure).  Lint and render refuse it alike.

Failing: `driver: {source: precompiled, branch: "580"}` on an RHCOS pool.
Passing: `driver: {source: operator, branch: "580"}`.
""",
    tags=("support-matrix", "openshift", "driver"),
    source=_SOURCE,
)

OPENSHIFT_CATALOG = Entry(
    id="GS233",
    title="Disconnected OpenShift cluster without a mirrored operator catalog",
    severity=Severity.ERROR,
    rationale="OLM installs the GPU Operator and the NFD Operator from catalogs; a disconnected cluster "
              "reaches only the CatalogSources of its mirrored indexes, so a Subscription to "
              "certified-operators never resolves there.",
    doc="""
An OpenShift cluster uses a mirror whose `catalogSources` does not name the CatalogSource of the mirrored
certified-operator index (for the GPU Operator) or, when gpuspec installs the NFD Operator, of the mirrored
redhat-operator index.

Failing: `mirror: dc-north` on an OpenShift cluster, the mirror has no `catalogSources`.
Passing: `catalogSources: {certified-operators: cs-certified-operator-index,
redhat-operators: cs-redhat-operator-index}`.
""",
    tags=("support-matrix", "openshift", "air-gap"),
    source=_SOURCE,
)

ENTRIES = (OPENSHIFT_KUBERNETES, OPENSHIFT_POOL_OS, OPENSHIFT_PRECOMPILED, OPENSHIFT_CATALOG)
