"""One escaping function per kind of output, used by every command: terminal text, GitHub Actions workflow
commands and XML.  (Markdown is :mod:`gpuspec.templating.escape`, which every Markdown document uses.)

Any text that came from input (a spec value, a key, an override's reason or owner, a file name) passes through
the function of the output it goes to, so it cannot start a new line, a workflow command (``::error``,
``::add-mask::``, ``::stop-commands::``), a terminal escape sequence (ESC, OSC-8 links) or reorder what is shown
around it (bidirectional controls, U+2028/U+2029).  JSON and YAML output, where such characters are legal string
content, shows the bidirectional controls as ``\\uXXXX`` escapes (:func:`json_text`, :func:`bidi`): the same value,
never the raw character.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Characters that would end, rewrite or visually reorder a line: C0 controls but tab, DEL and C1 controls,
#: the Unicode line and paragraph separators, and the bidirectional formatting characters.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: The same without the line feed (for text whose own line breaks are part of the message).
_UNSAFE_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    return "\\n" if char == "\n" else f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def terminal(text: str) -> str:
    """``text`` safe as part of one line of terminal output: line breaks, escapes and bidi controls shown escaped."""
    return _UNSAFE.sub(_shown, text) if text else text


def terminal_lines(text: str) -> str:
    """Like :func:`terminal` but keeps line feeds (a multi-line message gpuspec composed itself)."""
    return _UNSAFE_IN_LINES.sub(_shown, text) if text else text


def workflow_data(text: str) -> str:
    """The message part of a GitHub Actions workflow command: one line (``%``, CR, LF encoded), no escapes."""
    return terminal(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def workflow_property(text: str) -> str:
    """A property value of a workflow command (also ``:`` and ``,`` encoded)."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


#: Characters XML 1.0 cannot carry.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_line(text: str) -> str:
    """Text for an XML attribute or one-line element: no line break (it would be printed raw by a CI log),
    no terminal escape or bidi control, nothing XML cannot hold."""
    return _INVALID_XML.sub("\ufffd", terminal(text))


def xml_lines(text: str) -> str:
    """Multi-line XML element text gpuspec composed itself: its line feeds kept, everything else as xml_line."""
    return _INVALID_XML.sub("\ufffd", terminal_lines(text))


#: The bidirectional formatting characters (and the Arabic letter mark and LRM/RLM): they reorder what is shown
#: around them without being seen.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What ``json.dumps(ensure_ascii=False)`` leaves raw in a string but no output may show raw: those, DEL and the C1
#: controls, and the line and paragraph separators.
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _code_point(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def has_bidi(text: str) -> bool:
    """True when ``text`` holds a bidirectional control."""
    return _BIDI.search(text) is not None


def bidi(text: str) -> str:
    """``text`` with every bidirectional control written as a ``\\uXXXX`` escape (the same character inside a
    JSON string or a double-quoted YAML scalar; visibly escaped anywhere else)."""
    return _BIDI.sub(_code_point, text) if text and _BIDI.search(text) else text


def json_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)`` with the characters no output shows raw (bidirectional
    controls, C1 controls, U+2028/U+2029) written as ``\\uXXXX`` escapes: the same JSON value."""
    text = json.dumps(value, ensure_ascii=False, **options)
    return _JSON_RAW.sub(_code_point, text)
