"""Support-matrix findings: GS2xx (versions and platform) and GS3xx (MIG and sharing)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

CANNOT_VERIFY_PLATFORM = Entry(
    id="GS200",
    title="Support matrix cannot verify a version or platform fact",
    severity=Severity.WARNING,
    rationale="Unknown is not the same as supported; a human should confirm it.",
    doc="""
The support matrix cannot answer a version or platform question for this spec.

Raised instead of passing silently when the release, a docs column (e.g. AKS in 26.x docs, K3s in 25.10
docs) or a fact is unknown, or when the life-cycle date is after the matrix's data date.

Failing: `kubernetes: {distribution: aks, version: "1.33"}` with operator `v26.7.0` (no AKS column).
Passing: `distribution: upstream`.
""",
    tags=("support-matrix",),
)

UNKNOWN_RELEASE = Entry(
    id="GS201",
    title="Unknown GPU Operator release",
    severity=Severity.ERROR,
    rationale="Images, platforms and drivers of an unknown release cannot be pinned or checked.",
    doc="""
The GPU Operator release (cluster pin or channel) is not one of the 22 releases the matrix knows.

Failing: `operator: {version: v25.10.2}`.  Passing: `operator: {version: v25.10.1}`.
The hint names the nearest known release.
""",
    tags=("support-matrix", "versions"),
)

END_OF_SUPPORT = Entry(
    id="GS202",
    title="GPU Operator release line is end of support",
    severity=Severity.ERROR,
    rationale="End-of-support lines get no bug or CVE fixes.",
    doc="""
The cluster runs a release line that is end of support on the judged date (policy `as_of` or data date).

Failing: `operator: {version: v25.10.1}` (end of support on 2026-08-21).  Passing: `v26.7.0`.
""",
    tags=("support-matrix", "lifecycle"),
)

DEPRECATED = Entry(
    id="GS203",
    title="GPU Operator release line is deprecated",
    severity=Severity.WARNING,
    rationale="A deprecated line becomes end of support with the next release; plan the upgrade now.",
    doc="""
The cluster runs a deprecated release line (only critical and CVE fixes until the next line ships).

Failing: `operator: {version: v26.3.3}` on 2026-08-21.  Passing: `v26.7.0`.
""",
    tags=("support-matrix", "lifecycle"),
)

KUBERNETES_RANGE = Entry(
    id="GS204",
    title="Kubernetes version outside the release's supported range",
    severity=Severity.ERROR,
    rationale="The operator is validated only on the listed versions.",
    doc="""
The Kubernetes (or OpenShift) version is outside what the operator release lists for the distribution.

Per-patch limits apply (e.g. Kubernetes 1.35 only from v25.10.1).
Failing: `kubernetes: {version: "1.31"}` with `v26.7.0`.  Passing: `"1.34"`.
""",
    tags=("support-matrix", "platform"),
)

OS_UNSUPPORTED = Entry(
    id="GS205",
    title="Operating system not supported by the release",
    severity=Severity.ERROR,
    rationale="Driver containers are built and tested only for the listed OS versions.",
    doc="""
A pool's OS (distribution and version) is not listed for the operator release.

Failing: `os: {distribution: ubuntu, version: "20.04"}` with `v26.7.0`.  Passing: `"22.04"`.
""",
    tags=("support-matrix", "platform"),
)

RUNTIME_UNSUPPORTED = Entry(
    id="GS206",
    title="Container runtime not supported",
    severity=Severity.ERROR,
    rationale="The toolkit configures only the listed runtimes.",
    doc="""
The container runtime is not listed for the release (or for a pool's OS, e.g. containerd on RHCOS).

Failing: `runtime: containerd` on an RHCOS pool.  Passing: `runtime: cri-o`.
""",
    tags=("support-matrix", "platform"),
)

DRIVER_BRANCH = Entry(
    id="GS207",
    title="Driver branch not supported by the operator release",
    severity=Severity.ERROR,
    rationale="Only listed driver branches are validated with the release's operands.",
    doc="""
The driver branch (pool or channel) is not in the release's component matrix.

Failing: `driver: {branch: "570"}` with `v26.7.0`.  Passing: `branch: "580"`.
""",
    tags=("support-matrix", "driver"),
)

DRIVER_VERSION_BRANCH = Entry(
    id="GS208",
    title="Driver version not in its branch",
    severity=Severity.ERROR,
    rationale="A version outside its branch is a typo or a silent branch change.",
    doc="""
The exact driver version does not belong to the declared branch.

Failing: `driver: {branch: "580", version: 595.91.07}`.  Passing: `version: 580.173.02`.
""",
    tags=("support-matrix", "driver"),
)

DRIVER_VERSION_UNLISTED = Entry(
    id="GS209",
    title="Driver version not listed for the release",
    severity=Severity.WARNING,
    rationale="Unlisted driver containers may not exist for the node OS or may be untested.",
    doc="""
The exact driver version is not listed for the release (docs component matrix or chart default).

Failing: `version: 580.173.03` with `v26.7.0`.  Passing: `580.173.02`.
""",
    tags=("support-matrix", "driver"),
)

GPU_UNKNOWN = Entry(
    id="GS210",
    title="Unknown GPU product",
    severity=Severity.ERROR,
    rationale="MIG, driver and support checks need to know the GPU.",
    doc="""
The pool's GPU product id is not in gpuspec's product catalogue.

Failing: `gpu: {product: H100-80G}`.  Passing: `H100-SXM5-80GB` (`gpuspec matrix` lists the ids).
""",
    tags=("support-matrix", "gpu"),
)

GPU_NOT_LISTED = Entry(
    id="GS211",
    title="GPU not supported by the operator release",
    severity=Severity.ERROR,
    rationale="The operator is validated only on the listed GPUs.",
    doc="""
The GPU product is not in the release line's supported-GPU list.

Failing: `product: B200` with `v24.9.2`.  Passing: `product: B200` with `v26.7.0`.
""",
    tags=("support-matrix", "gpu"),
)

GPU_DRIVER_TOO_OLD = Entry(
    id="GS212",
    title="Driver too old for the GPU",
    severity=Severity.ERROR,
    rationale="Drivers older than the GPU's minimum do not support it.",
    doc="""
The pool's driver is older than the documented minimum for its GPU (e.g. HGX B200 needs 570.133.20+).

Failing: `product: B200` with `driver: {branch: "535"}`.  Passing: `branch: "580"`.
""",
    tags=("support-matrix", "gpu", "driver"),
)

PRECOMPILED_UNAVAILABLE = Entry(
    id="GS213",
    title="No precompiled driver images for this OS, kernel and branch",
    severity=Severity.ERROR,
    rationale="The driver pod cannot start without a matching precompiled image.",
    doc="""
Precompiled drivers are requested for an OS / kernel flavour / branch without precompiled images.

Failing: `driver: {source: precompiled, branch: "535"}` on Ubuntu 22.04 with `v26.7.0`.
Passing: `branch: "580"` with kernel `5.15.0-105-generic`.
""",
    tags=("support-matrix", "driver"),
)

PER_POOL_DRIVERS = Entry(
    id="GS214",
    title="Different drivers per pool need NVIDIADriver support",
    severity=Severity.ERROR,
    rationale="ClusterPolicy alone manages one driver version per cluster.",
    doc="""
Pools of one cluster use different operator-managed drivers, which needs NVIDIADriver resources.

Before v26.3.0 NVIDIADriver resources are a technology preview (not for production).
Failing: two pools with drivers 580.x and 535.x on `v25.10.1`.  Passing: the same on `v26.3.0`.
""",
    tags=("support-matrix", "driver"),
)

CANNOT_VERIFY_MIG = Entry(
    id="GS300",
    title="Support matrix cannot verify a MIG or sharing fact",
    severity=Severity.WARNING,
    rationale="Unknown is not the same as supported; a human should confirm it.",
    doc="""
The support matrix cannot answer a MIG or sharing question for this pool.

For example MIG on a product whose MIG capability the sources do not state, or MPS combined with MIG
(the MPS configuration is not documented in the sources).
""",
    tags=("support-matrix", "mig"),
)

MIG_NOT_CAPABLE = Entry(
    id="GS301",
    title="MIG requested on a GPU without MIG",
    severity=Severity.ERROR,
    rationale="MIG Manager cannot partition a GPU without MIG.",
    doc="""
MIG is requested on a GPU known not to support MIG.

Failing: `mig: {strategy: single}` on a product recorded with `mig_capable: false`.
""",
    tags=("support-matrix", "mig"),
)

MIG_LAYOUT = Entry(
    id="GS302",
    title="Named MIG layout invalid for the GPU",
    severity=Severity.ERROR,
    rationale="mig-parted fails on a layout the GPU cannot take; the node stays unpartitioned.",
    doc="""
The named MIG layout does not exist (at that release) or has no entry for the pool's GPU.

Failing: `layout: all-1g.10gb` on A30-24GB.  Passing: `layout: all-1g.6gb`.
""",
    tags=("support-matrix", "mig"),
)

MIG_PROFILE = Entry(
    id="GS303",
    title="MIG profile not valid on the GPU",
    severity=Severity.ERROR,
    rationale="Profiles are fixed per GPU model; an invalid one fails the repartition.",
    doc="""
A custom MIG layout uses a profile that is not valid on the pool's GPU.

Failing: `{"3g.40gb": 2}` on A100-SXM4-40GB.  Passing: `{"3g.20gb": 2}`.
""",
    tags=("support-matrix", "mig"),
)

MIG_LIMITS = Entry(
    id="GS304",
    title="Custom MIG layout exceeds the GPU's slices or instance limits",
    severity=Severity.ERROR,
    rationale="MIG Manager cannot create more instances than the hardware has.",
    doc="""
A custom MIG layout needs more compute slices than the GPU has, or more instances of a profile than allowed.

Failing: `{"3g.20gb": 2, "2g.10gb": 1}` on A100-40GB (8 of 7 slices).  Passing: `{"3g.20gb": 2}`.
""",
    tags=("support-matrix", "mig"),
)

MIG_SINGLE_MIXED = Entry(
    id="GS305",
    title="MIG strategy single with different profiles",
    severity=Severity.ERROR,
    rationale="The single strategy advertises one homogeneous resource; mixed geometries need mixed.",
    doc="""
Strategy `single` with more than one MIG profile on a node.

Failing: `mig: {strategy: single, layout: all-balanced}`.  Passing: `strategy: mixed`.
""",
    tags=("support-matrix", "mig"),
)

SHARING_WITH_MIG = Entry(
    id="GS306",
    title="GPU sharing combined with MIG where unsupported",
    severity=Severity.ERROR,
    rationale="The device plugin rejects unsupported sharing configurations.",
    doc="""
A sharing mode is combined with MIG where the sources say it is not supported.

Time-slicing with MIG is documented as supported; MPS with MIG is undocumented (GS300).
""",
    tags=("support-matrix", "mig", "sharing"),
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    CANNOT_VERIFY_PLATFORM,
    UNKNOWN_RELEASE,
    END_OF_SUPPORT,
    DEPRECATED,
    KUBERNETES_RANGE,
    OS_UNSUPPORTED,
    RUNTIME_UNSUPPORTED,
    DRIVER_BRANCH,
    DRIVER_VERSION_BRANCH,
    DRIVER_VERSION_UNLISTED,
    GPU_UNKNOWN,
    GPU_NOT_LISTED,
    GPU_DRIVER_TOO_OLD,
    PRECOMPILED_UNAVAILABLE,
    PER_POOL_DRIVERS,
    CANNOT_VERIFY_MIG,
    MIG_NOT_CAPABLE,
    MIG_LAYOUT,
    MIG_PROFILE,
    MIG_LIMITS,
    MIG_SINGLE_MIXED,
    SHARING_WITH_MIG,
)
