"""Support-matrix findings: GS2xx (versions and platform) and GS3xx (MIG and sharing)."""

from __future__ import annotations

from gpuspec.catalogue import openshift, operations
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

Per-patch limits apply (e.g. Kubernetes 1.35 only from v25.10.1).  The matrix lists versions per cell: an OS row
times a distribution column.  A version the distribution supports on one OS but not on a pool's OS (or a distribution
with no cell on that OS row, e.g. K3s on RHEL 9 at v26.7.0) is reported at the pool's `os`.
Failing: `kubernetes: {version: "1.31"}` with `v26.7.0`; `distribution: k3s` with a RHEL 9.4 pool.
Passing: `"1.34"`; `distribution: rke2` with the RHEL 9.4 pool.
""",
    tags=("support-matrix", "platform"),
    source="cloud-native-docs gpu-operator/platform-support.rst, "
    "\"Supported Operating Systems and Kubernetes Platforms\"",
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

An OS the release's precompiled table does not list (RHEL, Rocky, ... — NVIDIA lists Ubuntu only) is an error
whatever the kernel: support "is limited to operating system, kernel version, and driver versions listed in the
Supported Precompiled Drivers table".

Failing: `driver: {source: precompiled, branch: "535"}` on Ubuntu 22.04 with `v26.7.0`; any precompiled pool on
RHEL 9.6 or Rocky 9.7.
Passing: `branch: "580"` with kernel `5.15.0-105-generic`.
""",
    tags=("support-matrix", "driver"),
    source="cloud-native-docs gpu-operator/precompiled-drivers.rst (Limitations and Restrictions); "
    "gpu-operator/platform-support.rst (Supported Precompiled Drivers)",
)

PER_POOL_DRIVERS = Entry(
    id="GS214",
    title="Different drivers per pool need NVIDIADriver support",
    severity=Severity.ERROR,
    rationale="ClusterPolicy alone manages one driver version per cluster.",
    doc="""
Pools of one cluster use different operator-managed drivers, which needs NVIDIADriver resources.

Before v26.3.0 NVIDIADriver resources are a technology preview (not for production).  Also reported:
`operator.driverManagement: nvidiadriver` on such a release, and `driverManagement: clusterpolicy` with pools
on different drivers (the ClusterPolicy installs one driver for the whole cluster).
Failing: two pools with drivers 580.x and 535.x on `v25.10.1`.  Passing: the same on `v26.3.0`.
""",
    tags=("support-matrix", "driver"),
    source="cloud-native-docs gpu-operator/gpu-driver-configuration.rst (NVIDIADriver availability per release)",
)

KERNEL_MODULES = Entry(
    id="GS215",
    title="Kernel module type impossible for the GPU or a feature",
    severity=Severity.ERROR,
    rationale="The driver does not load: Grace Hopper and Blackwell need the open modules, pre-Turing GPUs "
    "cannot use them.",
    doc="""
The kernel modules the driver container installs do not work with the pool's GPU or with a feature it uses:

- Grace Hopper (GH200) and Blackwell GPUs are supported only by the open GPU kernel modules:
  `kernelModuleType: proprietary`, or `auto` with a driver container older than R570 (which installs proprietary
  modules), is an error.
- Pascal and Volta GPUs are not supported by the open modules: `kernelModuleType: open` is an error.
- GPUDirect Storage (nvidia-fs v2.17.5+) needs the open modules: `proprietary`, or `auto` with a driver older than
  R570, on a pool with `devices.gds` is an error.

Failing: `gpu: {product: GH200-96GB}` with `driver: {kernelModuleType: proprietary}`.
Passing: `kernelModuleType: open`.
""",
    tags=("support-matrix", "driver"),
    source="NVIDIA Driver Installation Guide, \"Kernel Modules\"; cloud-native-docs gpu-operator/platform-support.rst "
    "(GH200 needs the open kernel modules; GPUDirect Storage notes); gpu-operator release notes 25.3.0",
)

DRIVER_PAST_ARCHITECTURE = Entry(
    id="GS216",
    title="Driver branch no longer supports the GPU's architecture",
    severity=Severity.ERROR,
    rationale="Drivers after the last branch of an architecture do not bind to its GPUs; the node comes up "
    "without GPUs.",
    doc="""
The pool's driver branch is newer than the last branch that supports the GPU's architecture (R580 for Pascal and
Volta).

Failing: `gpu: {product: V100}` with `driver: {branch: "595"}`.  Passing: `branch: "580"`.
""",
    tags=("support-matrix", "driver", "gpu"),
    source="NVIDIA Data Center Driver R580 release notes; CUDA Toolkit 13.0 release notes",
)

GPUDIRECT_UNSUPPORTED = Entry(
    id="GS217",
    title="GPUDirect Storage or RDMA where NVIDIA does not support it",
    severity=Severity.ERROR,
    rationale="nvidia-fs and nvidia-peermem are built and validated only for the listed OSes and driver flavours.",
    doc="""
A pool declares `devices.gds` or `devices.rdma` on an OS the release's GPUDirect table does not list, or
GPUDirect Storage with precompiled driver containers (not supported).

Failing: `devices: {gds: true}` on RHEL 9.4 with `v26.7.0`; `gds` with `driver: {source: precompiled}`.
Passing: `gds` on Ubuntu 22.04 with `driver: {source: operator, branch: "580"}`.
""",
    tags=("support-matrix", "driver"),
    source="cloud-native-docs gpu-operator/platform-support.rst, \"Support for GPUDirect RDMA\", "
    "\"Support for GPUDirect Storage\"; gpu-operator/precompiled-drivers.rst, \"Limitations and Restrictions\"",
)

PRECOMPILED_VERSION = Entry(
    id="GS218",
    title="Precompiled driver pinned to an exact version",
    severity=Severity.WARNING,
    rationale="Precompiled images are tagged per branch and kernel; the exact version written is not what runs.",
    doc="""
A pool with `driver.source: precompiled` pins `driver.version`.  Precompiled driver containers are selected by
branch (`driver.version: "580"`, tag `<branch>-<kernel>-<os>`): gpuspec renders the branch, and the node runs the
newest build of that branch for its kernel, which may differ from the version written.

Failing: `driver: {source: precompiled, branch: "580", version: 580.173.02}`.
Passing: `driver: {source: precompiled, branch: "580"}`.
""",
    tags=("support-matrix", "driver"),
    source="cloud-native-docs gpu-operator/precompiled-drivers.rst, \"About Precompiled Driver Containers\"",
)

AUTO_MODULE_TYPE = Entry(
    id="GS219",
    title="kernelModuleType auto with a driver that does not understand it",
    severity=Severity.WARNING,
    rationale="Driver containers before 570.86.15 ignore auto and install proprietary modules.",
    doc="""
`kernelModuleType: auto` is written for a driver older than the containers that implement it (570.86.15 and
570.124.06 or later).  Older containers install the proprietary modules; write `proprietary` (or `open`) so the
spec says what runs.

Failing: `driver: {branch: "535", version: 535.309.01, kernelModuleType: auto}`.
Passing: `kernelModuleType: proprietary`, or leaving the key out.
""",
    tags=("support-matrix", "driver"),
    source="cloud-native-docs gpu-operator/release-notes.rst 25.3.0 (kernelModuleType)",
)

KNOWN_ISSUE = Entry(
    id="GS220",
    title="A known issue of the release applies to this cluster",
    severity=Severity.WARNING,
    rationale="NVIDIA documents these as broken or fragile for the exact combination the cluster uses.",
    doc="""
A known issue or limitation from the release notes applies to the cluster's exact combination (release,
distribution, runtime, OS, GPU, driver, MIG, CDI, RDMA, sandbox).  The message quotes the note.

Failing: RKE2 with `cdi: true` on `v25.3.2` ("CDI not supported on RKE2"); GH200 with MIG and driver 580.x (CDMM); a
RHEL 8 pool with containerd (containerd needs `enable_selinux=true`, a host setting gpuspec cannot render).
Two notes need facts only the spec's author knows, so they apply only when written: `pools[].os.selinux: enforcing`
with MIG on `v25.10.1` (MIG Manager not scheduled) and `kubernetes.userNamespaces: true` on `v26.3.1` (pods with
`hostUsers: false` unsupported).

Passing: the same RKE2 cluster on `v26.7.0`, whose notes do not list the issue; the RHEL 8 pool with CRI-O.
""",
    tags=("support-matrix", "known-issue"),
    source="cloud-native-docs gpu-operator/release-notes.rst, \"Known Issues\" / \"Known Limitations\" of each release",
)

CANNOT_VERIFY_RUNTIME = Entry(
    id="GS221",
    title="Container runtime settings cannot be verified for this distribution and runtime",
    severity=Severity.WARNING,
    rationale="The toolkit rewrites the runtime's config; where a distribution keeps it elsewhere, defaults miss it.",
    doc="""
NVIDIA's GPU Operator documentation gives no container-toolkit runtime settings (`toolkit.env`: `CONTAINERD_CONFIG`,
`CONTAINERD_SOCKET`, `RUNTIME_CONFIG_SOURCE`) for the cluster's distribution and runtime at its release, so gpuspec
renders none and cannot tell whether the operator's defaults (`/etc/containerd/config.toml`,
`/run/containerd/containerd.sock`) reach the runtime.  Cells: K3s, k0s, VKS and NKP at every release; RKE2 from 24.6.1
(NVIDIA refers to the RKE2 documentation); CRI-O on a distribution NVIDIA documents with containerd only; containerd
on OpenShift.  Also raised for a GKE cluster that mixes pools with Google's driver installer (`driver.source: host`)
and operator-managed drivers: the installer's paths (`/home/kubernetes/bin/nvidia`) are cluster-wide chart values
NVIDIA documents only for clusters whose drivers all come from it.

Resolve it by setting the distribution's own settings as an override of `toolkit.env` (with its reason; an override
that sets none of the toolkit's runtime variables, such as `CONTAINERD_CONFIG` or `CONTAINERD_SOCKET`, does not
count), or, from
26.3.0 with containerd and CDI on, by turning the NRI plugin on (override `cdi.nriPluginEnabled: true`): the toolkit
then leaves the runtime configuration alone.  Either silences this warning.

Failing: `kubernetes: {distribution: k3s, runtime: containerd}` with operator `v26.7.0` and no override.
Passing: the same cluster with the override `cdi.nriPluginEnabled: true`; or `distribution: microk8s`.
""",
    tags=("support-matrix", "runtime"),
    source="cloud-native-docs gpu-operator/getting-started.rst \"Specifying Configuration Options for containerd\" "
    "(RKE2, MicroK8s sections), cdi.rst \"About the Node Resource Interface (NRI) Plugin\", google-gke.rst",
)

RUNTIME_SETTING_CONTRADICTED = Entry(
    id="GS222",
    title="An override of toolkit.env contradicts a runtime setting NVIDIA requires",
    severity=Severity.ERROR,
    rationale="The toolkit then configures a file or socket the distribution does not use: GPU pods never start.",
    doc="""
For some distributions NVIDIA's documentation says which toolkit runtime settings to set, and gpuspec renders them
into `toolkit.env`: MicroK8s (its `containerd-template.toml`, socket and, from 25.10.0, `RUNTIME_CONFIG_SOURCE`),
RKE2 before 24.6.1 (its `config.toml.tmpl` and `/run/k3s/containerd/containerd.sock`) and GKE with Kubernetes 1.33+
from 25.10.0 (`RUNTIME_CONFIG_SOURCE=file`).  An override of `toolkit.env` is merged into that list by name; one
that gives a documented variable another value is this error.

Failing: `distribution: microk8s` with the override `toolkit.env: [{name: CONTAINERD_SOCKET, value:
/run/containerd/containerd.sock}]`.
Passing: an override that adds other variables (`[{name: NRI_MANAGEMENT_CDI_DEVICE_NAMESPACES, value: team-a}]`).
""",
    tags=("support-matrix", "runtime"),
    source="cloud-native-docs gpu-operator/getting-started.rst \"MicroK8s\" / \"Rancher Kubernetes Engine 2\"; "
    "google-gke.rst and release-notes.rst 25.10.0 (GKE 1.33+)",
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
MIG is requested on a GPU without MIG.  Derived from the GPU's architecture: no Pascal, Volta, Turing or Ada GPU has
MIG; of Ampere only A100/A800 and A30 have it (A10, A16, A2, A40, RTX A-series do not).  Products whose MIG
capability the data does not know (e.g. A100X) stay "cannot verify" (GS300).

Failing: `mig: {strategy: single, layout: all-1g.10gb}` on `L40S` or `T4`.  Passing: the same on `A100-SXM4-80GB`.
""",
    tags=("support-matrix", "mig"),
    source="NVIDIA Multi-Instance GPU User Guide, \"Supported GPUs\"",
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
A custom MIG layout needs more compute slices or more memory slices than the GPU has, or more instances of a
profile than allowed.  A100/H100-class GPUs have 7 compute and 8 memory slices, A30 and RTX PRO 6000 4 of each;
a profile's memory slices are its share of the whole GPU's memory (3g.20gb on A100-40GB: 4 of 8).

Failing: `{"3g.20gb": 2, "2g.10gb": 1}` on A100-40GB (8 of 7 compute slices); `{"3g.20gb": 2, "1g.5gb": 1}`
(7 compute slices but 9 of 8 memory slices).  Passing: `{"3g.20gb": 2}`.
""",
    tags=("support-matrix", "mig"),
    source="NVIDIA Multi-Instance GPU User Guide, \"Partitioning\" (compute and memory slices per GPU)",
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

Time-slicing with MIG is documented as supported (gpu-sharing.rst). MPS is not: the device plugin's README says
"Sharing with MPS is currently not supported on devices with MIG enabled".

Failing: a pool with `mig: {strategy: single, layout: all-1g.10gb}` and `sharing: {mode: mps}`.
Passing: the same pool with `sharing: {mode: time-slicing}`.
""",
    tags=("support-matrix", "mig", "sharing"),
    source="cloud-native-docs gpu-operator/gpu-sharing.rst (time-slicing with MIG); k8s-device-plugin README.md "
    "(section \"With CUDA MPS\": MPS not supported on devices with MIG enabled)",
)

MIG_DEVICES = Entry(
    id="GS307",
    title="MIG layout names GPUs the node does not have, or a GPU twice",
    severity=Severity.ERROR,
    rationale="mig-parted fails on a device index past the node's GPUs; two groups for one GPU leave its "
    "geometry undefined.",
    doc="""
A custom MIG layout lists a device index at or above `gpu.count`, or the same GPU in two device groups (an index
twice, or `all` next to another group).

Failing: `gpu: {count: 4}` with `custom: [{devices: [4, 5], profiles: {...}}]`; `[{devices: [0, 1]}, {devices: [1]}]`.
Passing: `devices: [0, 1]` and `devices: [2, 3]`.
""",
    tags=("support-matrix", "mig"),
    source="NVIDIA mig-parted config format (devices: GPU indexes or all); "
    "cloud-native-docs gpu-operator/gpu-operator-mig.rst",
)

MIG_STRATEGY_CLUSTER = Entry(
    id="GS308",
    title="Pools of one cluster ask for different MIG strategies",
    severity=Severity.ERROR,
    rationale="mig.strategy is one value per cluster in the chart; a single pool would silently become mixed.",
    doc="""
`mig.strategy` is a cluster-wide chart value (ClusterPolicy `spec.mig.strategy`).  Pools that declare `single`
and `mixed` in one cluster cannot both get what they ask for: the chart runs one strategy, and the `single`
pool's MIG devices would be advertised as `nvidia.com/mig-<profile>` instead of `nvidia.com/gpu`.

Failing: one pool `strategy: single`, another `strategy: mixed`.  Passing: both `mixed` (or both `single`).
""",
    tags=("support-matrix", "mig"),
    source="cloud-native-docs gpu-operator/gpu-operator-mig.rst (mig.strategy); "
    "gpu-operator api/nvidia/v1/clusterpolicy_types.go",
)

QUOTA_RESOURCE = Entry(
    id="GS309",
    title="Tenant quota names resources the MIG strategy does not advertise",
    severity=Severity.ERROR,
    rationale="A quota on the wrong resource name blocks the tenant or leaves MIG devices uncapped.",
    doc="""
With MIG strategy `single` the MIG devices are advertised as `nvidia.com/gpu`; with `mixed` as
`nvidia.com/mig-<profile>`.  A tenant with `migQuota` on a pool whose strategy is `single`, a `migQuota` name no
pool of the tenant advertises, or only a `gpuQuota` on a `mixed` pool (MIG devices uncapped) is an error.

Failing: `migQuota: {mig-1g.10gb: 14}` for a tenant of a `single` pool.  Passing: `gpuQuota: 14` for it.
""",
    tags=("support-matrix", "mig", "tenants"),
    source="cloud-native-docs gpu-operator/gpu-operator-mig.rst and openshift/mig-ocp.rst "
    "(strategy single / mixed resource names)",
)

QUOTA_CAPACITY = Entry(
    id="GS310",
    title="Tenant quota above what its pools can hold",
    severity=Severity.WARNING,
    rationale="A quota larger than the capacity is no cap at all and hides a sizing mistake.",
    doc="""
A tenant's `gpuQuota` (per namespace) is above the GPUs (or time-slicing / MPS replicas) its pools advertise, or a
`migQuota` entry is above the MIG devices of that profile on its pools.

Failing: `gpuQuota: 256` on one pool of 2 nodes x 8 GPUs.  Passing: `gpuQuota: 16`.
""",
    tags=("tenants",),
    source="cloud-native-docs gpu-operator/gpu-sharing.rst (replicas advertised per GPU); "
    "gpu-operator-mig.rst (resources per MIG device)",
)

SHARED_POOL_TENANTS = Entry(
    id="GS311",
    title="A time-sliced or MPS pool is shared by several tenants",
    severity=Severity.WARNING,
    rationale="Time-slicing and MPS give no memory or fault isolation between the pods that share a GPU.",
    doc="""
Several tenants may use one pool whose GPUs are shared by time-slicing or MPS: their pods share GPUs with no
memory or fault isolation between them.

Failing: tenants `a` and `b` both list a time-sliced pool.  Passing: one tenant per shared pool, or MIG for isolation.
""",
    tags=("sharing", "tenants", "security"),
    source="cloud-native-docs gpu-operator/gpu-sharing.rst (time-slicing: no memory or fault isolation)",
)

MANAGED_PLATFORM_DRIVER = Entry(
    id="GS223",
    title="Operator-installed driver on a managed platform's node image that NVIDIA does not support",
    severity=Severity.ERROR,
    rationale="NVIDIA's driver containers on GKE support Ubuntu with containerd only: on Container-Optimized OS the "
    "driver container cannot build or load its modules and crash-loops on every node, so no GPU is ever advertised.",
    doc="""
The pool's driver comes from the operator (`driver.source: operator` or `precompiled`) on a managed platform whose
NVIDIA page lists other node images for that: on GKE, "NVIDIA Driver Manager" (the operator's driver container)
supports Ubuntu with containerd only; Container-Optimized OS nodes take the driver from the Google driver installer
(`driver.source: host`, and gpuspec renders the chart values that installer needs).

Failing: `kubernetes.distribution: gke` with a pool on `os: {distribution: cos}` and the default driver source.
Passing: the same pool with `driver.source: host`, or an Ubuntu pool with `driver.source: operator`.
""",
    tags=("support-matrix", "driver", "platform"),
    source="cloud-native-docs gpu-operator/google-gke.rst (About Using the Operator with Google GKE: supported OS "
    "per driver installer)",
)

NOTE_RULES_OUT = Entry(
    id="GS224",
    title="An NVIDIA support note rules out the pool's combination",
    severity=Severity.ERROR,
    rationale="Some notes of the platform-support pages restrict a cell of the matrix rather than describe it: the "
    "combination lints clean against the tables, but the component it needs does not exist for it, so the driver "
    "pods fail on every node of the pool.",
    doc="""
gpuspec reads every note of its support-matrix data (`gpuspec/matrix/data/notes-ledger.yaml` says, for each, the
rule that reads it or why it is informational); the notes that restrict a combination are known issues with
`restricts: true` in `gpuspec/matrix/data/domain.yaml`, reported here as errors.

Failing: a GH200 pool (Grace, arm64) on RHEL 9 with the operator's non-precompiled driver container on 26.7.0
("Non-precompiled driver containers for RHEL 9.2/9.4/9.6/9.7/9.8 are x86 only (not ARM)"). Passing: the same pool on
Ubuntu 24.04, or an x86 pool (H100) on RHEL 9.
""",
    tags=("support-matrix", "driver"),
    source="cloud-native-docs gpu-operator/platform-support.rst (notes under Supported Operating Systems and "
    "Kubernetes Platforms) at the release-line docs tags of gpuspec/matrix/data/platforms.yaml",
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
    KERNEL_MODULES,
    DRIVER_PAST_ARCHITECTURE,
    GPUDIRECT_UNSUPPORTED,
    PRECOMPILED_VERSION,
    AUTO_MODULE_TYPE,
    KNOWN_ISSUE,
    CANNOT_VERIFY_RUNTIME,
    RUNTIME_SETTING_CONTRADICTED,
    MANAGED_PLATFORM_DRIVER,
    NOTE_RULES_OUT,
    *openshift.ENTRIES,
    *operations.ENTRIES,  # lint rules of gpuspec/rules/operations.py, not support-matrix views
    CANNOT_VERIFY_MIG,
    MIG_NOT_CAPABLE,
    MIG_LAYOUT,
    MIG_PROFILE,
    MIG_LIMITS,
    MIG_SINGLE_MIXED,
    SHARING_WITH_MIG,
    MIG_DEVICES,
    MIG_STRATEGY_CLUSTER,
    QUOTA_RESOURCE,
    QUOTA_CAPACITY,
    SHARED_POOL_TENANTS,
)
