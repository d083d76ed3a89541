"""The last `gpuspec verify` report, replayed when nothing it depends on changed since that run.

A warm verify of an unchanged fleet (a developer running it again, a CI job whose user cache was restored)
would otherwise parse every rendered file and every helm and kustomize output again and report the same
findings.  The report is kept like lint's (:mod:`gpuspec.cli.resultcache`: sealed in the user cache, findings
located and redacted) under a key of everything a verify report is a function of:

- what lint's key covers (gpuspec's code, the working folder, the day exceptions expire against, every byte
  below the fleet and policy folders, every ``GPUSPEC_*`` setting), and the options that change findings
  (``--cluster``, ``--shard``);
- every byte below the rendered folder, each local chart (folder or archive), each ``--crds`` path and the
  platform CRDs installed in the user cache;
- the helm and kubectl (or kustomize) binaries by path, device, inode, size, modification and status-change
  time, the settings of those tools (``HELM_*``, ``KUBECTL_*``, ``KUSTOMIZE_*``, ``GODEBUG``, ``GOFLAGS``), and
  the installed schema packages (kubernetes-validate, jsonschema).

A run that pulls a chart (a chart reference, or no ``--chart``: the registry can change what a version holds),
``--no-cache``, or any input :mod:`gpuspec.cli.resultcache` refuses to hash (a FIFO, a link out of the
repository) is never replayed: it runs in full.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from gpuspec import usercache
from gpuspec.cli import resultcache
from gpuspec.errors import GpuspecError
from gpuspec.verify.shard import Shard

#: What a verify report depends on besides its inputs' bytes: the schema and validator packages.
SCHEMA_PACKAGES = ("kubernetes-validate", "jsonschema", "referencing")


def _identity(path: Path) -> str:
    """A tool binary as the key takes it: its real path and what its stat says of its version."""
    real = os.path.realpath(path)
    info = os.stat(real)
    return f"{real}\0{info.st_dev}\0{info.st_ino}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}"


def _packages() -> str:
    """The installed schema packages by name, version and where they are installed (their metadata, not every
    file: kubernetes-validate ships thousands of schemas)."""
    import importlib.metadata

    parts = []
    for name in SCHEMA_PACKAGES:
        try:
            dist = importlib.metadata.distribution(name)
            parts.append(f"{name}={dist.version}@{dist.locate_file('')}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{name}=absent")
    return ",".join(parts)


def replay_entry(fleet_dir: Path, policies_dir: Path, rendered_dir: Path, charts: Sequence[Path | str], *,
                 clusters: Sequence[str], crd_paths: Sequence[Path], helm: Path | None, shard: Shard | None,
                 cache_dir: Path | None, today: date | None) -> resultcache.Entry | None:
    """The replay entry of the verify run these options (``gpuspec verify``'s) describe, or None when the run
    must not be replayed (see the module)."""
    if cache_dir is None or not charts or any("://" in str(chart) for chart in charts):
        return None
    from gpuspec.tools.crd_pins import crd_cache_dir
    from gpuspec.tools.discover import find_helm, find_kustomize

    try:
        kustomize = find_kustomize()
        tools = [_identity(find_helm(helm)), kustomize.via, *kustomize.argv[1:], _identity(Path(kustomize.argv[0]))]
    except (GpuspecError, OSError):
        return None  # the full run reports a missing tool
    root = usercache.cache_dir()
    platform = [crd_cache_dir(root)] if root is not None else []
    settings = ["verify", f"clusters={','.join(clusters)}", f"shard={shard or ''}", f"packages={_packages()}", *tools]
    inputs = [rendered_dir, *(Path(chart) for chart in charts), *crd_paths, *platform]
    found = resultcache.entry("verify", fleet_dir, policies_dir, settings, today, inputs,
                              ("GPUSPEC_", *resultcache.TOOL_SETTINGS))
    return found if found.key is not None else None
