"""Split the multi-document YAML that helm and kustomize print into Kubernetes objects."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

_SEPARATOR = re.compile(r"^---[ \t]*(?:#.*)?$", re.MULTILINE)
_SOURCE = re.compile(r"^# Source: (.+?)\s*$", re.MULTILINE)

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _KubeLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Safe loader that keeps timestamps as strings, as the Kubernetes API does for string fields."""


_KubeLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class ManifestParseError(ValueError):
    """A document in tool output is not valid YAML or is not a mapping."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """One Kubernetes object from tool output, with the template that produced it (helm only)."""

    obj: dict[str, Any]
    source: str | None = None

    @property
    def api_version(self) -> str:
        """The object's ``apiVersion`` ('' when absent)."""
        value = self.obj.get("apiVersion")
        return value if isinstance(value, str) else ""

    @property
    def kind(self) -> str:
        """The object's ``kind`` ('' when absent)."""
        value = self.obj.get("kind")
        return value if isinstance(value, str) else ""

    @property
    def name(self) -> str:
        """The object's ``metadata.name`` ('' when absent)."""
        metadata = self.obj.get("metadata")
        value = metadata.get("name") if isinstance(metadata, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def namespace(self) -> str | None:
        """The object's ``metadata.namespace``, if set."""
        metadata = self.obj.get("metadata")
        value = metadata.get("namespace") if isinstance(metadata, dict) else None
        return value if isinstance(value, str) else None

    def ref(self) -> str:
        """A short display reference, ``Kind/name``."""
        return f"{self.kind or '?'}/{self.name or '?'}"


def load_yaml(text: str) -> Any:
    """Parse one YAML document the way Kubernetes tooling reads it (timestamps stay strings)."""
    return yaml.load(text, Loader=_KubeLoader)


def load_yaml_all(text: str) -> list[Any]:
    """Parse every document of a YAML stream the way :func:`load_yaml` does; empty documents are None."""
    return list(yaml.load_all(text, Loader=_KubeLoader))


#: Documents at least this long (the chart's CRDs, ~88% of helm's output) are parsed once per process.
SHARED_CHUNK_BYTES = 8192
#: At most this many characters of large documents are remembered (one chart's CRDs are ~0.3 MB).
_SHARED_LIMIT = 64 << 20
_shared: dict[str, Any] = {}
_shared_size = 0


def _load_chunk(chunk: str) -> Any:
    """Parse one document; a large one is parsed once per process and its object shared (never mutate it)."""
    global _shared_size
    if len(chunk) < SHARED_CHUNK_BYTES:
        return load_yaml(chunk)
    found = _shared.get(chunk, _shared)
    if found is not _shared:
        return found
    data = load_yaml(chunk)
    if _shared_size + len(chunk) <= _SHARED_LIMIT:
        _shared[chunk] = data
        _shared_size += len(chunk)
    return data


def parse_manifests(text: str) -> list[Manifest]:
    """Split multi-document YAML into objects, keeping helm's ``# Source:`` comment per document.

    Empty documents are skipped.  Raises :class:`ManifestParseError` for a document that is not
    valid YAML or not a mapping.  Large documents that repeat across calls (the chart's CRDs in every
    cluster's helm output) are parsed once and their objects shared: callers only read them.
    """
    manifests: list[Manifest] = []
    source: str | None = None  # helm may print "# Source:" in a comment-only document before the object
    for index, chunk in enumerate(_SEPARATOR.split(text)):
        if not chunk.strip():
            continue
        source_match = _SOURCE.search(chunk)
        if source_match:
            source = source_match.group(1)
        try:
            data = _load_chunk(chunk)
        except yaml.YAMLError as exc:
            where = source or f"document {index}"
            raise ManifestParseError(f"{where}: invalid YAML: {exc}") from exc
        if data is None:
            continue
        if not isinstance(data, dict):
            where = source or f"document {index}"
            raise ManifestParseError(f"{where}: expected a mapping, got {type(data).__name__}")
        if data.get("kind") == "List" and isinstance(data.get("items"), list):
            manifests.extend(Manifest(item, source) for item in data["items"] if isinstance(item, dict))
            continue
        manifests.append(Manifest(data, source))
    return manifests
