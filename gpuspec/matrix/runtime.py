"""Container runtime plumbing: toolkit settings NVIDIA documents per distribution x runtime (``data/runtime.yaml``)."""

from __future__ import annotations

from gpuspec.matrix.data_models import HostDriverInstall, ManagedPlatform, NriPlugin, RuntimeCell, RuntimeEnv
from gpuspec.matrix.load import load_matrix
from gpuspec.matrix.query import parse_version

#: The Helm values path that carries the toolkit container's environment.
TOOLKIT_ENV = "toolkit.env"


def _at_least(have: str, need: str | None) -> bool:
    if need is None:
        return True
    a, b = parse_version(have), parse_version(need)
    return a is not None and b is not None and a >= b


def _below(have: str, bound: str | None) -> bool:
    if bound is None:
        return True
    a, b = parse_version(have), parse_version(bound)
    return a is not None and b is not None and a < b


def runtime_cell(release_version: str, distribution: str, runtime: str, kubernetes: str) -> RuntimeCell | None:
    """The first data cell for this release, distribution, runtime and Kubernetes minor; None when none covers it."""
    for cell in load_matrix().runtime.cells:
        if cell.distribution != distribution or cell.runtime != runtime:
            continue
        if not (_at_least(release_version, cell.from_release) and _below(release_version, cell.before)):
            continue
        if not _at_least(kubernetes, cell.kubernetes_from):
            continue
        return cell
    return None


def rendered_env(cell: RuntimeCell | None) -> list[RuntimeEnv]:
    """The documented variables of ``cell`` that gpuspec renders (the operator and the toolkit set the others)."""
    return [e for e in cell.env if e.set_by == "gpuspec"] if cell is not None else []


def nri_plugin() -> NriPlugin:
    """The NRI plugin facts: its chart value, runtime, first release and whether it needs CDI."""
    return load_matrix().runtime.nri_plugin


def nri_leaves_runtime_alone(release_version: str, runtime: str, cdi: bool) -> bool:
    """True when the NRI plugin, switched on, makes toolkit runtime settings unnecessary for this cluster."""
    nri = nri_plugin()
    return runtime == nri.runtime and _at_least(release_version, nri.from_release) and (cdi or not nri.requires_cdi)


def host_driver_install(release_version: str, distribution: str) -> HostDriverInstall | None:
    """The chart values the distribution's own driver installer needs at this release (None: none documented)."""
    for entry in load_matrix().runtime.host_driver_installs:
        if entry.distribution == distribution and _at_least(release_version, entry.from_release):
            return entry
    return None


def release_cells(release_version: str) -> list[RuntimeCell]:
    """Every data cell whose release range covers ``release_version``, in lookup order (per distribution x runtime
    the first one whose Kubernetes minimum a cluster meets applies)."""
    out: list[RuntimeCell] = []
    closed: set[tuple[str, str]] = set()  # pairs already served for every Kubernetes version
    for cell in load_matrix().runtime.cells:
        pair = (cell.distribution, cell.runtime)
        covers = _at_least(release_version, cell.from_release) and _below(release_version, cell.before)
        if pair in closed or not covers:
            continue
        out.append(cell)
        if cell.kubernetes_from is None:
            closed.add(pair)
    return out


def runtime_variables() -> frozenset[str]:
    """Toolkit environment variables that point the toolkit at the runtime's config, socket or hooks."""
    return frozenset(load_matrix().runtime.runtime_variables.names)


def managed_platform(distribution: str) -> ManagedPlatform | None:
    """What NVIDIA's page for a managed platform (``gke``) requires; None when gpuspec records nothing for it."""
    return next((m for m in load_matrix().runtime.managed_platforms if m.distribution == distribution), None)
