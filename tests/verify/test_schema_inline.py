"""Built-in kinds validated against inlined schemas give exactly what validation through ``$ref`` gives."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from benchmarks.fuzz import tree_paths
from gpuspec.verify import schemas
from gpuspec.verify.schema_inline import inline_refs

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFS_ID = "https://kubernetes.io/api/_definitions.json"


def _builtin_objects() -> list[dict[str, Any]]:
    """Every built-in object of the example fleet's committed output, each distinct once."""
    seen: dict[str, dict[str, Any]] = {}
    for path in sorted((REPO_ROOT / "rendered").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or not isinstance(doc.get("apiVersion"), str):
                continue
            kind = doc.get("kind")
            if isinstance(kind, str) and schemas.has_builtin_schema(doc["apiVersion"], kind, "1.31"):
                seen.setdefault(json.dumps(doc, sort_keys=True), doc)
    return list(seen.values())


def _with_refs(version: str, api_version: str, kind: str) -> jsonschema.protocols.Validator:
    """The validator gpuspec used before inlining: the kind's schema with the definitions as a registry."""
    schema = schemas._kind_schema(version, api_version, kind)
    assert schema is not None
    return schemas._validator_with_refs(version, schema)


def _mutants(obj: dict[str, Any], rng: random.Random) -> Iterator[dict[str, Any]]:
    """Copies of ``obj`` each broken once: an unknown field, a value of the wrong type, a key removed."""
    paths = list(tree_paths(obj))
    mappings = [p for p in paths if isinstance(_at(obj, p), dict)]
    leaves = [p for p in paths if p and not isinstance(_at(obj, p), (dict, list))]
    for _ in range(3):
        out = copy.deepcopy(obj)
        _at(out, rng.choice(mappings))["zzUnknownField"] = rng.choice([1, "x", {"a": 1}])
        yield out
    for _ in range(3 if leaves else 0):
        out = copy.deepcopy(obj)
        *parent, last = rng.choice(leaves)
        _at(out, tuple(parent))[last] = rng.choice([[], {"k": "v"}, 7, "seven", None, True, -1.5])
        yield out
    for _ in range(2):
        out = copy.deepcopy(obj)
        with_keys = [p for p in mappings if _at(out, p)]
        if with_keys:
            target = _at(out, rng.choice(with_keys))
            del target[rng.choice(sorted(target))]
        yield out


def _at(obj: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        obj = obj[part]
    return obj


@pytest.mark.parametrize("version", ["1.25", "1.31", "1.37"])
def test_inlined_validation_matches_validation_through_refs(version: str) -> None:
    if version not in schemas.shipped_kube_versions():
        pytest.skip(f"kubernetes-validate ships no {version} schemas")
    objects = _builtin_objects()
    assert len(objects) > 20, "the example fleet's output should hold many built-in objects"
    rng = random.Random(f"inline-{version}")
    compared = broken = 0
    for obj in objects:
        api_version, kind = obj["apiVersion"], obj["kind"]
        reference = _with_refs(version, api_version, kind)
        inlined = schemas._builtin_validator(version, api_version, kind)
        assert inlined is not None and inlined.schema is not reference.schema
        for candidate in [obj, *_mutants(obj, rng)]:
            expected = schemas._collect(reference, candidate, "schema", api_version, kind, "")
            got = schemas._collect(inlined, candidate, "schema", api_version, kind, "")
            assert [(e.path, e.message) for e in got] == [(e.path, e.message) for e in expected], (kind, candidate)
            compared += 1
            broken += bool(expected)
    assert broken > compared // 3, "most mutants should be invalid, or the comparison proves little"


def test_every_shipped_kind_is_inlined() -> None:
    """The fast path applies to every kind file of the newest and oldest shipped versions."""
    versions = schemas.shipped_kube_versions()
    for version in {versions[0], versions[-1]}:
        folder = schemas._schema_root().joinpath(f"v{version}.0-local-strict")
        definitions = schemas._definitions_document(version)
        kinds = [entry for entry in folder.iterdir() if entry.name.endswith(".json") and "_" not in entry.name]
        assert kinds
        for entry in kinds:
            schema = json.loads(entry.read_text(encoding="utf-8"))
            if isinstance(schema.get("$id"), str):
                assert inline_refs(schema, definitions) is not None, entry.name


def _definitions(**defs: Any) -> dict[str, Any]:
    return {"$id": DEFS_ID, "$defs": defs}


def test_shared_and_recursive_definitions_become_shared_dicts_and_cycles() -> None:
    defs = _definitions(
        Meta={"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": False},
        Node={"type": "object", "properties": {"child": {"$ref": "#/$defs/Node", "description": "again"},
                                               "meta": {"$ref": "#/$defs/Meta"}}, "additionalProperties": False},
    )
    schema = {"$id": "https://kubernetes.io/api/thing/v1", "type": "object", "properties": {
        "metadata": {"$ref": "/api/_definitions.json#/$defs/Meta", "description": "annotation only"},
        "tree": {"$ref": "/api/_definitions.json#/$defs/Node"}}}
    out = inline_refs(schema, defs)
    assert out is not None
    tree = out["properties"]["tree"]
    assert tree["properties"]["child"] is tree
    assert tree["properties"]["meta"] is out["properties"]["metadata"]
    validator = jsonschema.Draft202012Validator(out)
    bad = {"tree": {"child": {"child": {"meta": {"name": 5}}}}}
    [error] = list(validator.iter_errors(bad))
    assert list(error.absolute_path) == ["tree", "child", "child", "meta", "name"]
    assert error.message == "5 is not of type 'string'"
    assert schema["properties"]["tree"] == {"$ref": "/api/_definitions.json#/$defs/Node"}, "input unchanged"


def test_a_ref_beside_evaluated_keywords_keeps_both() -> None:
    defs = _definitions(Str={"type": "string"})
    schema = {"$id": "https://kubernetes.io/api/x/v1",
              "properties": {"a": {"$ref": "/api/_definitions.json#/$defs/Str", "maxLength": 2}}}
    out = inline_refs(schema, defs)
    assert out is not None
    validator = jsonschema.Draft202012Validator(out)
    assert [e.message for e in validator.iter_errors({"a": 1})] == ["1 is not of type 'string'"]
    assert [e.message for e in validator.iter_errors({"a": "abc"})] == ["'abc' is too long"]


@pytest.mark.parametrize("ref", [
    "https://example.com/other.json#/$defs/Str",  # another document
    "/api/_definitions.json#/$defs/a~1b",  # a pointer that needs unescaping
    "/api/_definitions.json#/$defs/Missing",  # not defined
    "/api/_definitions.json#/properties/x",  # not under $defs
])
def test_references_that_cannot_be_inlined_give_none(ref: str) -> None:
    defs = _definitions(Str={"type": "string"}, **{"a/b": {"type": "string"}})
    schema = {"$id": "https://kubernetes.io/api/x/v1", "properties": {"a": {"$ref": ref}}}
    assert inline_refs(schema, defs) is None


def test_a_dynamic_ref_or_a_nested_id_gives_none() -> None:
    defs = _definitions(Str={"type": "string"})
    for sub in ({"$dynamicRef": "#meta"}, {"$id": "https://example.com/nested", "type": "string"}):
        schema = {"$id": "https://kubernetes.io/api/x/v1", "properties": {"a": sub}}
        assert inline_refs(schema, defs) is None, sub


def test_a_property_named_ref_is_a_name_not_a_reference() -> None:
    defs = _definitions()
    schema = {"$id": "https://kubernetes.io/api/x/v1", "properties": {"$ref": {"type": "string"}}}
    out = inline_refs(schema, defs)
    assert out == schema
