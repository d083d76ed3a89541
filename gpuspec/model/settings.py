"""The fleet's settings (fleet.yaml): mirrors, channels, policy, git source, bootstrap objects."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from gpuspec.model.ownership import Ownership, Team
from gpuspec.model.types import (
    DriverBranch,
    DriverVersion,
    MirrorPrefix,
    Name,
    ObjectMeta,
    OperatorVersion,
    RegistryHost,
    RepoPath,
    SpecModel,
)


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
