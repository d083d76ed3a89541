"""The CEL subset: what it evaluates, and that it refuses (never passes) what it cannot."""

from __future__ import annotations

from typing import Any

import pytest

from gpuspec.kube import cel

DEFAULT_RULE = "has(self.default) && self.default ? !has(self.nodeSelector) || size(self.nodeSelector) == 0 : true"


@pytest.mark.parametrize(("value", "expected"), [
    ({"default": True, "nodeSelector": {"a": "b"}}, False),
    ({"default": True, "nodeSelector": {}}, True),
    ({"default": True}, True),
    ({"default": False, "nodeSelector": {"a": "b"}}, True),
    ({}, True),
])
def test_ternary_precedence_of_the_nvidiadriver_default_rule(value: dict[str, Any], expected: bool) -> None:
    assert cel.parse(DEFAULT_RULE).evaluate(value) is expected


@pytest.mark.parametrize(("rule", "value", "expected"), [
    ("self.a.b == 'x'", {"a": {"b": "x"}}, True),
    ("self.n + 2 * 3 == 7", {"n": 1}, True),
    ("self.n % 3 == -1", {"n": -7}, True),  # truncates toward zero, as Go does
    ("self.list[1] == 2 && 2 in self.list", {"list": [1, 2]}, True),
    ("self.m['k'] != 'v'", {"m": {"k": "v"}}, False),
    ("self.s.startsWith('gpu') && self.s.size() == 7", {"s": "gpu-one"}, True),
    ('"a\\"b" == self.s', {"s": 'a"b'}, True),
    ("self == 1", True, False),  # bool and int are different types in CEL
    ("self == 1.0", 1, True),
    ("[1, 2] == self", [1, 2], True),
])
def test_expressions(rule: str, value: Any, expected: bool) -> None:
    assert cel.parse(rule).evaluate(value) is expected


def test_missing_field_is_an_error_unless_the_other_side_decides() -> None:
    with pytest.raises(cel.EvalError):
        cel.parse("self.missing == 1").evaluate({})
    assert cel.parse("self.missing == 1 || true").evaluate({}) is True
    assert cel.parse("false && self.missing == 1").evaluate({}) is False
    with pytest.raises(cel.EvalError):
        cel.parse("self.missing == 1 || false").evaluate({})


def test_transition_rules_see_old_self() -> None:
    rule = cel.parse("self == oldSelf")
    assert rule.transition
    assert rule.evaluate(True, True) is True and rule.evaluate(True, False) is False
    assert not cel.parse("self > 1").transition


@pytest.mark.parametrize("rule", [
    "self.all(x, x > 1)", "self.matches('^a')", "duration(self) > duration('1s')", "self.x ?? 1", "1u == 1",
    "self.exists(x, x == 1)",
])
def test_beyond_the_subset_is_unsupported_never_true(rule: str) -> None:
    with pytest.raises((cel.Unsupported, cel.EvalError)):
        cel.parse(rule).evaluate([1, 2])


def test_non_bool_result_is_an_error() -> None:
    with pytest.raises(cel.EvalError):
        cel.parse("self + 1").evaluate(1)
