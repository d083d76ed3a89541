"""verify's YAML parse gives exactly what PyYAML's own constructor gives (values, types, sharing, errors)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from gpuspec.verify import manifests
from gpuspec.verify.manifests import load_yaml, load_yaml_all

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Reference(_Base):  # type: ignore[valid-type,misc]
    """PyYAML's own constructor and resolver, with the resolver table of verify's loader (timestamps stay
    strings; the table is taken from the loader because another library may change PyYAML's global one)."""


_Reference.yaml_implicit_resolvers = manifests._KubeLoader.yaml_implicit_resolvers


CASES = [
    "a: 1\nb: [1, 2.5, -3, 0x1f, 0o17, 017, 1_000, 1:30, +12, .inf, -.Inf, .NaN, 1e3, 6.8523015e+5, 190:20:30.15]\n",
    "yes: no\non: off\nTrue: FALSE\nn: ~\nnull: Null\nempty:\nq: 'yes'\nd: \"1\"\nb: |\n  text\n  more\n",
    "when: 2001-12-14t21:59:43.10-05:00\nday: 2002-12-14\nversion: 1.30\nport: 0080\ntag: v1.2.3\n",
    "base: &b {x: 1, y: [1, 2]}\nother: *b\nlist: &l [a, b]\nagain: *l\n",
    "base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",
    "s: !!str 123\ni: !!int '5'\nf: !!float '1'\nn: ! 12\nbin: !!binary aGVsbG8=\n",
    "set: !!set {a, b}\nomap: !!omap [{a: 1}, {b: 2}]\n",
    "? [a, b]\n: complex key\n",
    "? {a: 1}\n: mapping key\n",
    "dup: 1\ndup: 2\nother: 3\n",
    "custom: !Thing {a: 1}\n",
    "---\na: 1\n---\n---\n- 1\n- two\n...\n",
    "",
    "bad: !!bool maybe\n",
    "12: int key\n1.5: float key\nnull: null key\ntrue: bool key\n",
    "a:\n  - b:\n      c: [1, {d: e}]\n",
]


def _reference_all(text: str) -> Any:
    try:
        return "ok", list(yaml.load_all(text, Loader=_Reference))
    except Exception as exc:  # the same failure is expected of both
        return "error", type(exc).__name__


def _ours_all(text: str) -> Any:
    try:
        return "ok", load_yaml_all(text)
    except Exception as exc:
        return "error", type(exc).__name__


def _typed(value: Any) -> Any:
    """Values with their types, so 1 == 1.0 == True cannot pass for each other; NaN made comparable."""
    if isinstance(value, dict):
        return [("dict", _typed(k), _typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return ["list", *(_typed(v) for v in value)]
    if isinstance(value, (set, tuple)):
        return [type(value).__name__, *sorted(repr(_typed(v)) for v in value)]
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__name__, value)


@pytest.mark.parametrize("text", CASES)
def test_same_data_as_pyyaml(text: str) -> None:
    expected, ours = _reference_all(text), _ours_all(text)
    assert expected[0] == ours[0]
    if expected[0] == "error":
        assert expected == ours
        return
    assert _typed(ours[1]) == _typed(expected[1])


def test_aliases_share_objects_and_single_documents() -> None:
    data = load_yaml("base: &b {x: 1}\nother: *b\n")
    assert data["other"] is data["base"]
    recursive = load_yaml("&r [*r]\n")
    assert recursive[0] is recursive
    assert load_yaml("") is None
    assert load_yaml("a: '2001-12-14'\nb: 2001-12-14\n") == {"a": "2001-12-14", "b": "2001-12-14"}
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: 1\n---\nb: 2\n")
