"""Read a Helm template line by line and say which values path lands on which field of which object.

This is the extractor behind the packaged chart-intent data (``scripts/refresh-chart-intent``): it
understands the shapes the GPU Operator chart's ``clusterpolicy.yaml`` and ``nvidiadriver.yaml`` use --
``key: {{ .Values.a.b [| default X] [| quote] }}``, ``key: {{ toYaml .Values.a | nindent N }}`` (also on
the line after ``key:``), ``{{- if EXPR }}`` / ``else if`` / ``else`` / ``end`` and ``{{- with .Values.a }}``
blocks -- and records every other ``.Values`` reference as a read it does not map.  It never runs the template.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")
_ONLY_ACTION = re.compile(r"^\s*\{\{-?\s*(.*?)\s*-?\}\}\s*$")
_KEY = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_.\-]*|\"[^\"]+\")\s*:(?:\s+(.*?))?\s*$")
_VALUES_REF = re.compile(r"\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_\-]*)+)")
_DOT_REF = re.compile(r"(?<![\w$)\]])\.((?:[A-Za-z_][A-Za-z0-9_\-]*)(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*)?")
_NINDENT = re.compile(r"\bnindent\s+(\d+)")
_DEFAULT = re.compile(r"\|\s*default\s+(\"[^\"]*\"|'[^']*'|[^\s|}]+)")


@dataclass(frozen=True)
class FieldMapping:
    """One values path that a template line writes into an object field."""

    values: str
    kind: str
    field: str
    line: int
    #: ``| default X`` of the line (the literal as written), or None.
    default: str | None = None
    #: ``toYaml``: the whole subtree below ``values`` lands below ``field``.
    subtree: bool = False
    #: The ``if``/``with`` conditions the line sits in, outermost first (``not (...)`` for else branches).
    guards: tuple[str, ...] = ()
    #: ``metadata.name`` of the object when the template writes it literally.
    name: str | None = None


@dataclass
class TemplateScan:
    """What one template file maps and reads."""

    fields: list[FieldMapping] = field(default_factory=list)
    #: Every ``.Values`` path the file uses as a value (mapped or not), with the first line.
    reads: dict[str, int] = field(default_factory=dict)
    #: ``.Values`` paths the file only tests in ``if`` conditions (their subtrees are not read), first line.
    tests: dict[str, int] = field(default_factory=dict)


@dataclass
class _Block:
    kind: str  # if | with | range | define | other
    conds: list[str]
    dot: str | None = None

    def guard(self) -> str | None:
        if not self.conds:
            return None
        *before, last = self.conds
        parts = [f"not ({c})" for c in before] + ([last] if last != "" else [])
        if len(parts) == 1:
            return parts[0]
        return "and " + " ".join(f"({p})" for p in parts)


def _strip_comments(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Lines with ``{{/* ... */}}`` comments blanked (also over several lines), numbered from 1."""
    inside = False
    for number, line in enumerate(lines, 1):
        out = ""
        rest = line
        while rest:
            if inside:
                end = rest.find("*/")
                if end < 0:
                    rest = ""
                    break
                close = rest.find("}}", end)
                rest = rest[close + 2:] if close >= 0 else ""
                inside = False
                continue
            start = re.search(r"\{\{-?\s*/\*", rest)
            if start is None:
                out += rest
                break
            out += rest[:start.start()]
            rest = rest[start.end():]
            inside = True
        yield number, out


def _values_path(expr: str, dot: str | None) -> str | None:
    """The values path an expression stands for: ``.Values.a.b`` or, inside ``with``, ``.`` / ``.x``."""
    match = _VALUES_REF.search(expr)
    if match:
        return match.group(1)[1:]
    if dot is not None:
        stripped = expr.strip()
        head = stripped.split("|", 1)[0].strip()
        if head.startswith("toYaml "):
            head = head[len("toYaml "):].strip()
        if head == ".":
            return dot
        if re.fullmatch(r"\.[A-Za-z_][\w.\-]*", head):
            return f"{dot}{head}"
    return None


def _single_source(action: str) -> bool:
    """True when a value action is only ``X``, ``X | default D``, ``X | quote`` or ``toYaml X | nindent N``."""
    pipes = [p.strip() for p in action.split("|")]
    head = pipes[0]
    if head.startswith("toYaml "):
        head = head[len("toYaml "):].strip()
    if not re.fullmatch(r"\$?\.[\w.\-]*", head):
        return False
    return all(re.fullmatch(r"(default\s+\S+.*|quote|nindent\s+\d+|indent\s+\d+|trim)", p) for p in pipes[1:])


def scan_template(text: str) -> TemplateScan:
    """The field mappings and values reads of one Helm template file."""
    scan = TemplateScan()
    blocks: list[_Block] = []
    keys: list[tuple[int, str]] = []  # (indent, key) of open YAML mappings
    kind = ""
    name: str | None = None
    for number, line in _strip_comments(text.splitlines()):
        condition = re.match(r"^\s*\{\{-?\s*(if|else\s+if)\s", line) is not None
        for match in _VALUES_REF.finditer(line):
            (scan.tests if condition else scan.reads).setdefault(match.group(1)[1:], number)
        dot = next((b.dot for b in reversed(blocks) if b.dot is not None), None)
        if dot is not None:
            for action in _ACTION.findall(line):
                for ref in _DOT_REF.finditer(action):
                    if not action[:ref.start()].rstrip().endswith(("Values", "Chart", "Release", "Capabilities")):
                        path = f"{dot}.{ref.group(1)}" if ref.group(1) else dot
                        if not ref.group(1) or not ref.group(1).startswith(("Values", "Chart", "Release")):
                            scan.reads.setdefault(path, number)
        if line.strip() == "---":
            keys, kind, name = [], "", None
            continue
        only = _ONLY_ACTION.match(line)
        if only:
            action = only.group(1)
            word = action.split(None, 1)[0] if action else ""
            rest = action[len(word):].strip()
            if word == "if":
                blocks.append(_Block("if", [rest]))
            elif word == "with":
                blocks.append(_Block("with", [rest], dot=_values_path(rest, dot)))
            elif word in ("range", "define", "block"):
                blocks.append(_Block(word, []))
            elif word == "else" and blocks:
                cond = rest[len("if"):].strip() if rest.startswith("if ") else ""
                blocks[-1].conds.append(cond)
                if blocks[-1].kind == "with":
                    blocks[-1].dot = None
            elif word == "end" and blocks:
                blocks.pop()
            elif word == "toYaml" or action.startswith("toYaml"):
                nindent = _NINDENT.search(action)
                source = _values_path(action, dot)
                if source and nindent and kind and _single_source(action):
                    parents = [k for i, k in keys if i < int(nindent.group(1))]
                    _add(scan, blocks, kind, name, source, parents, number, action, subtree=True)
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        indent, name_, value = len(key.group(1)), key.group(2).strip('"'), key.group(3) or ""
        keys = [(i, k) for i, k in keys if i < indent]
        if indent == 0 and name_ == "kind" and value and "{{" not in value:
            kind = value.strip().strip('"')
        if [k for _, k in keys] == ["metadata"] and name_ == "name" and value and "{{" not in value:
            name = value.strip().strip('"')
        if not value:
            keys.append((indent, name_))
            continue
        actions = _ACTION.findall(value)
        if len(actions) != 1 or not kind or any(b.kind in ("range", "define") for b in blocks):
            continue
        action = actions[0]
        source = _values_path(action, dot)
        if source is None or not _single_source(action):
            continue
        if not re.fullmatch(r"\s*\{\{-?.*?-?\}\}\s*", value):
            continue  # text around the action: not the value itself
        parents = [k for _, k in keys]
        _add(scan, blocks, kind, name, source, [*parents, name_], number, action,
             subtree=action.lstrip().startswith("toYaml"))
    return scan


def _add(scan: TemplateScan, blocks: list[_Block], kind: str, name: str | None, source: str, path: list[str],
         line: int, action: str, *, subtree: bool) -> None:
    default = _DEFAULT.search(action)
    guards = tuple(g for g in (b.guard() for b in blocks) if g)
    scan.fields.append(FieldMapping(
        values=source, kind=kind, field=".".join(path), line=line,
        default=default.group(1) if default else None, subtree=subtree, guards=guards, name=name))


def chart_reads(chart_yaml: dict[str, object]) -> Iterable[str]:
    """Values paths Chart.yaml reads: the ``condition`` of each dependency (``nfd.enabled``)."""
    for dep in chart_yaml.get("dependencies") or []:  # type: ignore[attr-defined]
        if isinstance(dep, dict) and isinstance(dep.get("condition"), str):
            yield from (c.strip() for c in dep["condition"].split(",") if c.strip())
