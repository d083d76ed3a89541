"""Questions gpuspec asks the support matrix about operand images, precompiled drivers, the NVIDIADriver CRD and
NVIDIA's hard constraints (architecture, kernel modules, GPUDirect, known issues)."""

from __future__ import annotations

import functools
import re

from gpuspec.matrix.data_models import (
    Architecture,
    Image,
    KnownIssue,
)
from gpuspec.matrix.load import load_matrix
from gpuspec.matrix.query import (
    _KERNEL_RE,
    CrdStatus,
    _ix,
    _minor,
    _os_matches,
    _platform,
    _vt,
    gpu_product,
    line_of,
    normalize_branch,
    normalize_os,
    normalize_version,
    parse_version,
    release,
)

# ---------------------------------------------------------------- precompiled drivers


@functools.lru_cache(maxsize=4096)
def parse_kernel(kernel: str) -> tuple[str, str | None] | None:
    """Split a kernel release (``5.15.0-1060-nvidia``) into ``("5.15", "nvidia")``; None if it is not one."""
    m = _KERNEL_RE.match(kernel.strip())
    if not m:
        return None
    return m.group(1), m.group(2)


def precompiled_oses(line: str) -> list[str]:
    """The operating systems (as the docs write them) the precompiled-driver table of a line lists; [] if unknown."""
    key = line_of(line)
    pre = _ix().precompiled.get(key) if key else None
    return list(dict.fromkeys(row.os.text for row in pre.table)) if pre is not None else []


@functools.lru_cache(maxsize=4096)
def precompiled_available(
    line: str,
    os_id: str,
    os_version: str,
    kernel: str,
    branch: str,
    *,
    kernel_flavor: str | None = None,
) -> bool | None:
    """Tell whether precompiled driver containers exist for an OS, kernel (flavour) and driver branch on a line.

    ``kernel`` is a kernel release (``6.8.0-45-generic``) or a ``major.minor``; the flavour is taken from its suffix
    unless ``kernel_flavor`` is given.  False for an OS the line's table does not list (whatever the kernel); None when
    the line is unknown or the reference leaves a needed cell unknown.
    """
    key = line_of(line)
    pre = _ix().precompiled.get(key) if key else None
    os_key = normalize_os(os_id)
    if pre is not None and os_key is not None and not any(
        _os_matches(row.os.id, row.os.versions, os_key, os_version) for row in pre.table
    ):
        return False  # precompiled-drivers.rst: supported only for the OSes of the table
    parsed = parse_kernel(kernel)
    if pre is None or os_key is None or parsed is None:
        return None
    kver, kflavor = parsed
    flavor = (kernel_flavor or kflavor or "").lower()
    b = normalize_branch(branch)
    verdicts: list[bool | None] = []
    for row in pre.table:
        if not _os_matches(row.os.id, row.os.versions, os_key, os_version):
            continue
        if not flavor or flavor not in row.kernel_flavors:
            verdicts.append(None if not flavor else False)
            continue
        parts: list[bool | None] = [
            None if row.kernel_versions is None else kver in row.kernel_versions,
            None if row.branches is None else b in row.branches,
        ]
        if False in parts:
            verdicts.append(False)
        elif None in parts:
            verdicts.append(None)
        else:
            verdicts.append(True)
    if True in verdicts:
        return True
    if None in verdicts:
        return None
    return False


# ---------------------------------------------------------------- NVIDIADriver CRD


@functools.lru_cache(maxsize=4096)
def nvidiadriver_crd_status(release_version: str) -> CrdStatus | None:
    """Return whether NVIDIADriver resources are absent, a technology preview or supported; None if unknown."""
    v = parse_version(release_version)
    if v is None:
        return None
    nd = load_matrix().nvidiadriver
    if v < _vt(nd.exists_from):
        return "absent"
    if line_of(release_version) is None:
        return None
    return "supported" if v >= _vt(nd.supported_from) else "technology-preview"


def nvidiadriver_crd_supported(release_version: str, *, allow_preview: bool = False) -> bool | None:
    """Tell whether a release supports NVIDIADriver resources (production; previews count with ``allow_preview``)."""
    status = nvidiadriver_crd_status(release_version)
    if status is None:
        return None
    return status == "supported" or (allow_preview and status == "technology-preview")


# ---------------------------------------------------------------- images


def component_images(release_version: str, *, include_nfd: bool = False) -> dict[str, Image] | None:
    """Return the images a patch release pins, keyed by Helm values path (optionally with the NFD subchart image).

    None if the release is unknown.  The NFD image is under ``node-feature-discovery``.
    """
    rel = release(release_version)
    if rel is None:
        return None
    out = dict(rel.components)
    if include_nfd:
        out["node-feature-discovery"] = rel.nfd.image
    return out


@functools.lru_cache(maxsize=4096)
def os_tag(release_version: str, os_id: str, os_version: str) -> str | None:
    """Return the OS tag the operator appends to driver-like images (``ubuntu22.04``, ``rhel9``) at a release.

    None if the version or OS spelling is unknown.
    """
    v = parse_version(release_version)
    key = normalize_os(os_id)
    if v is None or key is None:
        return None
    rules = [r for r in load_matrix().airgap.os_tag.rules if _vt(r.from_version) <= v]
    ver = os_version.strip()
    if not rules:
        return f"{key}{ver}"
    rule = rules[-1]
    major = ver.split(".")[0]
    threshold = rule.major_only_from.get(key)
    if key in rule.major_only or (threshold is not None and major.isdigit() and int(major) >= threshold):
        ver = major
    return f"{key}{ver}"


def image_ref(image: Image, release_version: str, *, os_tag: str | None = None) -> str | None:
    """Return the full image reference ``<repository>/<image>:<tag>`` the operator pulls for a component.

    An unset version means the chart appVersion (the release tag).  Driver-like images (``os_tag_suffix``) get
    ``-<os_tag>`` appended unless the version is a digest.  None when the chart pins no image (e.g. vgpuManager,
    which users build themselves).  Raises ValueError when an OS tag is needed but not given.
    """
    if not image.repository or not image.image:
        return None
    rel = release(release_version)
    version = image.version
    if version is None:
        version = rel.tag if rel is not None else f"v{normalize_version(release_version)}"
    if version == "":
        return None
    base = f"{image.repository.rstrip('/')}/{image.image}"
    if version.startswith("sha256:"):
        return f"{base}@{version}"
    if image.os_tag_suffix:
        if not os_tag:
            raise ValueError(f"{base} needs an OS tag (e.g. ubuntu22.04)")
        version = f"{version}-{os_tag}"
    return f"{base}:{version}"


# ---------------------------------------------------------------- hard constraints (domain.yaml)


def architecture(product_id: str) -> Architecture | None:
    """Return what the architecture of a GPU product allows (MIG, open kernel modules, last branch), or None."""
    prod = gpu_product(product_id)
    if prod is None:
        return None
    return next((a for a in load_matrix().domain.architectures if a.name == prod.architecture), None)


def is_grace(product_id: str) -> bool:
    """True for products built on a Grace CPU (GH200, GB200, GB300)."""
    prod = gpu_product(product_id)
    return prod is not None and prod.id in load_matrix().domain.grace_products


def kernel_modules_installed(kernel_module_type: str, driver_version: str | None, branch: str | None) -> str | None:
    """The kernel modules a driver container installs for ``kernelModuleType``: ``open``, ``proprietary`` or None.

    With ``auto`` the container chooses itself from 570.86.15 / 570.124.06 on (open by default from R570); older
    containers ignore ``auto`` and install proprietary modules.  None when the version is not known.
    """
    if kernel_module_type != "auto":
        return kernel_module_type
    data = load_matrix().domain.kernel_module_type_auto
    if branch is not None and driver_version is None:
        return "open" if int(branch) >= int(data.open_default_from_branch) else "proprietary"
    v = _minor(driver_version) if driver_version else None
    if v is None:
        return None
    return "open" if v[0] >= int(data.open_default_from_branch) else "proprietary"


def auto_module_type_works(driver_version: str) -> bool | None:
    """True when ``kernelModuleType: auto`` is understood by the driver container of ``driver_version``."""
    v = _minor(driver_version)
    if v is None:
        return None
    first, later = (_vt(x) for x in load_matrix().domain.kernel_module_type_auto.works_from)
    return v == first or v >= later


_GPUDIRECT_OS = re.compile(r"^(Ubuntu|RHEL|OpenShift)\s+(.*?)(?:\s+LTS)?(?:\s+and higher)?(?:\s+with\s.*)?$")


def gpudirect_os_supported(line: str, feature: str, os_id: str, os_version: str) -> bool | None:
    """Tell whether GPUDirect ``rdma`` or ``storage`` is listed for an OS at a release line; None if unknown."""
    plat, _ = _platform(line)
    if plat is None:
        return None
    texts = plat.other_support.get(f"gpudirect_{feature}")
    if not isinstance(texts, list):
        return None
    key = normalize_os(os_id)
    if key is None:
        return None
    for text in texts:
        m = _GPUDIRECT_OS.match(str(text).strip())
        if m is None:
            continue
        name, versions = m.group(1), re.findall(r"\d+(?:\.\d+)?", m.group(2))
        if name == "OpenShift":
            if key == "rhcos":
                return True
            continue
        if normalize_os(name) != key:
            continue
        if any(_os_matches(key, [v], key, os_version) for v in versions):
            return True
    return False


def known_issues(release_version: str) -> list[KnownIssue]:
    """The known issues whose notes list ``release_version`` (or any release, for driver behaviours)."""
    rel = release(release_version)
    if rel is None:
        return []
    return [k for k in load_matrix().domain.known_issues if k.releases == "any" or rel.version in k.releases]



def nvidiadriver_crd_migration(release_version: str) -> bool:
    """True when a release supports the controlled migration from ClusterPolicy to NVIDIADriver driver management."""
    rel = release(release_version)
    since = parse_version(load_matrix().nvidiadriver.migration_from_clusterpolicy_from)
    return rel is not None and since is not None and _vt(rel.version) >= since


def template_only_values() -> list[str]:
    """Values keys (dotted) the chart's templates read although its values.yaml does not list them."""
    return list(load_matrix().domain.template_only_values)
