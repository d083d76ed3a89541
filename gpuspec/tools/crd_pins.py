"""Pinned CRDs of the GitOps and monitoring releases a fleet declares (``fleet.yaml`` ``platform:``).

``gpuspec tools install`` downloads the CRDs of the declared Argo CD, Flux and Prometheus Operator releases into
the user cache, checking each file's size and sha256 against the pins below; ``verify`` then validates the
rendered Applications, Kustomizations, HelmReleases, sources, PrometheusRules and ServiceMonitors against them.

Source of every pin: the file at the release tag in its upstream repository (the URL names the tag), and its
sha256 as that tag holds it. Argo CD: ``manifests/crds/`` of argoproj/argo-cd. Flux: the CRDs of the controller
versions a Flux release ships (fluxcd/flux2 ``manifests/bases/<controller>/kustomization.yaml`` at the Flux tag
names them), from each controller's ``config/crd/bases/``. Prometheus Operator:
``example/prometheus-operator-crd/`` of prometheus-operator/prometheus-operator.

Standard library only, like the helm/kubectl installer beside it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

#: A download larger than this is refused before it is read whole (the largest pinned file is ~1 MB).
MAX_CRD_BYTES = 8 * 1024 * 1024
#: Display names of the projects a fleet may declare.
PROJECTS: Mapping[str, str] = {"argocd": "Argo CD", "flux": "Flux", "prometheusOperator": "Prometheus Operator"}


#: The CRDs (``<plural>.<group>``, their metadata.name) every pinned release of a project provides.
PROJECT_CRDS: Mapping[str, frozenset[str]] = {
    "argocd": frozenset({"applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io"}),
    "flux": frozenset({"helmreleases.helm.toolkit.fluxcd.io", "gitrepositories.source.toolkit.fluxcd.io",
                       "helmcharts.source.toolkit.fluxcd.io", "helmrepositories.source.toolkit.fluxcd.io",
                       "ocirepositories.source.toolkit.fluxcd.io", "kustomizations.kustomize.toolkit.fluxcd.io"}),
    "prometheusOperator": frozenset({"podmonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com",
                                     "servicemonitors.monitoring.coreos.com"}),
}


@dataclass(frozen=True, slots=True)
class CrdFile:
    """One pinned CRD file: where it is downloaded from, its sha256 and its size in bytes."""

    url: str
    sha256: str
    size: int

    @property
    def name(self) -> str:
        """The file name it is stored under."""
        return self.url.rsplit("/", 1)[1]


#: project -> release -> its CRD files.
CRD_RELEASES: Mapping[str, Mapping[str, tuple[CrdFile, ...]]] = {
    "argocd": {
        "v3.4.7": (
            CrdFile("https://raw.githubusercontent.com/argoproj/argo-cd/v3.4.7/manifests/crds/application-crd.yaml",
                    "fa8a0c7f8127f85bbbf57467e7c659ec7d47e7d162cc76c1b07482ebf2b98f49", 396773),
            CrdFile("https://raw.githubusercontent.com/argoproj/argo-cd/v3.4.7/manifests/crds/applicationset-crd.yaml",
                    "51f69883c692698fbcf3c82455c07c0f6413899ac9d96565a9e8395c0196f58d", 1385775),
            CrdFile("https://raw.githubusercontent.com/argoproj/argo-cd/v3.4.7/manifests/crds/appproject-crd.yaml",
                    "7b99337686905b444864c84b1305938a7bfbca9b5f4e2c5d5d2de4acae16ceb3", 16502),
        ),
        "v3.5.1": (
            CrdFile("https://raw.githubusercontent.com/argoproj/argo-cd/v3.5.1/manifests/crds/application-crd.yaml",
                    "5dde0e229249b6b707beb98674c1deae3949d5c319a6c45b9f5a80c99618e40c", 405924),
            CrdFile("https://raw.githubusercontent.com/argoproj/argo-cd/v3.5.1/manifests/crds/applicationset-crd.yaml",
                    "7d282054f41ca2b71a22bab04a8caf0000e07e53a62432e6ea292dae5ab4f07d", 1394817),
            CrdFile("https://raw.githubusercontent.com/argoproj/argo-cd/v3.5.1/manifests/crds/appproject-crd.yaml",
                    "ab225266944322750136f1198d93786e4a79a0e43c8d149abfba44da30a3eac8", 19431),
        ),
    },
    "flux": {
        "v2.8.8": (
            CrdFile("https://raw.githubusercontent.com/fluxcd/helm-controller/v1.5.5/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml",
                    "ebc357ec30f85a88383a3d9e747ff97e27f02870657924b761c231ee1076a184", 73959),
            CrdFile("https://raw.githubusercontent.com/fluxcd/source-controller/v1.8.5/config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml",
                    "6a79e5692f0f6de31fa1ea241d9d9aa9f3e1282dace7dbc8a41a66f2d83511a2", 21895),
            CrdFile("https://raw.githubusercontent.com/fluxcd/source-controller/v1.8.5/config/crd/bases/source.toolkit.fluxcd.io_helmcharts.yaml",
                    "63ffc004fca9f7329dc0acb307332aad0b2415aa7878757d40ff0415b602cd8b", 15852),
            CrdFile("https://raw.githubusercontent.com/fluxcd/source-controller/v1.8.5/config/crd/bases/source.toolkit.fluxcd.io_helmrepositories.yaml",
                    "8ccbd84ed4a3143b4a90740c714240cd0069d4e4ad195ea9439609216e657c9e", 14795),
            CrdFile("https://raw.githubusercontent.com/fluxcd/source-controller/v1.8.5/config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml",
                    "b9d77e19b7aa03a50cce28860e644b19055b7b0aa1055e4c02c366fb779f1bcf", 18777),
            CrdFile("https://raw.githubusercontent.com/fluxcd/kustomize-controller/v1.8.5/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
                    "63b6f4211a51914788f00e98a3566fafb1364cca0954bcd1bec8b0a5d3524a63", 35003),
        ),
        "v2.9.0": (
            CrdFile("https://raw.githubusercontent.com/fluxcd/helm-controller/v1.6.1/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml",
                    "d1947b0cdc89e3bb070fbcae04e04a8864469f5910c59ce771e2623dcabf6d34", 76186),
            CrdFile("https://raw.githubusercontent.com/fluxcd/source-controller/v1.9.1/config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml",
                    "39a5a46c81539c992abc53f9be3e5434cd70d50a10d169b1e8a450e0df1c9d09", 22207),
            CrdFile("https://raw.githubusercontent.com/fluxcd/source-controller/v1.9.1/config/crd/bases/source.toolkit.fluxcd.io_helmcharts.yaml",
                    "dc0158d014e90007c0a084973ef561cd20d3d44520ed4e604e8acff8bb19d2b0", 15912),
            CrdFile("https://raw.githubusercontent.com/fluxcd/source-controller/v1.9.1/config/crd/bases/source.toolkit.fluxcd.io_helmrepositories.yaml",
                    "97c7759df00946cbb9a75a56457cff9964b2543d2248df859cef21e26b8e2ae6", 14855),
            CrdFile("https://raw.githubusercontent.com/fluxcd/source-controller/v1.9.1/config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml",
                    "2655834d468e46a533410d9e2bc3f4e7cbf9b4c922b95652012acb09bfb2545a", 19521),
            CrdFile("https://raw.githubusercontent.com/fluxcd/kustomize-controller/v1.9.1/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
                    "a23fa3f499ec6b4b6f3c8e37763e4ad0e5f2b72c770de8dae3685092f00b2ad4", 40463),
        ),
    },
    "prometheusOperator": {
        "v0.92.1": (
            CrdFile("https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.92.1/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml",
                    "b0d6a359b39fd7ffe22f3aaa0eb157cf5e2ce22fefee8e3f2b2e222669906285", 73519),
            CrdFile("https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.92.1/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml",
                    "d596a7ed0618fc29c36bb76ecd2ff11affa3595c683d413765097e43a339eb31", 13110),
            CrdFile("https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.92.1/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml",
                    "74fc686378f010fd8cde5e056af89d6ed84db166ac0aacc63d4b21e6c7605493", 74514),
        ),
        "v0.93.0": (
            CrdFile("https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.93.0/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml",
                    "45a93443daa687d3654f7e9631909ff7edcdf3ec09c5e60251b74aa2722aee5d", 73786),
            CrdFile("https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.93.0/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml",
                    "78be98554b9c8506ab2b4f4feb91c5f3a56e536a0a510f3a8e876a459970d56d", 13110),
            CrdFile("https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/v0.93.0/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml",
                    "a99047972c9dd7679ce2050b9968e8a08773492e671b3e17abd476d42aa78a32", 74781),
        ),
    },
}


class CrdInstallError(Exception):
    """A CRD download or check failed; the release's folder was left as it was."""


def crd_cache_dir(cache_root: Path) -> Path:
    """The folder under gpuspec's user cache that holds downloaded CRDs: ``<cache>/crds``."""
    return cache_root / "crds"


def release_dir(cache_root: Path, project: str, version: str) -> Path:
    """The folder of one release's CRDs in the cache."""
    return crd_cache_dir(cache_root) / project / version


def pinned(project: str, version: str) -> tuple[CrdFile, ...]:
    """The pinned CRD files of ``project`` at ``version``; CrdInstallError naming the pinned releases if none."""
    releases = CRD_RELEASES.get(project)
    if releases is None:
        raise CrdInstallError(f"unknown project {project!r} (known: {', '.join(PROJECTS)})")
    if version not in releases:
        raise CrdInstallError(f"gpuspec pins no CRDs of {PROJECTS[project]} {version}; pinned releases: "
                              f"{', '.join(releases)} (or vendor the CRDs and pass verify --crds DIR)")
    return releases[version]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_installed(cache_root: Path, project: str, version: str) -> bool:
    """True when every pinned CRD file of the release is in the cache with its pinned hash."""
    folder = release_dir(cache_root, project, version)
    for crd in pinned(project, version):
        path = folder / crd.name
        try:
            if path.stat().st_size != crd.size or _sha256(path.read_bytes()) != crd.sha256:
                return False
        except OSError:
            return False
    return True


Opener = Callable[[str], BinaryIO]


def _open_url(url: str) -> BinaryIO:
    response: BinaryIO = urllib.request.urlopen(url, timeout=60)
    return response


def install_release(cache_root: Path, project: str, version: str, opener: Opener = _open_url) -> bool:
    """Download and check the CRDs of one release into the cache; False when they were already there.

    Every file is checked against its pinned size and sha256 before any is written; a failure raises
    CrdInstallError and leaves the release's folder as it was.
    """
    files = pinned(project, version)
    if is_installed(cache_root, project, version):
        return False
    fetched: dict[str, bytes] = {}
    for crd in files:
        try:
            with opener(crd.url) as response:
                data = response.read(MAX_CRD_BYTES + 1)
        except OSError as err:
            raise CrdInstallError(f"cannot download {crd.url}: {err}") from None
        if len(data) != crd.size or _sha256(data) != crd.sha256:
            raise CrdInstallError(f"{crd.url} does not match its pinned sha256 {crd.sha256} "
                                  f"({len(data)} bytes, pinned {crd.size}); nothing installed")
        fetched[crd.name] = data
    folder = release_dir(cache_root, project, version)
    folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=folder.parent))
    for name, data in fetched.items():
        (staging / name).write_bytes(data)
    if folder.exists():
        for old in folder.iterdir():
            old.unlink()
        folder.rmdir()
    os.replace(staging, folder)
    return True


def installed_dirs(cache_root: Path, declared: Mapping[str, str]) -> tuple[list[Path], list[tuple[str, str]]]:
    """The cache folders of the declared releases whose CRDs are installed, and the (project, version) missing."""
    found: list[Path] = []
    missing: list[tuple[str, str]] = []
    for project, version in sorted(declared.items()):
        try:
            ok = is_installed(cache_root, project, version)
        except CrdInstallError:
            ok = False
        if ok:
            found.append(release_dir(cache_root, project, version))
        else:
            missing.append((project, version))
    return found, missing
