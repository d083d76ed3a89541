"""MIG questions gpuspec asks the support matrix: profiles, layouts and their checks, sharing with MIG."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuspec.matrix.data_models import (
    MigGroup,
    MigLayout,
    MigProfile,
)
from gpuspec.matrix.load import load_matrix
from gpuspec.matrix.query import _PROFILE_RE, _ix, _vt, gpu_product, parse_version

# ---------------------------------------------------------------- MIG


@dataclass(frozen=True)
class ProfileName:
    """A MIG profile name split into compute slices, memory and suffix (``1g.10gb+me`` -> 1, 10, ``+me``)."""

    compute_slices: int
    memory_gb: int
    suffix: str


def parse_mig_profile(name: str) -> ProfileName | None:
    """Split a MIG profile name ``<N>g.<M>gb[suffix]``; None if it does not have that shape."""
    m = _PROFILE_RE.match(name.strip())
    if not m:
        return None
    return ProfileName(int(m.group(1)), int(m.group(2)), m.group(3))


def mig_strategies() -> list[str]:
    """Return the allowed MIG strategies (``none``, ``single``, ``mixed``)."""
    return list(load_matrix().mig.strategies.allowed)


@functools.lru_cache(maxsize=4096)
def mig_group(product_id: str) -> MigGroup | None:
    """Return the MIG product group of a product (or a group id), or None if unknown / not MIG capable."""
    if product_id in _ix().groups:
        return _ix().groups[product_id]
    prod = gpu_product(product_id)
    if prod is None or prod.mig_group is None:
        return None
    return _ix().groups.get(prod.mig_group)


def mig_profiles(product_id: str, release_version: str | None = None) -> list[MigProfile] | None:
    """Return the MIG profiles valid on a product (as of a release, where profiles changed), or None if unknown.

    An empty list means the product is known not to support MIG.
    """
    prod = gpu_product(product_id)
    if prod is None:
        return None
    if prod.mig_capable is False:
        return []
    grp = mig_group(prod.id)
    if grp is None:
        return None
    if release_version is not None and (v := parse_version(release_version)) is not None:
        for hist in grp.profile_history:
            if _vt(hist.from_version) <= v <= _vt(hist.until_version):
                return list(hist.profiles)
    return list(grp.profiles)


def mig_layout(name: str) -> MigLayout | None:
    """Return a named layout of the static default-mig-parted-config (e.g. ``all-1g.10gb``), or None."""
    return _ix().layouts.get(name.strip())


def mig_layouts(release_version: str | None = None) -> list[MigLayout]:
    """Return the named layouts, all of them or those present in the static config of a release."""
    lays = list(_ix().layouts.values())
    if release_version is None:
        return lays
    v = parse_version(release_version)
    return lays if v is None else [lay for lay in lays if _vt(lay.first_seen) <= v]


@dataclass(frozen=True)
class LayoutCheck:
    """The verdict on a MIG layout for one GPU product: ok True/False/None (cannot verify) and the reasons."""

    ok: bool | None
    problems: list[str] = field(default_factory=list)
    devices: dict[str, int] | None = None


def check_mig_layout(product_id: str, devices: Mapping[str, int], release_version: str | None = None) -> LayoutCheck:
    """Check a custom per-GPU MIG layout (profile -> count) against a product's profiles, limits and slices."""
    prod = gpu_product(product_id)
    if prod is None:
        return LayoutCheck(None, [f"unknown GPU product {product_id!r}"])
    profiles = mig_profiles(prod.id, release_version)
    if profiles is None:
        return LayoutCheck(None, [f"MIG profiles of {prod.id} are unknown"])
    if not profiles:
        return LayoutCheck(False, [f"{prod.id} does not support MIG"])
    grp = mig_group(prod.id)
    assert grp is not None
    by_name = {p.name: p for p in profiles}
    problems: list[str] = []
    used = 0
    for name, count in devices.items():
        p = by_name.get(name)
        if p is None:
            problems.append(f"profile {name} is not valid on {prod.id} (valid: {', '.join(by_name)})")
            continue
        if count > p.max_instances:
            problems.append(f"{count} x {name} exceeds the limit of {p.max_instances} per GPU")
        used += p.compute_slices * count
    if used > grp.compute_slices_total:
        problems.append(f"layout uses {used} compute slices; {prod.id} has {grp.compute_slices_total}")
    memory = mig_memory_slices(prod.id)
    if memory is not None:
        total, per_profile = memory
        used_memory = sum(per_profile.get(name, 0) * count for name, count in devices.items() if name in by_name)
        if used_memory > total:
            problems.append(f"layout uses {used_memory} memory slices; {prod.id} has {total}")
    return LayoutCheck(not problems, problems, dict(devices))


def check_named_layout(name: str, product_id: str, release_version: str | None = None) -> LayoutCheck:
    """Check that a named layout of the static MIG config exists (at a release) and fits a product.

    On success ``devices`` is the per-GPU layout that applies to the product (empty when MIG is disabled).
    """
    lay = mig_layout(name)
    if lay is None:
        return LayoutCheck(False, [f"no named MIG layout {name!r} in default-mig-parted-config"])
    if release_version is not None and (v := parse_version(release_version)) is not None and _vt(lay.first_seen) > v:
        return LayoutCheck(False, [f"MIG layout {name} first appears in {lay.first_seen}"])
    prod = gpu_product(product_id)
    if prod is None:
        return LayoutCheck(None, [f"unknown GPU product {product_id!r}"])
    if prod.mig_capable is False:
        return LayoutCheck(False, [f"{prod.id} does not support MIG"])
    unfiltered = [e for e in lay.entries if not e.device_filter]
    if unfiltered and all(not (e.mig_devices or {}) for e in unfiltered):
        return LayoutCheck(None if prod.mig_capable == "unknown" else True, [], {})  # all-disabled / all-enabled
    grp = mig_group(prod.id)
    if grp is None:
        return LayoutCheck(None, [f"MIG profiles of {prod.id} are unknown"])
    ids = set(grp.pci_device_ids)
    matching = [e for e in lay.entries if e.device_filter and ids & set(e.device_filter)]
    entries = matching or unfiltered
    if not entries:
        return LayoutCheck(False, [f"MIG layout {name} has no entry for {prod.id}"])
    devices = dict(entries[0].mig_devices or {})
    result = check_mig_layout(prod.id, devices, release_version)
    return LayoutCheck(result.ok, [f"layout {name}: {p}" for p in result.problems], devices)


def sharing_with_mig_supported(kind: str) -> bool | None:
    """Tell whether a sharing mode (``time-slicing`` or ``mps``) may be combined with MIG; None if not documented."""
    sh = load_matrix().sharing
    k = kind.strip().lower().replace("_", "-")
    if k in ("time-slicing", "timeslicing"):
        return sh.time_slicing.combinable_with_mig
    if k == "mps":
        return None if sh.mps.combinable_with_mig == "unknown" else sh.mps.combinable_with_mig
    return None


def sharing_with_mig_source(kind: str) -> str | None:
    """The source note of whether a sharing mode may be combined with MIG (None when there is none)."""
    sh = load_matrix().sharing
    k = kind.strip().lower().replace("_", "-")
    if k in ("time-slicing", "timeslicing"):
        return sh.time_slicing.combinable_with_mig_note
    if k == "mps":
        return sh.mps.combinable_with_mig_note
    return None


def mig_memory_slices(product_id: str) -> tuple[int, dict[str, int]] | None:
    """The memory slices of a MIG product's GPU and of each of its profiles, or None when unknown."""
    grp = mig_group(product_id)
    if grp is None:
        return None
    data = load_matrix().domain.mig_memory_slices
    total = data.by_compute_slices.get(str(grp.compute_slices_total), data.default)
    whole = max((p.memory_gb for p in grp.profiles if p.compute_slices == grp.compute_slices_total), default=None)
    if whole is None:
        return None
    return total, {p.name: max(1, round(p.memory_gb * total / whole)) for p in grp.profiles}
