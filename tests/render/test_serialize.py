"""The serializer builds YAML nodes itself: its text must be exactly what PyYAML's safe representer gives."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import yaml

from gpuspec.render.serialize import FOLD_WIDTH, dump_document, indent_sequences, wrap_long_words

_Base: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Reference(_Base):  # type: ignore[valid-type,misc]
    """PyYAML's own safe representer with gpuspec's two settings (literal blocks, no aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _literal(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Reference.add_representer(str, _literal)


def _reference(document: Any) -> str:
    text = yaml.dump(document, Dumper=_Reference, sort_keys=True, default_flow_style=False, allow_unicode=True,
                     width=FOLD_WIDTH, indent=2, line_break="\n")
    return wrap_long_words(indent_sequences(str(text)))


SHARED = {"shared": "value"}
DOCUMENTS: list[Any] = [
    {"b": 1, "a": {"z": [1, 2, {"y": None, "x": True}], "w": False}, "c": []},
    {"empty": {}, "list": [], "nested": [[1, 2], [], [{}]], "deep": {"a": {"b": {"c": {"d": ["e"]}}}}},
    {"version": "1.34", "yes": "yes", "on": "on", "null": "null", "tilde": "~", "blank": "", "space": " x ",
     "date": "2024-01-01", "octal": "0o17", "hex": "0x1f", "sexagesimal": "1:20", "float": 1.5, "inf": float("inf")},
    {"dash": "- item", "colon": "key: value", "hash": "a #comment", "star": "*alias", "amp": "&anchor",
     "quote": "it's", "double": 'say "hi"', "bang": "!tag", "pct": "%x", "at": "@home", "tick": "`cmd`"},
    {"multi": "line one\nline two\n", "keep": "trailing\n\n", "strip": "no newline\nat end",
     "indented": "  leading\nspaces\n", "expr": "sum(rate(x[5m]))\n  by (node)\n"},
    {"long": "word " * 30, "long_image": "registry.example.com/" + "a" * 90 + ":v1", "unicode": "naïve – “quoted” ✓",
     "tab": "a\tb", "cr": "a\rb", "bell": "a\x07b", "bom": "\ufeffx"},
    {1: "int key", "2": "str key"},  # keys of mixed types: PyYAML keeps insertion order
    {"shared_a": SHARED, "shared_b": SHARED, "shared_list": [SHARED, SHARED]},  # never aliases
    ["top", "level", {"list": [1]}],
    {"big": 10 ** 30, "negative": -5, "zero": 0, "true": True},
    {"k" * 130: "a key too long for a simple key"},
]


@pytest.mark.parametrize("document", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_same_text_as_pyyaml(document: Any) -> None:
    assert dump_document(document) == _reference(document)


@pytest.mark.parametrize("value", [("tuple", 1), {1, 2}, b"bytes", datetime.date(2024, 1, 1), object()],
                         ids=["tuple", "set", "bytes", "date", "object"])
def test_other_types_go_through_pyyaml(value: Any) -> None:
    try:
        expected = _reference({"a": value})
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            dump_document({"a": value})
    else:
        assert dump_document({"a": value}) == expected
