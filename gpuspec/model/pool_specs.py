"""The parts of a pool spec: GPU, OS, driver, toolkit, MIG, sharing, taints, overrides, acceptance, autoscaling."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from gpuspec.model.types import (
    DriverBranch,
    DriverVersion,
    Kernel,
    LabelKey,
    LabelValue,
    MigConfigName,
    MigProfile,
    OsVersion,
    Product,
    SpecModel,
)


class GpuSpec(SpecModel):
    """The GPUs of each node in a pool."""

    product: Product = Field(description="GPU product id as gpuspec's support matrix names it, e.g. H100-SXM5-80GB.")
    count: int = Field(ge=1, le=16, description="GPUs per node.")


class OsSpec(SpecModel):
    """Operating system of a pool's nodes."""

    distribution: Literal["ubuntu", "rhel", "rhcos", "rocky", "sles", "cos", "amazonlinux", "azurelinux"] = Field(
        description="OS distribution."
    )
    version: OsVersion = Field(description='OS version, e.g. "22.04" or "9.4" (quote it).')
    kernel: Kernel | None = Field(
        default=None, description="Kernel release, e.g. 5.15.0-105-generic (needed for precompiled drivers)."
    )
    selinux: Literal["enforcing", "permissive", "disabled"] | None = Field(
        default=None, description="SELinux mode of the nodes, when known (release notes list issues that depend on it)."
    )


class DriverSource(StrEnum):
    """Who provides the driver on a pool's nodes."""

    OPERATOR = "operator"
    PRECOMPILED = "precompiled"
    HOST = "host"


class DriverSpec(SpecModel):
    """The NVIDIA driver of a pool."""

    source: DriverSource = Field(
        default=DriverSource.OPERATOR,
        description="operator (driver container compiled on the node), precompiled (prebuilt kernel modules) "
        "or host (preinstalled on the node image; the operator does not manage it).",
    )
    branch: DriverBranch | None = Field(default=None, description="Driver branch; absent = channel or release default.")
    version: DriverVersion | None = Field(default=None, description="Exact driver version (operator source).")
    kernel_module_type: Literal["auto", "open", "proprietary"] = Field(
        default="auto", alias="kernelModuleType", description="Kernel module flavour."
    )


class ToolkitSource(StrEnum):
    """Who provides the NVIDIA Container Toolkit on a pool's nodes."""

    OPERATOR = "operator"
    HOST = "host"


class ToolkitSpec(SpecModel):
    """The NVIDIA Container Toolkit of a pool's nodes."""

    source: ToolkitSource = Field(
        default=ToolkitSource.OPERATOR,
        description="operator (the operator's toolkit container configures the runtime) or host (installed and "
        "configured on the node image, e.g. the EKS-optimized accelerated AMI: the operator deploys no toolkit "
        "there; NVIDIA's 'Pre-Installed NVIDIA GPU Drivers and NVIDIA Container Toolkit' install sets "
        "toolkit.enabled=false).",
    )

    @property
    def from_node_image(self) -> bool:
        """True when the node image brings the toolkit (``source: host``)."""
        return self.source is ToolkitSource.HOST


class MigStrategy(StrEnum):
    """How MIG devices are advertised to Kubernetes."""

    NONE = "none"
    SINGLE = "single"
    MIXED = "mixed"


class MigDeviceGroup(SpecModel):
    """A custom MIG layout entry: which GPUs of the node get which profiles."""

    devices: list[Annotated[int, Field(ge=0, le=15)]] | Literal["all"] = Field(
        default="all", description='GPU indexes on the node, or "all".'
    )
    profiles: dict[MigProfile, Annotated[int, Field(ge=1, le=7)]] = Field(
        description='MIG profile → instances per GPU, e.g. {"3g.40gb": 2}.'
    )


class MigSpec(SpecModel):
    """MIG partitioning of a pool's GPUs."""

    strategy: MigStrategy = Field(default=MigStrategy.NONE, description="none, single or mixed.")
    layout: str | None = Field(
        default=None, description="Named layout from the operator's MIG config (e.g. all-1g.10gb, all-balanced)."
    )
    custom: list[MigDeviceGroup] | None = Field(
        default=None, description="A custom layout; exactly one of layout/custom when strategy is not none."
    )
    config_name: MigConfigName | None = Field(
        default=None, alias="configName",
        description="Name of the custom layout's mig-parted config, the nvidia.com/mig.config value its nodes carry "
                    "(default custom-<pool>); `gpuspec import` keeps the name an adopted cluster's nodes carry, so "
                    "adoption does not relabel them (MIG Manager would repartition).",
    )

    @model_validator(mode="after")
    def _config_name_needs_custom(self) -> MigSpec:
        if self.config_name is not None and self.custom is None:
            raise ValueError("configName names a custom layout: it needs custom: (a named layout has its own name)")
        if self.config_name == "all-disabled":
            raise ValueError("configName all-disabled is the operator's config for MIG off; choose another name")
        return self


class SharingMode(StrEnum):
    """How one GPU is shared by several pods."""

    NONE = "none"
    TIME_SLICING = "time-slicing"
    MPS = "mps"


class SharingSpec(SpecModel):
    """GPU sharing on a pool."""

    mode: SharingMode = Field(default=SharingMode.NONE, description="none, time-slicing or mps.")
    replicas: int = Field(default=1, ge=1, le=64, description="Pods that may share one GPU.")
    rename_by_default: bool = Field(
        default=False, alias="renameByDefault", description="Advertise nvidia.com/gpu.shared instead of nvidia.com/gpu."
    )
    fail_requests_greater_than_one: bool = Field(
        default=True, alias="failRequestsGreaterThanOne", description="Reject pods asking for more than one replica."
    )
    justification: str | None = Field(
        default=None, description="Why sharing is acceptable here (no memory or fault isolation between pods)."
    )
    config_name: MigConfigName | None = Field(
        default=None, alias="configName",
        description="Key of the pool's config in the device-plugin ConfigMap, the nvidia.com/device-plugin.config "
                    "value its nodes carry (default: the pool's name); `gpuspec import` keeps the name an adopted "
                    "cluster's nodes carry, so adoption does not relabel them.",
    )

    @model_validator(mode="after")
    def _config_name_needs_sharing(self) -> SharingSpec:
        if self.config_name is not None and self.mode is SharingMode.NONE:
            raise ValueError("configName names a sharing config: it needs mode time-slicing or mps")
        return self


class DeviceNeeds(SpecModel):
    """Special device exposure a pool needs (least privilege: off unless declared)."""

    rdma: bool = Field(default=False, description="GPUDirect RDMA.")
    gds: bool = Field(default=False, description="GPUDirect Storage.")
    gdrcopy: bool = Field(default=False, description="GDRCopy.")
    sandbox: bool = Field(default=False, description="VM passthrough / vGPU sandbox workloads.")


class Taint(SpecModel):
    """A node taint."""

    key: LabelKey = Field(description="Taint key.")
    value: LabelValue = Field(default="", description="Taint value.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(description="Taint effect.")


#: A dotted path of chart values or NVIDIADriver spec keys, e.g. ``daemonsets.priorityClassName``.
OverridePath = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")]
#: Text that says something (not empty, not only spaces).
Text = Annotated[str, StringConstraints(pattern=r"\S")]


class ValueOverride(SpecModel):
    """A deliberate deviation: one value gpuspec does not model, set on purpose, with the reason why."""

    path: OverridePath = Field(
        description="Dotted key path, e.g. `daemonsets.priorityClassName` (cluster: a Helm values path of the "
        "pinned chart; pool: a field of the pool's NVIDIADriver `spec`). Checked against the chart of the "
        "pinned release; paths gpuspec sets from a spec field are refused (use the field)."
    )
    value: Any = Field(description="The value to set; its type must match the chart default's.")
    reason: Text = Field(description="Why the default is not good enough here (required; shown in the rendered "
                         "deviations record, `gpuspec deviations` and the handover documents).")
    owner: str | None = Field(default=None, description="Who owns this deviation (team or person).")
    ticket: str | None = Field(default=None, description="Ticket or change record that explains it.")


#: An image reference with an explicit tag or digest, e.g. ``nvcr.io/nvidia/pytorch:25.01-py3``.
IMAGE_REF_PATTERN = (r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-]{1,2}[a-z0-9]+)*){1,16}"
                     r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64})$")
ImageRef = Annotated[str, StringConstraints(pattern=IMAGE_REF_PATTERN)]
#: A CPU or memory quantity such as ``500m``, ``2``, ``8Gi``.
QUANTITY_PATTERN = r"^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$"
Quantity = Annotated[str, StringConstraints(pattern=QUANTITY_PATTERN)]
#: An extended resource name such as ``rdma/rdma_shared_device_a`` or ``nvidia.com/gpu``.
RESOURCE_NAME_PATTERN = r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
ResourceName = Annotated[str, StringConstraints(pattern=RESOURCE_NAME_PATTERN)]
#: Short name of an acceptance workload (it becomes part of a Job name and the check id ``workload-<name>``).
WORKLOAD_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?$"
WorkloadName = Annotated[str, StringConstraints(pattern=WORKLOAD_NAME_PATTERN)]


class ComputeResources(SpecModel):
    """CPU and memory of an acceptance pod's container (requests = limits unless limits are given)."""

    cpu: Quantity = Field(default="1", description="CPU request, e.g. 500m or 4.")
    memory: Quantity = Field(default="1Gi", description="Memory request, e.g. 512Mi or 32Gi.")
    cpu_limit: Quantity | None = Field(default=None, alias="cpuLimit", description="CPU limit; absent = the request.")
    memory_limit: Quantity | None = Field(
        default=None, alias="memoryLimit", description="Memory limit; absent = the request."
    )


class ProbeSpec(SpecModel):
    """How a workload says it is ready: exactly one of httpGet path+port, tcpPort or exec."""

    path: str | None = Field(default=None, pattern=r"^/[!-~]{0,255}$", description="HTTP GET path (with port).")
    port: int | None = Field(default=None, ge=1, le=65535, description="Port of the HTTP GET or TCP check.")
    tcp: bool = Field(default=False, description="Only open a TCP connection to `port`.")
    exec: list[str] | None = Field(default=None, min_length=1, description="Command that exits 0 when ready.")
    period_seconds: int = Field(default=10, ge=1, le=300, alias="periodSeconds", description="Seconds between tries.")

    @model_validator(mode="after")
    def _one_kind(self) -> ProbeSpec:
        kinds = [self.path is not None, self.tcp, self.exec is not None]
        if sum(kinds) != 1:
            raise ValueError("a readiness probe is exactly one of path (HTTP GET, with port), tcp: true (with port) "
                             "or exec")
        if (self.path is not None or self.tcp) and self.port is None:
            raise ValueError("an HTTP or TCP readiness probe needs port")
        return self


class AcceptanceWorkload(SpecModel):
    """A team's own workload that must run on the pool after each rollout (a real model or service)."""

    name: WorkloadName = Field(description="Short name; the check id is `workload-<name>`.")
    image: ImageRef = Field(
        description="Image with a tag or digest, as upstream names it (`nvcr.io/...`); air-gapped clusters pull it "
        "through the mirror and it is listed in images.txt."
    )
    command: list[str] | None = Field(default=None, min_length=1, description="Entrypoint; absent = the image's.")
    args: list[str] | None = Field(default=None, description="Arguments.")
    gpus: int = Field(default=1, ge=0, le=64, description="Devices of the pool's GPU resource per pod.")
    resources: ComputeResources = Field(default_factory=ComputeResources, description="CPU and memory per pod.")
    replicas: int = Field(default=1, ge=1, le=64, description="Pods that run at once (spread over the nodes).")
    ready: ProbeSpec | None = Field(
        default=None,
        description="Readiness criterion of a service: the workload passes once every replica is ready (it runs as "
        "a native sidecar of the Job, Kubernetes 1.29+). Absent: a batch workload that passes when it exits 0.",
    )
    deadline_seconds: int = Field(
        default=1800, ge=60, le=86400, alias="deadlineSeconds",
        description="The check fails when not ready / not complete after this long (the Job's activeDeadlineSeconds).",
    )
    readiness_budget_seconds: int | None = Field(
        default=None, ge=1, le=86400, alias="readinessBudgetSeconds",
        description="Time to readiness (scheduled to ready / complete, per pod) the report compares with; absent = "
        "the pool's.",
    )


class AllGpusCheck(SpecModel):
    """Every GPU of a node at once: per sampled node a pod that requests all of the node's GPUs."""

    enabled: bool = Field(default=True, description="Render the all-gpus check (whole-GPU pools only).")


class NcclCheck(SpecModel):
    """A multi-node NCCL all-reduce across sampled nodes of a pool."""

    enabled: bool | None = Field(
        default=None,
        description="Render the check; absent = where the pool has GPUDirect RDMA (`devices.rdma`) and 2+ nodes.",
    )
    nodes: int | None = Field(default=None, ge=2, le=256, description="Nodes in the all-reduce; absent = sampleNodes.")
    min_bus_bandwidth_gbps: float | None = Field(
        default=None, gt=0, le=100000, alias="minBusBandwidthGbps",
        description="Minimum all-reduce bus bandwidth in GB/s (as nccl-tests reports busbw); below it the check fails.",
    )
    message_mib: int = Field(default=1024, ge=1, le=16384, alias="messageMiB", description="All-reduce size in MiB.")
    image: ImageRef | None = Field(
        default=None, description="Image with PyTorch and NCCL; absent = the NGC PyTorch image gpuspec pins."
    )
    resources: dict[ResourceName, Annotated[int, Field(ge=1, le=64)]] = Field(
        default_factory=dict,
        description="Extra device resources per pod, e.g. `rdma/rdma_shared_device_a: 1` (the RDMA device plugin's "
        "resource: without it NCCL falls back to TCP sockets).",
    )


class DcgmDiagCheck(SpecModel):
    """DCGM diagnostics on the sampled nodes."""

    enabled: bool = Field(default=True, description="Render the dcgm-diag check.")
    level: Literal[1, 2, 3, 4] = Field(default=1, description="`dcgmi diag -r` level (1: seconds, 4: hours).")


class EvictionCheck(SpecModel):
    """A workload with a PodDisruptionBudget that must survive the drain of one sampled node (off by default)."""

    enabled: bool = Field(default=False, description="Render the eviction check.")


class AcceptanceSpec(SpecModel):
    """The acceptance checks of a pool, run after each rollout."""

    enabled: bool = Field(default=True, description="Render the pool's acceptance checks.")
    timeout_seconds: int = Field(
        default=600, ge=60, le=86400, alias="timeoutSeconds",
        description="A check Job fails when it has not succeeded after this long (activeDeadlineSeconds).",
    )
    sample_nodes: int | None = Field(
        default=None, ge=1, le=256, alias="sampleNodes",
        description="Nodes the per-node checks run on at once (at most the pool's nodes); absent = the cluster's.",
    )
    readiness_budget_seconds: int | None = Field(
        default=None, ge=1, le=86400, alias="readinessBudgetSeconds",
        description="Time to readiness each check's pods must meet (the report compares); absent = the cluster's.",
    )
    all_gpus: AllGpusCheck = Field(default_factory=AllGpusCheck, alias="allGpus", description="All GPUs of a node.")
    nccl: NcclCheck = Field(default_factory=NcclCheck, description="Multi-node NCCL all-reduce.")
    dcgm_diag: DcgmDiagCheck = Field(default_factory=DcgmDiagCheck, alias="dcgmDiag", description="DCGM diagnostics.")
    eviction: EvictionCheck = Field(default_factory=EvictionCheck, description="Survives a node drain.")
    workloads: list[AcceptanceWorkload] = Field(
        default_factory=list, description="The team's own workloads that must run on the pool."
    )

    @model_validator(mode="after")
    def _workload_names_distinct(self) -> AcceptanceSpec:
        names = [w.name for w in self.workloads]
        if len(names) != len(set(names)):
            raise ValueError("acceptance workload names must be distinct in a pool")
        return self


class ClusterAcceptance(SpecModel):
    """Defaults of the acceptance checks of every pool of the cluster."""

    sample_nodes: int = Field(
        default=2, ge=1, le=256, alias="sampleNodes",
        description="Nodes of each pool the per-node checks (all-gpus, dcgm-diag, mig, nccl) run on at once.",
    )
    readiness_budget_seconds: int | None = Field(
        default=None, ge=1, le=86400, alias="readinessBudgetSeconds",
        description="Time to readiness (pod scheduled to ready / complete) every check must meet; absent = none.",
    )


class AutoscalerKind(StrEnum):
    """The node autoscaler that adds and removes a pool's nodes."""

    CLUSTER_AUTOSCALER = "cluster-autoscaler"
    KARPENTER = "karpenter"


class StartupTaint(SpecModel):
    """A taint new nodes start with and a named controller removes once the node is ready for GPU work."""

    key: LabelKey = Field(description="Taint key.")
    value: LabelValue = Field(default="", description="Taint value.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        default="NoSchedule", description="Taint effect.")
    removed_by: str | None = Field(
        default=None, alias="removedBy",
        description="The controller that removes the taint (the GPU Operator removes none); absent = nothing "
                    "removes it and new nodes stay tainted (GS242).",
    )


class AutoscalingSpec(SpecModel):
    """How a pool autoscales, so the autoscaler waits for the operator before counting a new node as GPU capacity."""

    autoscaler: AutoscalerKind = Field(description="cluster-autoscaler or karpenter.")
    min: int = Field(ge=0, le=10000, description="Fewest nodes the autoscaler keeps.")
    max: int = Field(ge=0, le=10000, description="Most nodes the autoscaler adds.")
    cloud: Literal["aws", "gce", "azure", "other"] = Field(
        default="other",
        description="cluster-autoscaler's cloud provider, which decides its GPU node label (aws "
                    "`k8s.amazonaws.com/accelerator`, gce `cloud.google.com/gke-accelerator`, azure `accelerator`); "
                    "other = no GPU label.",
    )
    startup_taints: list[StartupTaint] = Field(
        default_factory=list, alias="startupTaints",
        description="Taints new nodes start with (Karpenter NodePool `startupTaints`, or cluster-autoscaler "
                    "`--startup-taint`), each with the controller that removes it.",
    )
    node_overlay: bool = Field(
        default=False, alias="nodeOverlay",
        description="Karpenter only: the cluster applies the NodeOverlay gpuspec renders into `autoscaling.yaml` "
                    "(Karpenter v1.7.0 or later, feature gate `NodeOverlay=true`), so the pool's instance types offer "
                    "what its nodes advertise (MIG profiles, shared GPUs) and Karpenter can launch nodes for them.",
    )

    @model_validator(mode="after")
    def _node_overlay_is_karpenters(self) -> AutoscalingSpec:
        if self.node_overlay and self.autoscaler is not AutoscalerKind.KARPENTER:
            raise ValueError("nodeOverlay is a Karpenter API: it needs autoscaler karpenter")
        return self
