"""Pull the GPU Operator chart from a Helm repository or OCI registry with the real helm, into a local cache.

A chart source is an ``oci://registry/path`` (the chart is ``<source>/gpu-operator``) or an
``https://`` / ``http://`` Helm repository URL (chart ``gpu-operator`` in its index).  Without
``--chart`` a cluster's source is the one its rendered Argo CD / Flux objects use
(:func:`gpuspec.model.resolve.chart_repository`).  Pulled charts are kept in
``charts/<sha256 of source and version>/`` beside the helm cache (in the user cache).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gpuspec.matrix import query
from gpuspec.tools.runner import DEFAULT_TIMEOUT, run_tool

#: Name of the chart in every source.
CHART_NAME = "gpu-operator"
_SCHEMES = ("oci://", "https://", "http://")


@dataclass(frozen=True, slots=True)
class PullResult:
    """A pulled chart archive (``path``), or why it could not be pulled (``error``)."""

    source: str
    version: str
    path: Path | None
    error: str = ""
    cached: bool = False


def is_chart_reference(text: str) -> bool:
    """True when ``text`` names a remote chart source (``oci://``, ``https://``, ``http://``), not a local path."""
    return text.lower().startswith(_SCHEMES)


def chart_version(release: str) -> str:
    """The Helm chart version of GPU Operator ``release``: the support matrix's, else the pin itself."""
    rel = query.release(release)
    return rel.chart.helm_chart_version if rel is not None else release


def pull_argv(helm: Path, source: str, version: str, destination: Path) -> list[str]:
    """The ``helm pull`` command line that downloads ``gpu-operator`` at ``version`` from ``source``."""
    source = source.rstrip("/")
    oci = source.lower().startswith("oci://")
    target = [f"{source}/{CHART_NAME}"] if oci else [CHART_NAME, "--repo", source]
    return [str(helm), "pull", *target, "--version", version, "--destination", str(destination)]


def pull_chart(source: str, version: str, *, helm: Path, cache_dir: Path,
               timeout: float = DEFAULT_TIMEOUT) -> PullResult:
    """The chart ``gpu-operator`` at ``version`` from ``source``, pulled into ``cache_dir``.

    The chart lands in ``cache_dir/<sha256 of source and version>/`` and is reused from there when
    present.  A failed pull (unreachable, unknown version, authentication, timeout) is returned with
    ``error`` set; nothing is left behind for it.
    """
    source = source.rstrip("/")
    target = cache_dir / hashlib.sha256(f"{source}\0{version}".encode()).hexdigest()
    found = _archive(target)
    if found is not None:
        return PullResult(source, version, found, cached=True)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".pull-", dir=cache_dir))
    except OSError as exc:
        return PullResult(source, version, None, error=f"cannot create {cache_dir}: {exc}")
    try:
        result = run_tool(pull_argv(helm, source, version, staging), timeout=timeout)
        if not result.ok:
            return PullResult(source, version, None, error=result.describe_failure())
        if _archive(staging) is None:
            return PullResult(source, version, None, error=f"helm pull wrote no chart archive into {staging}")
        try:
            os.replace(staging, target)
        except OSError:
            if _archive(target) is None:  # another run has not put it there either
                raise
        found = _archive(target)
        if found is None:
            return PullResult(source, version, None, error=f"no single chart archive in {target}")
        return PullResult(source, version, found)
    except OSError as exc:
        return PullResult(source, version, None, error=f"cannot store the pulled chart in {target}: {exc}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _archive(folder: Path) -> Path | None:
    """The single ``.tgz`` helm pull left in ``folder``, if there is exactly one."""
    archives = sorted(folder.glob("*.tgz")) if folder.is_dir() else []
    return archives[0] if len(archives) == 1 else None
