"""Custom-rule schema checks are remembered between runs, keyed by the schema and the installed jsonschema."""

from __future__ import annotations

from typing import Any

import pytest

from gpuspec.policy import schema_check
from gpuspec.policy.schema_check import SchemaChecks

BAD = {"properties": {"apiKey": "Zq7canaryPW91"}}
GOOD = {"properties": {"nodes": {"maximum": 2}}}


def _run(*schemas: Any) -> list[Any]:
    checks = SchemaChecks()
    found = [checks.problem(s) for s in schemas]
    checks.save()
    return found


def _no_checker(schema: object) -> None:
    raise AssertionError("the meta-schema check ran again")


def test_a_second_run_answers_from_the_cache_with_the_same_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    first = _run(BAD, GOOD)
    assert first == [(("properties", "apiKey"), "properties.apiKey must be of type 'object' or 'boolean'"), None]
    monkeypatch.setattr(schema_check, "schema_problem", _no_checker)
    assert _run(BAD, GOOD) == first


def test_another_schema_or_another_jsonschema_is_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    _run(GOOD)
    calls: list[object] = []
    real = schema_check.schema_problem

    def counted(schema: Any) -> Any:
        calls.append(schema)
        return real(schema)

    monkeypatch.setattr(schema_check, "schema_problem", counted)
    assert _run({"properties": {"nodes": {"maximum": 3}}}) == [None]
    assert len(calls) == 1
    monkeypatch.setattr(schema_check, "package_fingerprint", lambda *names: "another jsonschema")
    assert _run(GOOD) == [None]
    assert len(calls) == 2


def test_a_tampered_entry_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    _run(BAD)
    checks = SchemaChecks()
    checks.problem(GOOD)  # opens the memo
    assert checks._memo is not None
    for key in list(checks._memo._stored):
        checks._memo._stored[key] = "not a problem"
    assert checks.problem(BAD) == (("properties", "apiKey"),
                                   "properties.apiKey must be of type 'object' or 'boolean'")


def test_schemas_whose_keys_cannot_be_sorted_or_differ_only_in_type_are_checked_apart() -> None:
    """YAML gives ``{1: {}, a: {}}`` an int and a str key; 1 and True are different schema values."""
    assert _run({"properties": {1: {}, "a": {}}}) == [None]
    assert _run({"maxItems": 1}, {"maxItems": True}) == [
        None, (("maxItems",), "maxItems must be of type 'integer'")]
