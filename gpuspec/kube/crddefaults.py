"""The ``default`` values of the GPU Operator's CRDs, which the API server fills into every ClusterPolicy and
NVIDIADriver it stores (pure).

An exported object (`kubectl get -o json`) carries them; an object the chart renders does not.  Comparing the two
(:mod:`gpuspec.audit.roundtrip`) takes both as the API server stores them: :func:`defaulted`.  The data
(``data/crd-defaults.yaml``) lists, per kind and release, the schema paths that have a default;
tests/kube/test_upstream_crds.py checks it against the CRDs of every release in ../shared/upstream
(``scripts/refresh-crd-defaults`` writes it from them).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

#: A path segment that stands for every item of a list or every value of a map.
ANY = "*"


@dataclass(frozen=True, slots=True)
class FieldDefault:
    """A schema path of a kind (from the object root, ``*`` for items) whose absent field the API server defaults."""

    kind: str
    path: tuple[str, ...]
    default: Any
    releases: tuple[str, ...]


def defaults_of_crd(crd: Mapping[str, Any]) -> Iterator[tuple[str, tuple[str, ...], Any]]:
    """``(kind, path, default)`` of every defaulted field in the served versions' schemas of a CRD object."""
    spec = crd.get("spec") if isinstance(crd.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    names = spec.get("names") if isinstance(spec.get("names"), Mapping) else {}
    kind = str(names.get("kind", "")) if isinstance(names, Mapping) else ""
    seen: set[tuple[str, ...]] = set()

    def walk(node: Any, path: tuple[str, ...]) -> Iterator[tuple[str, tuple[str, ...], Any]]:
        if not isinstance(node, Mapping):
            return
        if path and "default" in node and path not in seen:
            seen.add(path)
            yield kind, path, node["default"]
        for name, sub in (node.get("properties") or {}).items():
            yield from walk(sub, (*path, str(name)))
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), Mapping):
                yield from walk(node[key], (*path, ANY))

    for version in spec.get("versions") or []:
        if isinstance(version, Mapping) and version.get("served", True):
            schema = version.get("schema")
            if isinstance(schema, Mapping):
                yield from walk(schema.get("openAPIV3Schema"), ())


@functools.cache
def shipped_defaults() -> tuple[FieldDefault, ...]:
    """The CRD defaults gpuspec ships (``data/crd-defaults.yaml``)."""
    text = resources.files("gpuspec.kube").joinpath("data/crd-defaults.yaml").read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    return tuple(FieldDefault(d["kind"], tuple(d["path"]), d["default"], tuple(d["releases"]))
                 for d in doc["defaults"])


def _key(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in tag.lstrip("v").split(".") if p.isdigit())


def release_of(release: str | None) -> str | None:
    """The release whose CRDs gpuspec uses for ``release``: itself, else the known one of its release line (an
    assumption: gpuspec has the CRDs of one patch release per line and takes a line's patches to share them), else
    the newest known one before it, else the newest known one (None when gpuspec ships none)."""
    known = sorted({r for d in shipped_defaults() for r in d.releases}, key=_key)
    if not known:
        return None
    if release in known:
        return release
    line = [r for r in known if release and _key(r)[:2] == _key(release)[:2]]
    if line:
        return line[-1]
    earlier = [r for r in known if release and _key(r) <= _key(release)]
    return earlier[-1] if earlier else known[-1]


def defaulted(obj: Mapping[str, Any], kind: str, release: str | None) -> dict[str, Any]:
    """A copy of ``obj`` (the whole object, ``spec`` below it) with the defaults of ``kind``'s CRD at ``release``
    filled in where a field is absent and its parent is there, parents first, as the API server does."""
    out = copy.deepcopy(dict(obj))
    chosen = release_of(release)
    entries = sorted((d for d in shipped_defaults() if d.kind == kind and chosen in d.releases),
                     key=lambda d: len(d.path))
    for entry in entries:
        _fill(out, entry.path, entry.default)
    return out


def _fill(node: Any, path: tuple[str, ...], default: Any) -> None:
    head, rest = path[0], path[1:]
    if head == ANY:
        children = node if isinstance(node, list) else list(node.values()) if isinstance(node, dict) else []
        for child in children:
            if rest:
                _fill(child, rest, default)
        return
    if not isinstance(node, dict):
        return
    if not rest:
        node.setdefault(head, copy.deepcopy(default))
    elif head in node:
        _fill(node[head], rest, default)
