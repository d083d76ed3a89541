"""Pools, tenants and clusters: the documents of fleet/clusters/."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PrivateAttr, model_validator

from gpuspec.model.cluster_specs import GitOpsSpec, KubernetesSpec, OperatorSpec, RolloutSpec
from gpuspec.model.ownership import Ownership, PoolOwnership
from gpuspec.model.pool_specs import (
    AcceptanceSpec,
    AutoscalingSpec,
    ClusterAcceptance,
    DeviceNeeds,
    DriverSource,
    DriverSpec,
    GpuSpec,
    MigSpec,
    MigStrategy,
    OsSpec,
    SharingMode,
    SharingSpec,
    Taint,
    ToolkitSpec,
    ValueOverride,
)
from gpuspec.model.types import MAX_INT32, LabelKey, LabelValue, MigResource, Name, ObjectMeta, SpecModel


class Pool(SpecModel):
    """A group of identical GPU nodes."""

    name: Name = Field(description="Pool name, unique in the cluster.")
    node_selector: dict[LabelKey, LabelValue] = Field(
        alias="nodeSelector", min_length=1, description="Labels that select exactly this pool's nodes."
    )
    nodes: int = Field(ge=0, le=10000, description="Number of nodes in the pool.")
    gpu: GpuSpec = Field(description="GPUs of each node.")
    os: OsSpec = Field(description="Operating system of the nodes.")
    driver: DriverSpec = Field(default_factory=DriverSpec, description="NVIDIA driver.")
    toolkit: ToolkitSpec = Field(default_factory=ToolkitSpec, description="NVIDIA Container Toolkit.")
    mig: MigSpec = Field(default_factory=MigSpec, description="MIG partitioning.")
    sharing: SharingSpec = Field(default_factory=SharingSpec, description="GPU sharing.")
    devices: DeviceNeeds = Field(default_factory=DeviceNeeds, description="Special device exposure this pool needs.")
    taints: list[Taint] = Field(default_factory=list, description="Taints of the pool's nodes.")
    wave: int = Field(default=1, ge=0, le=99, description="Rollout wave inside the cluster (lower goes first).")
    acceptance: AcceptanceSpec = Field(
        default_factory=AcceptanceSpec, description="Acceptance check run after each rollout (on by default)."
    )
    driver_overrides: list[ValueOverride] = Field(
        default_factory=list, alias="driverOverrides",
        description="Deliberate deviations in this pool's NVIDIADriver `spec` (only for pools that get one: "
        "clusters whose pools need different drivers).",
    )
    ownership: PoolOwnership = Field(
        default_factory=PoolOwnership, description="The pool's own hardware owner, where it differs from the "
                                                   "cluster's.")
    managed: bool = Field(
        default=True,
        description="false: hybrid mode, the GPU Operator must not touch this pool's nodes (node label "
        "`nvidia.com/gpu.deploy.operands=false`; no NVIDIADriver, no acceptance Job); needs `driver.source: host`, "
        "no MIG and no sharing. Audit still checks the nodes; `gpuspec migrate` moves them one by one.",
    )
    autoscaling: AutoscalingSpec | None = Field(
        default=None,
        description="The pool autoscales (cluster-autoscaler or Karpenter); absent = a fixed number of nodes. "
                    "`nodes` is the size the rest of the spec plans for (quotas, acceptance).",
    )

    @model_validator(mode="after")
    def _unmanaged_is_hands_off(self) -> Pool:
        if self.managed:
            return self
        if self.driver.source is not DriverSource.HOST:
            raise ValueError("managed: false needs driver.source: host (the operator installs nothing on the pool)")
        if self.mig.strategy is not MigStrategy.NONE:
            raise ValueError("managed: false cannot have MIG: mig-manager does not run on the pool's nodes")
        if self.sharing.mode is not SharingMode.NONE:
            raise ValueError("managed: false cannot have sharing: the operator's device plugin does not run there")
        return self


class Tenant(SpecModel):
    """A team with namespaces and a GPU quota."""

    name: Name = Field(description="Tenant name.")
    namespaces: list[Name] = Field(min_length=1, description="Namespaces the tenant's workloads run in.")
    gpu_quota: int | None = Field(
        default=None, ge=0, le=MAX_INT32, alias="gpuQuota", description="requests.nvidia.com/gpu limit per namespace."
    )
    mig_quota: dict[MigResource, Annotated[int, Field(ge=0, le=MAX_INT32)]] = Field(
        default_factory=dict, alias="migQuota", description="MIG resource → limit, e.g. {mig-1g.10gb: 14}."
    )
    pools: list[Name] = Field(min_length=1, description="Pools the tenant may use.")
    priority_class: Name | None = Field(default=None, alias="priorityClass", description="PriorityClass of its pods.")
    team: Name | None = Field(
        default=None, description="The tenant's team (fleet.yaml `teams`): its groups get the tenant role (quota "
                                  "and GPU node state, no rights on drivers or the operator namespace).")


class PriorityClassSpec(SpecModel):
    """A PriorityClass gpuspec renders."""

    name: Name = Field(description="PriorityClass name.")
    value: int = Field(ge=-2147483648, le=1000000000, description="Priority value.")
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = Field(
        default="PreemptLowerPriority", alias="preemptionPolicy", description="Whether it preempts."
    )
    description: str | None = Field(default=None, description="What the class is for.")


class Cluster(SpecModel):
    """Contents of fleet/clusters/<name>.yaml: one Kubernetes cluster with GPU pools."""

    api_version: Literal["gpuspec.io/v1alpha1"] = Field(alias="apiVersion", description="Spec format version.")
    kind: Literal["Cluster"] = Field(description="Always Cluster.")
    metadata: ObjectMeta = Field(description="Cluster name (= file name) and labels.")
    ownership: Ownership | None = Field(
        default=None, description="Owners of this cluster, each role falling back to fleet.yaml's `ownership`.")
    kubernetes: KubernetesSpec = Field(description="Kubernetes version, distribution and runtime.")
    operator: OperatorSpec = Field(description="GPU Operator version pin and operands.")
    mirror: Name | None = Field(default=None, description="Air-gap mirror from fleet.yaml; absent = online.")
    gitops: GitOpsSpec = Field(description="Argo CD or Flux.")
    rollout: RolloutSpec = Field(default_factory=RolloutSpec, description="Waves, canary and upgrade policy.")
    pools: list[Pool] = Field(min_length=1, description="GPU node pools.")
    tenants: list[Tenant] = Field(default_factory=list, description="Teams with quotas.")
    priority_classes: list[PriorityClassSpec] = Field(
        default_factory=list, alias="priorityClasses", description="PriorityClasses to create."
    )
    acceptance: ClusterAcceptance = Field(
        default_factory=ClusterAcceptance, description="Defaults of the pools' acceptance checks."
    )
    overrides: list[ValueOverride] = Field(
        default_factory=list,
        description="Deliberate deviations: GPU Operator chart values gpuspec does not model (operand "
        "resources, priority classes, environment …), each with its reason.",
    )
    compliance: Literal["government-ready"] | None = Field(
        default=None,
        description="government-ready: every enabled operand must be in NVIDIA's government-ready set of the "
                    "release, from its documented image variants (GS244-GS246); absent = no compliance set.",
    )

    _source_file: str = PrivateAttr(default="")
    _pool_positions: dict[int, int] | None = PrivateAttr(default=None)

    @property
    def name(self) -> str:
        """The cluster's name."""
        return self.metadata.name

    def pool_position(self, pool: Pool) -> int:
        """The index of ``pool`` (this very object) in ``pools``: a dictionary lookup, not a scan with ``==``."""
        positions = self._pool_positions
        position = positions.get(id(pool)) if positions is not None else None
        if position is None or position >= len(self.pools) or self.pools[position] is not pool:
            positions = {id(p): i for i, p in enumerate(self.pools)}
            self._pool_positions = positions
            position = positions.get(id(pool))
            if position is None:
                raise ValueError(f"pool {pool.name!r} is not a pool of cluster {self.name!r}")
        return position

    @property
    def source_file(self) -> str:
        """The file this cluster was read from, as the user named it."""
        # Read from the private-attribute dict directly: BaseModel.__getattr__ costs ~1 µs per call, and the
        # support-matrix checks ask ~40 times per cluster.
        private = self.__pydantic_private__
        return private["_source_file"] if private is not None else self._source_file

    def pool(self, name: str) -> Pool | None:
        """The pool called ``name``, if any."""
        return next((p for p in self.pools if p.name == name), None)

    @model_validator(mode="after")
    def _mig_config_names_distinct(self) -> Cluster:
        named = {p.mig.layout for p in self.pools if p.mig.layout}
        seen: dict[str, str] = {}
        for pool in self.pools:
            if pool.mig.custom is None or pool.mig.strategy is MigStrategy.NONE:
                continue
            config = pool.mig.config_name or f"custom-{pool.name}"
            if config in named:
                raise ValueError(f"pool {pool.name!r}: MIG configName {config!r} is the named layout another pool "
                                 "selects; the rendered mig-parted config holds one entry per name")
            if config in seen:
                raise ValueError(f"pools {seen[config]!r} and {pool.name!r} both name their custom MIG layout "
                                 f"{config!r}; the rendered mig-parted config holds one entry per name")
            seen[config] = pool.name
        return self

    @model_validator(mode="after")
    def _sharing_config_names_distinct(self) -> Cluster:
        default = self.operator.config_maps.device_plugin_default
        seen: dict[str, str] = {}
        for pool in self.pools:
            if pool.sharing.mode is SharingMode.NONE:
                continue
            config = pool.sharing.config_name or pool.name
            if default and config == default:
                raise ValueError(f"pool {pool.name!r}: sharing configName {config!r} is the device plugin's default "
                                 "config (operator.configMaps.devicePluginDefault); choose another name")
            if config in seen:
                raise ValueError(f"pools {seen[config]!r} and {pool.name!r} both name their sharing config "
                                 f"{config!r}; the rendered device-plugin ConfigMap holds one entry per name")
            seen[config] = pool.name
        return self
