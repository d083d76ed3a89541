"""Questions gpuspec asks the support matrix.

Answers are ``True`` / ``False`` when the reference decides them and ``None``
when it does not (unknown release, a table column the docs do not have, a
fact written as ``unknown``).  Callers turn ``None`` into "cannot verify",
never into a silent pass.

Versions may be written with or without the leading ``v`` (``v25.10.1`` or
``25.10.1``); wherever a *line* is accepted, a patch version of that line is
accepted too.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from gpuspec.matrix.data_models import (
    DomainData,
    GpuProduct,
    LifecycleLine,
    LineStatus,
    MigGroup,
    MigLayout,
    PlatformLine,
    PrecompiledLine,
    Release,
    VersionSet,
)
from gpuspec.matrix.load import load_matrix

CrdStatus = Literal["absent", "technology-preview", "supported"]

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")
_PROFILE_RE = re.compile(r"^(\d+)g\.(\d+)gb(.*)$")
_KERNEL_RE = re.compile(r"^(\d+\.\d+)(?:\.\d+)?(?:-\d+)?(?:-([a-z][a-z0-9-]*))?$")

#: Spellings accepted for each distribution id of the platform tables.
DISTRIBUTION_ALIASES: dict[str, tuple[str, ...]] = {
    "kubernetes": ("kubernetes", "upstream", "k8s", "vanilla", "kubeadm"),
    "openshift": ("openshift", "ocp", "rhocp"),
    "eks": ("eks", "amazon-eks", "aws-eks", "amazon_eks"),
    "gke": ("gke", "google-gke", "google_gke"),
    "aks": ("aks", "azure-aks", "azure_aks"),
    "rke2": ("rke2",),
    "k3s": ("k3s",),
    "k0s": ("k0s",),
    "microk8s": ("microk8s",),
    "vks": ("vks", "vsphere-kubernetes-service"),
    "vsphere-with-tanzu": ("vsphere-with-tanzu", "tanzu", "vsphere_with_tanzu"),
    "nkp": ("nkp", "nutanix", "nutanix-nkp"),
    "hpe-ezmeral": ("hpe-ezmeral", "ezmeral", "hpe_ezmeral"),
}
#: Distributions whose versions in the tables are Kubernetes minors (the rest use their own product versions).
KUBERNETES_MINOR_DISTRIBUTIONS = frozenset({"kubernetes", "eks", "gke", "aks", "rke2", "k3s", "k0s", "microk8s", "vks"})

#: Spellings accepted for operating-system ids (NFD os_release IDs are the canonical form).
OS_ALIASES: dict[str, tuple[str, ...]] = {
    "ubuntu": ("ubuntu",),
    "rhel": ("rhel", "redhat", "red-hat", "red hat enterprise linux"),
    "rhcos": ("rhcos", "red hat core os", "coreos", "red-hat-coreos"),
    "rocky": ("rocky", "rocky-linux", "rockylinux", "rocky linux"),
    "centos": ("centos",),
    "sles": ("sles", "suse"),
    "ol": ("ol", "oracle-linux", "oraclelinux"),
}
RUNTIME_ALIASES: dict[str, tuple[str, ...]] = {
    "containerd": ("containerd",),
    "cri-o": ("cri-o", "crio", "cri_o"),
    "docker": ("docker",),
}
ARCH_ALIASES: dict[str, tuple[str, ...]] = {"x86_64": ("x86_64", "amd64", "x86-64"), "arm64": ("arm64", "aarch64")}


def _alias_map(table: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    return {alias: key for key, aliases in table.items() for alias in aliases}


_DIST = _alias_map(DISTRIBUTION_ALIASES)
_OS = _alias_map(OS_ALIASES)
_RUNTIME = _alias_map(RUNTIME_ALIASES)
_ARCH = _alias_map(ARCH_ALIASES)


# ---------------------------------------------------------------- index


@dataclass(frozen=True)
class _Index:
    releases: dict[str, Release]
    ordered: list[Release]
    lines: dict[str, LifecycleLine]
    line_order: list[str]
    platforms: dict[str, PlatformLine]
    products: dict[str, GpuProduct]
    groups: dict[str, MigGroup]
    layouts: dict[str, MigLayout]
    precompiled: dict[str, PrecompiledLine]


_IX_LOCK = threading.Lock()


def _ix() -> _Index:
    """The lookup index over the matrix, built once (thread-safe: verify runs clusters in threads)."""
    with _IX_LOCK:
        return _build_index()


@functools.cache
def _build_index() -> _Index:
    m = load_matrix()
    ordered = sorted(m.releases.releases, key=lambda r: _vt(r.version))
    products: dict[str, GpuProduct] = {}
    for p in m.gpus.products:
        p = _with_derived_mig(p, m.domain)
        for key in (p.id, *p.aliases):
            products[_product_key(key)] = p
    return _Index(
        releases={r.version: r for r in ordered},
        ordered=ordered,
        lines={ln.line: ln for ln in m.lifecycle.lines},
        line_order=[ln.line for ln in m.lifecycle.lines],
        platforms={p.line: p for p in m.platforms.lines},
        products=products,
        groups={g.id: g for g in m.mig.product_groups},
        layouts={lay.name: lay for lay in m.mig.named_layouts.layouts},
        precompiled={p.line: p for p in m.precompiled.lines},
    )


def _with_derived_mig(product: GpuProduct, domain: DomainData) -> GpuProduct:
    """``product`` with MIG capability derived from its architecture where the product entry says unknown."""
    if product.mig_capable != "unknown":
        return product
    arch = next((a for a in domain.architectures if a.name == product.architecture), None)
    if (arch is not None and arch.mig is False) or product.id in domain.no_mig_products:
        return product.model_copy(update={"mig_capable": False})
    return product


@functools.lru_cache(maxsize=4096)
def _product_key(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().upper())


def _vt(version: str) -> tuple[int, ...]:
    parsed = parse_version(version)
    if parsed is None:
        raise ValueError(f"not a version: {version!r}")
    return parsed


def _minor(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in text.strip().lstrip("v").split("."))
    except ValueError:
        return None


# ---------------------------------------------------------------- versions and lifecycle


@functools.lru_cache(maxsize=4096)
def parse_version(version: str) -> tuple[int, ...] | None:
    """Return ``(YY, MM, PP)`` (or ``(YY, MM)`` for a line) of a GPU Operator version, or None if it is not one."""
    m = _VERSION_RE.match(version.strip())
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def normalize_version(version: str) -> str | None:
    """Return a version without its leading ``v`` (``v25.10.1`` -> ``25.10.1``), or None if it is not a version."""
    parsed = parse_version(version)
    return None if parsed is None else ".".join(str(p) for p in parsed)


def data_date() -> dt.date:
    """Return the date of the reference snapshot: the default "as of" date for life-cycle answers."""
    return load_matrix().lifecycle.data_date


def releases() -> list[Release]:
    """Return every known patch release, oldest first."""
    return list(_ix().ordered)


def release_lines() -> list[LifecycleLine]:
    """Return the release lines (YY.MM), oldest first, with their patches."""
    return [_ix().lines[line] for line in _ix().line_order]


@functools.lru_cache(maxsize=4096)
def release(version: str) -> Release | None:
    """Return the patch release ``version`` (``v26.3.1`` or ``26.3.1``), or None if the matrix does not know it."""
    norm = normalize_version(version)
    return None if norm is None else _ix().releases.get(norm)


def latest_release(line: str | None = None) -> Release | None:
    """Return the newest patch release overall, or of ``line``; None if the line is unknown."""
    if line is None:
        return _ix().ordered[-1]
    key = line_of(line)
    if key is None:
        return None
    return _ix().releases[_ix().lines[key].patches[-1]]


@functools.lru_cache(maxsize=4096)
def line_of(version: str) -> str | None:
    """Return the release line (``"25.10"``) of a version or line string, or None if that line is unknown."""
    parsed = parse_version(version)
    if parsed is None:
        return None
    key = f"{parsed[0]}.{parsed[1]}"
    return key if key in _ix().lines else None


def nearest_release(version: str) -> Release | None:
    """Return the known release closest to ``version`` (same line first, else the neighbour in release order).

    Used to suggest a version when ``version`` is unknown; None only when ``version`` is not a version at all.
    """
    parsed = parse_version(version)
    if parsed is None:
        return None
    exact = release(version)
    if exact is not None:
        return exact
    ix = _ix()
    key = f"{parsed[0]}.{parsed[1]}"
    if key in ix.lines:
        patch = parsed[2] if len(parsed) > 2 else 0
        candidates = [ix.releases[p] for p in ix.lines[key].patches]
        return min(candidates, key=lambda r: (abs(_vt(r.version)[2] - patch), -_vt(r.version)[2]))
    target = (parsed[0], parsed[1], parsed[2] if len(parsed) > 2 else 0)
    lower = [r for r in ix.ordered if _vt(r.version) < target]
    return lower[-1] if lower else ix.ordered[0]


@functools.lru_cache(maxsize=4096)
def line_status(line: str, as_of: dt.date | None = None) -> LineStatus:
    """Return the life-cycle status of a release line (or of a patch's line) on ``as_of`` (default: data date).

    Follows the documented policy: a line is supported until the next line is released, then deprecated until the
    line after that is released, then end of support.  ``unknown`` for unknown lines, for dates before the line was
    released, and for not-yet-ended statuses after the data date (a newer line may have appeared since).
    """
    key = line_of(line)
    if key is None:
        return "unknown"
    ix = _ix()
    when = as_of or data_date()
    entry = ix.lines[key]
    if when < entry.released:
        return "unknown"
    i = ix.line_order.index(key)
    following = [ix.lines[ln].released for ln in ix.line_order[i + 1 : i + 3]]
    status: LineStatus
    if len(following) > 1 and when >= following[1]:
        status = "end-of-support"
    elif following and when >= following[0]:
        status = "deprecated"
    else:
        status = "supported"
    if status != "end-of-support" and when > data_date():
        return "unknown"
    return status


def upgrade_supported(from_version: str, to_version: str) -> tuple[bool | None, str]:
    """Tell whether upgrading the operator from one release to another is supported, with the reason.

    The documented rule: only within a release line or to the next line (in tag order).  Downgrades are reported
    as such (False).  ``None`` when a version is malformed or its line is unknown.
    """
    a, b = parse_version(from_version), parse_version(to_version)
    if a is None or b is None:
        bad = from_version if a is None else to_version
        return None, f"cannot verify: {bad!r} is not a GPU Operator version"
    la, lb = line_of(from_version), line_of(to_version)
    if la is None or lb is None:
        unknown = from_version if la is None else to_version
        return None, f"cannot verify: release line of {unknown} is not in the support matrix"
    if a == b:
        return True, "same release"
    if b < a:
        return False, f"downgrade from {normalize_version(from_version)} to {normalize_version(to_version)}"
    if la == lb:
        return True, f"upgrade within release line {la}"
    order = _ix().line_order
    ia, ib = order.index(la), order.index(lb)
    if ib == ia + 1:
        return True, f"upgrade from line {la} to the next line {lb}"
    skipped = ", ".join(order[ia + 1 : ib])
    return (
        False,
        f"upgrade from line {la} to {lb} skips line(s) {skipped}; "
        "upgrades are supported only within a line or to the next line",
    )


# ---------------------------------------------------------------- platforms


@functools.lru_cache(maxsize=4096)
def _platform(target: str) -> tuple[PlatformLine | None, Release | None]:
    key = line_of(target)
    if key is None:
        return None, None
    return _ix().platforms.get(key), release(target)


def normalize_distribution(name: str) -> str | None:
    """Return the distribution id (``kubernetes``, ``openshift``, ``eks`` ...) for a spelling, or None if unknown."""
    return _DIST.get(name.strip().lower())


def normalize_os(os_id: str) -> str | None:
    """Return the OS id (``ubuntu``, ``rhel``, ``rhcos``, ``rocky`` ...) for a spelling, or None if unknown."""
    return _OS.get(os_id.strip().lower())


def _os_matches(row_id: str, row_versions: list[str] | None, os_id: str, version: str | None) -> bool:
    if row_id != os_id:
        return False
    if version is None or row_versions is None:
        return True
    v = version.strip()
    for rv in row_versions:
        if rv == v:
            return True
        if "." not in rv and v.split(".")[0] == rv:  # row written as a major ("RHEL 8")
            return True
        if "." not in v and rv.split(".")[0] == v:  # asked for a major only
            return True
    return False


def _in_set(vs: VersionSet, version: str, kind_minor: bool, lo: str | None, hi: str | None) -> bool:
    if vs.versions is not None:
        candidates = vs.versions
        if kind_minor:
            v = _minor(version)
            ok = any(_minor(c) == v for c in candidates)
        else:
            ok = version.strip() in candidates
        if ok and kind_minor and (lo or hi):
            v = _minor(version)
            ok = v is not None and (lo is None or v >= _vt_minor(lo)) and (hi is None or v <= _vt_minor(hi))
        return ok
    v = _minor(version)
    if v is None or vs.min is None or vs.max is None:
        return False
    mn, mx = _vt_minor(vs.min), _vt_minor(vs.max)
    if lo is not None:
        mn = _vt_minor(lo) if kind_minor else mn
    if hi is not None:
        mx = min(mx, _vt_minor(hi))
    return mn <= v <= mx


def _vt_minor(text: str) -> tuple[int, ...]:
    v = _minor(text)
    if v is None:
        raise ValueError(f"not a minor version: {text!r}")
    return v


@functools.lru_cache(maxsize=4096)
def kubernetes_supported(
    line: str,
    distribution: str,
    version: str,
    *,
    os_id: str | None = None,
    os_version: str | None = None,
) -> bool | None:
    """Tell whether a Kubernetes distribution version is listed for a release line (or patch) of the operator.

    ``version`` is the distribution's own version as the docs tables write it: the Kubernetes minor (``"1.31"``)
    for upstream Kubernetes, EKS, GKE, AKS, RKE2, K3s, k0s, MicroK8s and VKS; the OpenShift version (``"4.18"``)
    for OpenShift; NKP / vSphere / Ezmeral release names for those.  With a patch release, known per-patch limits
    apply (e.g. 25.10.0 tops out at 1.34).  ``os_id``/``os_version`` restrict the answer to that OS's rows.

    None when the line, the distribution, or the distribution's column for that line is unknown.
    """
    plat, rel = _platform(line)
    dist = normalize_distribution(distribution)
    if plat is None or dist is None:
        return None
    os_key = normalize_os(os_id) if os_id else None
    if os_id and os_key is None:
        return None
    rows = [r for r in plat.os_kubernetes if dist in r.distributions]
    if not rows:
        return None  # the docs of this line have no such column
    if os_key is not None:
        rows = [r for r in rows if _os_matches(r.os.id, r.os.versions, os_key, os_version)]
    lo = hi = None
    if rel is not None:
        for ov in plat.patch_overrides:
            if rel.version in ov.versions:
                if dist == "openshift" and ov.openshift is not None:
                    lo, hi = ov.openshift.min, ov.openshift.max
                elif dist in KUBERNETES_MINOR_DISTRIBUTIONS:
                    lo, hi = ov.kubernetes_min, ov.kubernetes_max
    kind_minor = dist in KUBERNETES_MINOR_DISTRIBUTIONS or dist == "openshift"
    return any(_in_set(r.distributions[dist], version, kind_minor, lo, hi) for r in rows)


def kubernetes_ranges(line: str) -> dict[str, list[str]] | None:
    """Return, per distribution id, the distinct version cells (``"1.33-1.36"``) of a line; None if unknown."""
    plat, _ = _platform(line)
    if plat is None:
        return None
    out: dict[str, list[str]] = {}
    for row in plat.os_kubernetes:
        for dist, vs in row.distributions.items():
            if vs.text not in out.setdefault(dist, []):
                out[dist].append(vs.text)
    return out


@functools.lru_cache(maxsize=4096)
def os_supported(line: str, os_id: str, version: str | None = None) -> bool | None:
    """Tell whether an OS (and version, e.g. ``"22.04"`` or ``"9.4"``) is listed for a release line or patch.

    RHCOS rows carry no version (it follows the OpenShift release).  None when the line or the OS spelling is unknown.
    """
    plat, _ = _platform(line)
    key = normalize_os(os_id)
    if plat is None or key is None:
        return None
    return any(_os_matches(r.os.id, r.os.versions, key, version) for r in plat.os_kubernetes)


def operating_systems(line: str) -> list[tuple[str, list[str] | None, str]] | None:
    """Return the distinct ``(os_id, versions, original text)`` a line lists, or None for an unknown line."""
    plat, _ = _platform(line)
    if plat is None:
        return None
    seen: dict[str, tuple[str, list[str] | None, str]] = {}
    for r in plat.os_kubernetes:
        seen.setdefault(r.os.text, (r.os.id, r.os.versions, r.os.text))
    return list(seen.values())


@functools.lru_cache(maxsize=4096)
def runtime_supported(
    line: str,
    runtime: str,
    *,
    os_id: str | None = None,
    os_version: str | None = None,
    runtime_version: str | None = None,
) -> bool | None:
    """Tell whether a container runtime (containerd, CRI-O, docker) is listed for a line, optionally on one OS.

    The docs runtime tables list only containerd and CRI-O, so docker is False.  ``runtime_version`` is checked
    against the line's containerd range.  None when the line, the runtime spelling, the OS row, or the cell is unknown.
    """
    plat, _ = _platform(line)
    rt = _RUNTIME.get(runtime.strip().lower())
    if plat is None or rt is None:
        return None
    if rt == "docker":
        return False
    rts = plat.container_runtimes
    if rt == "containerd" and runtime_version is not None:
        v = _minor(".".join(runtime_version.lstrip("v").split(".")[:2]))
        if v is None:
            return None
        if not (_vt_minor(rts.containerd_versions.min) <= v <= _vt_minor(rts.containerd_versions.max)):
            return False
    cells: list[bool | None]
    if os_id is not None:
        key = normalize_os(os_id)
        if key is None:
            return None
        rows = [r for r in rts.by_os if _os_matches(r.os.id, r.os.versions, key, os_version)]
        if not rows:
            return None  # the runtime table has no row for this OS
        cells = [r.containerd if rt == "containerd" else r.cri_o for r in rows]
    else:
        cells = [r.containerd if rt == "containerd" else r.cri_o for r in rts.by_os]
    if any(c is True for c in cells):
        return True
    if any(c is None for c in cells):
        return None
    return False


# ---------------------------------------------------------------- drivers


@functools.lru_cache(maxsize=4096)
def normalize_branch(branch: str) -> str:
    """Return a driver branch without an ``R`` prefix (``"R580"`` -> ``"580"``)."""
    b = branch.strip()
    return b[1:] if b[:1] in ("R", "r") else b


@functools.lru_cache(maxsize=4096)
def driver_branch_supported(release_version: str, branch: str) -> bool | None:
    """Tell whether the docs component matrix lists driver ``branch`` for a patch release; None if unknown release."""
    rel = release(release_version)
    if rel is None:
        return None
    b = normalize_branch(branch)
    return b in rel.drivers.branches or rel.drivers.chart_default.split(".")[0] == b


@functools.lru_cache(maxsize=4096)
def driver_version_known(release_version: str, version: str) -> bool | None:
    """Tell whether a driver version is listed for a patch release (docs matrix or chart default); None if unknown."""
    rel = release(release_version)
    if rel is None:
        return None
    v = version.strip()
    return v == rel.drivers.chart_default or any(d.version == v for d in rel.drivers.versions)


@functools.lru_cache(maxsize=4096)
def default_driver(release_version: str) -> str | None:
    """Return the driver version the chart of a patch release installs by default (values.yaml), or None if unknown."""
    rel = release(release_version)
    return None if rel is None else rel.drivers.chart_default


# ---------------------------------------------------------------- GPU products


@functools.lru_cache(maxsize=4096)
def gpu_product(product_id: str) -> GpuProduct | None:
    """Return the catalogue entry of a GPU product id or alias (case-insensitive), or None if unknown."""
    return _ix().products.get(_product_key(product_id))


def gpu_products() -> list[GpuProduct]:
    """Return every catalogue entry, in data order."""
    return list(load_matrix().gpus.products)


@functools.lru_cache(maxsize=4096)
def gpu_listed(line: str, product_id: str, arch: str = "x86_64") -> bool | None:
    """Tell whether a line's supported-GPU list (``x86_64`` or ``arm64``) names the product; None if unknown."""
    plat, _ = _platform(line)
    prod = gpu_product(product_id)
    a = _ARCH.get(arch.strip().lower())
    if plat is None or prod is None or a is None:
        return None
    names = set(plat.gpus.x86_64 if a == "x86_64" else plat.gpus.arm64)
    return any(n in names for n in prod.listed_as)


@functools.lru_cache(maxsize=4096)
def gpu_driver_requirement(product_id: str, driver_version: str) -> tuple[bool, str] | None:
    """Check a driver version against a product's documented minimum driver; None when no minimum is documented."""
    prod = gpu_product(product_id)
    if prod is None or prod.min_driver_version is None:
        return None
    have, need = _minor(driver_version), _minor(prod.min_driver_version)
    if have is None or need is None:
        return None
    if have >= need:
        return True, f"{prod.id} needs driver {prod.min_driver_version} or later"
    return False, f"{prod.id} needs driver {prod.min_driver_version} or later (got {driver_version})"
