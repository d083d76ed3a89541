"""The support-matrix facts the renderer needs, behind one small interface.

Everything here is read from :mod:`gpuspec.matrix.query` (the packaged support
matrix); the renderer keeps no copy of version data of its own.  A release the
matrix does not know is an input error (``GpuspecError``), never a guess.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuspec.errors import GpuspecError
from gpuspec.matrix import component_query, mig_query, query
from gpuspec.matrix.data_models import Image
from gpuspec.matrix.load import load_matrix

#: Values path of the Node Feature Discovery subchart image in :func:`release_images`.
NFD = "node-feature-discovery"


@dataclass(frozen=True, slots=True)
class DriverChoice:
    """A driver version listed for a release, with the docs' default/recommended marks."""

    version: str
    branch: str
    default: bool
    recommended: bool


@dataclass(frozen=True, slots=True)
class ReleaseFacts:
    """What one GPU Operator patch release pins: chart version, images, drivers and chart defaults."""

    version: str
    tag: str
    chart_version: str
    images: Mapping[str, Image]
    chart_defaults: Mapping[str, Any]
    driver_default: str
    drivers: tuple[DriverChoice, ...]

    def has_chart_value(self, path: str) -> bool:
        """True when the matrix records ``path`` as a values.yaml key of this release's chart."""
        return path in self.chart_defaults


@functools.cache
def release_facts(version: str) -> ReleaseFacts:
    """The facts of GPU Operator release ``version`` (``v26.7.0`` or ``26.7.0``); GpuspecError if unknown."""
    rel = query.release(version)
    images = component_query.component_images(version, include_nfd=True)
    if rel is None or images is None:
        raise GpuspecError(
            f"GPU Operator release {version} is not in gpuspec's support matrix; cannot pin its images",
            hint="run `gpuspec matrix` to list the known releases",
        )
    drivers = tuple(
        DriverChoice(d.version, d.branch, d.default, d.recommended) for d in rel.drivers.versions
    )
    return ReleaseFacts(
        version=rel.version,
        tag=rel.tag,
        chart_version=rel.chart.helm_chart_version,
        images=images,
        chart_defaults=dict(rel.chart_defaults),
        driver_default=rel.drivers.chart_default,
        drivers=drivers,
    )


def release_images(version: str) -> dict[str, Image]:
    """Every image a release pins, keyed by Helm values path (NFD subchart image: ``node-feature-discovery``)."""
    return dict(release_facts(version).images)


def driver_version(facts: ReleaseFacts, branch: str | None) -> str | None:
    """The full driver version a release installs for ``branch`` (None = the chart default); None if not listed.

    Within a branch the chart default wins, then the docs' default mark, then the recommended mark, then the
    newest listed version.
    """
    if branch is None or facts.driver_default.split(".", 1)[0] == branch:
        return facts.driver_default
    listed = [d for d in facts.drivers if d.branch == branch]
    if not listed:
        return None
    for chosen in ([d for d in listed if d.default], [d for d in listed if d.recommended]):
        if chosen:
            return chosen[0].version
    return max(listed, key=lambda d: tuple(int(p) for p in d.version.split(".") if p.isdigit())).version


def os_tag(version: str, os_id: str, os_version: str) -> str:
    """The OS tag the operator appends to driver-like images at ``version`` (``ubuntu22.04``, ``rhel9``)."""
    tag = component_query.os_tag(version, os_id, os_version)
    return tag if tag is not None else f"{os_id}{os_version}"


def image_ref(image: Image, version: str, *, tag_suffix: str | None = None) -> str | None:
    """``<repository>/<image>:<tag>`` a component pulls at ``version`` (driver-like images get ``-<suffix>``).

    None when the chart pins no image (e.g. vgpuManager, which users build themselves).
    """
    return component_query.image_ref(image, version, os_tag=tag_suffix)


def image_tag(image: Image, facts: ReleaseFacts) -> str:
    """The tag values.yaml leaves for a component: its version, or the release tag where the chart leaves it unset."""
    return image.version if image.version else facts.tag


@functools.cache
def _nvidiadriver_since() -> dict[str, str]:
    since: dict[str, str] = {}
    for entry in load_matrix().nvidiadriver.spec_fields:
        for name in entry.get("field", "").split("/"):
            since[name.strip()] = entry.get("since", "")
    return since


def nvidiadriver_has_field(version: str, field: str) -> bool:
    """True when the NVIDIADriver CRD of release ``version`` has ``spec.<field>`` (per the matrix)."""
    since = _nvidiadriver_since().get(field)
    have, need = query.parse_version(version), query.parse_version(since) if since else None
    return have is not None and need is not None and have >= need


def mig_layout_entries(name: str) -> list[dict[str, Any]] | None:
    """The mig-parted entries of a named layout of the static default config, or None when unknown."""
    layout = mig_query.mig_layout(name)
    if layout is None:
        return None
    entries: list[dict[str, Any]] = []
    for entry in layout.entries:
        item: dict[str, Any] = {"devices": entry.devices, "mig-enabled": entry.mig_enabled}
        if entry.device_filter:
            item["device-filter"] = list(entry.device_filter)
        if entry.mig_devices is not None:
            item["mig-devices"] = dict(entry.mig_devices)
        entries.append(item)
    return entries


def mig_layout_profiles(name: str, product: str) -> dict[str, int]:
    """The per-GPU MIG profiles a named layout gives ``product`` (empty when unknown or MIG disabled)."""
    check = mig_query.check_named_layout(name, product)
    return dict(check.devices or {})
