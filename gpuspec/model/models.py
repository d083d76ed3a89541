"""Pydantic models of the fleet spec (``apiVersion: gpuspec.io/v1alpha1``).

Every model forbids unknown keys, so a typo is a finding, not a silently
ignored setting.  Names that become file or Kubernetes object names are
DNS-1123 labels, so no ``..`` or ``/`` can ever reach a path.
"""

from __future__ import annotations

import re
from datetime import date
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StringConstraints, field_validator, model_validator

from gpuspec.model.ownership import Ownership, PoolOwnership, Team
from gpuspec.model.patterns import DNS_LABEL_PATTERN as DNS_LABEL_PATTERN

API_VERSION = "gpuspec.io/v1alpha1"

Name = Annotated[str, StringConstraints(pattern=DNS_LABEL_PATTERN)]
#: A Kubernetes minor version such as "1.31".
KubeMinor = Annotated[str, StringConstraints(pattern=r"^1\.[0-9]{1,2}$")]
#: A GPU Operator release such as "v25.10.1".
OperatorVersion = Annotated[str, StringConstraints(pattern=r"^v[0-9]{2}\.[0-9]{1,2}\.[0-9]{1,2}$")]
#: A driver branch such as "580".
DriverBranch = Annotated[str, StringConstraints(pattern=r"^[0-9]{3}$")]
#: A full driver version such as "580.95.05".
DriverVersion = Annotated[str, StringConstraints(pattern=r"^[0-9]{3}\.[0-9]{1,3}(\.[0-9]{1,3})?$")]
#: A Kubernetes quantity or percentage for maxUnavailable, e.g. "25%" or 1.
#: The largest integer the spec takes: Kubernetes' int32, the narrowest integer a field it renders to has
#: (an int-or-string such as maxUnavailable is int32), so no number can make arithmetic on it or an object fail.
MAX_INT32 = 2**31 - 1
IntOrPercent = Annotated[int, Field(le=MAX_INT32)] | Annotated[str, StringConstraints(pattern=r"^[0-9]{1,3}%$")]
#: An upstream registry host (``nvcr.io``, ``registry.k8s.io``, optionally with a port).
REGISTRY_HOST_PATTERN = r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?$"
RegistryHost = Annotated[str, StringConstraints(pattern=REGISTRY_HOST_PATTERN)]
#: A mirror prefix: a registry host and optional path, as image references take it -- no scheme, tag or digest.
MIRROR_PREFIX_PATTERN = r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-]{1,2}[a-z0-9]+)*){0,16}$"
MirrorPrefix = Annotated[str, StringConstraints(pattern=MIRROR_PREFIX_PATTERN)]
LabelKey = Annotated[
    str,
    StringConstraints(pattern=r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"),
]
#: A mig-parted config name, as the value of the nvidia.com/mig.config node label.
MigConfigName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")]
LabelValue = Annotated[str, StringConstraints(pattern=r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")]
#: A GPU product id such as "H100-SXM5-80GB" (letters, digits, '-', '_', '.', '+').
PRODUCT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$"
Product = Annotated[str, StringConstraints(pattern=PRODUCT_PATTERN)]
#: An OS version such as "22.04" or "9.4".
OS_VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$"
OsVersion = Annotated[str, StringConstraints(pattern=OS_VERSION_PATTERN)]
#: A kernel release such as "5.15.0-105-generic" or "5.14.0-427.13.1.el9_4.x86_64".
KERNEL_PATTERN = r"^[0-9][A-Za-z0-9_.+~-]{0,127}$"
Kernel = Annotated[str, StringConstraints(pattern=KERNEL_PATTERN)]
#: A MIG profile such as "1g.10gb", "3g.40gb" or "1g.24gb+me.all".
MIG_PROFILE_PATTERN = r"^[0-9]{1,2}g\.[0-9]{1,4}gb(\+[a-z]{1,8}(\.[a-z]{1,8})?)?$"
MigProfile = Annotated[str, StringConstraints(pattern=MIG_PROFILE_PATTERN)]
#: A MIG resource the device plugin advertises (without nvidia.com/), such as "mig-1g.10gb" or "mig-1g.10gb.me".
MIG_RESOURCE_PATTERN = r"^mig-[0-9]{1,2}g\.[0-9]{1,4}gb(\.[a-z]{1,8}){0,2}$"
MigResource = Annotated[str, StringConstraints(pattern=MIG_RESOURCE_PATTERN)]
#: A folder inside the repository such as "rendered" or "gitops/rendered": relative, no "..", no hidden parts.
REPO_PATH_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}){0,15}$"
RepoPath = Annotated[str, StringConstraints(pattern=REPO_PATH_PATTERN)]


class SpecModel(BaseModel):
    """Base of every spec model: unknown keys are errors, numbers may be written where text is expected."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, frozen=False, defer_build=True)


# --------------------------------------------------------------------------- fleet.yaml


class ObjectMeta(SpecModel):
    """Identity of a spec object."""

    name: Name = Field(description="Name of the object; for a cluster it equals the file name without .yaml.")
    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, description="Free-form labels (environment, region, team) for selection and reports."
    )
    description: str | None = Field(default=None, description="One line saying what this object is for.")


class Proxy(SpecModel):
    """HTTP proxy settings the driver container uses to reach package repositories."""

    http: str | None = Field(default=None, description="HTTP_PROXY value.")
    https: str | None = Field(default=None, description="HTTPS_PROXY value.")
    no_proxy: str | None = Field(default=None, alias="noProxy", description="NO_PROXY value.")


class ChartSource(SpecModel):
    """Where the GPU Operator Helm chart is pulled from, and the Secrets Flux needs to reach it (names only)."""

    repository: str = Field(
        description="Helm repository URL (https://…) or OCI repository (oci://registry/path) holding gpu-operator."
    )

    @field_validator("repository")
    @classmethod
    def _filled_in(cls, value: str) -> str:
        if re.match(r"\s*(?i:todo)\b", value):
            raise ValueError("the chart repository is still to be filled in (gpuspec import drafts a mirror with "
                             "'TODO: review' here): name the oci:// or https:// repository the chart is mirrored to")
        return value
    secret_ref: Name | None = Field(
        default=None, alias="secretRef",
        description="Secret in the Flux namespace with the credentials to pull the chart (a docker-registry Secret "
                    "for oci://, username/password for https://); Flux OCIRepository/HelmRepository secretRef.",
    )
    cert_secret_ref: Name | None = Field(
        default=None, alias="certSecretRef",
        description="Secret in the Flux namespace with the CA certificate (ca.crt) the chart repository's TLS "
                    "certificate is signed by; Flux certSecretRef.",
    )
    proxy_secret_ref: Name | None = Field(
        default=None, alias="proxySecretRef",
        description="Secret in the Flux namespace with the proxy (address, username, password) to reach an oci:// "
                    "chart repository; Flux OCIRepository proxySecretRef. Flux's HelmRepository has no per-source "
                    "proxy (source-controller's HTTPS_PROXY applies), so https:// sources cannot set it.",
    )

    @model_validator(mode="after")
    def _proxy_needs_oci(self) -> ChartSource:
        if self.proxy_secret_ref is not None and not self.repository.startswith("oci://"):
            raise ValueError("proxySecretRef needs an oci:// chart repository (Flux HelmRepository has no proxy "
                             "reference; set HTTPS_PROXY on source-controller instead)")
        return self


class Mirror(SpecModel):
    """An air-gap mirror: registries, chart source, pull secrets and repository configuration."""

    name: Name = Field(description="Name clusters use in `mirror:`.")
    registries: dict[RegistryHost, MirrorPrefix] = Field(
        min_length=1,
        description=(
            "Upstream registry host → mirror prefix, e.g. `nvcr.io: harbor.example.internal/nvcr`. "
            "An image `nvcr.io/nvidia/k8s/container-toolkit` becomes "
            "`harbor.example.internal/nvcr/nvidia/k8s/container-toolkit`."
        ),
    )
    chart: ChartSource = Field(description="Mirror of the GPU Operator chart.")
    pull_secrets: list[Name] = Field(
        default_factory=list, alias="pullSecrets",
        description="Names of image pull secrets that exist in the operator namespace. Names only, never credentials.",
    )
    package_repo_config_map: Name | None = Field(
        default=None, alias="packageRepoConfigMap",
        description="ConfigMap with OS package repository files for the driver container (driver.repoConfig).",
    )
    ca_config_map: Name | None = Field(
        default=None, alias="caConfigMap", description="ConfigMap with the CA bundle of the mirror (driver.certConfig)."
    )
    proxy: Proxy | None = Field(default=None, description="Proxy for clusters that reach the internet through one.")
    catalog_sources: dict[Name, Name] = Field(
        default_factory=dict, alias="catalogSources",
        description=(
            "OpenShift: default OLM catalog → the CatalogSource (in openshift-marketplace) of its mirrored index, e.g. "
            "`certified-operators: cs-certified-operator-index` (GPU Operator), `redhat-operators: "
            "cs-redhat-operator-index` (NFD Operator)."
        ),
    )


class DriverPin(SpecModel):
    """A driver branch and, optionally, an exact version."""

    branch: DriverBranch = Field(description='Driver branch, e.g. "580".')
    version: DriverVersion | None = Field(
        default=None, description="Exact driver version in that branch; absent = the release's default in that branch."
    )


class Channel(SpecModel):
    """A named release train clusters follow with `operator.channel`."""

    name: Name = Field(description="Channel name, e.g. stable or canary.")
    operator: OperatorVersion = Field(description="GPU Operator release the channel pins.")
    driver: DriverPin | None = Field(default=None, description="Driver the channel pins for pools that do not pin one.")


class PolicySelection(SpecModel):
    """Which policy packs from policies/ apply to this fleet."""

    packs: list[Name] = Field(
        default_factory=lambda: ["default"], description="Policy pack names (files in policies/)."
    )


class GitSource(SpecModel):
    """The git repository that holds this fleet and its rendered/ output."""

    repo_url: str = Field(alias="repoURL", description="Clone URL of the fleet repository.")
    revision: str = Field(default="main", description="Branch, tag or commit Argo CD / Flux sync from.")
    path: RepoPath = Field(default="rendered", description="Folder of the rendered output inside the repository "
                           "(relative, no '..').")


class BootstrapSpec(SpecModel):
    """Objects a fleet repository applies once to start syncing, rendered on request under gitops/<tool>/_bootstrap."""

    argocd: bool = Field(
        default=False,
        description="Render an AppProject per project the Argo CD clusters name (except `default`), limited to "
                    "the rendered sources, destinations and namespaces, and a parent (app-of-apps) Application.",
    )
    flux: bool = Field(
        default=False, description="Render the Flux GitRepository the rendered Kustomizations reference.",
    )


ReleaseTag = Annotated[str, StringConstraints(pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+$")]


class PlatformReleases(SpecModel):
    """The releases of the GitOps and monitoring controllers the fleet's clusters run (for their CRDs)."""

    argocd: ReleaseTag | None = Field(
        default=None, description="Argo CD release, e.g. v3.5.1: `gpuspec tools install` fetches its CRDs "
                                  "(Application, ApplicationSet, AppProject) for `verify`.")
    flux: ReleaseTag | None = Field(
        default=None, description="Flux release, e.g. v2.9.0: the CRDs of the helm, source and kustomize "
                                  "controllers it ships.")
    prometheus_operator: ReleaseTag | None = Field(
        default=None, alias="prometheusOperator",
        description="Prometheus Operator release, e.g. v0.93.0: PrometheusRule, ServiceMonitor, PodMonitor CRDs.")

    def declared(self) -> dict[str, str]:
        """Project name (as the CRD pins name it) -> declared release, for the projects set."""
        named = {"argocd": self.argocd, "flux": self.flux, "prometheusOperator": self.prometheus_operator}
        return {project: version for project, version in named.items() if version}


class FleetSettings(SpecModel):
    """Contents of fleet/fleet.yaml: settings shared by every cluster."""

    api_version: Literal["gpuspec.io/v1alpha1"] = Field(alias="apiVersion", description="Spec format version.")
    kind: Literal["Fleet"] = Field(description="Always Fleet.")
    metadata: ObjectMeta = Field(description="Fleet name and labels.")
    git: GitSource = Field(description="Where the fleet repository lives (for Argo CD / Flux sources).")
    mirrors: list[Mirror] = Field(default_factory=list, description="Air-gap mirrors clusters can use.")
    channels: list[Channel] = Field(default_factory=list, description="Named release trains.")
    policy: PolicySelection = Field(default_factory=PolicySelection, description="Policy packs that apply.")
    bootstrap: BootstrapSpec = Field(
        default_factory=BootstrapSpec, description="Bootstrap objects to render (Argo CD, Flux); none by default.",
    )
    platform: PlatformReleases = Field(
        default_factory=PlatformReleases,
        description="Releases of Argo CD, Flux and the Prometheus Operator the clusters run; `gpuspec tools "
                    "install` fetches their pinned CRDs and `verify` validates against them.",
    )
    teams: list[Team] = Field(
        default_factory=list, description="Teams that own clusters and pools or run workloads (contacts, on-call, "
                                          "escalation, groups, code owners, alert receiver).")
    ownership: Ownership = Field(
        default_factory=Ownership, description="Default owners of every cluster (platform, hardware, "
                                               "observability); clusters and pools override.")

    @model_validator(mode="after")
    def _team_names_distinct(self) -> FleetSettings:
        seen: set[str] = set()
        for team in self.teams:
            if team.name in seen:
                raise ValueError(f"team {team.name!r} is declared twice")
            seen.add(team.name)
        return self


# --------------------------------------------------------------------------- clusters


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


class Fleet(BaseModel):
    """The whole fleet: settings plus clusters, in file-name order."""

    model_config = ConfigDict(frozen=False, defer_build=True)

    settings: FleetSettings
    clusters: list[Cluster]
    settings_file: str
    root: str

    _index: tuple[int, int, dict[str, int], dict[str, int]] | None = PrivateAttr(default=None)
    _content_keys: dict[str, bytes] = PrivateAttr(default_factory=dict)

    @property
    def content_keys(self) -> dict[str, bytes]:
        """Display path → digest of the file's text, for the files the loader read (empty when unknown)."""
        return self._content_keys

    def _positions(self) -> tuple[dict[str, int], dict[str, int]]:
        """Cluster name → position and source file → position (first wins), rebuilt when the list is replaced
        or changes length."""
        clusters = self.clusters
        index = self._index
        if index is None or index[0] != id(clusters) or index[1] != len(clusters):
            by_name: dict[str, int] = {}
            by_file: dict[str, int] = {}
            for position, cluster in enumerate(clusters):
                by_name.setdefault(cluster.name, position)
                by_file.setdefault(cluster.source_file, position)
            index = (id(clusters), len(clusters), by_name, by_file)
            self._index = index
        return index[2], index[3]

    def cluster(self, name: str) -> Cluster | None:
        """The cluster called ``name``, if any (a dictionary lookup, not a scan)."""
        position = self._positions()[0].get(name)
        if position is not None and self.clusters[position].name != name:
            self._index = None  # the list was edited in place: rebuild once
            position = self._positions()[0].get(name)
        return self.clusters[position] if position is not None else None

    def cluster_from_file(self, source_file: str) -> Cluster | None:
        """The cluster read from ``source_file`` (its display path), if any."""
        position = self._positions()[1].get(source_file)
        if position is not None and self.clusters[position].source_file != source_file:
            self._index = None
            position = self._positions()[1].get(source_file)
        return self.clusters[position] if position is not None else None

    def mirror(self, name: str | None) -> Mirror | None:
        """The mirror called ``name``, if any."""
        return next((m for m in self.settings.mirrors if m.name == name), None) if name else None

    def channel(self, name: str | None) -> Channel | None:
        """The channel called ``name``, if any."""
        return next((c for c in self.settings.channels if c.name == name), None) if name else None


__all__ = [
    "API_VERSION",
    "Channel",
    "Cluster",
    "DriverSource",
    "Fleet",
    "FleetSettings",
    "MigStrategy",
    "Mirror",
    "Pool",
    "SharingMode",
    "Tenant",
    "ValueOverride",
    "date",
]
