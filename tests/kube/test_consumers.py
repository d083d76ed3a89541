"""Each consumer check accepts what its program accepts and refuses what it refuses (data/consumers.yaml)."""

from __future__ import annotations

import pytest

from gpuspec.kube import consumers, formats, selectors
from gpuspec.kube.consumers import CHECKS

CASES = [(c.id, value, ok) for c in consumers.consumers().values()
         for ok, values in ((True, c.accepts), (False, c.refuses)) for value in values]


def test_every_check_is_described_with_both_kinds_of_example() -> None:
    described = consumers.consumers()
    assert set(described) == set(CHECKS)
    for check in described.values():
        assert check.accepts and check.refuses, check.id
        assert check.program and check.source, check.id


@pytest.mark.parametrize(("check", "value", "accepted"), CASES, ids=[f"{c}-{'ok' if a else 'no'}-{v!r}"
                                                                     for c, v, a in CASES])
def test_documented_behaviour(check: str, value: str, accepted: bool) -> None:
    problems = CHECKS[check](value, "v1", "ConfigMap")
    assert (problems == []) is accepted, problems


def test_label_selector_requirements_as_apimachinery_reads_them() -> None:
    parsed = selectors.parse_label_selector("env in (prod, staging),!canary,tier!=batch,count>3,x")
    assert [(r.key, r.operator, r.values) for r in parsed] == [
        ("env", "in", ("prod", "staging")), ("canary", "!", ()), ("tier", "!=", ("batch",)),
        ("count", "gt", ("3",)), ("x", "exists", ())]
    # "in" is a plain value where a value is expected; ",)" adds the empty value.
    assert [r.values for r in selectors.parse_label_selector("a in (in,),b=notin")] == [("", "in"), ("notin",)]


def test_label_selector_messages_are_apimachinerys() -> None:
    assert selectors.label_selector("app in prod") == ["unable to parse requirement: found 'prod' expected: '('"]
    assert selectors.label_selector("a b") == [
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"]
    assert selectors.label_selector("a=b c") == ["found 'c', expected: ',' or 'end of string'"]


def test_field_selector_terms_and_known_fields() -> None:
    assert selectors.parse_field_selector("a=b,c!=d\\,e") == [("a", "=", "b"), ("c", "!=", "d,e")]
    assert selectors.field_selector("spec.nodeName=n", frozenset({"metadata.name"})) == [
        "field label not supported: spec.nodeName"]


def test_time_zone_suggests_the_spelling() -> None:
    assert "did you mean 'Europe/Berlin'" in formats.time_zone("europe/berlin")[0]
    assert formats.time_zone("Europe/Berln")


def test_go_duration_overflow_and_units() -> None:
    assert formats.go_duration("2562048h") == ['time: invalid duration "2562048h"']
    assert formats.go_duration("1\u00b5s") == []
    assert formats.go_duration("1x") == ['time: unknown unit "x" in duration "1x"']
