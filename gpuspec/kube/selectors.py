"""Label and field selector strings, parsed as apimachinery parses them (Kubernetes v1.35, apimachinery v0.35.2).

A string selector (``app=training,tier notin (batch)``) reaches the API server verbatim in ``ListOptions``: the
driver upgrade controller lists the pods to drain and to wait for with ``drain.podSelector`` and
``waitForCompletion.podSelector`` (NVIDIA k8s-operator-libs ``pkg/upgrade``, kubectl's drain helper), and an
API server that cannot parse it answers every list with an error, so the controller never gets past the node.

Sources: ``k8s.io/apimachinery`` ``pkg/labels/selector.go`` (``Parse``: the lexer, the grammar below,
``NewRequirement``) and ``pkg/fields/selector.go`` (``ParseSelector``, ``splitTerms``, ``splitTerm``,
``UnescapeValue``).  Each function returns the problems as short texts worded like apimachinery's errors
(empty: the consumer accepts the string).

Label selector grammar (selector.go)::

    <selector-syntax>         ::= <requirement> | <requirement> "," <selector-syntax>
    <requirement>             ::= [!] KEY [ <set-based-restriction> | <exact-match-restriction> ]
    <set-based-restriction>   ::= "" | <inclusion-exclusion> <value-set>
    <inclusion-exclusion>     ::= "in" | "notin"
    <value-set>               ::= "(" <values> ")"
    <values>                  ::= VALUE | VALUE "," <values>
    <exact-match-restriction> ::= ["="|"=="|"!="|">"|"<"] VALUE
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuspec.kube import syntax

_IDENT, _EOS, _ERROR = "identifier", "end of string", "error"
_OPEN, _CLOSE, _COMMA, _NOT = "(", ")", ",", "!"
_IN, _NOTIN = "in", "notin"
_BINARY = {"=": "=", "==": "==", "!=": "!=", ">": "gt", "<": "lt", _IN: "in", _NOTIN: "notin"}
_SPECIAL = set("=!(),><")
_WHITESPACE = set(" \t\r\n")
#: string2token of selector.go: the special symbols, longest first.
_SYMBOLS = ("==", "!=", "=", "!", "(", ")", ",", ">", "<")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One parsed requirement: ``key``, operator (``exists``, ``!``, ``=``, ``==``, ``!=``, ``in``, ``notin``,
    ``gt``, ``lt``) and values."""

    key: str
    operator: str
    values: tuple[str, ...] = field(default_factory=tuple)


class SelectorError(ValueError):
    """The string is not a selector apimachinery accepts (the message is apimachinery's)."""


def _lex(text: str) -> list[tuple[str, str]]:
    """The tokens of selector.go's Lexer: identifiers run until whitespace or a special symbol."""
    out: list[tuple[str, str]] = []
    at = 0
    while True:
        while at < len(text) and text[at] in _WHITESPACE:
            at += 1
        if at >= len(text):
            out.append((_EOS, ""))
            return out
        if text[at] in _SPECIAL:
            symbol = next((s for s in _SYMBOLS if text.startswith(s, at)), None)
            if symbol is None:
                out.append((_ERROR, text[at]))
                return out
            out.append((symbol, symbol))
            at += len(symbol)
            continue
        start = at
        while at < len(text) and text[at] not in _WHITESPACE and text[at] not in _SPECIAL:
            at += 1
        word = text[start:at]
        out.append((word if word in (_IN, _NOTIN) else _IDENT, word))


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.at = 0

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        tok, lit = self.tokens[min(self.at, len(self.tokens) - 1)]
        if values and tok in (_IN, _NOTIN):
            tok = _IDENT  # "in"/"notin" are plain values where a value is expected (the Values context)
        return tok, lit

    def consume(self, values: bool = True) -> tuple[str, str]:
        tok, lit = self.lookahead(values)
        self.at = min(self.at + 1, len(self.tokens) - 1)
        return tok, lit

    def parse(self) -> list[Requirement]:
        out: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok == _EOS:
                return out
            if tok not in (_IDENT, _NOT):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                out.append(self.requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            tok, lit = self.consume()
            if tok == _EOS:
                return out
            if tok != _COMMA:
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.lookahead()
            if tok not in (_IDENT, _NOT):
                raise SelectorError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        operator = ""
        tok, lit = self.consume()
        if tok == _NOT:
            operator = "!"
            tok, lit = self.consume()
        if tok != _IDENT:
            raise SelectorError(f"found '{lit}', expected: identifier")
        key = lit
        _check_key(key)
        if operator == "!" or self.lookahead()[0] in (_EOS, _COMMA):
            return _new(key, operator or "exists", ())
        tok, lit = self.consume(values=False)
        if tok not in _BINARY:
            raise SelectorError(f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt")
        operator = _BINARY[tok]
        values = self.value_set() if operator in ("in", "notin") else self.exact_value()
        return _new(key, operator, values)

    def value_set(self) -> tuple[str, ...]:
        tok, lit = self.consume()
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok == _CLOSE:
            self.consume()
            return ("",)
        if tok not in (_IDENT, _COMMA):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == _IDENT:
                values.add(lit)
                nxt, nlit = self.lookahead()
                if nxt == _COMMA:
                    continue
                if nxt == _CLOSE:
                    break
                raise SelectorError(f"found '{nlit}', expected: ',' or ')'")
            if tok == _COMMA:
                if not values:
                    values.add("")
                nxt, _ = self.lookahead()
                if nxt == _CLOSE:
                    values.add("")
                    break
                if nxt == _COMMA:
                    self.consume()
                    values.add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")
        tok, lit = self.consume()
        if tok != _CLOSE:
            raise SelectorError(f"found '{lit}', expected: ')'")
        return tuple(sorted(values))

    def exact_value(self) -> tuple[str, ...]:
        tok, _ = self.lookahead()
        if tok in (_EOS, _COMMA):
            return ("",)
        tok, lit = self.consume()
        if tok == _IDENT:
            return (lit,)
        raise SelectorError(f"found '{lit}', expected: identifier")


def _check_key(key: str) -> None:
    problems = syntax.label_key(key)
    if problems:
        raise SelectorError(f"key: Invalid value: {key!r}: {'; '.join(problems)}")


def _new(key: str, operator: str, values: tuple[str, ...]) -> Requirement:
    """``NewRequirement``: the value count per operator, integer values of gt/lt, label-value syntax."""
    problems: list[str] = []
    if operator in ("in", "notin") and not values:
        problems.append("for 'in', 'notin' operators, values set can't be empty")
    elif operator in ("=", "==", "!=") and len(values) != 1:
        problems.append("exact-match compatibility requires one single value")
    elif operator in ("exists", "!") and values:
        problems.append("values set must be empty for exists and does not exist")
    elif operator in ("gt", "lt"):
        if len(values) != 1:
            problems.append("for 'Gt', 'Lt' operators, exactly one value is required")
        for value in values:
            if not _go_int64(value):
                problems.append(f"values[0]: Invalid value: {value!r}: for 'Gt', 'Lt' operators, the value must be "
                                "an integer")
    for index, value in enumerate(values):
        problems += [f"values[{index}]: Invalid value: {value!r}: {p}" for p in syntax.label_value(value)]
    if problems:
        raise SelectorError("; ".join(problems))
    return Requirement(key, operator, values)


def _go_int64(text: str) -> bool:
    """``strconv.ParseInt(text, 10, 64)`` succeeds."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit() and -(2**63) <= int(text) < 2**63


def parse_label_selector(text: str) -> list[Requirement]:
    """The requirements of ``text`` as ``labels.Parse`` reads them; raises :class:`SelectorError`."""
    return _Parser(text).parse()


def label_selector(text: str) -> list[str]:
    """Problems of ``text`` as a string label selector (``labels.Parse``); empty when apimachinery accepts it."""
    try:
        parse_label_selector(text)
    except SelectorError as err:
        return [str(err)]
    return []


def _split_terms(text: str) -> list[str]:
    """``splitTerms``: commas split terms unless escaped with a backslash."""
    terms, start, escaped = [], 0, False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:index])
            start = index + 1
    terms.append(text[start:])
    return terms


def _unescape(value: str) -> str:
    """``UnescapeValue``: ``\\\\``, ``\\,`` and ``\\=`` are the only escapes; bare ``,`` and ``=`` are refused."""
    out, escaped = [], False
    for char in value:
        if escaped:
            if char not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            raise SelectorError(f"invalid field selector: unescaped character {char!r}")
        else:
            out.append(char)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str) -> list[tuple[str, str, str]]:
    """The (field, operator, value) terms of ``text`` as ``fields.ParseSelector`` reads them; raises
    :class:`SelectorError`."""
    out = []
    for term in _split_terms(text) if text else []:
        if not term:
            continue
        split = next(((i, op) for i in range(len(term)) for op in ("!=", "==", "=") if term.startswith(op, i)), None)
        if split is None:
            raise SelectorError(f"invalid selector: {text!r}; can't understand {term!r}")
        index, op = split
        out.append((term[:index], op, _unescape(term[index + len(op):])))
    return out


def field_selector(text: str, known_fields: frozenset[str] | None = None) -> list[str]:
    """Problems of ``text`` as a field selector; with ``known_fields``, also a field the resource does not
    support (the API server's field label conversion refuses it)."""
    try:
        terms = parse_field_selector(text)
    except SelectorError as err:
        return [str(err)]
    if known_fields is None:
        return []
    return [f"field label not supported: {name}" for name, _, _ in terms if name not in known_fields]
