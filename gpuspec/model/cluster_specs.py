"""The cluster-wide parts of a cluster spec: Kubernetes, operator, GitOps, rollout."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from gpuspec.model.types import MAX_INT32, IntOrPercent, KubeMinor, Name, OperatorVersion, SpecModel


class Distribution(StrEnum):
    """Kubernetes distributions gpuspec knows."""

    UPSTREAM = "upstream"
    EKS = "eks"
    GKE = "gke"
    AKS = "aks"
    OPENSHIFT = "openshift"
    RKE2 = "rke2"
    K3S = "k3s"
    K0S = "k0s"
    MICROK8S = "microk8s"
    VKS = "vks"
    NKP = "nkp"


class Runtime(StrEnum):
    """Container runtimes the GPU Operator supports."""

    CONTAINERD = "containerd"
    CRIO = "cri-o"


class KubernetesSpec(SpecModel):
    """The cluster's Kubernetes."""

    version: KubeMinor = Field(description='Kubernetes minor version, e.g. "1.31" (quote it).')
    distribution: Distribution = Field(default=Distribution.UPSTREAM, description="Kubernetes distribution.")
    runtime: Runtime = Field(default=Runtime.CONTAINERD, description="Container runtime on the GPU nodes.")
    openshift_version: str | None = Field(
        default=None, alias="openshiftVersion", description='OpenShift version such as "4.19" (distribution openshift).'
    )
    user_namespaces: bool = Field(
        default=False, alias="userNamespaces",
        description="GPU pods on this cluster run in Kubernetes user namespaces (`spec.hostUsers: false`).",
    )


class DcgmExporter(SpecModel):
    """DCGM exporter telemetry."""

    enabled: bool = Field(default=True, description="Deploy the DCGM exporter.")
    service_monitor: bool = Field(default=True, alias="serviceMonitor", description="Create a ServiceMonitor for it.")


class Operands(SpecModel):
    """Which GPU Operator operands run (defaults follow the chart)."""

    dcgm_exporter: DcgmExporter = Field(default_factory=DcgmExporter, alias="dcgmExporter", description="Telemetry.")
    nfd: bool = Field(
        default=True,
        description="Deploy Node Feature Discovery with the operator (OpenShift: the NFD Operator and its "
        "NodeFeatureDiscovery instance; false = NFD is installed already).",
    )
    cdi: bool = Field(default=True, description="Use the Container Device Interface.")
    gds: bool = Field(default=False, description="GPUDirect Storage (nvidia-fs) on pools that declare it.")
    gdrcopy: bool = Field(default=False, description="GDRCopy driver on pools that declare it.")
    rdma: bool = Field(default=False, description="GPUDirect RDMA on pools that declare it.")
    sandbox_workloads: bool = Field(
        default=False, alias="sandboxWorkloads", description="KubeVirt/Kata sandbox workloads (vGPU, passthrough)."
    )
    alerts: bool = Field(default=True, description="Render a PrometheusRule with GPU and operator alerts.")


#: The device-plugin ConfigMap gpuspec renders (operator namespace) when a pool shares GPUs.
DEVICE_PLUGIN_CONFIGMAP = "gpuspec-device-plugin-config"
#: The key of that ConfigMap the device plugin takes on nodes without a ``nvidia.com/device-plugin.config`` label.
DEVICE_PLUGIN_DEFAULT_KEY = "default"
#: The mig-parted ConfigMap gpuspec renders (operator namespace) when a pool has a custom MIG layout.
MIG_CONFIGMAP = "gpuspec-mig-config"


class OperatorConfigMaps(SpecModel):
    """Names of the ConfigMaps gpuspec renders for the device plugin and MIG Manager (chart values
    ``devicePlugin.config`` and ``migManager.config``); `gpuspec import` keeps the names an adopted cluster uses."""

    device_plugin: Name = Field(
        default=DEVICE_PLUGIN_CONFIGMAP, alias="devicePlugin",
        description="The device-plugin ConfigMap holding one config per sharing pool (devicePlugin.config.name).",
    )
    device_plugin_default: Annotated[str, StringConstraints(pattern=r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}"
                                                                    r"[A-Za-z0-9])?)?$")] = Field(
        default=DEVICE_PLUGIN_DEFAULT_KEY, alias="devicePluginDefault",
        description="Key of the config (no sharing) the device plugin takes on nodes without a "
                    "nvidia.com/device-plugin.config label (devicePlugin.config.default); \"\" renders none, as a "
                    "ConfigMap of NVIDIA's time-slicing procedure has none.",
    )
    mig: Name = Field(
        default=MIG_CONFIGMAP,
        description="The mig-parted ConfigMap holding the custom MIG layouts (migManager.config.name), rendered when "
                    "a pool has a custom layout.",
    )


class OperatorSpec(SpecModel):
    """The GPU Operator installation of a cluster."""

    version: OperatorVersion | None = Field(
        default=None, description='Pinned GPU Operator release, e.g. "v25.10.1". Exactly one of version/channel.'
    )
    channel: Name | None = Field(default=None, description="Follow a channel from fleet.yaml instead of a pin.")
    namespace: Name = Field(default="gpu-operator", description="Namespace the operator and its operands run in.")
    operands: Operands = Field(default_factory=Operands, description="Which operands run.")
    config_maps: OperatorConfigMaps = Field(
        default_factory=OperatorConfigMaps, alias="configMaps",
        description="Names of the device-plugin and MIG Manager ConfigMaps gpuspec renders.",
    )
    driver_management: Literal["auto", "clusterpolicy", "nvidiadriver"] = Field(
        default="auto", alias="driverManagement",
        description="Who manages operator-installed drivers: the ClusterPolicy (one driver for the cluster), "
        "NVIDIADriver resources (a default one plus one per pool whose driver differs), or auto (NVIDIADriver "
        "only when pools use different drivers).  Switching is a change of its own (GS808).",
    )
    default_nvidia_driver: bool = Field(
        default=True, alias="defaultNVIDIADriver",
        description="With NVIDIADriver management on v26.7.0+: the chart's default NVIDIADriver serves the pools "
        "whose driver is the most common (true), or every pool keeps an NVIDIADriver of its own and the chart "
        "deploys none (false; the first step of an operator upgrade of a cluster with per-pool NVIDIADrivers, GS813).",
    )
    rollback: bool = Field(
        default=False,
        description="Acknowledges an intended operator or driver downgrade in this change (required by GS803).",
    )


class ArgoCDDestination(SpecModel):
    """Where Argo CD applies this cluster's resources."""

    server: str | None = Field(default=None, description="API server URL registered in Argo CD.")
    name: str | None = Field(default=None, description="Cluster name registered in Argo CD.")


class ArgoCDSpec(SpecModel):
    """Argo CD settings."""

    project: Name = Field(default="default", description="AppProject of the Applications.")
    namespace: Name = Field(default="argocd", description="Namespace Argo CD runs in.")
    destination: ArgoCDDestination = Field(
        default_factory=lambda: ArgoCDDestination(server="https://kubernetes.default.svc"),
        description="Target cluster.",
    )


class FluxSpec(SpecModel):
    """Flux settings."""

    namespace: Name = Field(default="flux-system", description="Namespace of the Flux objects.")
    source: Name = Field(default="fleet", description="Name of the GitRepository holding this fleet repository.")
    kube_config_secret: Name | None = Field(
        default=None, alias="kubeConfigSecret", description="Secret with a kubeconfig for a remote cluster."
    )


class GitOpsSpec(SpecModel):
    """How the rendered output reaches the cluster."""

    tool: Literal["argocd", "flux"] = Field(description="argocd or flux.")
    argocd: ArgoCDSpec = Field(default_factory=ArgoCDSpec, description="Argo CD settings (tool argocd).")
    flux: FluxSpec = Field(default_factory=FluxSpec, description="Flux settings (tool flux).")


class DrainSpec(SpecModel):
    """How nodes are drained before a driver upgrade."""

    enable: bool = Field(default=False, description="Drain the node before upgrading its driver.")
    force: bool = Field(default=False, description="Delete pods not managed by a controller.")
    timeout_seconds: int = Field(default=300, ge=0, le=MAX_INT32, alias="timeoutSeconds",
                                 description="Give up after this long.")
    delete_empty_dir: bool = Field(default=False, alias="deleteEmptyDir", description="Delete pods with emptyDir.")
    pod_selector: str = Field(default="", alias="podSelector", description="Only drain pods matching this selector.")


class PodDeletionSpec(SpecModel):
    """How GPU pods are deleted before a driver upgrade."""

    force: bool = Field(default=False, description="Delete GPU pods not managed by a controller.")
    timeout_seconds: int = Field(default=300, ge=0, le=MAX_INT32, alias="timeoutSeconds",
                                 description="Give up after this long.")
    delete_empty_dir: bool = Field(default=False, alias="deleteEmptyDir", description="Delete pods with emptyDir.")


class WaitForCompletionSpec(SpecModel):
    """Which workload pods the driver upgrade waits for on a node, and for how long."""

    pod_selector: str = Field(
        min_length=1, alias="podSelector",
        description="Label selector of the pods (jobs) to wait for, e.g. app=training; required: without one the "
                    "upgrade controller does not wait at all.",
    )
    timeout_seconds: int = Field(
        default=0, ge=0, le=MAX_INT32, alias="timeoutSeconds",
        description="Stop waiting after this long and go on with the upgrade (0 = wait until the pods finish).",
    )


#: Days of the week, as a maintenance window names them.
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
#: A window's length such as "4h", "90m" or "2h30m" (at most one week).
WINDOW_LENGTH_PATTERN = r"^([0-9]{1,3}h([0-9]{1,5}m)?|[0-9]{1,5}m)$"
#: An IANA time zone name such as "UTC" or "Europe/Berlin".
TIME_ZONE_PATTERN = r"^[A-Za-z][A-Za-z0-9_+-]{0,30}(/[A-Za-z0-9_+-]{1,30}){0,2}$"


class PerNodeSeconds(SpecModel):
    """Worst-case time one node needs per kind of disruption, besides the timeouts of the upgrade policy.

    gpuspec's defaults are assumptions, not NVIDIA figures: measure your nodes and write what they take.
    """

    driver_reload: int = Field(
        default=600, ge=1, le=86400, alias="driverReload",
        description="Seconds from a node's driver pod restart until the new driver is loaded and validated "
        "(unload, install or compile, load, validator pods). Default 600 (10 minutes).",
    )
    operand_restart: int = Field(
        default=60, ge=1, le=86400, alias="operandRestart",
        description="Seconds one node needs to restart its operand pods (device plugin, GFD, DCGM exporter, "
        "validator) in a DaemonSet rolling update. Default 60.",
    )
    mig_repartition: int = Field(
        default=300, ge=1, le=86400, alias="migRepartition",
        description="Seconds mig-manager needs on one node to stop the GPU clients, apply the new MIG layout and "
        "restart them. Default 300.",
    )


class MaintenanceWindow(SpecModel):
    """When the cluster's nodes may restart: weekly windows that open at ``start`` on ``days`` for ``length``."""

    days: list[Weekday] = Field(min_length=1, max_length=7, description="Days the window opens, e.g. [sat, sun].")
    start: str = Field(
        pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", description='Opening time (24-hour "HH:MM") in timeZone.'
    )
    length: str = Field(
        pattern=WINDOW_LENGTH_PATTERN, description='How long the window stays open, e.g. "4h" or "2h30m".'
    )
    time_zone: str = Field(
        default="UTC", alias="timeZone", pattern=TIME_ZONE_PATTERN,
        description='IANA time zone of start, e.g. "Europe/Berlin" (default UTC).',
    )

    @property
    def seconds(self) -> int:
        """The window's length in seconds."""
        match = re.fullmatch(r"(?:([0-9]+)h)?(?:([0-9]+)m)?", self.length)
        hours, minutes = (int(g) if g else 0 for g in match.groups()) if match else (0, 0)
        return hours * 3600 + minutes * 60

    @model_validator(mode="after")
    def _sensible(self) -> MaintenanceWindow:
        if len(set(self.days)) != len(self.days):
            raise ValueError("days lists a day twice")
        if not 0 < self.seconds <= 7 * 86400:
            raise ValueError(f"length {self.length!r} must be more than 0 and at most one week (168h)")
        return self

    def describe(self) -> str:
        """The window in words, e.g. ``sat, sun 02:00 for 4h (Europe/Berlin)``."""
        return f"{', '.join(self.days)} {self.start} for {self.length} ({self.time_zone})"


class RolloutSpec(SpecModel):
    """How changes roll out across the cluster's pools."""

    wave: int = Field(default=1, ge=0, le=99, description="Fleet-wide wave of this cluster (lower goes first).")
    canary_pool: Name | None = Field(default=None, alias="canaryPool", description="Pool that takes changes first.")
    auto_upgrade: bool = Field(
        default=True, alias="autoUpgrade", description="Let the operator's upgrade controller roll driver upgrades."
    )
    max_parallel_upgrades: int = Field(
        default=1, ge=0, le=MAX_INT32, alias="maxParallelUpgrades",
        description="Nodes upgraded at once (0 = unlimited)."
    )
    max_unavailable: IntOrPercent = Field(
        default="25%", alias="maxUnavailable", description="Nodes that may be unavailable during the upgrade."
    )
    drain: DrainSpec | None = Field(default=None, description="Drain settings; absent = the chart default.")
    pod_deletion: PodDeletionSpec | None = Field(
        default=None, alias="podDeletion", description="GPU pod deletion settings; absent = the chart default."
    )
    wait_for_completion: WaitForCompletionSpec | None = Field(
        default=None, alias="waitForCompletion",
        description="Wait for these workload pods to finish before a node's driver is upgraded; absent = no wait "
                    "(GPU pods are deleted at once).",
    )
    wait_for_completion_seconds: int = Field(
        default=0, ge=0, le=MAX_INT32, alias="waitForCompletionSeconds",
        description="Refused when above 0 (GS507): a timeout without a pod selector waits for nothing; use "
                    "waitForCompletion.",
    )
    per_node_seconds: PerNodeSeconds = Field(
        default_factory=PerNodeSeconds, alias="perNodeSeconds",
        description="Worst-case time one node needs per kind of disruption; `plan` and the handover estimate a "
        "step's duration from it and the upgrade policy (docs/pr-workflow.md).",
    )
    window: MaintenanceWindow | None = Field(
        default=None,
        description="When nodes may restart; `lint --base` warns when a disruptive step cannot finish in one "
        "window (GS830). Absent = any time.",
    )
    rollback_below_percent: int = Field(
        default=100, ge=1, le=100, alias="rollbackBelowPercent",
        description="Rollback criterion: after an update step, roll back when a pool advertises fewer than this "
                    "percent of its declared GPUs (the handover's rollback criteria name it).",
    )
