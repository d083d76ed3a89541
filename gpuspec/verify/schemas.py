"""Validate Kubernetes objects: custom resources against CRD schemas, built-in kinds against Kubernetes' schema.

Custom resources are checked against ``spec.versions[<served version>].schema.openAPIV3Schema`` of
their CRD, converted from OpenAPI v3 structural schema to JSON Schema (draft 4, whose boolean
``exclusiveMinimum``/``exclusiveMaximum`` match OpenAPI 3.0):

- ``nullable: true`` adds ``null`` to the allowed types (and to ``enum``);
- ``x-kubernetes-int-or-string: true`` allows integers and strings;
- ``x-kubernetes-preserve-unknown-fields: true`` keeps unknown fields; every other object node of
  the structural schema denies unknown fields (the API server would prune them silently);
- ``x-kubernetes-embedded-resource: true`` allows ``apiVersion``, ``kind`` and ``metadata``;
- other ``x-kubernetes-*`` keys (list/map types) are not evaluated; CEL ``x-kubernetes-validations`` rules are
  evaluated separately, by :mod:`gpuspec.kube.crdrules` (the sound subset of :mod:`gpuspec.kube.cel`);
- ``default`` values are applied before validation, as the API server does.

Built-in kinds are checked against the strict Kubernetes JSON schemas that the
``kubernetes-validate`` package ships per Kubernetes minor version; the nearest shipped version is
used and :func:`kube_schema_version` says which.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from gpuspec.errors import GpuspecError
from gpuspec.verify.schema_inline import inline_refs
from gpuspec.verify.yamlbuild import load_all

#: SchemaError.code values.
INVALID = "invalid"
NO_SCHEMA = "no-schema"
NOT_SERVED = "not-served"

_MAX_MESSAGE = 300
_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_KUBE_MINOR = re.compile(r"^v?(\d+)\.(\d+)")
_CRD_SUFFIXES = (".yaml", ".yml", ".json")
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: ObjectMeta fields checked for custom resources (the API server validates metadata itself).
_OBJECT_META: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "generateName": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"}},
    },
}


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One schema problem of one object.

    ``code`` is :data:`INVALID` (the object breaks its schema), :data:`NO_SCHEMA` (no CRD or
    built-in schema knows the kind/version) or :data:`NOT_SERVED` (the CRD version is not served).
    ``path`` is a JSON path such as ``$.spec.driver.version``; ``doc_path`` is the same as a tuple.
    ``schema`` names what the object was checked against.
    """

    code: str
    api_version: str
    kind: str
    name: str
    path: str
    message: str
    schema: str
    doc_path: tuple[str | int, ...] = ()

    def ref(self) -> str:
        """``Kind/name`` of the object."""
        return f"{self.kind or '?'}/{self.name or '?'}"

    def __str__(self) -> str:
        return f"{self.ref()} {self.path}: {self.message} [{self.schema}]"


@dataclass(frozen=True, slots=True)
class KubeSchemaVersion:
    """The Kubernetes schema version used for a requested cluster version."""

    requested: str
    used: str

    @property
    def exact(self) -> bool:
        """True when kubernetes-validate ships schemas for exactly the requested minor version."""
        return self.requested == self.used

    def describe(self) -> str:
        """Human text, e.g. ``Kubernetes 1.31`` or ``Kubernetes 1.37 (nearest shipped to 1.38)``."""
        if self.exact:
            return f"Kubernetes {self.used}"
        return f"Kubernetes {self.used} (nearest shipped to {self.requested})"


# --------------------------------------------------------------------------------------------
# OpenAPI v3 structural schema -> JSON Schema


def openapi_to_jsonschema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Convert a CRD's ``openAPIV3Schema`` (the root) to an equivalent draft-4 JSON Schema.

    See the module docstring for how ``nullable`` and ``x-kubernetes-*`` keys are treated.  The root
    always allows ``apiVersion``, ``kind`` and ``metadata``.
    """
    converted = _convert(schema, in_junctor=False)
    _allow_resource_fields(converted)
    return converted


def _convert(node: Mapping[str, Any], *, in_junctor: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties") and isinstance(value, Mapping):
            out[key] = {name: _convert(sub, in_junctor=False) for name, sub in value.items()}
        elif key == "items":
            if isinstance(value, Mapping):
                out[key] = _convert(value, in_junctor=False)
            elif isinstance(value, list):
                out[key] = [_convert(sub, in_junctor=False) for sub in value]
        elif key == "additionalProperties":
            out[key] = value if isinstance(value, bool) else _convert(value, in_junctor=False)
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            out[key] = [_convert(sub, in_junctor=True) for sub in value]
        elif key == "not" and isinstance(value, Mapping):
            out[key] = _convert(value, in_junctor=True)
        elif key.startswith("x-") or key in ("nullable", "example", "externalDocs", "discriminator", "xml"):
            continue
        else:
            out[key] = value

    if node.get("x-kubernetes-int-or-string") is True:
        out["type"] = ["integer", "string"]
        branches = out.get("anyOf")
        if isinstance(branches, list) and all(set(b) == {"type"} for b in branches):
            del out["anyOf"]  # the usual anyOf [integer, string] only repeats the type
    if node.get("x-kubernetes-embedded-resource") is True:
        _allow_resource_fields(out)
    is_object = out.get("type") == "object" or "properties" in out
    if (
        is_object
        and not in_junctor
        and node.get("x-kubernetes-preserve-unknown-fields") is not True
        and "additionalProperties" not in out
    ):
        out["additionalProperties"] = False
    if node.get("nullable") is True:
        out = _make_nullable(out)
    return out


def _make_nullable(out: dict[str, Any]) -> dict[str, Any]:
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
        return out
    if isinstance(kind, list):
        if "null" not in kind:
            out["type"] = [*kind, "null"]
        return out
    return {"anyOf": [{"type": "null"}, out]}


def _allow_resource_fields(out: dict[str, Any]) -> None:
    properties = out.setdefault("properties", {})
    properties.setdefault("apiVersion", {"type": "string"})
    properties.setdefault("kind", {"type": "string"})
    properties["metadata"] = dict(_OBJECT_META)


# --------------------------------------------------------------------------------------------
# CRDs


@dataclass(frozen=True, slots=True)
class _CrdVersion:
    crd_name: str
    group: str
    kind: str
    version: str
    served: bool
    schema: Mapping[str, Any] | None


class CrdSet:
    """A set of CustomResourceDefinitions, indexed by group and kind, that validates custom resources."""

    def __init__(self, crds: Iterable[Mapping[str, Any]] = ()) -> None:
        """Index the given CRD objects; a later CRD for the same group and kind replaces an earlier one."""
        self._versions: dict[tuple[str, str], dict[str, _CrdVersion]] = {}
        self._namespaced: dict[tuple[str, str], bool] = {}
        self._validators: dict[tuple[str, str, str], jsonschema.protocols.Validator] = {}
        for crd in crds:
            self.add(crd)

    @classmethod
    def from_paths(cls, paths: Iterable[str | os.PathLike[str]]) -> CrdSet:
        """Load every CRD found in the given YAML/JSON files and directories (searched recursively)."""
        return cls(load_crd_documents(paths))

    def add(self, crd: Mapping[str, Any]) -> None:
        """Add one CRD object (apiextensions.k8s.io v1, or v1beta1 with ``spec.validation``)."""
        spec = crd.get("spec")
        if not isinstance(spec, Mapping):
            raise GpuspecError(f"CRD {_crd_name(crd)!r} has no spec")
        group = str(spec.get("group", ""))
        names = spec.get("names") if isinstance(spec.get("names"), Mapping) else {}
        kind = str(names.get("kind", "")) if isinstance(names, Mapping) else ""
        if not group or not kind:
            raise GpuspecError(f"CRD {_crd_name(crd)!r} lacks spec.group or spec.names.kind")
        shared = spec.get("validation", {}).get("openAPIV3Schema") if isinstance(
            spec.get("validation"), Mapping) else None
        versions: dict[str, _CrdVersion] = {}
        raw_versions = spec.get("versions") or ([{"name": spec["version"], "served": True}]
                                                  if spec.get("version") else [])
        for entry in raw_versions:
            if not isinstance(entry, Mapping) or "name" not in entry:
                continue
            schema_block = entry.get("schema")
            schema = schema_block.get("openAPIV3Schema") if isinstance(schema_block, Mapping) else None
            versions[str(entry["name"])] = _CrdVersion(
                crd_name=_crd_name(crd), group=group, kind=kind, version=str(entry["name"]),
                served=bool(entry.get("served", True)), schema=schema if schema is not None else shared,
            )
        self._versions[(group, kind)] = versions
        self._namespaced[(group, kind)] = spec.get("scope", "Namespaced") != "Cluster"
        self._validators = {k: v for k, v in self._validators.items() if k[:2] != (group, kind)}

    def __len__(self) -> int:
        return len(self._versions)

    def kinds(self) -> list[tuple[str, str]]:
        """The (group, kind) pairs this set knows, sorted."""
        return sorted(self._versions)

    def scopes(self) -> dict[tuple[str, str], bool]:
        """(group, kind) → whether the CRD's ``spec.scope`` is ``Namespaced``."""
        return dict(self._namespaced)

    def knows(self, api_version: str, kind: str) -> bool:
        """True when a CRD for the group of ``api_version`` and ``kind`` is loaded (any version)."""
        group, _ = split_api_version(api_version)
        return (group, kind) in self._versions

    def schema_for(self, api_version: str, kind: str) -> Mapping[str, Any] | None:
        """The ``openAPIV3Schema`` of the served CRD version of ``api_version``/``kind``, or None."""
        group, version = split_api_version(api_version)
        entry = self._versions.get((group, kind), {}).get(version)
        return entry.schema if entry is not None and entry.served else None

    def defaulted(self, obj: Mapping[str, Any]) -> Any:
        """``obj`` as the API server would store it: its CRD version's ``default`` values filled in (or as is)."""
        api_version, kind, _ = _identity(obj)
        group, version = split_api_version(api_version)
        entry = self._versions.get((group, kind), {}).get(version)
        if entry is None or entry.schema is None:
            return obj
        return apply_defaults(obj, entry.schema)

    def validate(self, obj: Mapping[str, Any]) -> list[SchemaError]:
        """Validate a custom resource against its CRD; an empty list means valid.

        Returns a single :data:`NO_SCHEMA` error when no CRD or no such version is loaded, and a
        :data:`NOT_SERVED` error when the CRD version exists but is not served.
        """
        api_version, kind, name = _identity(obj)
        group, version = split_api_version(api_version)
        versions = self._versions.get((group, kind))
        if versions is None:
            return [_whole(NO_SCHEMA, obj, f"no CRD loaded for kind {kind} in group {group or '(core)'}", "CRDs")]
        entry = versions.get(version)
        if entry is None:
            known = ", ".join(sorted(versions)) or "none"
            return [_whole(NO_SCHEMA, obj, f"CRD {next(iter(versions.values())).crd_name} has no version "
                                           f"{version!r} (versions: {known})", "CRDs")]
        label = f"CRD {entry.crd_name} {entry.version}"
        if not entry.served:
            return [_whole(NOT_SERVED, obj, f"version {version} of CRD {entry.crd_name} is not served", label)]
        if entry.schema is None:
            return []  # a CRD without a schema accepts anything
        key = (group, kind, version)
        validator = self._validators.get(key)
        if validator is None:
            validator = jsonschema.Draft4Validator(openapi_to_jsonschema(entry.schema))
            self._validators[key] = validator
        return _collect(validator, apply_defaults(obj, entry.schema), label, api_version, kind, name)


def apply_defaults(obj: Any, schema: Mapping[str, Any]) -> Any:
    """A copy of ``obj`` with the schema's ``default`` values filled in for absent fields.

    The API server defaults a custom resource before validating it, so a ``required`` field that
    has a default may be left out.  A ``null`` field whose schema is not ``nullable: true`` is dropped first
    (then defaulted, when it has a default), as the API server does since Kubernetes 1.20 (docs: "Defaulting and
    Nullable"; apiextensions-apiserver ``schema/defaulting/prunenulls.go``): a template line such as
    ``name: {{ .Values.migManager.config.name }}`` with an empty value stores no field, it is not refused.
    ``obj`` itself is not changed.
    """
    if isinstance(obj, Mapping):
        out = dict(obj)
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        known = properties if isinstance(properties, Mapping) else {}
        for name in [n for n, v in out.items() if v is None]:
            sub = known.get(name, extra if name not in known else None)
            if isinstance(sub, Mapping) and sub.get("nullable") is not True:
                del out[name]
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                if name not in out and isinstance(sub, Mapping) and "default" in sub:
                    out[name] = copy.deepcopy(sub["default"])
                if name in out and isinstance(sub, Mapping):
                    out[name] = apply_defaults(out[name], sub)
        if isinstance(extra, Mapping):
            for name in out:
                if name not in known:
                    out[name] = apply_defaults(out[name], extra)
        return out
    if isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            return [apply_defaults(item, items) for item in obj]
        return list(obj)
    return obj


def load_crd_documents(paths: Iterable[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """Read every ``CustomResourceDefinition`` document from files and directories (recursive, sorted).

    Other documents are skipped; a file that does not parse raises GpuspecError.
    """
    crds: list[dict[str, Any]] = []
    for path in _crd_files(paths):
        try:
            docs = load_all(path.read_text(encoding="utf-8"), _BaseLoader)
        except (OSError, yaml.YAMLError) as exc:
            raise GpuspecError(f"cannot read CRD file {path}: {exc}") from exc
        for doc in docs:
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                crds.append(doc)
    return crds


def _crd_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _CRD_SUFFIXES)
        elif path.is_file():
            yield path
        else:
            raise GpuspecError(f"CRD path not found: {path}")


def _crd_name(crd: Mapping[str, Any]) -> str:
    metadata = crd.get("metadata")
    return str(metadata.get("name", "?")) if isinstance(metadata, Mapping) else "?"


# --------------------------------------------------------------------------------------------
# Built-in kinds (kubernetes-validate schemas)


def shipped_kube_versions() -> list[str]:
    """The Kubernetes minor versions (``1.25`` …) whose schemas kubernetes-validate ships, ascending."""
    return list(_shipped_versions())


@lru_cache(maxsize=1)
def _shipped_versions() -> tuple[str, ...]:
    found: set[tuple[int, int]] = set()
    for entry in _schema_root().iterdir():
        match = re.match(r"^v(\d+)\.(\d+)\.\d+-local-strict$", entry.name)
        if match:
            found.add((int(match.group(1)), int(match.group(2))))
    return tuple(f"{major}.{minor}" for major, minor in sorted(found))


def kube_schema_version(kube_version: str) -> KubeSchemaVersion:
    """Pick the shipped schema version for a cluster's Kubernetes version.

    The newest shipped version not newer than the requested one; for a version older than every
    shipped one, the oldest shipped version.  Raises GpuspecError for a malformed version.
    """
    match = _KUBE_MINOR.match(kube_version.strip())
    if not match:
        raise GpuspecError(f"invalid Kubernetes version {kube_version!r}: expected MAJOR.MINOR such as 1.31")
    wanted = (int(match.group(1)), int(match.group(2)))
    shipped = [tuple(int(p) for p in v.split(".")) for v in _shipped_versions()]
    if not shipped:
        raise GpuspecError("kubernetes-validate ships no schemas; reinstall it")
    older = [v for v in shipped if v <= wanted]
    used = older[-1] if older else shipped[0]
    return KubeSchemaVersion(requested=f"{wanted[0]}.{wanted[1]}", used=f"{used[0]}.{used[1]}")


def has_builtin_schema(api_version: str, kind: str, kube_version: str) -> bool:
    """True when ``kind`` of ``api_version`` is a built-in kind with a shipped schema for that version."""
    return _builtin_validator(kube_schema_version(kube_version).used, api_version, kind) is not None


def validate_builtin(obj: Mapping[str, Any], kube_version: str) -> list[SchemaError]:
    """Validate a built-in kind (ConfigMap, Deployment, …) against the strict Kubernetes schema.

    Unknown fields are errors.  Returns a single :data:`NO_SCHEMA` error when the kind/apiVersion
    has no built-in schema in the chosen version.
    """
    chosen = kube_schema_version(kube_version)
    api_version, kind, name = _identity(obj)
    label = f"{chosen.describe()} schema"
    validator = _builtin_validator(chosen.used, api_version, kind)
    if validator is None:
        return [_whole(NO_SCHEMA, obj, f"{api_version} {kind} is not a built-in kind of {chosen.describe()}",
                       label)]
    return _collect(validator, obj, label, api_version, kind, name)


def _schema_root() -> Any:
    return resources.files("kubernetes_validate").joinpath("kubernetes-json-schema")


@lru_cache(maxsize=4)
def _definitions_document(version: str) -> dict[str, Any]:
    directory = _schema_root().joinpath(f"v{version}.0-local-strict")
    document: dict[str, Any] = json.loads(directory.joinpath("_definitions.json").read_text(encoding="utf-8"))
    return document


@lru_cache(maxsize=4)
def _definitions(version: str) -> Registry[Any]:
    return Resource.from_contents(_definitions_document(version)) @ Registry()


#: What a built-in kind and its group-version prefix look like (``Deployment``, ``apps-v1``): anything else
#: has no schema file and is never made into a file name.
_SCHEMA_NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,62}\Z")


@lru_cache(maxsize=256)
def _builtin_validator(version: str, api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    schema = _kind_schema(version, api_version, kind)
    if schema is None:
        return None
    inlined = inline_refs(schema, _definitions_document(version))
    if inlined is not None:
        return jsonschema.Draft202012Validator(inlined)
    return _validator_with_refs(version, schema)


def _kind_schema(version: str, api_version: str, kind: str) -> dict[str, Any] | None:
    """The shipped schema of a built-in kind, None when ``version`` has no schema for it."""
    group, gv = split_api_version(api_version)
    if group and "." in group and not group.endswith(".k8s.io"):
        return None  # a dotted group outside k8s.io is never built in
    prefix = f"{group.split('.')[0]}-{gv}" if group else gv
    if not _SCHEMA_NAME_PART.match(kind) or not _SCHEMA_NAME_PART.match(prefix):
        return None  # no built-in kind is named so (a hand-edited object): never a file name
    filename = f"{kind.lower()}-{prefix}.json"
    path = _schema_root().joinpath(f"v{version}.0-local-strict").joinpath(filename)
    try:
        if not path.is_file():
            return None
    except OSError:
        return None
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    if not any(g.get("group") == group and g.get("version") == gv and g.get("kind") == kind for g in gvks):
        return None
    return schema


def _validator_with_refs(version: str, schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    """A validator of ``schema`` that resolves its references in ``version``'s definitions as it goes."""
    registry = Resource.from_contents(schema) @ _definitions(version)
    return jsonschema.Draft202012Validator(schema, registry=registry)


# --------------------------------------------------------------------------------------------
# Dispatch and helpers


def validate_object(obj: Mapping[str, Any], *, crds: CrdSet, kube_version: str) -> list[SchemaError]:
    """Validate any object: against its CRD when one is loaded, else as a built-in kind.

    An object that neither a CRD nor the built-in schemas know gives one :data:`NO_SCHEMA` error.
    """
    api_version, kind, _ = _identity(obj)
    if not api_version or not kind:
        return [_whole(INVALID, obj, "object lacks apiVersion or kind", "Kubernetes object")]
    if crds.knows(api_version, kind):
        return crds.validate(obj)
    if has_builtin_schema(api_version, kind, kube_version):
        return validate_builtin(obj, kube_version)
    chosen = kube_schema_version(kube_version)
    return [_whole(NO_SCHEMA, obj, f"no schema for {api_version} {kind}: not a built-in kind of "
                                   f"{chosen.describe()} and no CRD loaded for it", "CRDs + built-ins")]


def split_api_version(api_version: str) -> tuple[str, str]:
    """Split ``group/version`` into ``(group, version)``; the core group is ``""``."""
    group, _, version = api_version.rpartition("/")
    return group, version


def json_path(parts: Iterable[str | int]) -> str:
    """Render a key/index path as a JSON path: ``$.spec.items[0]['a.b/c']``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _SIMPLE_KEY.match(part):
            out += f".{part}"
        else:
            out += f"[{part!r}]"
    return out


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return (
        api_version if isinstance(api_version, str) else "",
        kind if isinstance(kind, str) else "",
        name if isinstance(name, str) else "",
    )


def _whole(code: str, obj: Mapping[str, Any], message: str, schema: str) -> SchemaError:
    api_version, kind, name = _identity(obj)
    return SchemaError(code=code, api_version=api_version, kind=kind, name=name, path="$", message=message,
                       schema=schema)


def _collect(
    validator: jsonschema.protocols.Validator,
    obj: Mapping[str, Any],
    label: str,
    api_version: str,
    kind: str,
    name: str,
) -> list[SchemaError]:
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    errors: list[SchemaError] = []
    for error in validator.iter_errors(obj):
        leaf = _leaf(error)
        doc_path = tuple(leaf.absolute_path)
        message = _shorten(leaf.message)
        if (doc_path, message) in seen:
            continue
        seen.add((doc_path, message))
        errors.append(SchemaError(code=INVALID, api_version=api_version, kind=kind, name=name,
                                  path=json_path(doc_path), message=message, schema=label, doc_path=doc_path))
    errors.sort(key=lambda e: (tuple(str(p) for p in e.doc_path), e.message))
    return errors


def _leaf(error: ValidationError) -> ValidationError:
    """For anyOf/oneOf failures, the most relevant sub-error (deepest), else the error itself."""
    while error.context:
        best = best_match(error.context)
        if best is None or best is error:
            break
        error = best
    return error


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


__all__ = [
    "INVALID",
    "NOT_SERVED",
    "NO_SCHEMA",
    "CrdSet",
    "KubeSchemaVersion",
    "SchemaError",
    "apply_defaults",
    "json_path",
    "kube_schema_version",
    "load_crd_documents",
    "openapi_to_jsonschema",
    "shipped_kube_versions",
    "split_api_version",
    "validate_builtin",
    "validate_object",
]
