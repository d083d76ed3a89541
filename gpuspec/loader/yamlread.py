"""Read one YAML file into plain Python data, safely and fast.

libyaml (through PyYAML's C binding) composes the node graph; this module turns
nodes into dicts, lists and scalars with YAML 1.2-like rules, so that
``version: 1.30`` stays the string ``"1.30"`` and ``on``/``no`` stay strings.
Everything a fleet file must not contain is refused with a position: custom or
language tags, duplicate keys, several documents, alias expansion bombs,
oversized, empty or non-UTF-8 files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from sys import intern
from typing import Any

import yaml

from gpuspec.catalogue.entry import Entry
from gpuspec.catalogue.validate import DUPLICATE_KEY, FILE_UNUSABLE, YAML_UNREADABLE
from gpuspec.loader.safefile import UnsafeFile, read_bounded

#: Largest fleet file gpuspec reads; a real cluster file is a few kilobytes.
MAX_FILE_BYTES = 1024 * 1024
#: Most nodes one document may expand to (aliases included).
MAX_NODES = 200_000
#: Most digits of a plain integer scalar that is read as a number.
MAX_INT_DIGITS = 100
#: Deepest nesting of mappings and sequences; deeper means a recursive alias or a hostile file.
MAX_DEPTH = 64

_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")

#: Strings up to this length are shared (interned): fleets repeat the same keys and short values thousands of
#: times, and one shared copy saves about 30% of the parsed data's memory.
_SHARED_LENGTH = 64

_STD = "tag:yaml.org,2002:"
_ALLOWED_TAGS = frozenset(
    [_STD + t for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "merge")]
    + ["!gpuspec/implicit"]
)


@dataclass(frozen=True, slots=True)
class YamlProblem(Exception):
    """A file that cannot be used as YAML input, with the position of the problem."""

    file: str
    line: int
    column: int
    message: str
    entry: Entry = YAML_UNREADABLE

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.entry.id} {self.message}"


def read_text(path: Path, display: str, folders: dict[str, str] | None = None) -> str:
    """Read a fleet file as UTF-8 text.

    Refused with a GS101 problem: directories, broken links, links out of the repository, FIFOs and
    devices, oversized and undecodable files.  Nothing is read past the size limit.  ``folders``: see
    :func:`gpuspec.loader.safefile.read_bounded`.
    """
    try:
        data = read_bounded(path, MAX_FILE_BYTES, folders=folders)
    except (UnsafeFile, OSError) as exc:
        if path.is_symlink() and not path.exists():
            raise YamlProblem(display, 1, 1, "is a broken symbolic link", FILE_UNUSABLE) from None
        if isinstance(exc, UnsafeFile):
            message = exc.message
            if "limit" in message:
                message += " for a fleet file"
            raise YamlProblem(display, 1, 1, message, FILE_UNUSABLE) from None
        raise YamlProblem(display, 1, 1, f"cannot be read: {exc.strerror or exc}", FILE_UNUSABLE) from None
    return decode_utf8(data, display)


def decode_utf8(data: bytes, display: str) -> str:
    """Decode a fleet file's bytes as UTF-8, naming the position of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlProblem(
            display, line, column, f"is not valid UTF-8 (byte 0x{data[exc.start]:02x})", FILE_UNUSABLE
        ) from None


_PLAIN = "!gpuspec/implicit"


class _FastLoader(yaml.CSafeLoader):
    """libyaml composer whose implicit tags are left for the converter to resolve (YAML 1.2-like rules)."""

    def resolve(self, kind: type, value: str | None, implicit: tuple[bool, bool] | None) -> str:
        if kind is yaml.ScalarNode:
            return _PLAIN
        return _STD + ("seq" if kind is yaml.SequenceNode else "map")


def compose(text: str, display: str) -> yaml.Node:
    """Compose the single YAML document of ``text`` into a node graph with positions."""
    try:
        loader = _FastLoader(text)
        try:
            nodes: list[yaml.Node] = []
            while loader.check_node():
                node = loader.get_node()
                if node is not None:
                    nodes.append(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = exc.problem or exc.context or "invalid YAML"
        raise YamlProblem(display, line, column, f"YAML syntax error: {what}", YAML_UNREADABLE) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(display, 1, 1, f"YAML error: {exc}", YAML_UNREADABLE) from None
    except RecursionError:
        raise YamlProblem(display, 1, 1, f"is nested deeper than {MAX_DEPTH} levels", YAML_UNREADABLE) from None
    if not nodes:
        raise YamlProblem(display, 1, 1, "is empty: expected a YAML mapping", FILE_UNUSABLE)
    if len(nodes) > 1:
        mark = nodes[1].start_mark
        raise YamlProblem(
            display, mark.line + 1, mark.column + 1,
            "holds more than one YAML document; put one object in each file", YAML_UNREADABLE,
        )
    return nodes[0]


def resolve_plain(value: str) -> Any:
    """The value of a plain (unquoted) scalar under YAML 1.2 core-schema-like rules.

    Floats, dates and everything else stay strings, so versions such as 1.30 keep their text.
    """
    if value in _NULLS:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    first = value[:1]
    if (first.isdigit() or first in "+-") and len(value) <= MAX_INT_DIGITS:
        # Longer numbers, decimal, octal or hexadecimal, stay text (Python refuses to print an integer past
        # 4,300 digits, which a long 0x... makes; no spec number comes near); the schema then reports a wrong type.
        if _INT.match(value) and (value.lstrip("+-") == "0" or not value.lstrip("+-").startswith("0")):
            return int(value)
        if _OCT.match(value):
            return int(value[2:], 8)
        if _HEX.match(value):
            return int(value[2:], 16)
    return value


class _TooLarge(Exception):
    """Raised inside the converter when a document expands past MAX_NODES."""


class _Converter:
    """Turns a composed node graph into plain data, counting nodes against a budget."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.count = 0
        self.depth = 0
        self.active: set[int] = set()

    def fail(self, node: yaml.Node, message: str, entry: Entry = YAML_UNREADABLE) -> YamlProblem:
        mark = node.start_mark
        return YamlProblem(self.display, mark.line + 1, mark.column + 1, message, entry)

    def convert(self, node: yaml.Node) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise _TooLarge
        tag = node.tag
        if tag not in _ALLOWED_TAGS:
            raise self.fail(node, f"tag {tag!r} is not allowed in fleet files (plain YAML data only)")
        if isinstance(node, yaml.ScalarNode):
            value: str = node.value
            if node.style or tag == _STD + "str":
                return value
            return resolve_plain(value)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(node, f"nesting is deeper than {MAX_DEPTH} levels (a recursive alias?)")
        try:
            if isinstance(node, yaml.MappingNode):
                return self.mapping(node)
            if isinstance(node, yaml.SequenceNode):
                return [self.convert(item) for item in node.value]
        finally:
            self.depth -= 1
        raise self.fail(node, "unsupported YAML node")  # pragma: no cover

    def mapping(self, node: yaml.MappingNode) -> dict[Any, Any]:
        if id(node) in self.active:
            raise self.fail(node, "a mapping contains itself (through an alias or a merge key '<<')")
        self.active.add(id(node))
        try:
            return self._mapping(node)
        finally:
            self.active.discard(id(node))

    def _mapping(self, node: yaml.MappingNode) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        merged: dict[Any, Any] | None = None
        scalar_node = yaml.ScalarNode
        for key_node, value_node in node.value:
            if key_node.__class__ is not scalar_node:
                raise self.fail(key_node, "mapping keys must be plain scalars")
            key_tag = key_node.tag
            if key_tag == _PLAIN and not key_node.style:
                if key_node.value == "<<":
                    merged = merged if merged is not None else {}
                    for source in self._merge_sources(value_node):
                        for k, v in source.items():
                            merged.setdefault(k, v)
                    continue
                key = resolve_plain(key_node.value)
                if key.__class__ is str:
                    key = intern(key)
                self.count += 1
            elif key_tag == _STD + "merge":
                merged = merged if merged is not None else {}
                for source in self._merge_sources(value_node):
                    for k, v in source.items():
                        merged.setdefault(k, v)
                continue
            else:
                key = self.convert(key_node)
            if key in result:
                raise self.fail(key_node, f"duplicate key {key!r} in this mapping", DUPLICATE_KEY)
            # Plain and quoted scalar values are by far the most common: convert them inline.
            if value_node.__class__ is scalar_node and value_node.tag == _PLAIN:
                self.count += 1
                value = value_node.value if value_node.style else resolve_plain(value_node.value)
                result[key] = intern(value) if value.__class__ is str and len(value) <= _SHARED_LENGTH else value
            else:
                result[key] = self.convert(value_node)
        if merged:
            for k, v in merged.items():
                result.setdefault(k, v)
        return result

    def _merge_sources(self, node: yaml.Node) -> list[dict[Any, Any]]:
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        sources = []
        for item in nodes:
            if not isinstance(item, yaml.MappingNode):
                raise self.fail(item, "a merge key '<<' must refer to a mapping")
            sources.append(self.mapping(item))
        return sources


def node_to_data(node: yaml.Node, display: str) -> Any:
    """Convert a composed node to plain data (dict/list/str/int/bool/None)."""
    try:
        return _Converter(display).convert(node)
    except _TooLarge:
        mark = node.start_mark
        raise YamlProblem(
            display, mark.line + 1, mark.column + 1,
            f"document expands to more than {MAX_NODES} nodes (anchors and aliases?); refusing to read it",
        ) from None


def read_yaml(path: Path, display: str) -> Any:
    """Read and convert the single YAML document of a fleet file; raise YamlProblem when unusable."""
    text = read_text(path, display)
    return node_to_data(compose(text, display), display)
