"""Memoise the slow, deterministic parts of verify besides helm: schema validation and kustomize builds.

Schema results are keyed by the object's content, the Kubernetes version, a fingerprint of the loaded
CRDs and gpuspec's version; they are shared between clusters in one run (the chart's CRDs are the same
everywhere) and kept in one JSON file between runs.  Kustomize builds are keyed by a digest of every
file under the rendered folder, the build's folder and argv, and kubectl's version; a kustomization
that may read outside the rendered folder (``../`` beyond it, remote URLs) is never cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from gpuspec import __version__
from gpuspec.loader.safefile import UnsafeFile, read_bounded, write_file
from gpuspec.verify.kustomize import KustomizeResult
from gpuspec.verify.manifests import Manifest, load_yaml
from gpuspec.verify.schemas import SchemaError

_FORMAT = 2
#: Objects whose canonical JSON is at least this long have their digest remembered by identity.
_REMEMBER_BYTES = 8192
_SCHEMA_FILE = "schema-results.json"
_KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


#: What schema results depend on besides the object: gpuspec and the schema/validator packages.
_VALIDATOR_VERSION = "/".join(
    [__version__, _package_version("kubernetes-validate"), _package_version("jsonschema")])


def fingerprint(documents: Iterable[Any]) -> str:
    """sha256 over the canonical JSON of ``documents`` (e.g. the CRDs a CrdSet was built from)."""
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(_canonical(doc))
        digest.update(b"\0")
    return digest.hexdigest()


#: Files larger than this enter the tree digest by size and modification time, not content (verify refuses
#: to read them anyway), so a planted sparse file cannot make the digest read gigabytes.
_DIGEST_WHOLE_BYTES = 64 * 1024 * 1024


def tree_digest(root: Path) -> str:
    """sha256 over the relative path and content of every regular file below ``root`` (sorted); links enter by
    their target's name, oversized files by size and modification time."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_symlink() or p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        try:
            if path.is_symlink():
                digest.update(b"link:" + os.fsencode(os.readlink(path)))
                continue
            info = path.stat()
            if info.st_size > _DIGEST_WHOLE_BYTES:
                digest.update(f"oversized:{info.st_size}:{info.st_mtime_ns}".encode())
                continue
            with path.open("rb") as handle:
                digest.update(handle.read(_DIGEST_WHOLE_BYTES + 1))
        except OSError as exc:
            digest.update(f"unreadable:{exc.errno}".encode())
        finally:
            digest.update(b"\0")
    return digest.hexdigest()


def stays_inside(build_dir: Path, boundary: Path) -> bool:
    """True when no kustomization under ``build_dir`` names a remote source or a path outside ``boundary``."""
    boundary = boundary.resolve()
    for name in _KUSTOMIZATION_NAMES:
        for path in build_dir.rglob(name):
            try:  # a kustomization that is a FIFO, a device or oversized is not read: the build refuses it
                data = load_yaml(read_bounded(path, _DIGEST_WHOLE_BYTES).decode("utf-8"))
            except (OSError, UnsafeFile, UnicodeDecodeError, yaml.YAMLError, RuntimeError):
                return False
            for value in _strings(data):
                if "://" in value or value.startswith(("github.com/", "git@")):
                    return False
                candidate = value.split("=", 1)[-1]
                try:
                    outside = "/" in candidate and not (path.parent / candidate).resolve().is_relative_to(boundary)
                except (OSError, RuntimeError):  # a link loop (RuntimeError before Python 3.13)
                    return False
                if outside:
                    return False
    return True


class VerifyCache:
    """Schema results and kustomize builds of verify, in memory and (with ``directory``) on disk."""

    def __init__(self, directory: Path | None) -> None:
        """Open the cache in ``directory`` (None: in-memory only, nothing read or written)."""
        self.directory = directory
        self._lock = threading.Lock()
        self._schema: dict[str, list[dict[str, Any]]] = {}
        self._digests: dict[int, tuple[Mapping[str, Any], bytes]] = {}
        self._dirty = False
        self.hits = 0
        self.misses = 0
        if directory is not None:
            try:
                data = json.loads((directory / _SCHEMA_FILE).read_text(encoding="utf-8"))
                if isinstance(data, dict) and data.get("format") == _FORMAT and isinstance(data.get("results"), dict):
                    self._schema = data["results"]
            except (OSError, ValueError):
                pass

    def _digest(self, obj: Mapping[str, Any]) -> bytes:
        """sha256 of the object's canonical JSON; remembered for large objects, which are shared between
        clusters (the chart's CRDs), so each is serialised once per run."""
        remembered = self._digests.get(id(obj))
        if remembered is not None and remembered[0] is obj:
            return remembered[1]
        canonical = _canonical(obj)
        digest = hashlib.sha256(canonical).digest()
        if len(canonical) >= _REMEMBER_BYTES:
            with self._lock:
                self._digests[id(obj)] = (obj, digest)
        return digest

    def schema_errors(self, obj: Mapping[str, Any], kube_version: str, crds_fingerprint: str,
                      compute: Callable[[], list[SchemaError]]) -> list[SchemaError]:
        """The schema errors of ``obj``: remembered when the same object was validated the same way before."""
        key = hashlib.sha256(b"%s\0%s\0%s\0" % (kube_version.encode(), crds_fingerprint.encode(),
                                                 _VALIDATOR_VERSION.encode()) + self._digest(obj)).hexdigest()
        with self._lock:
            stored = self._schema.get(key)
        if stored is not None:
            self.hits += 1
            return [_error_from(entry) for entry in stored]
        self.misses += 1
        errors = compute()
        with self._lock:
            self._schema[key] = [_error_to(e) for e in errors]
            self._dirty = True
        return errors

    def _kustomize_path(self, parts: Sequence[str]) -> Path | None:
        if self.directory is None:
            return None
        key = hashlib.sha256("\0".join([str(_FORMAT), *parts]).encode()).hexdigest()
        return self.directory / "kustomize" / f"{key}.json"

    def kustomize_lookup(self, parts: Sequence[str]) -> KustomizeResult | None:
        """The stored build keyed by ``parts``, or None (counted as a miss)."""
        path = self._kustomize_path(parts)
        if path is None:
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            manifests = tuple(Manifest(obj, source) for source, obj in entry["manifests"])
            self.hits += 1
            return KustomizeResult(ok=True, manifests=manifests, stdout="", stderr="", error="", duration=0.0,
                                   argv=tuple(entry["argv"]))
        except (OSError, ValueError, KeyError, TypeError):
            self.misses += 1
            return None

    def kustomize_store(self, parts: Sequence[str], result: KustomizeResult) -> None:
        """Remember a successful build under ``parts`` (no-op without a directory or for a failed build)."""
        path = self._kustomize_path(parts)
        if path is None or not result.ok:
            return
        pairs = [[m.source, m.obj] for m in result.manifests]
        try:
            text = json.dumps({"argv": list(result.argv), "manifests": pairs})
            if json.loads(text)["manifests"] == pairs:  # only what JSON gives back unchanged is kept
                _write_atomic(path, text)
        except (TypeError, ValueError):
            pass

    def save(self) -> None:
        """Write new schema results to disk (no-op without a directory or when nothing changed)."""
        if self.directory is None or not self._dirty:
            return
        with self._lock:
            payload = json.dumps({"format": _FORMAT, "results": self._schema})
        _write_atomic(self.directory / _SCHEMA_FILE, payload)


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()


def _strings(node: Any) -> Iterable[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _error_to(error: SchemaError) -> dict[str, Any]:
    return {"code": error.code, "api_version": error.api_version, "kind": error.kind, "name": error.name,
            "path": error.path, "message": error.message, "schema": error.schema, "doc_path": list(error.doc_path)}


def _error_from(entry: Mapping[str, Any]) -> SchemaError:
    return SchemaError(code=entry["code"], api_version=entry["api_version"], kind=entry["kind"], name=entry["name"],
                       path=entry["path"], message=entry["message"], schema=entry["schema"],
                       doc_path=tuple(entry["doc_path"]))


def _write_atomic(path: Path, text: str) -> None:
    # never through a link planted in the cache folder (write_file); a cache that cannot be written only costs speed
    with contextlib.suppress(OSError, UnsafeFile):
        write_file(path, text.encode("utf-8"), parents=True)
