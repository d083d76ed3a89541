"""Findings of `gpuspec audit` and `gpuspec import` about the operator's own settings (GS783, GS785, GS786): what the
spec renders for the operator against what the cluster's ClusterPolicy, NVIDIADrivers and node labels say runs."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

SHARING_CONFIG_MISMATCH = Entry(
    id="GS783",
    title="device-plugin config label differs from the pool's sharing config",
    severity=Severity.ERROR,
    rationale=(
        "nvidia.com/device-plugin.config selects the key of the device-plugin ConfigMap a node's device plugin "
        "reads; a node that carries another value than the pool's sharing config (its `sharing.configName`, else "
        "the pool's name) is relabelled by the first sync and its device plugin restarts with another config."
    ),
    doc="""
        Audit compares the `nvidia.com/device-plugin.config` label of each node of a sharing pool with the config
        name the spec renders for that pool.  An adopted cluster keeps its own names with `sharing.configName`
        (and `operator.configMaps.devicePlugin` for its ConfigMap); `gpuspec import` writes both.

        Failing: nodes carry `nvidia.com/device-plugin.config=l40s-ts4`, the pool `l40s` sets no `configName`.
        Passing: the pool says `sharing: {mode: time-slicing, replicas: 4, configName: l40s-ts4}`.
    """,
    source="NVIDIA GPU Operator documentation, gpu-sharing.rst (\"Applying Multiple Node-Specific Configurations\")",
    tags=("audit",),
)

OPERATOR_SETTING_DIFFERS = Entry(
    id="GS785",
    title="the spec would change an operator setting the cluster runs",
    severity=Severity.ERROR,
    rationale=(
        "What the spec renders is applied by the first sync: a ClusterPolicy or NVIDIADriver field the chart at the "
        "pinned release writes differently from the cluster's object is a change of the running operator "
        "(DaemonSets restarted, drivers reloaded), not an adoption.  The finding names the spec field that keeps "
        "the running value."
    ),
    doc="""
        `gpuspec import` (after drafting) and `gpuspec audit --clusterpolicies` render the spec's Helm values, let
        the chart of the pinned release write its ClusterPolicy (and NVIDIADrivers) from them -- from gpuspec's
        chart data, or the real chart with `--chart` -- and compare them field by field with the exported objects.
        Fields of operands that are off on both sides and zero values (null, "", [], {}) are not compared.
        Each difference is reported at the spec line that causes it, naming the spec field that would keep
        the running value; a difference no spec field explains names the chart value an `overrides` entry sets.

        Failing: the cluster's ClusterPolicy says `driver.repoConfig.configMapName: acme-apt-mirror`, the fleet's
        mirror has no `packageRepoConfigMap`.  Passing: the mirror says `packageRepoConfigMap: acme-apt-mirror`.
    """,
    source="NVIDIA GPU Operator chart templates/clusterpolicy.yaml at the pinned release (gpuspec's chart-intent "
           "data)",
    tags=("audit",),
)

OPERAND_IMAGE_DIFFERS = Entry(
    id="GS786",
    title="the spec would change an image the cluster runs",
    severity=Severity.ERROR,
    rationale=(
        "An operand image the spec renders (repository, name and tag, NFD's included) that differs from the one the "
        "cluster runs is pulled and rolled out by the first sync; on an air-gapped cluster a repository outside "
        "its mirror cannot be pulled at all."
    ),
    doc="""
        Every image reference of the ClusterPolicy (and NVIDIADrivers) the spec renders, and NFD's image from the
        Helm values, is compared with the exported one of the same operand, for the operands that run.

        Failing: the cluster pulls NFD from `harbor.dc1.acme.internal/k8s/nfd/node-feature-discovery`, the fleet's
        mirror has no `registry.k8s.io` entry.  Passing: the mirror rewrites `registry.k8s.io` to
        `harbor.dc1.acme.internal/k8s`.
    """,
    source="NVIDIA GPU Operator air-gapped installation (install-gpu-operator-air-gapped.rst): every operand and "
           "NFD image comes from the local registry",
    tags=("audit",),
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (SHARING_CONFIG_MISMATCH, OPERATOR_SETTING_DIFFERS, OPERAND_IMAGE_DIFFERS)
