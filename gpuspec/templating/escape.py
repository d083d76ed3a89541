"""Escape values for Markdown so that no spec value can change the structure of a generated document.

Every filter returns :class:`Md`, text that is already safe; the template environment escapes any other
string with :func:`text` on output, so a template that forgets a filter still cannot be broken by a value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuspec.escaping import terminal

#: Shown for an empty or absent value.
DASH = "–"
_SPACE = re.compile(r"\s+")
_BACKTICKS = re.compile(r"`+")
#: Characters that can open inline Markdown or GFM syntax (emphasis, links, images, code, tables, strikethrough,
#: headings' closing sequence, GitHub's $math$); each is backslash-escaped in text.
_INLINE = str.maketrans({c: "\\" + c for c in "\\`*_[]|~!#$"})
#: A value that would start a block quote, a list item or a setext underline where it begins a line; group 1 is
#: the character to escape.
_BLOCK_START = re.compile(r"(>)|([-+])(?: |\Z)|(=)+\Z|\d{1,9}([.)])(?: |\Z)")


#: Text made only of these characters needs no escaping at all (most names, versions and labels).
_PLAIN = re.compile(r"[A-Za-z0-9 .,:;/=%()'\"?–·→×°{}^-]*\Z")
#: Where GFM's extended autolinks start (``https://…``, ``http://…``, ``ftp://…``, ``www.…``): a bare URL in a value
#: would become a link.  A zero-width space (as a character reference) after the scheme's colon or after ``www``
#: keeps the text as it reads while no autolink can start there.
_AUTOLINK = re.compile(r"(?i)(?<![A-Za-z0-9])(?:(https?|ftp)(:)(?=//)|(www)(?=\.))")


class Md(str):
    """Markdown text that is safe to insert as it is (the output of an escaping filter or of a template)."""

    __slots__ = ()


def flatten(value: object) -> str:
    """The value as one line: every run of whitespace (newlines included) becomes one space."""
    return _SPACE.sub(" ", str(value)).strip()


#: Escaped forms of strings already seen (documents of one fleet repeat the same names and versions).
_TEXT_MEMO: dict[str, Md] = {}
_CODE_MEMO: dict[str, Md] = {}
_MEMO_LIMIT = 1 << 15


def _remember(memo: dict[str, Md], key: str, value: Md) -> Md:
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value
    return value


def text(value: object) -> Md:
    """Plain text for a paragraph, list item, heading or table cell: no markup, no HTML, no mention, no autolink
    (a bare URL stays text), one line."""
    if type(value) is str:
        known = _TEXT_MEMO.get(value)
        return known if known is not None else _remember(_TEXT_MEMO, value, _text(value))
    return _text(value)


def _text(value: object) -> Md:
    if value is None or value == "":
        return Md(DASH)
    raw = str(value)
    if (_PLAIN.match(raw) and raw == raw.strip() and "  " not in raw and not _BLOCK_START.match(raw)
            and not _AUTOLINK.search(raw)):
        return Md(raw)
    out = terminal(flatten(raw)).translate(_INLINE)
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # A zero-width space after @ keeps GitHub from notifying a user or team named in a value.
    out = out.replace("@", "@&#8203;")
    out = no_autolink(out)
    match = _BLOCK_START.match(out)
    if match:
        at = next(match.start(g) for g in range(1, 5) if match.group(g) is not None)
        out = out[:at] + "\\" + out[at:]
    return Md(out)


def no_autolink(markdown: str) -> str:
    """``markdown`` (escaped text) with a zero-width space where GFM would start an extended autolink, so a bare
    URL reads the same but stays text."""
    return _AUTOLINK.sub(lambda m: f"{m.group(1)}:&#8203;" if m.group(1) else f"{m.group(3)}&#8203;", markdown)


def code(value: object) -> Md:
    """The value as inline code (a dash when empty), fenced with more backticks than it contains.

    Pipes are escaped so that the span can stand in a table cell (GitHub shows ``\\|`` inside code as ``|`` there).
    """
    if type(value) is str:
        known = _CODE_MEMO.get(value)
        return known if known is not None else _remember(_CODE_MEMO, value, _code(value))
    return _code(value)


def _code(value: object) -> Md:
    if value is None or value == "":
        return Md(DASH)
    text_value = str(value)
    if _PLAIN.match(text_value) and "`" not in text_value and text_value == text_value.strip() \
            and "  " not in text_value:
        return Md(f"`{text_value}`")
    raw = terminal(flatten(text_value)).replace("|", "\\|")
    longest = max((len(m) for m in _BACKTICKS.findall(raw)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if raw.startswith("`") or raw.endswith("`") else ""
    return Md(f"{fence}{pad}{raw}{pad}{fence}")


def codes(values: Iterable[object], separator: str = ", ") -> Md:
    """Several values as inline code, joined (a dash when there are none)."""
    parts = [code(v) for v in values]
    return Md(separator.join(parts) if parts else DASH)


def texts(values: Iterable[object], separator: str = ", ") -> Md:
    """Several values as text, joined (a dash when there are none)."""
    parts = [text(v) for v in values]
    return Md(separator.join(parts) if parts else DASH)


def mermaid_label(value: object) -> Md:
    """Text safe inside a double-quoted Mermaid node or subgraph label (one line, no quote, no markup)."""
    out = flatten(value)
    out = out.replace("&", "&amp;").replace('"', "#quot;").replace("<", "&lt;").replace(">", "&gt;")
    return Md(out.replace("`", "#96;"))


_ID = re.compile(r"[^A-Za-z0-9_]")


def mermaid_id(value: object) -> Md:
    """A Mermaid node id made of letters, digits and underscores only (prefixed, so it is never a keyword)."""
    return Md("n_" + _ID.sub("_", str(value)))


def verbatim(value: object) -> Md:
    """Mark text a caller has already escaped (or fixed text of gpuspec's own) as safe."""
    return Md(str(value))


def fenced(lines: Iterable[object], info: str = "", indent: int = 0) -> Md:
    """Lines as a fenced code block whose fence is longer than any backtick run in them (so none closes it).

    ``indent`` spaces go before every line (a block inside a list item).  Line breaks inside a value start new
    lines of the block, never a new block.
    """
    body = [part for line in lines for part in str(line).splitlines() or [""]]
    longest = max((len(m) for line in body for m in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    pad = " " * indent
    return Md("\n".join(pad + line if line else line for line in [fence + _SPACE.sub("", info), *body, fence]))
