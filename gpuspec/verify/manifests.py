"""Split the multi-document YAML that helm and kustomize print into Kubernetes objects."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from gpuspec.verify.yamlbuild import build, load_all

_SEPARATOR = re.compile(r"^---[ \t]*(?:#.*)?$", re.MULTILINE)
_SOURCE = re.compile(r"^# Source: (.+?)\s*$", re.MULTILINE)

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: Tags of plain scalars already resolved (the same keys and values recur in every object), bounded.
_RESOLVED: dict[str, str] = {}
_RESOLVED_LIMIT = 1 << 16


class _KubeLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Safe loader that keeps timestamps as strings, as the Kubernetes API does for string fields."""

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        """PyYAML's tag resolution, remembered per plain scalar (it depends on nothing else: no path resolvers)."""
        if kind is not yaml.ScalarNode:
            return str(super().resolve(kind, value, implicit))
        if not implicit[0]:
            return str(self.DEFAULT_SCALAR_TAG)  # quoted or block scalar without a tag
        tag = _RESOLVED.get(value)
        if tag is None:
            tag = str(super().resolve(kind, value, implicit))
            if len(_RESOLVED) < _RESOLVED_LIMIT:
                _RESOLVED[value] = tag
        return tag


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
    loader = _KubeLoader(text)
    try:
        node = loader.get_single_node()
        return build(loader, node) if node is not None else None
    finally:
        loader.dispose()


def load_yaml_all(text: str) -> list[Any]:
    """Parse every document of a YAML stream the way :func:`load_yaml` does; empty documents are None."""
    return load_all(text, _KubeLoader)


#: Documents at least this long (the chart's CRDs, ~88% of helm's output) are parsed once per process.
SHARED_CHUNK_BYTES = 8192
#: At most this many characters of documents are remembered (one chart's CRDs are ~0.3 MB).
_SHARED_LIMIT = 64 << 20
#: Hashes of smaller documents seen once: a smaller document is remembered when it comes again (the
#: chart's RBAC and services, overlay objects that are the same in many clusters).
_SEEN_LIMIT = 1 << 18
_shared: dict[str, Any] = {}
_seen: set[int] = set()
_shared_size = 0


def _load_chunk(chunk: str) -> Any:
    """Parse one document; a large one, or a smaller one seen before, is parsed once per process and its
    object shared (never mutate it)."""
    global _shared_size
    found = _shared.get(chunk, _shared)
    if found is not _shared:
        return found
    data = load_yaml(chunk)
    if len(chunk) < SHARED_CHUNK_BYTES:
        key = hash(chunk)
        if key not in _seen:
            if len(_seen) < _SEEN_LIMIT:
                _seen.add(key)
            return data
    if _shared_size + len(chunk) <= _SHARED_LIMIT:
        _shared[chunk] = data
        _shared_size += len(chunk)
    return data


def split_documents(text: str) -> list[str]:
    """``text`` split at its ``---`` lines: the same list as ``_SEPARATOR.split(text)``, found faster (the regex is
    tried only where a line starts with ``---``)."""
    parts: list[str] = []
    start = 0
    at = 0 if text.startswith("---") else text.find("\n---")
    while at >= 0:
        line = at if at == 0 and text.startswith("---") else at + 1
        match = _SEPARATOR.match(text, line)
        if match is not None:
            parts.append(text[start:match.start()])
            start = match.end()
        at = text.find("\n---", line)
    parts.append(text[start:])
    return parts


def _source_of(chunk: str) -> str | None:
    """The first ``# Source:`` line's template, as ``_SOURCE.search`` finds it (tried only where the text occurs)."""
    at = chunk.find("# Source: ")
    while at >= 0:
        if at == 0 or chunk[at - 1] == "\n":
            match = _SOURCE.match(chunk, at)
            if match is not None:
                return match.group(1)
        at = chunk.find("# Source: ", at + 1)
    return None


def parse_manifests(text: str) -> list[Manifest]:
    """Split multi-document YAML into objects, keeping helm's ``# Source:`` comment per document.

    Empty documents are skipped.  Raises :class:`ManifestParseError` for a document that is not
    valid YAML or not a mapping.  Large documents that repeat across calls (the chart's CRDs in every
    cluster's helm output) are parsed once and their objects shared: callers only read them.
    """
    manifests: list[Manifest] = []
    source: str | None = None  # helm may print "# Source:" in a comment-only document before the object
    for index, chunk in enumerate(split_documents(text)):
        if not chunk.strip():
            continue
        found = _source_of(chunk)
        if found is not None:
            source = found
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
