"""What a credential looks like, and text with credentials replaced by ``<redacted>``.

The lowest layer of the package: the secrets rule, the validate stage and
every reporter use these functions, so a credential is recognised the same
way everywhere.  Every pattern runs in time linear in the length of the text
(no nested or unbounded repetition that can backtrack), because spec values
are user input of any length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpuspec.escaping import terminal
from gpuspec.findings import DocPath

REDACTED = "<redacted>"

#: Value patterns, each with the words a finding uses for it (all linear-time).
VALUE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"), "a PEM private key"),
    # git's http.<url>.extraheader (where actions/checkout persists the job's token): the whole value.
    (re.compile(r"(?i)extraheader[ \t]*[=:][ \t]*[^\r\n]+"), "a git extra HTTP header"),
    (re.compile(r"(?i)\bbearer[ \t]+[A-Za-z0-9\-._~+/]{16,}=*"), "a bearer token"),
    # An HTTP Authorization header in any scheme (Basic <base64>, Bearer, token, Digest...): the credential.
    (re.compile(r"(?i)authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:[A-Za-z]{1,20}[ \t]+)?[A-Za-z0-9\-._~+/]{8,}=*"),
     "an HTTP Authorization header"),
    (re.compile(r"(?i)\bbasic[ \t]+[A-Za-z0-9+/]{20,}={0,2}"), "HTTP basic credentials"),
    # Token prefixes are matched even glued to a preceding letter or digit ("stableghp_..."); none of these
    # needs anything after its repetition, so a start that reaches far always matches (linear time).  A JSON
    # Web Token does (its dots), so it starts only at a word boundary.
    (re.compile(r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), "an AWS access key id"),
    (re.compile(r"(?i)aws_secret_access_key[ \t]*[=:][ \t]*\S{20,}"), "an AWS secret access key"),
    (re.compile(r"gh[pousr]_[A-Za-z0-9]{30,}"), "a GitHub token"),
    (re.compile(r"github_pat_[A-Za-z0-9_]{30,}"), "a GitHub token"),
    (re.compile(r"glpat-[A-Za-z0-9_\-]{20,}"), "a GitLab token"),
    (re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"), "a Slack token"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "a JSON Web Token"),
    (re.compile(r"nvapi-[A-Za-z0-9_\-]{20,}"), "an NGC API key"),
    # userinfo of a URL: "//" right after a scheme character and ":", or a scheme-relative "//" that begins
    # a word (RFC 3986's network-path reference, "//user:pass@host/x").  The pattern starts with the literal
    # "//" (so the engine jumps from one to the next), the look-behinds then decide; neither part can hold
    # the '/' of a later "//", so every character is scanned a bounded number of times.
    (re.compile(r"//(?:(?<=[A-Za-z0-9+.\-]://)|(?<![^\s\"'=(<\[{,]//))[^/\s:@]+:[^/\s@]+@"),
     "a URL with user:password"),
    (re.compile(r'"auths"[ \t\r\n]*:[ \t\r\n]*\{'), "a Docker registry config with credentials"),
)

#: Per value pattern (same order), text every match contains: the pattern is not run on text without it
#: (scanning a long document with a pattern that has no literal start costs milliseconds).  A lowercase
#: needle belongs to a case-insensitive pattern and is looked up in the lowercased text; None: always run.
_NEEDLES: tuple[tuple[str, ...] | None, ...] = (
    ("-----BEGIN ",), ("extraheader",), ("bearer",), ("authorization",), ("basic",), None,
    ("aws_secret_access_key",), None, None, None, ("xox",), ("eyJ",), None, None, None,
)
#: Characters other than ASCII letters that a case-insensitive pattern matches as one (İ and ı as i, ſ as s,
#: the Kelvin sign as k); in text with one of them, every pattern runs.  (Looked up one by one: four
#: substring searches cost a tenth of one character-class scan of a long text.)
_CASE_FOLDS = ("\u0130", "\u0131", "\u017f", "\u212a")
#: Words every ``key: value`` credential (``_KEY_VALUE``) contains, lowercase.
_KEY_WORDS = ("password", "passwd", "secret", "token", "api", "access", "private", "credential", "authorization",
              "extraheader")
#: Texts shorter than this are run through every pattern (looking for needles would cost more).
_SHORT_TEXT = 512


class _Lowered:
    """A text and, computed once when first asked, its lowercased form (None when case folding could
    change what a case-insensitive pattern matches, or the positions)."""

    __slots__ = ("_lower", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | bool | None = False

    @property
    def lower(self) -> str | None:
        if self._lower is False:
            text = self.text
            self._lower = None if not text.isascii() and any(c in text for c in _CASE_FOLDS) else text.lower()
        return self._lower if isinstance(self._lower, str) else None

    def may_hold(self, needles: tuple[str, ...] | None) -> bool:
        """False only when no match of a pattern with these needles can be in the text."""
        if needles is None:
            return True
        if needles[0].islower():
            lower = self.lower
            return lower is None or any(n in lower for n in needles)
        return any(n in self.text for n in needles)


#: Mapping keys whose (non-empty) value is a credential.
SECRET_KEY = re.compile(
    r"(?i)^(?:.*[-_.])?(pass|pwd)$"  # short words only as a whole part: "pass", "db_pwd"
    r"|(?i:^.*(password|passwd|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credentials?"
    r"|authorization|extraheader)$)"
)
#: Schema keys that hold Kubernetes object names, not secret values.
NAME_KEYS = frozenset({"pullSecrets", "kubeConfigSecret", "imagePullSecrets"})
#: Longest end of a key the key pattern is tried on: whether a key names a credential depends on how it ends
#: (``..._password``), so a longer key is judged by its last characters (the pattern stays cheap).
_MAX_KEY = 200

#: A ``key:`` in a line of YAML or JSON (block or flow style).  A key starts only at the line start or after
#: a blank, ``{``, ``,`` or quote, none of which it contains, so no character is scanned by two attempts.
_LINE_KEY = re.compile(r"""(?:^|(?<=[ \t{,"']))(?P<key>[A-Za-z0-9_.\-/]+)["']?[ \t]*:(?=[ \t]|$)""")
#: ``<credential-like key>: value`` or ``=value`` inside any text (a message quoting a line, a diff, JSON quoted
#: inside a JSON string as ``\"password\": \"...\"``); the key starts only where a key cannot continue, so each
#: run of key characters is tried from one place.
_KEY_VALUE = re.compile(
    r"""(?i)(?<![A-Za-z0-9_.\-/])([A-Za-z0-9_.\-/]*?"""
    r"""(?:password|passwd|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credentials?"""
    r"""|authorization|extraheader)"""
    r"""(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?)(?!<redacted>)(?![|>][-+0-9]*(?:\s|$))([^\s'",}\]\\]+)"""
)


@dataclass(frozen=True, slots=True)
class SecretHit:
    """Where a credential was seen and what kind it is (never the value)."""

    path: DocPath
    kind: str
    at_key: bool = False


def scan(data: Any, path: DocPath = ()) -> Iterator[SecretHit]:
    """Every credential written in ``data`` (plain YAML data), with its document path."""
    if isinstance(data, dict):
        for key, value in data.items():
            child = (*path, key if isinstance(key, str | int) else str(key))
            if isinstance(key, str) and is_secret_key(key) and value not in (None, "", [], {}) and not isinstance(
                value, bool
            ):
                yield SecretHit(child, f"a value under the credential-like key {key!r}")
                continue
            if isinstance(key, str):
                kind = classify_value(key)
                if kind:
                    yield SecretHit(child, kind, at_key=True)
                    continue
            yield from scan(value, child)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield from scan(item, (*path, index))
    elif isinstance(data, str):
        kind = classify_value(data)
        if kind:
            yield SecretHit(path, kind)


class SecretProbe:
    """Answers "does this data hold a credential?" as :func:`scan` would, remembering each string's verdict.

    A fleet repeats the same keys and values thousands of times, and most files hold no credential, so a
    walk that classifies each distinct string once and builds no paths is several times cheaper than
    :func:`scan`; only data it flags needs the full scan.  Keep one probe for a run (it grows with the
    distinct strings seen).
    """

    def __init__(self) -> None:
        """An empty probe."""
        self._keys: dict[str, bool] = {}
        self._values: dict[str, bool] = {}

    def holds_secret(self, data: Any) -> bool:
        """True exactly when ``scan(data)`` yields at least one hit."""
        if isinstance(data, dict):
            keys = self._keys
            for key, value in data.items():
                if isinstance(key, str):
                    flagged = keys.get(key)
                    if flagged is None:
                        flagged = keys[key] = is_secret_key(key)
                    if flagged and value not in (None, "", [], {}) and not isinstance(value, bool):
                        return True
                    if self._string(key):
                        return True
                if self.holds_secret(value):
                    return True
            return False
        if isinstance(data, list):
            return any(self.holds_secret(item) for item in data)
        if isinstance(data, str):
            return self._string(data)
        return False

    def _string(self, text: str) -> bool:
        flagged = self._values.get(text)
        if flagged is None:
            flagged = self._values[text] = classify_value(text) is not None
        return flagged


def contains_secret(data: Any) -> bool:
    """True when plain data (a string, or a mapping or list of them) holds a credential anywhere."""
    return next(scan(data), None) is not None


def _pem_in_certificate(text: str) -> bool:
    start = text.find("-----BEGIN CERTIFICATE-----")
    return start >= 0 and text.find("PRIVATE KEY", start) >= 0


def classify_value(text: str) -> str | None:
    """The kind of credential ``text`` contains, or None."""
    lowered = _Lowered(text) if len(text) >= _SHORT_TEXT else None
    for (pattern, kind), needles in zip(VALUE_PATTERNS, _NEEDLES, strict=True):
        if (lowered is None or lowered.may_hold(needles)) and pattern.search(text):
            return kind
    if _pem_in_certificate(text):
        return "a PEM private key"
    return None


def is_secret_key(key: str) -> bool:
    """True when a mapping key names a credential (``password``, ``apiKey``, ``db_token``…)."""
    return key not in NAME_KEYS and bool(SECRET_KEY.match(key if len(key) <= _MAX_KEY else key[-_MAX_KEY:]))


#: What replaces each pattern's match (a URL keeps its scheme and host, only the userinfo goes).
_REPLACEMENTS = {"a URL with user:password": "//" + REDACTED + "@"}


def redact_text(text: str) -> str:
    """``text`` with every credential-shaped part (tokens, keys, URL ``user:password@``) replaced."""
    if not text:
        return text
    short = len(text) < _SHORT_TEXT
    lowered = _Lowered(text)
    for (pattern, kind), needles in zip(VALUE_PATTERNS, _NEEDLES, strict=True):
        if short or lowered.may_hold(needles):
            replaced = pattern.sub(_REPLACEMENTS.get(kind, REDACTED), text)
            if replaced != text:
                text = replaced
                lowered = _Lowered(text)
    if _pem_in_certificate(text):
        text = text[: text.find("-----BEGIN CERTIFICATE-----")] + REDACTED
        lowered = _Lowered(text)
    if short:
        return _KEY_VALUE.sub(_redact_key_value, text)
    return _redact_key_values(lowered)


def _redact_key_values(lowered: _Lowered) -> str:
    """``_KEY_VALUE`` replaced in a long text, run only on the lines that hold one of its words.

    Equivalent to running it on the whole text: no match contains a line break, and a line's ends look to
    its look-behind and look-ahead as the neighbouring line breaks do (neither in the key class; ``$``
    where ``\\s`` would match the break).
    """
    text, lower = lowered.text, lowered.lower
    if lower is None:
        return _KEY_VALUE.sub(_redact_key_value, text)
    spans: set[tuple[int, int]] = set()
    for word in _KEY_WORDS:
        at = lower.find(word)
        while at >= 0:
            start = lower.rfind("\n", 0, at) + 1
            end = lower.find("\n", at)
            end = len(lower) if end < 0 else end
            spans.add((start, end))
            at = lower.find(word, end)
    if not spans:
        return text
    out: list[str] = []
    position = 0
    for start, end in sorted(spans):
        out.append(text[position:start])
        out.append(_KEY_VALUE.sub(_redact_key_value, text[start:end]))
        position = end
    out.append(text[position:])
    return "".join(out)


def _redact_key_value(match: re.Match[str]) -> str:
    key = match.group(1).rstrip("\"' \t:=")
    if key.rsplit("/", 1)[-1] in NAME_KEYS:  # holds the name of a Kubernetes Secret, not a credential
        return match.group(0)
    return match.group(1) + REDACTED


def redact_line(line: str) -> str:
    """One source line as a report may show it: the value of a credential-like key and credential shapes hidden."""
    for match in _LINE_KEY.finditer(line):
        if is_secret_key(match["key"]) and line[match.end():].strip() not in ("", "|", ">", "|-", ">-"):
            return line[: match.end()] + " " + REDACTED
    return redact_text(line)


def one_line(text: str) -> str:
    """``text`` safe to print as part of one line: newlines, other control characters and bidi controls shown
    escaped (the terminal escaping of :mod:`gpuspec.escaping`)."""
    return terminal(text)
