"""Ask external tools for their version (cached per binary, so repeated calls cost nothing)."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from gpuspec.errors import GpuspecError
from gpuspec.tools.runner import run_tool

_SEMVER = re.compile(r"v?(\d+\.\d+\.\d+[0-9A-Za-z.+-]*)")


def helm_version(helm: str | os.PathLike[str]) -> str:
    """The version helm reports, e.g. ``v4.1.4+g05fa379``."""
    path = Path(helm)
    stat = path.stat()
    return _helm_version(str(path), stat.st_mtime_ns, stat.st_size)


def kubectl_version(kubectl: str | os.PathLike[str]) -> str:
    """The client version kubectl reports, e.g. ``v1.35.2``."""
    path = Path(kubectl)
    stat = path.stat()
    return _kubectl_version(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=16)
def _helm_version(path: str, _mtime: int, _size: int) -> str:
    result = run_tool([path, "version", "--short"], timeout=30)
    if not result.ok:
        raise GpuspecError(f"cannot read helm's version: {result.describe_failure()}")
    return result.stdout.strip()


@lru_cache(maxsize=16)
def _kubectl_version(path: str, _mtime: int, _size: int) -> str:
    result = run_tool([path, "version", "--client"], timeout=30)
    if not result.ok:
        raise GpuspecError(f"cannot read kubectl's version: {result.describe_failure()}")
    match = _SEMVER.search(result.stdout)
    return f"v{match.group(1)}" if match else result.stdout.strip()
