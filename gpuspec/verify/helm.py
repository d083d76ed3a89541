"""Run ``helm template`` on a local chart (directory or .tgz) with an on-disk result cache.

The cache key covers everything that changes helm's output: the chart digest (sha256 over the
chart's files), the values files' contents, the Kubernetes version, the release name, namespace,
whether CRDs are included, and helm's own version.  A re-run over unchanged input reads the stored
output instead of starting helm.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuspec.errors import GpuspecError
from gpuspec.loader.safefile import UnsafeFile, read_bounded, write_file
from gpuspec.tools.discover import find_helm
from gpuspec.tools.goenv import short_run_env
from gpuspec.tools.runner import DEFAULT_TIMEOUT, run_tool
from gpuspec.tools.versions import helm_version
from gpuspec.verify.manifests import Manifest, ManifestParseError, load_yaml, parse_manifests

#: Cache location of library callers that pass none (the CLI uses the user cache, see cli/verify_cmd.py).
DEFAULT_CACHE_DIR = Path(".gpuspec-cache") / "helm"
#: Bump when the cache entry format changes.
_CACHE_FORMAT = 3
_KUBE_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")
_SKIP_DIRS = {".git", "__pycache__"}


@dataclass(frozen=True, slots=True)
class HelmTemplateResult:
    """What ``helm template`` produced for one chart + values combination.

    ``ok`` is false when helm failed, timed out, printed YAML that does not parse, or the chart's
    version differs from the requested one; ``error`` then says why.  ``cached`` tells whether the
    result came from the on-disk cache.
    """

    ok: bool
    manifests: tuple[Manifest, ...]
    stdout: str
    stderr: str
    error: str
    cached: bool
    duration: float
    cache_key: str
    argv: tuple[str, ...]


def normalize_kube_version(kube_version: str) -> str:
    """Return ``MAJOR.MINOR`` for inputs like ``1.31``, ``v1.31`` or ``1.31.4``; raise GpuspecError otherwise."""
    match = _KUBE_VERSION.match(kube_version.strip())
    if not match:
        raise GpuspecError(f"invalid Kubernetes version {kube_version!r}: expected MAJOR.MINOR such as 1.31")
    return f"{int(match.group(1))}.{int(match.group(2))}"


def chart_digest(chart: Path) -> str:
    """sha256 of a chart: of the .tgz bytes, or of every file (relative path and content) under a chart directory."""
    digest = hashlib.sha256()
    if chart.is_file():
        digest.update(b"tgz\0")
        _hash_file(digest, chart)
        return digest.hexdigest()
    if not chart.is_dir():
        raise GpuspecError(f"chart not found: {chart}")
    digest.update(b"dir\0")
    for path in sorted(_chart_files(chart)):
        rel = path.relative_to(chart).as_posix()
        digest.update(rel.encode() + b"\0")
        _hash_file(digest, path)
        digest.update(b"\0")
    return digest.hexdigest()


#: Largest top-level chart file read (the GPU Operator's values.yaml is about 100 KB).
MAX_CHART_FILE_BYTES = 16 * 1024 * 1024


def read_chart_file(chart: Path, name: str) -> str | None:
    """Text of a top-level chart file (``Chart.yaml``, ``values.yaml``) from a chart directory or .tgz.

    Returns None when the chart has no such file; a file that is not UTF-8 text, not a regular file or
    larger than :data:`MAX_CHART_FILE_BYTES` is a GpuspecError.
    """
    try:
        if chart.is_dir():
            path = chart / name
            if not path.exists():
                return None
            return read_bounded(path, MAX_CHART_FILE_BYTES).decode("utf-8")
        with tarfile.open(chart, mode="r:*") as tar:
            for member in tar.getmembers():
                parts = member.name.split("/")
                if len(parts) == 2 and parts[1] == name and member.isfile():
                    if member.size > MAX_CHART_FILE_BYTES:
                        raise GpuspecError(f"{chart}: {name} is larger than {MAX_CHART_FILE_BYTES} bytes")
                    extracted = tar.extractfile(member)
                    return extracted.read(MAX_CHART_FILE_BYTES).decode("utf-8") if extracted else None
    except UnsafeFile as refused:
        raise GpuspecError(f"{chart}/{name} {refused.message}") from None
    except UnicodeDecodeError:
        raise GpuspecError(f"{chart}: {name} is not UTF-8 text") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise GpuspecError(f"cannot read chart {chart}: {exc}") from None
    return None


def parse_chart_yaml(text: str, where: str) -> Any:
    """One YAML document of a chart file; malformed YAML is a GpuspecError naming ``where``."""
    try:
        return load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        position = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise GpuspecError(f"{where}{position}: invalid YAML: {exc.problem or exc}") from None
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise GpuspecError(f"{where}: invalid YAML: {type(exc).__name__}") from None


def chart_metadata(chart: Path) -> dict[str, Any]:
    """The parsed ``Chart.yaml`` of a chart directory or .tgz; raise GpuspecError when it is missing or invalid."""
    text = read_chart_file(chart, "Chart.yaml")
    if text is None:
        raise GpuspecError(f"{chart} is not a Helm chart: no Chart.yaml")
    data = parse_chart_yaml(text, f"{chart}/Chart.yaml")
    if not isinstance(data, dict):
        raise GpuspecError(f"{chart}/Chart.yaml is not a mapping")
    return data


def values_digest(values_files: Sequence[Path]) -> str:
    """sha256 over the contents of the values files, in order."""
    digest = hashlib.sha256()
    for path in values_files:
        digest.update(b"values\0")
        _hash_file(digest, path)
    return digest.hexdigest()


def helm_template(
    chart: Path,
    values_files: Sequence[Path],
    *,
    kube_version: str,
    release: str = "gpu-operator",
    namespace: str = "gpu-operator",
    version: str | None = None,
    include_crds: bool = True,
    helm: Path | None = None,
    cache_dir: Path | None = DEFAULT_CACHE_DIR,
    timeout: float = DEFAULT_TIMEOUT,
) -> HelmTemplateResult:
    """Render ``chart`` with ``helm template`` and return the objects it printed.

    ``chart`` is a local chart directory or packaged ``.tgz``.  ``version``, when given, must equal
    the chart's ``Chart.yaml`` version (a leading ``v`` is ignored): helm itself ignores
    ``--version`` for local charts, so gpuspec checks it.  ``kube_version`` is passed as
    ``--kube-version``.  ``helm`` defaults to :func:`gpuspec.tools.find_helm`.  Results (also
    failures, but not timeouts) are stored under ``cache_dir``; pass ``cache_dir=None`` to disable
    the cache.
    """
    started = time.monotonic()
    kube = normalize_kube_version(kube_version)
    chart = Path(chart)
    values_files = [Path(p) for p in values_files]
    for path in values_files:
        if not path.is_file():
            raise GpuspecError(f"values file not found: {path}")
    helm_path = helm if helm is not None else find_helm()
    argv = [
        str(helm_path), "template", release, str(chart),
        "--namespace", namespace, "--kube-version", kube,
    ]
    for path in values_files:
        argv += ["--values", str(path)]
    if include_crds:
        argv.append("--include-crds")

    metadata = chart_metadata(chart)
    if version is not None and _strip_v(str(metadata.get("version", ""))) != _strip_v(version):
        return HelmTemplateResult(
            ok=False, manifests=(), stdout="", stderr="",
            error=f"chart {chart} has version {metadata.get('version')!r}, expected {version!r}",
            cached=False, duration=time.monotonic() - started, cache_key="", argv=tuple(argv),
        )

    key = _cache_key(
        chart=chart_digest(chart), values=values_digest(values_files), kube=kube, release=release,
        namespace=namespace, include_crds=include_crds, helm=helm_version(helm_path),
    )
    entry = _cache_read(cache_dir, key) if cache_dir is not None else None
    cached = entry is not None
    if entry is None:
        result = run_tool(argv, timeout=timeout, env=short_run_env())
        if result.timed_out:
            return HelmTemplateResult(
                ok=False, manifests=(), stdout=result.stdout, stderr=result.stderr,
                error=result.describe_failure(), cached=False,
                duration=time.monotonic() - started, cache_key=key, argv=tuple(argv),
            )
        # Only the text is kept: parsing it again is cheap, because the large documents (the chart's CRDs,
        # the same in every cluster) are parsed once per run (gpuspec.verify.manifests).
        entry = {"returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr}
        if cache_dir is not None:
            _cache_write(cache_dir, key, entry)

    stdout, stderr, returncode = str(entry["stdout"]), str(entry["stderr"]), entry["returncode"]
    if returncode != 0:
        message = stderr.strip() or stdout.strip() or f"exit code {returncode}"
        return HelmTemplateResult(
            ok=False, manifests=(), stdout=stdout, stderr=stderr, error=f"helm template failed: {message}",
            cached=cached, duration=time.monotonic() - started, cache_key=key, argv=tuple(argv),
        )
    try:
        if isinstance(entry.get("manifests"), list):
            manifests = tuple(Manifest(obj, source) for source, obj in entry["manifests"])
        else:
            manifests = tuple(parse_manifests(stdout))
    except ManifestParseError as exc:
        return HelmTemplateResult(
            ok=False, manifests=(), stdout=stdout, stderr=stderr,
            error=f"helm template printed invalid YAML: {exc}",
            cached=cached, duration=time.monotonic() - started, cache_key=key, argv=tuple(argv),
        )
    return HelmTemplateResult(
        ok=True, manifests=manifests, stdout=stdout, stderr=stderr, error="", cached=cached,
        duration=time.monotonic() - started, cache_key=key, argv=tuple(argv),
    )


def _strip_v(version: str) -> str:
    return version[1:] if version.startswith("v") else version


def _chart_files(chart: Path) -> list[Path]:
    files: list[Path] = []
    for root, dirs, names in os.walk(chart):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        files.extend(Path(root) / name for name in names)
    return files


def _hash_file(digest: Any, path: Path) -> None:
    """Add ``path`` to ``digest``: a regular file (or a link to one) by content, anything else (a FIFO, a device, a
    link loop) by its kind, so hashing a chart never blocks, reads without end or fails."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            digest.update(f"special:{stat.S_IFMT(info.st_mode)}".encode())
            return
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        digest.update(f"unreadable:{exc.errno}".encode())


def _cache_key(**parts: object) -> str:
    payload = json.dumps({"format": _CACHE_FORMAT, **parts}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _cache_read(cache_dir: Path, key: str) -> dict[str, Any] | None:
    path = cache_dir / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or "stdout" not in data:
        return None
    return data


def _cache_write(cache_dir: Path, key: str, entry: dict[str, Any]) -> None:
    # never through a link planted in the cache folder (write_file); a cache that cannot be written only costs speed
    with contextlib.suppress(OSError, UnsafeFile):
        write_file(cache_dir / f"{key}.json", json.dumps({"key": key, **entry}).encode("utf-8"), parents=True)
