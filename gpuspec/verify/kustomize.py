"""Build a Kustomize overlay with ``kubectl kustomize`` (or a ``kustomize`` binary) and return its objects."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuspec.errors import GpuspecError
from gpuspec.tools.discover import KustomizeCommand, find_kustomize
from gpuspec.tools.goenv import short_run_env
from gpuspec.tools.runner import run_tool
from gpuspec.verify.manifests import Manifest, ManifestParseError, parse_manifests

#: Default seconds a kustomize build may take.
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class KustomizeResult:
    """The objects an overlay builds to, or why the build failed (``ok`` false, ``error`` set)."""

    ok: bool
    manifests: tuple[Manifest, ...]
    stdout: str
    stderr: str
    error: str
    duration: float
    argv: tuple[str, ...]


def special_entries(directory: Path) -> list[str]:
    """Entries below ``directory`` (relative paths) that are, or link to, something other than a regular file or
    a folder: a FIFO, socket or device blocks or floods the kustomize build that reads it."""
    found: list[str] = []
    for folder, dirs, files in os.walk(directory):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            try:
                mode = os.stat(path).st_mode
            except OSError:  # a dangling link or a loop: kustomize reports it itself
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                found.append(Path(path).relative_to(directory).as_posix())
    return sorted(found)


def refused_build(overlay: Path, special: Sequence[str]) -> KustomizeResult:
    """The result of a build that is not run because ``special`` entries of ``overlay`` cannot be read safely."""
    listed = ", ".join(special[:3]) + (f" and {len(special) - 3} more" if len(special) > 3 else "")
    return KustomizeResult(
        ok=False, manifests=(), stdout="", stderr="",
        error=f"kustomize build of {overlay} not run: {listed} is not a regular file (a FIFO, socket or device)",
        duration=0.0, argv=(),
    )


def kustomize_build(
    overlay: Path,
    *,
    kustomize: KustomizeCommand | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    extra_args: Sequence[str] = (),
    short_run: bool = True,
) -> KustomizeResult:
    """Build the kustomization in directory ``overlay`` and parse the objects it prints.

    ``kustomize`` defaults to :func:`gpuspec.tools.find_kustomize`.  A failed or timed-out build,
    or output that does not parse, gives ``ok=False`` with the tool's message in ``error``.
    ``extra_args`` go before the directory (e.g. ``--load-restrictor LoadRestrictionsNone``).
    ``short_run`` runs kubectl with :func:`gpuspec.tools.goenv.short_run_env` (false for a large build that
    runs once, where holding off Go's collector would only raise its memory).
    Raises GpuspecError when ``overlay`` is not a directory.
    """
    overlay = Path(overlay)
    if not overlay.is_dir():
        raise GpuspecError(f"kustomize overlay is not a directory: {overlay}")
    special = special_entries(overlay)
    if special:
        return refused_build(overlay, special)
    command = kustomize if kustomize is not None else find_kustomize()
    argv = [*command.argv, *extra_args, str(overlay)]
    result = run_tool(argv, timeout=timeout, env=short_run_env() if short_run else None)
    if not result.ok:
        return KustomizeResult(
            ok=False, manifests=(), stdout=result.stdout, stderr=result.stderr,
            error=f"kustomize build of {overlay} failed: {result.describe_failure()}",
            duration=result.duration, argv=result.argv,
        )
    try:
        manifests = tuple(parse_manifests(result.stdout))
    except ManifestParseError as exc:
        return KustomizeResult(
            ok=False, manifests=(), stdout=result.stdout, stderr=result.stderr,
            error=f"kustomize build of {overlay} printed invalid YAML: {exc}",
            duration=result.duration, argv=result.argv,
        )
    return KustomizeResult(
        ok=True, manifests=manifests, stdout=result.stdout, stderr=result.stderr, error="",
        duration=result.duration, argv=result.argv,
    )
