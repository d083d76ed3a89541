"""Operations findings (GS240-GS254): autoscaled pools that wait for the operator, government-ready sets."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

AUTOSCALING_BOUNDS = Entry(
    id="GS240",
    title="Autoscaling bounds hold the pool's planned size",
    severity=Severity.ERROR,
    rationale="Quotas, acceptance and the handover plan for `nodes`; an autoscaler bounded elsewhere never "
    "reaches that size, or a minimum above the maximum is refused by the autoscaler.",
    doc="""
`pools[].autoscaling` has `min <= nodes <= max`.

`nodes` is the size the rest of the spec plans for (tenant quotas, the acceptance checklist, the rollback
threshold); the autoscaler keeps the pool between `min` and `max`.

Failing: `nodes: 4` with `autoscaling: {min: 5, max: 8}`, or `min: 6, max: 2`.
Passing: `nodes: 4` with `autoscaling: {min: 0, max: 8}`.
""",
    tags=("autoscaling", "operations"),
)

NO_READINESS_GATE = Entry(
    id="GS241",
    title="cluster-autoscaler waits for the pool's GPUs",
    severity=Severity.WARNING,
    rationale="A new GPU node is Ready minutes before the operator has installed the driver and the device "
    "plugin advertises nvidia.com/gpu; an autoscaler that counts it as capacity meanwhile stops scaling up.",
    doc="""
A pool scaled by cluster-autoscaler has a readiness gate: its cloud provider's GPU label, or a startup taint
that a named controller removes.

cluster-autoscaler treats a Ready node that carries its cloud provider's GPU label but advertises no
`nvidia.com/gpu` as unready (`FilterOutNodesWithUnreadyResources`): aws `k8s.amazonaws.com/accelerator`, gce
`cloud.google.com/gke-accelerator`, azure `kubernetes.azure.com/accelerator` (`accelerator` up to
cluster-autoscaler 1.31, which follows the cluster's Kubernetes minor). With `cloud: other` there is no such label,
and on aws gpuspec leaves it out of the node group of a pool that advertises no `nvidia.com/gpu` (mixed MIG,
renamed shared GPUs, VM passthrough; with the label its nodes would stay unready for good): either way the node
counts as ready capacity while the driver still builds.

Failing: `autoscaling: {autoscaler: cluster-autoscaler, cloud: other, min: 0, max: 4}` and no startup taint;
`cloud: aws` for a `mig.strategy: mixed` pool.
Passing: `cloud: aws` for a whole-GPU pool (gpuspec renders the label into the node-group template in
`autoscaling.yaml`), or a startup taint with `removedBy`.
""",
    tags=("autoscaling", "operations"),
    source="kubernetes/autoscaler cluster-autoscaler-1.29.0 to 1.36.1: processors/customresources/gpu_processor.go "
    "(FilterOutNodesWithUnreadyResources); cloudprovider GPULabel of aws, gce, azure (azure_cloud_provider.go: "
    "legacy \"accelerator\" through 1.31.x)",
)

STARTUP_TAINT_STRANDS = Entry(
    id="GS242",
    title="Every startup taint has a controller that removes it",
    severity=Severity.ERROR,
    rationale="The GPU Operator removes no taint: a startup taint nothing removes keeps every new node "
    "unschedulable, and the autoscaler keeps adding nodes nobody can use.",
    doc="""
Each startup taint of an autoscaled pool (`autoscaling.startupTaints`, or a pool taint with cluster-autoscaler's
`startup-taint.cluster-autoscaler.kubernetes.io/` or `ignore-taint.cluster-autoscaler.kubernetes.io/` prefix)
names the controller that removes it (`removedBy`).

Karpenter applies NodePool `startupTaints` and "assumes that the taint is temporary and some other system will
remove the taint"; cluster-autoscaler treats a node with a startup taint as not ready until it is gone. Neither
removes it, nor does the GPU Operator. gpuspec renders no startup taint of its own for that reason.

Failing: `startupTaints: [{key: acme.example/gpu-not-ready}]`.
Passing: the same taint with `removedBy: node-readiness-controller`, or no startup taint (Karpenter already
waits for `nvidia.com/gpu` to be registered before it counts the node as initialized).
""",
    tags=("autoscaling", "operations"),
    source="karpenter.sh concepts/nodepools (startupTaints); cluster-autoscaler 1.29.0 release notes "
    "(--startup-taint); NVIDIA/gpu-operator pull request 2573 (\"The GPU Operator itself is unchanged\")",
)

TAINT_BOTH_WAYS = Entry(
    id="GS243",
    title="A taint is either permanent or a startup taint",
    severity=Severity.ERROR,
    rationale="A key in both `taints` and `autoscaling.startupTaints` is removed by one controller and "
    "re-applied by the other: workloads flap between schedulable and not.",
    doc="""
No key appears both in the pool's `taints` (permanent: workloads tolerate them) and in
`autoscaling.startupTaints` (temporary: removed once the node is ready).

Failing: `taints: [{key: acme.example/gpu, effect: NoSchedule}]` and
`startupTaints: [{key: acme.example/gpu, removedBy: ...}]`.
Passing: different keys.
""",
    tags=("autoscaling", "operations"),
)

MIG_SCALE_FROM_ZERO = Entry(
    id="GS244",
    title="A pool scaled from zero tells cluster-autoscaler the resources it advertises",
    severity=Severity.WARNING,
    rationale="With no node to copy, cluster-autoscaler learns a node's resources from the node group's "
    "template, which has only the instance type's nvidia.com/gpu; a pod requesting a MIG profile (mixed strategy) "
    "or a renamed shared GPU never triggers a scale-up from zero.",
    doc="""
A pool scaled by cluster-autoscaler with `min: 0` whose nodes advertise a resource other than `nvidia.com/gpu`
(`nvidia.com/mig-<profile>` under `mig.strategy: mixed`, `nvidia.com/gpu.shared` under
`sharing.renameByDefault`) runs on a cloud whose node-group template gpuspec can make list it: aws
(`k8s.io/cluster-autoscaler/node-template/resources/<resource>` Auto Scaling Group tags) or azure
(`k8s.io_cluster-autoscaler_node-template_resources_<resource>` VMSS tags, `/` written `_`), both rendered into
`autoscaling.yaml` with the pool's counts. Whole GPUs, time-slicing replicas under their own name and MIG
`single` are `nvidia.com/gpu`, which the template takes from the instance type.

Failing: a `mig.strategy: mixed` pool with `autoscaling: {autoscaler: cluster-autoscaler, cloud: gce, min: 0}`.
Passing: `cloud: aws` or `azure`, `mig.strategy: single`, or `min: 1` (the template is then a copy of a real
node).
""",
    tags=("autoscaling", "mig", "operations"),
    source="NVIDIA/gpu-operator examples/cluster-autoscaler/README.md, MIG node pools (main at 05c347d84611): "
    "mixed-strategy resources \"exist only after the device plugin reports them - no provider infers them from "
    "the instance type\"; kubernetes/autoscaler cluster-autoscaler-1.34.0 cloudprovider/aws/aws_manager.go "
    "(buildNodeFromTemplate, extractAllocatableResourcesFromAsg) and cloudprovider/azure/azure_template.go "
    "(extractAllocatableResourcesFromScaleSet)",
)

UNREADY_FOR_GOOD = Entry(
    id="GS248",
    title="cluster-autoscaler's GPU readiness keys on a resource the pool advertises",
    severity=Severity.ERROR,
    rationale="cluster-autoscaler counts a node with its cloud's GPU label and no allocatable nvidia.com/gpu as "
    "unready; a pool that advertises none stays unready for good, and past the unready limits the autoscaler "
    "halts scale-up for the whole cluster.",
    doc="""
A pool scaled by cluster-autoscaler on a platform that puts the GPU label on its GPU nodes itself (gce: GKE's
`cloud.google.com/gke-accelerator`; azure: AKS's `kubernetes.azure.com/accelerator`, `accelerator` up to
cluster-autoscaler 1.31) advertises `nvidia.com/gpu`.

cluster-autoscaler (1.29 to 1.36, following the cluster's Kubernetes minor) replaces every Ready node that has the
GPU label but no allocatable `nvidia.com/gpu` by an unready copy, "assume the node is still not fully started
(installing GPU drivers)". A node that advertises `nvidia.com/mig-<profile>` only (`mig.strategy: mixed`),
`nvidia.com/gpu.shared` (`sharing.renameByDefault`) or a passthrough GPU under its model's name
(`devices.sandbox`) never gets there. With more than `--ok-total-unready-count` (3) unready nodes that are also
more than `--max-total-unready-percentage` (45%) of the cluster, cluster-autoscaler halts.

Failing: a `mig.strategy: mixed` pool with `autoscaling: {autoscaler: cluster-autoscaler, cloud: gce}`.
Passing: `mig.strategy: single` (MIG devices advertised as `nvidia.com/gpu`), `sharing.renameByDefault: false`,
or `cloud: aws`, where gpuspec leaves the label out of the node group of such a pool (then gate it with a startup
taint, GS241).
""",
    tags=("autoscaling", "mig", "operations"),
    source="kubernetes/autoscaler processors/customresources/gpu_processor.go FilterOutNodesWithUnreadyResources "
    "(cluster-autoscaler-1.29.0 to 1.36.1), clusterstate/clusterstate.go IsClusterHealthy and "
    "config/flags/flags.go (max-total-unready-percentage 45, ok-total-unready-count 3) at 1.34.0; "
    "cloudprovider/azure/azure_template.go (the label on NVIDIA SKUs)",
)

KARPENTER_CANNOT_LAUNCH = Entry(
    id="GS249",
    title="Karpenter knows the resources a pool's pods request",
    severity=Severity.ERROR,
    rationale="Karpenter launches a node only for an instance type that offers what the pending pods request; "
    "instance types offer nvidia.com/gpu only, so pods requesting a MIG profile or a renamed shared GPU stay "
    "pending unless a NodeOverlay adds that resource.",
    doc="""
A pool scaled by Karpenter whose nodes advertise a resource other than `nvidia.com/gpu`
(`nvidia.com/mig-<profile>` under `mig.strategy: mixed`, `nvidia.com/gpu.shared` under
`sharing.renameByDefault`) declares `autoscaling.nodeOverlay: true`: the cluster applies the NodeOverlay gpuspec
renders for the pool in `autoscaling.yaml` (`karpenter.sh/v1alpha1`, from Karpenter v1.7.0, feature gate
`NodeOverlay=true`, off by default), whose `capacity` gives the pool's instance types those resources. Karpenter
then also waits for them: a NodeClaim is initialized once every resource its pods requested is allocatable.

Failing: a `mig.strategy: mixed` pool with `autoscaling: {autoscaler: karpenter, min: 0, max: 4}`.
Passing: the same with `nodeOverlay: true`, or `mig.strategy: single`.
""",
    tags=("autoscaling", "mig", "operations"),
    source="kubernetes-sigs/karpenter designs/node-overlay.md; pkg/apis/v1alpha1/nodeoverlay.go (v1.7.0-v1.9.1); "
    "pkg/operator/options/options.go (feature gate NodeOverlay=false); "
    "pkg/controllers/nodeclaim/lifecycle/initialization.go RequestedResourcesRegistered (v1.0.0-v1.9.1)",
)

GOV_READY_OUTSIDE_SET = Entry(
    id="GS245",
    title="Government-ready clusters run only government-ready operands",
    severity=Severity.ERROR,
    rationale="An operand without a government-ready build breaks the compliance the cluster asks for.",
    doc="""
A cluster with `compliance: government-ready` enables only operands NVIDIA documents as government-ready for
its release (gpuspec/matrix/data/government-ready.yaml, with sources).

25.10: operator (with the validator), GFD, container toolkit, device plugin, DCGM exporter, MIG manager and
driver; NFD has no government-ready build ("install upstream NFD"), nor GDS or KubeVirt. 26.3: every component
of the component matrix except the GDS driver, the confidential-computing manager and the GDRCopy driver.
Releases before 25.10 have none.

Failing: a 25.10 cluster with `compliance: government-ready` and the chart's NFD on (`operands.nfd: true`).
Passing: `operands.nfd: false` (NFD installed separately).
""",
    tags=("compliance", "operations"),
    source="cloud-native-docs gpu-operator/install-gpu-operator-gov-ready.rst; life-cycle-policy.rst "
    "component-matrix note (26.3)",
)

GOV_READY_CANNOT_VERIFY = Entry(
    id="GS246",
    title="Government-ready set or images cannot be verified",
    severity=Severity.WARNING,
    rationale="Where NVIDIA's sources give no per-release list or name no image variant, gpuspec cannot prove "
    "the cluster government-ready and says so instead of guessing.",
    doc="""
Reported for a `compliance: government-ready` cluster when the sources give no government-ready list for its
release (26.7: the component-matrix note still names v26.3), or when they name no government-ready image
variant for enabled operands (26.3: none; 25.10: only the driver). The message names the source gap.

Failing: a 26.7 cluster with `compliance: government-ready`.
Passing: a cluster without `compliance`.
""",
    tags=("compliance", "operations", "cannot-verify"),
)

GOV_READY_IMAGE = Entry(
    id="GS247",
    title="Government-ready clusters pull the documented image variants",
    severity=Severity.ERROR,
    rationale="The government-ready build is a different image (STIG base, FIPS); the default image is not it.",
    doc="""
Where NVIDIA documents a government-ready image for an operand of the release, the cluster's rendered values
name it: 25.10 driver `nvcr.io/nvidia/driver-stig-fips/gpu-driver-stig-fips:580.95.05-stig-fips` (set
`driver.repository`, `driver.image`, `driver.version` as overrides, with `driver.secretEnv` for the Ubuntu Pro
token and the NGC pull secret).

Failing: a 25.10 government-ready cluster with the chart's default driver image.
Passing: overrides that set the documented variant.
""",
    tags=("compliance", "operations", "images"),
    source="cloud-native-docs gpu-operator/install-gpu-operator-gov-ready.rst (Install NVIDIA GPU Operator "
    "Government-Ready Components)",
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    AUTOSCALING_BOUNDS,
    NO_READINESS_GATE,
    STARTUP_TAINT_STRANDS,
    TAINT_BOTH_WAYS,
    MIG_SCALE_FROM_ZERO,
    GOV_READY_OUTSIDE_SET,
    GOV_READY_CANNOT_VERIFY,
    GOV_READY_IMAGE,
    UNREADY_FOR_GOOD,
    KARPENTER_CANNOT_LAUNCH,
)
