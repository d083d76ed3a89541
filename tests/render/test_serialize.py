"""The serializer builds YAML nodes itself: its text must be exactly what PyYAML's safe representer gives."""

from __future__ import annotations

import datetime
import random
from typing import Any

import pytest
import yaml

from gpuspec.render import serialize
from gpuspec.render.filetree import YamlFile
from gpuspec.render.serialize import BLOCK_WRITER as _FAST
from gpuspec.render.serialize import FOLD_WIDTH, dump_document, indent_sequences, wrap_long_words

from .fleets import REPO_ROOT, compile_dir

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


def test_every_document_of_the_example_fleet_matches_pyyaml() -> None:
    plan = compile_dir(REPO_ROOT / "fleet")
    documents = [doc for _, spec in plan.files().values() if isinstance(spec, YamlFile) for doc in spec.documents]
    assert len(documents) > 50
    fast = 0
    for document in documents:
        assert dump_document(document) == _reference(document)
        fast += _FAST.emit(document) is not None
    assert fast > len(documents) // 2  # most documents take the direct path


LONG = "registry.example.com/" + "x" * 80
#: Documents with lines over the line limit, where the long-word pass moves values; inside block scalars (a
#: script, a config file) it must move nothing.
LONG_LINES: list[Any] = [
    {"data": {"run.sh": f"set -e\nimage: {LONG}\necho ok\n"}, "image": LONG},
    {"items": [{"script": f"a\n  key: {LONG}\n", "name": LONG}, f"|x\nkey: {LONG}", f"- key: {LONG}\n"]},
    {"a": {"b": [{"c": f"one\n\n  - image: {LONG}\n    tag: {LONG}\nlast"}], "d": LONG}},
    [f"image: {LONG}\n", {"image": LONG}],
]


@pytest.mark.parametrize("document", DOCUMENTS + LONG_LINES, ids=range(len(DOCUMENTS) + len(LONG_LINES)))
def test_the_text_loads_back_to_the_document(document: Any) -> None:
    assert yaml.safe_load(dump_document(document)) == document


def test_long_values_outside_block_scalars_get_their_own_line() -> None:
    text = dump_document(LONG_LINES[0])
    assert f"image:\n  {LONG}\n" in text and f"    image: {LONG}\n" in text


def test_direct_path_declines_what_it_cannot_write_exactly() -> None:
    assert _FAST.emit({"a": " one\ntwo"}) is None  # needs an indentation indicator
    assert _FAST.emit({"a": "one\ntwo\n\n"}) is None  # needs |+
    assert _FAST.emit({"a": "one \ntwo"}) is None  # PyYAML double-quotes it
    assert _FAST.emit({"a": "naïve\ntwo"}) is None  # outside printable ASCII
    assert _FAST.emit({"a": [[1]]}) is None  # list in a list
    assert _FAST.emit({"a": 1.5}) is None
    assert _FAST.emit({1: "a"}) is None
    assert _FAST.emit({"a": "word " * 12}) is None  # could fold
    assert _FAST.emit({"b": {"c": "x y"}, "a": [{"k": "v", "j": ["1.5"]}], "e": {}, "f": []}) == (
        "a:\n  - j:\n      - '1.5'\n    k: v\nb:\n  c: x y\ne: {}\nf: []\n")


def _multiline_strings(count: int, seed: int) -> list[str]:
    """Strings with line breaks built from the pieces that decide a literal block's spelling."""
    rng = random.Random(seed)
    pieces = ["a", "word", " ", "  ", "\n", "\n\n", "#", ": ", "- ", "'", '"', "|", ">", "---", "...", "\t",
              "é", "x" * 70, "{{ v }}", "%", "\\", "\r"]
    strings = []
    while len(strings) < count:
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        if "\n" in text:
            strings.append(text)
    return strings


def _nested(value: Any, depth: int, in_list: bool) -> Any:
    """``value`` as a mapping value or list item ``depth`` levels down, between siblings."""
    holder: Any = ["before", value, {"after": 1}] if in_list else {"a": 1, "m": value, "z": [2]}
    for level in range(depth):
        holder = {"k": holder, "n": level} if level % 2 else [{"i": holder, "j": "y"}, "x"]
    return holder


@pytest.mark.parametrize("in_list", [False, True], ids=["mapping-value", "list-item"])
def test_literal_blocks_are_pyyaml_s(in_list: bool) -> None:
    taken = 0
    for number, text in enumerate(_multiline_strings(1500, seed=28 + in_list)):
        document = _nested(text, number % 5, in_list)
        direct = _FAST.emit(document)
        if direct is not None:
            taken += 1
            assert wrap_long_words(direct) == _reference(document), repr(text)
        assert dump_document(document) == _reference(document), repr(text)
    assert taken > 200  # the generator reaches the direct path, not only the declines


@pytest.mark.parametrize("as_key", [False, True])
def test_quick_answers_for_simple_strings_are_pyyaml_s(as_key: bool) -> None:
    samples = ["name", "1.34", "22.04", "true", "True", "on", "No", "y", "null", "NULL", "1:20", "0x1F", "0o17",
               "1_000", "2024-01-01", "2024-01-01T10:00:00Z", "1e3", "10", "010", "=", "_x", "a:b", "a:b:c",
               "nvcr.io/nvidia/driver:550.127.08", "img@sha256:abc", "a=b", "5.15.0-143-generic", "x.inf",
               "0.5", "1.0e+3", "9" * 100, "a" * 100, "pool-0", "a+b", "0b101", "1_0.5", "190:20:30"]
    for value in samples:
        assert serialize._probe(value, as_key) == serialize._dumped(value, as_key), value
