"""The CRDs of the platform releases a fleet declares (``fleet.yaml`` ``platform:``), from gpuspec's user cache."""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path

from gpuspec import usercache
from gpuspec.catalogue import verify as ids
from gpuspec.findings import Finding
from gpuspec.model.fleet import Fleet
from gpuspec.tools.crd_pins import PROJECT_CRDS, PROJECTS, CrdInstallError, installed_dirs, pinned

_FIELDS = {"argocd": "argocd", "flux": "flux", "prometheusOperator": "prometheusOperator"}


def platform_crds(fleet: Fleet, provided: Set[str] = frozenset()) -> tuple[list[Path], list[Finding]]:
    """The cache folders holding the declared releases' CRDs, and a finding for each release whose CRDs are absent.

    ``provided`` are the names of CRDs loaded otherwise (``--crds``): a release they fully cover needs nothing more.
    """
    declared = fleet.settings.platform.declared()
    if not declared:
        return [], []
    root = usercache.cache_dir()
    found, missing = installed_dirs(root, declared) if root is not None else ([], sorted(declared.items()))
    findings = []
    for project, version in missing:
        if PROJECT_CRDS[project] <= provided:
            continue
        try:
            pinned(project, version)
        except CrdInstallError as err:
            problem, hint = str(err), "declare a pinned release, or vendor its CRDs and pass --crds DIR"
        else:
            problem = (f"the CRDs of {PROJECTS[project]} {version} are not installed"
                       + (" (caching is off: GPUSPEC_NO_CACHE)" if root is None else ""))
            hint = "run `gpuspec tools install` (it fetches the declared releases' pinned CRDs), or pass --crds DIR"
        findings.append(ids.PLATFORM_CRDS_MISSING.finding(
            f"{problem}: objects of its kinds are not validated", file=fleet.settings_file,
            path=("platform", _FIELDS[project]), hint=hint))
    return found, findings
