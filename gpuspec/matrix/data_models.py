"""Schema of the support-matrix data files in ``gpuspec/matrix/data/``.

One model per data file, all with ``extra="forbid"`` so a misspelt key in the
data is a load error, not a silently missing fact.  ``"unknown"`` is a value:
the reference does not state the fact, and checks report "cannot verify".
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

UNKNOWN = "unknown"
Unknown = Literal["unknown"]
LineStatus = Literal["supported", "deprecated", "end-of-support", "unknown"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Source(_Model):
    """Where the facts of a data file come from (the `source:` note)."""

    reference: str
    files: list[str]
    source_commit_dates: dict[str, str]
    notes: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- lifecycle.yaml


class Versioning(_Model):
    scheme: str
    line: str
    patch: str


class UpgradeRule(_Model):
    text: str
    allowed: Literal["within-line-or-next-line"]
    next_line_definition: str
    source: str


class StatusModel(_Model):
    rule: str
    vocabulary_note: str
    after_data_date: str


class LifecycleLine(_Model):
    """A release line (YY.MM) with its patches in order and its status at the data date."""

    line: str
    released: dt.date
    patches: list[str]
    status_at_data_date: Literal["supported", "deprecated", "end-of-support"]
    docs_snapshot: str
    status_note: str | None = None


class SnapshotStatus(_Model):
    versions: str
    status: str


class StatusTable(_Model):
    snapshot: str
    statuses: list[SnapshotStatus]


class LifecycleData(_Model):
    source: Source
    data_date: dt.date
    data_date_note: str
    versioning: Versioning
    policy: list[str]
    upgrade_rule: UpgradeRule
    status_model: StatusModel
    lines: list[LifecycleLine]
    status_tables: list[StatusTable]
    discrepancies: list[str]


# ---------------------------------------------------------------- releases.yaml


class Image(_Model):
    """One component image as values.yaml pins it (version None = chart appVersion, i.e. the release tag)."""

    repository: str | None
    image: str | None
    version: str | None
    enabled_default: bool | None = None
    os_tag_suffix: bool = False
    note: str | None = None


class ChartInfo(_Model):
    helm_chart_version: str
    chart_yaml_version: str
    chart_yaml_app_version: str
    kube_version: str


class NfdInfo(_Model):
    chart_version: str
    chart_repository: str
    condition: str
    image: Image


class DriverEntry(_Model):
    version: str
    branch: str
    default: bool = False
    recommended: bool = False


class DriverInfo(_Model):
    chart_default: str
    docs_default: str | None
    docs_recommended: str | None
    branches: list[str]
    versions: list[DriverEntry]
    docs_column: str


class Release(_Model):
    """One patch release (git tag) of the GPU Operator and everything it pins."""

    version: str
    line: str
    tag: str
    tag_date: dt.date
    chart: ChartInfo
    nfd: NfdInfo
    components: dict[str, Image]
    drivers: DriverInfo
    docs_operand_versions: dict[str, str]
    chart_defaults: dict[str, Any]
    release_notes: list[str]
    notes: list[str] = Field(default_factory=list)


class ReleasesData(_Model):
    source: Source
    field_notes: list[str]
    releases: list[Release]


# ---------------------------------------------------------------- platforms.yaml


class OsRef(_Model):
    """An operating system as the reference names it, normalised to a distribution id and versions."""

    id: str
    versions: list[str] | None
    text: str
    note: str | None = None


class VersionSet(_Model):
    """An inclusive min/max range or a list of discrete versions, with the original cell text."""

    min: str | None = None
    max: str | None = None
    versions: list[str] | None = None
    text: str


class OsKubernetesRow(_Model):
    os: OsRef
    deployments: list[Literal["bare-metal", "vm-passthrough", "vm-vgpu", "csp"]]
    distributions: dict[str, VersionSet]


class KubernetesSummary(_Model):
    min: str
    max: str
    note: str | None = None


class RuntimeRow(_Model):
    os: OsRef
    containerd: bool | None
    cri_o: bool | None = Field(alias="cri-o")
    note: str | None = None


class Range(_Model):
    min: str
    max: str
    text: str


class Runtimes(_Model):
    containerd_versions: Range
    by_os: list[RuntimeRow]
    notes: list[str] = Field(default_factory=list)


class GpuLists(_Model):
    x86_64: list[str]
    arm64: list[str]
    note: str | None = None


class MinMax(_Model):
    min: str
    max: str


class PatchOverride(_Model):
    """Kubernetes/OpenShift limits of specific patches that differ from the line's docs snapshot."""

    versions: list[str]
    kubernetes_min: str | None = None
    kubernetes_max: str | None = None
    openshift: MinMax | None = None
    source: str


class PlatformLine(_Model):
    line: str
    docs_snapshot: str
    os_kubernetes: list[OsKubernetesRow]
    kubernetes_summary: KubernetesSummary
    container_runtimes: Runtimes
    driver_branches: list[str]
    gpus: GpuLists
    patch_overrides: list[PatchOverride] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    other_support: dict[str, Any] = Field(default_factory=dict)


class PlatformsData(_Model):
    source: Source
    conventions: list[str]
    column_legend: dict[str, str]
    cross_line_notes: list[str]
    lines: list[PlatformLine]


# ---------------------------------------------------------------- gpus.yaml


class GpuProduct(_Model):
    """A GPU product users name in the spec, with what the reference says about it."""

    id: str
    name: str
    aliases: list[str] = Field(default_factory=list)
    architecture: str
    memory_gb: int | Unknown
    mig_capable: bool | Unknown
    mig_group: str | None
    listed_as: list[str]
    min_driver_version: str | None = None
    notes: list[str] = Field(default_factory=list)


class GpusData(_Model):
    source: Source
    products: list[GpuProduct]


# ---------------------------------------------------------------- mig.yaml


class MigProfile(_Model):
    """A MIG profile valid on a product group, with its homogeneous instance limit."""

    name: str
    max_instances: int = Field(ge=1)
    compute_slices: int = Field(ge=1)
    memory_gb: int = Field(ge=1)
    applies_to: str | None = None


class ProfileHistory(_Model):
    from_version: str
    until_version: str
    profiles: list[MigProfile]
    all_balanced: dict[str, int]


class MigGroup(_Model):
    """GPUs that share one set of MIG profiles (same device-filter group in the MIG config)."""

    id: str
    title: str
    pci_device_ids: list[str]
    compute_slices_total: int = Field(ge=1)
    compute_slices_basis: str
    profiles: list[MigProfile]
    all_balanced: dict[str, int]
    device_id_attribution: str | None = None
    docs_table: str | None = None
    profile_history: list[ProfileHistory] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class LayoutEntry(_Model):
    comment: str | None = None
    device_filter: list[str] | None = None
    devices: str
    mig_enabled: bool
    mig_devices: dict[str, int] | None = None


class MigLayout(_Model):
    """A named layout of the static default-mig-parted-config and the release it first appeared in."""

    name: str
    first_seen: str
    file_comment: str | None = None
    entries: list[LayoutEntry]


class LayoutChange(_Model):
    version: str
    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)


class NamedLayouts(_Model):
    configmap: str
    as_of: str
    count: int
    layouts: list[MigLayout]
    changes: list[LayoutChange]
    notes: list[str]


class MigStrategies(_Model):
    values_key: str
    clusterpolicy_field: str
    allowed: list[str]
    helm_default: str
    meaning: dict[str, str]
    rules: list[str]


class SlicesModel(_Model):
    rule: str
    limits: str


class MigData(_Model):
    source: Source
    strategies: MigStrategies
    mig_manager: dict[str, Any]
    slices_model: SlicesModel
    product_groups: list[MigGroup]
    product_group_notes: list[str]
    named_layouts: NamedLayouts


# ---------------------------------------------------------------- precompiled.yaml


class PrecompiledRow(_Model):
    os: OsRef
    kernel_flavors: list[str]
    kernel_versions: list[str] | None
    branches: list[str] | None


class PrecompiledLine(_Model):
    line: str
    table: list[PrecompiledRow]
    table_source: str
    kernel_variants: list[str]
    architecture_limit: str | None = None
    branch_rule: str | None = None
    status: str | None = None
    open_kernel_modules: str | None = None
    release_note: str | None = None


class PrecompiledData(_Model):
    source: Source
    purpose: str
    enable: dict[str, str]
    image_tag_pattern: str
    image_tag_example: str
    operator_image_resolution: str
    conventions: list[str]
    lines: list[PrecompiledLine]
    limitations: list[str]
    custom_build: dict[str, Any]
    notes: list[str]


# ---------------------------------------------------------------- nvidiadriver.yaml


class Availability(_Model):
    version: str
    status: str


class TechPreview(_Model):
    from_: str = Field(alias="from")
    until: str
    note: str


class NvidiaDriverHelm(_Model):
    enabled_switch: str
    enabled_default: bool
    deploy_default_cr_switch: str
    deploy_default_cr_default: bool
    driver_type_switch: str
    driver_type_default: str
    node_selector_switch: str
    details: dict[str, str]


class NvidiaDriverData(_Model):
    source: Source
    api: dict[str, Any]
    exists_from: str
    technology_preview: TechPreview
    supported_from: str
    supported_note: str
    migration_from_clusterpolicy_from: str
    availability: list[Availability]
    helm: NvidiaDriverHelm
    spec_fields: list[dict[str, str]]
    rules: list[str]
    migration_from_clusterpolicy: dict[str, Any]


# ---------------------------------------------------------------- upgrades.yaml


class OperatorUpgrade(_Model):
    rule: Literal["within-line-or-next-line"]
    rule_text: str
    crds: str
    psa_prerequisite: str


class UpgradesData(_Model):
    source: Source
    helm_values_path: str
    policy_defaults: dict[str, Any]
    policy_defaults_note: str
    field_names: list[dict[str, str]]
    field_name_notes: list[str]
    semantics: dict[str, str]
    nvidiadriver_policy: str
    state_label: str
    states: list[str]
    skip_label: str
    driver_manager_env_defaults: str
    driver_manager_minimum: str
    daemonset_update_strategy: str
    operator_upgrade: OperatorUpgrade
    notes: list[str]


# ---------------------------------------------------------------- sharing.yaml


class TimeSlicing(_Model):
    format: dict[str, str]
    data_keys: str
    example: str
    wiring: dict[str, str]
    node_labels: list[str]
    constraints: list[str]
    combinable_with_mig: bool
    combinable_with_mig_note: str


class Mps(_Model):
    config_format: Unknown
    config_format_note: str
    combinable_with_mig: bool | Unknown
    combinable_with_mig_note: str | None = None
    operator_facts: list[str]
    notes: list[str]
    helm_root_value: dict[str, str]


class SharingData(_Model):
    source: Source
    time_slicing: TimeSlicing
    mps: Mps
    notes: list[str]


# ---------------------------------------------------------------- airgap.yaml


class OsTagRule(_Model):
    """How the OS tag of driver-like images is built from a given release on."""

    from_version: str
    major_only: list[str]
    major_only_from: dict[str, int]
    text: str


class OsTag(_Model):
    construction: str
    rules: list[OsTagRule]


class AirgapData(_Model):
    source: Source
    use_cases: list[dict[str, str]]
    what_to_mirror: dict[str, Any]
    package_repo_config: dict[str, str]
    proxy: dict[str, str]
    repository_rewriting: list[str]
    image_reference_rules: list[str]
    os_tag_suffix_components: list[str]
    digest_rule: str
    app_version_components: list[str]
    os_tag: OsTag
    notes: list[str]


# ---------------------------------------------------------------- domain.yaml


class Architecture(_Model):
    """What a GPU architecture allows: MIG, open kernel modules, the last driver branch that supports it."""

    name: str
    mig: bool | Literal["per-product"]
    open_kernel_modules: Literal["supported", "unsupported", "required"]
    last_driver_branch: str | None = None
    grace: bool = False


class MigMemorySlices(_Model):
    default: int
    by_compute_slices: dict[str, int]


class KernelModuleAuto(_Model):
    works_from: list[str]
    open_default_from_branch: str
    source_fact: str


class SourceFact(_Model):
    source_fact: str


class KnownIssueWhen(_Model):
    """The spec facts a cluster must have for a known issue to apply (all given ones must hold)."""

    distributions: list[str] | None = None
    runtimes: list[str] | None = None
    products: list[str] | None = None
    cdi: bool | None = None
    grace: bool | None = None
    driver_from: str | None = None
    driver_versions: list[str] | None = None
    mig: bool | None = None
    mig_or_gds: bool | None = None
    mig_strategy: str | None = None
    sandbox: bool | None = None
    rdma: bool | None = None
    kubernetes_from: str | None = None
    os: str | None = None
    os_major: str | None = None
    driver_source: str | None = None
    selinux: str | None = None
    user_namespaces: bool | None = None


class KnownIssue(_Model):
    """A known issue or limitation from a release's notes, the releases it is listed for and when it applies."""

    id: str
    releases: list[str] | Literal["any"]
    releases_note: str | None = None
    when: KnownIssueWhen
    note: str
    #: The note rules the combination out (an error, GS224), rather than describing a fragile one (GS220).
    restricts: bool = False
    source: str | None = None
    #: A regular expression one note of each listed release's line matches in the reference (platform os_notes).
    reference_pattern: str | None = None


class DomainData(_Model):
    source: Source
    architectures: list[Architecture]
    no_mig_products: list[str]
    grace_products: list[str]
    mig_memory_slices: MigMemorySlices
    kernel_module_type_auto: KernelModuleAuto
    gds_requires_open_kernel_modules: SourceFact
    precompiled_excludes: list[str]
    precompiled_excludes_fact: str
    template_only_values: list[str]
    known_issues: list[KnownIssue]


# ---------------------------------------------------------------- runtime.yaml


class RuntimeEnv(_Model):
    """One toolkit environment variable NVIDIA documents for a cell, and who sets it."""

    name: str
    value: str
    set_by: Literal["gpuspec", "operator", "toolkit-default"]


class RuntimeCell(_Model):
    """The toolkit runtime settings of one distribution x runtime over a release range (``from`` <= r < ``before``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, populate_by_name=True)

    distribution: str
    runtime: Literal["containerd", "cri-o"]
    from_release: str | None = Field(default=None, alias="from")
    before: str | None = None
    kubernetes_from: str | None = None
    status: Literal["operator-defaults", "documented", "unknown"]
    required: bool = False
    env: list[RuntimeEnv] = Field(default_factory=list)
    source: str


class NriPlugin(_Model):
    """The NRI plugin: with it on, the toolkit leaves the runtime configuration alone (no toolkit.env needed)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, populate_by_name=True)

    chart_value: str
    runtime: str
    from_release: str = Field(alias="from")
    requires_cdi: bool
    source: str


class HostDriverInstall(_Model):
    """Chart values a distribution's own driver installer needs, from release ``from`` on."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, populate_by_name=True)

    distribution: str
    from_release: str = Field(alias="from")
    values: dict[str, Any]
    mig_manager_env: list[RuntimeEnv] = Field(default_factory=list)
    source: str


class RuntimeVariables(_Model):
    """Toolkit environment variables that configure how the toolkit finds and changes the container runtime."""

    names: list[str]
    source: str


class OperatorDriverSupport(_Model):
    """Where the operator's own driver containers (compiled or precompiled) are supported on a managed platform."""

    os: list[str]
    runtimes: list[str]
    host_driver_os: list[str]
    source: str


class PriorityClassQuota(_Model):
    """The ResourceQuota a platform needs in the operator namespace to admit system-*-critical pods."""

    name: str
    pods: int
    priority_classes: list[str]
    source: str


class ManagedPlatform(_Model):
    """What NVIDIA's page of one managed Kubernetes platform requires."""

    distribution: str
    operator_driver: OperatorDriverSupport | None = None
    priority_class_quota: PriorityClassQuota | None = None


class RuntimeData(_Model):
    source: Source
    runtime_variables: RuntimeVariables
    nri_plugin: NriPlugin
    cells: list[RuntimeCell]
    host_driver_installs: list[HostDriverInstall]
    managed_platforms: list[ManagedPlatform] = Field(default_factory=list)


# ---------------------------------------------------------------- openshift.yaml


class OpenShiftKubernetes(_Model):
    """The Kubernetes minor one OpenShift minor ships (None: unknown)."""

    openshift: str
    kubernetes: str | None


class OlmPackage(_Model):
    """The GPU Operator's OLM package on OpenShift."""

    package: str
    catalog_source: str
    catalog_namespace: str
    catalog_index: str
    suggested_namespace: str
    channel_pattern: str
    csv_pattern: str
    verified_bundles: list[str]


class NfdOperator(_Model):
    """The Node Feature Discovery Operator NVIDIA's OpenShift procedure installs first."""

    package: str
    channel: str
    catalog_source: str
    catalog_namespace: str
    catalog_index: str
    namespace: str
    instance: str


class OpenShiftPrecompiled(_Model):
    redhat_repository: str
    redhat_image: str
    tested_openshift: list[str]


class DriverToolkit(_Model):
    image_for: str
    clusterpolicy_field: str


class OpenShiftData(_Model):
    source: Source
    kubernetes_versions: list[OpenShiftKubernetes]
    olm: OlmPackage
    nfd: NfdOperator
    precompiled: OpenShiftPrecompiled
    driver_toolkit: DriverToolkit


# ---------------------------------------------------------------- the whole matrix


class Matrix(_Model):
    """All support-matrix data files, validated."""

    lifecycle: LifecycleData
    releases: ReleasesData
    platforms: PlatformsData
    gpus: GpusData
    mig: MigData
    precompiled: PrecompiledData
    nvidiadriver: NvidiaDriverData
    upgrades: UpgradesData
    sharing: SharingData
    airgap: AirgapData
    domain: DomainData
    runtime: RuntimeData
    openshift: OpenShiftData
