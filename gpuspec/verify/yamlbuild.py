"""Build Python data from libyaml's nodes exactly as PyYAML's SafeConstructor does, in fewer steps.

verify parses every tool output and rendered file with PyYAML's rules (YAML 1.1 scalars, as
Kubernetes' own YAML library reads them; timestamps kept as strings).  libyaml composes the nodes in C,
but PyYAML's constructor then spends most of the parse time on bookkeeping meant for cases Kubernetes
objects do not have (recursive aliases, merge keys, complex keys, custom tags).  :func:`build` handles
plain trees of maps, sequences and the core scalar tags directly, calling PyYAML's own methods for
every scalar that is not a string, and hands any other node (and so the whole document) back to
PyYAML's constructor: the result and every error are PyYAML's.
"""

from __future__ import annotations

from typing import Any, cast

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_PREFIX = "tag:yaml.org,2002:"
STR, MAP, SEQ = _PREFIX + "str", _PREFIX + "map", _PREFIX + "seq"
NULL, BOOL, INT, FLOAT = _PREFIX + "null", _PREFIX + "bool", _PREFIX + "int", _PREFIX + "float"


class _Unusual(Exception):
    """A node the fast path leaves to PyYAML's constructor."""


def build(loader: yaml.SafeLoader, node: Node) -> Any:
    """The data of one composed document, equal to ``loader.construct_document(node)``."""
    try:
        return _Builder(loader).node(node)
    except _Unusual:
        return loader.construct_document(node)


def load_all(text: str, loader_class: type[yaml.SafeLoader]) -> list[Any]:
    """Every document of ``text``, as ``list(yaml.load_all(text, Loader=loader_class))`` gives them."""
    loader = loader_class(text)
    try:
        documents = []
        while loader.check_node():
            node = loader.get_node()
            documents.append(build(loader, node) if node is not None else None)
        return documents
    finally:
        loader.dispose()


class _Builder:
    """One document's construction; aliases (the same node twice) give the same object, as in PyYAML."""

    def __init__(self, loader: yaml.SafeLoader) -> None:
        self.loader = loader
        self.done: dict[int, Any] = {}
        self.open: set[int] = set()

    def node(self, node: Node) -> Any:
        cls = type(node)
        tag = node.tag
        if cls is ScalarNode:
            if tag == STR:
                return node.value
            return self._scalar(cast(ScalarNode, node), tag)
        key = id(node)
        if key in self.done:
            return self.done[key]
        if key in self.open:
            raise _Unusual  # a recursive alias: PyYAML builds it in two steps
        self.open.add(key)
        data: Any
        if cls is MappingNode and tag == MAP:
            data = {}
            for key_node, value_node in node.value:
                if type(key_node) is not ScalarNode or not key_node.tag.startswith(_PREFIX) or \
                        key_node.tag in (_PREFIX + "merge", _PREFIX + "value"):
                    raise _Unusual  # merge keys, '=' keys, complex or custom-tagged keys
                data[self.node(key_node)] = self.node(value_node)
        elif cls is SequenceNode and tag == SEQ:
            data = [self.node(item) for item in node.value]
        else:
            raise _Unusual
        self.open.discard(key)
        self.done[key] = data
        return data

    def _scalar(self, node: ScalarNode, tag: str) -> Any:
        loader = self.loader
        if tag == NULL:
            return None
        if tag == BOOL:
            return loader.construct_yaml_bool(node)
        if tag == INT:
            try:
                return loader.construct_yaml_int(node)
            except ValueError:  # past Python's 4,300-digit limit for int(): bad input, reported as YAML
                raise yaml.constructor.ConstructorError(
                    None, None, f"an integer of {len(node.value)} characters is too long", node.start_mark) from None
        if tag == FLOAT:
            return loader.construct_yaml_float(node)
        raise _Unusual
