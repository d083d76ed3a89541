"""A fast path for the common shape of rendered documents: block YAML written directly, in the exact text the
PyYAML path of :mod:`gpuspec.render.serialize` produces (sorted keys, sequences indented under their key).

It takes only what it can write exactly: mappings with string keys, lists, strings, integers, booleans and
None.  How a one-line string is written (plain or single-quoted) is asked of PyYAML once per distinct string
(``probe``) and remembered; a multi-line string is written as the literal block PyYAML writes when its
spelling has no choices in it (:func:`literal_lines`).  A string PyYAML writes double-quoted or on several
lines in any other way, a string with spaces that could reach the fold column, a list directly inside a list,
or any other type makes :meth:`BlockWriter.emit` return None, and the caller dumps that document with PyYAML.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: ``probe(value, as_key)``: the text PyYAML writes for ``value`` on one line (as a mapping key or a value),
#: or None when it writes it any other way.
Probe = Callable[[str, bool], str | None]


class _Unsupported(Exception):
    """The document needs the PyYAML path."""


#: Printable ASCII and line feeds only: PyYAML writes anything else in a multi-line string double-quoted.
_LITERAL_TEXT = re.compile(r"[\n -~]*\Z")


def literal_lines(value: str) -> tuple[str, list[str]] | None:
    """The header (``|`` or ``|-``) and the lines of the literal block PyYAML writes for a multi-line string.

    None when PyYAML would write the string another way (double-quoted: a line ends in a space, a character
    outside printable ASCII) or needs a header this module does not write (an indentation indicator for a
    leading space or line break, ``|+`` for more than one trailing line break).  Empty lines stay empty.
    """
    if (value[0] in " \n" or value.endswith((" ", "\n\n")) or " \n" in value
            or not _LITERAL_TEXT.match(value)):
        return None
    if value.endswith("\n"):
        return "|", value[:-1].split("\n")
    return "|-", value.split("\n")


class BlockWriter:
    """Writes documents for one dumper configuration (folding column, probe); remembers probed strings."""

    def __init__(self, probe: Probe, fold_width: int, memo_limit: int = 1 << 16) -> None:
        """``probe`` answers for strings not seen yet; ``fold_width`` is the dumper's ``width``."""
        self._probe = probe
        self._width = fold_width
        self._limit = memo_limit
        self._values: dict[str, str] = {}
        self._keys: dict[str, str] = {}
        self._blocks: dict[str, tuple[str, list[str]] | None] = {}

    def emit(self, document: Any) -> str | None:
        """The document's text (ends with a newline), or None when it needs the PyYAML path."""
        measured = self.emit_measured(document)
        return measured[0] if measured is not None else None

    def emit_measured(self, document: Any) -> tuple[str, int] | None:
        """:meth:`emit`'s text and the length of its longest line (None when it needs the PyYAML path)."""
        out: list[str] = []
        try:
            if type(document) is dict and document:
                self._mapping(document, 0, "", 0, out)
            elif type(document) is list and document:
                self._sequence(document, 0, 0, out)
            else:
                return None
        except _Unsupported:
            return None
        return "\n".join(out) + "\n", max(map(len, out))

    def _known(self, memo: dict[str, str], value: str, as_key: bool) -> str:
        """The remembered text of ``value`` ("" when PyYAML writes it some other way)."""
        text = memo.get(value)
        if text is None:
            text = self._remember(memo, value, self._probe(value, as_key) or "")
        return text

    def _remember(self, memo: dict[str, Any], value: str, answer: Any) -> Any:
        """Store ``answer`` for ``value`` in ``memo`` (emptied first when full) and return it."""
        if len(memo) >= self._limit:
            memo.clear()
        memo[value] = answer
        return answer

    def _block(self, head: str, value: str, column: int, out: list[str]) -> None:
        """Append ``head`` plus the literal block of ``value`` with its lines at ``column`` (final text)."""
        blocks = self._blocks
        block = blocks[value] if value in blocks else self._remember(blocks, value, literal_lines(value))
        if block is None:
            raise _Unsupported
        indicator, lines = block
        out.append(head + indicator)
        pad = " " * column
        out.extend([pad + line if line else "" for line in lines])

    def _scalar(self, value: Any, column: int) -> str:
        """``value`` as written from raw emitter column ``column`` (the column before sequences are indented)."""
        kind = type(value)
        if kind is str:
            text = self._values.get(value)
            if text is None:
                text = self._known(self._values, value, False)
            if not text or (" " in text and column + len(text) > self._width):
                raise _Unsupported
            return text
        if kind is int:
            return str(value)
        if kind is bool:
            return "true" if value else "false"
        if value is None:
            return "null"
        raise _Unsupported

    def _mapping(self, data: dict[Any, Any], column: int, lead: str, shift: int, out: list[str]) -> None:
        """Entries at ``column``; the first line starts with ``lead`` (``- `` of a list item, or indentation).

        ``shift``: how far sequences indented under their key moved this block right of PyYAML's own column.
        """
        try:
            keys = sorted(data)
        except TypeError:
            raise _Unsupported from None
        memo = self._keys
        prefix = lead
        pad = " " * column
        for key in keys:
            if type(key) is not str:
                raise _Unsupported
            key_text = memo.get(key)
            if key_text is None:
                key_text = self._known(memo, key, True)
            if not key_text or " " in key_text:
                raise _Unsupported
            value = data[key]
            kind = type(value)
            if kind is dict:
                if value:
                    out.append(prefix + key_text + ":")
                    self._mapping(value, column + 2, " " * (column + 2), shift, out)
                else:
                    out.append(prefix + key_text + ": {}")
            elif kind is list:
                if value:
                    out.append(prefix + key_text + ":")
                    self._sequence(value, column + 2, shift + 2, out)
                else:
                    out.append(prefix + key_text + ": []")
            elif kind is str and "\n" in value:
                self._block(prefix + key_text + ": ", value, column + 2, out)
            else:
                out.append(prefix + key_text + ": " + self._scalar(value, column + len(key_text) + 2 - shift))
            prefix = pad

    def _sequence(self, data: list[Any], column: int, shift: int, out: list[str]) -> None:
        """Items with their dashes at ``column``; ``shift`` as for :meth:`_mapping`."""
        lead = " " * column + "- "
        for item in data:
            kind = type(item)
            if kind is dict:
                if item:
                    self._mapping(item, column + 2, lead, shift, out)
                else:
                    out.append(lead + "{}")
            elif kind is list:
                if item:
                    raise _Unsupported
                out.append(lead + "[]")
            elif kind is str and "\n" in item:
                self._block(lead, item, column + 2, out)
            else:
                out.append(lead + self._scalar(item, column + 2 - shift))
