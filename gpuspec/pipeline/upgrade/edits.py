"""Spec edits of an upgrade step, written into the YAML text in place: every other byte (comments, quoting,
indentation, key order) stays as it was.

An edit names a key by its document path (``("pools", 2, "driver", "branch")``) and sets, adds or deletes a
scalar there; a missing parent mapping is added as a block under its own parent.  The text is changed at the
positions ruamel.yaml reports for the nodes, so a diff of the result shows exactly the edited lines.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from gpuspec.errors import GpuspecError

#: Scalars written as the spec writes them: strings that YAML would read as another type are double-quoted.
_PLAIN_STRING = re.compile(r"^[A-Za-z_./][A-Za-z0-9_./:+-]*$|^[0-9]+\.[0-9]+\.[0-9]+[A-Za-z0-9.+-]*$")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "~"}

Scalar = str | int | bool


@dataclass(frozen=True, slots=True)
class KeyEdit:
    """One key of one spec file: ``value`` None deletes it; ``before`` is what the key held (None: absent).

    ``file`` is relative to the fleet folder (``clusters/train-east.yaml``); ``shown`` is the key path as
    people read it (``pools[h100-canary].driver.branch``).  With ``comment``, the edit changes no value: it writes
    that comment on a line of its own just above the value at ``path`` (an inline suppression covers the next
    line that is not a comment), once.
    """

    file: str
    path: tuple[str | int, ...]
    value: Scalar | None
    before: Scalar | None
    shown: str
    comment: str | None = None

    def text(self) -> str:
        """``file: key before -> after`` for reports (``file: key: comment "..." above it`` for a comment)."""

        def word(value: Scalar | None) -> str:
            return "(absent)" if value is None else scalar_text(value)

        if self.comment is not None:
            return f"{self.file}: {self.shown}: comment `{self.comment}` above it"
        return f"{self.file}: {self.shown} {word(self.before)} -> {word(self.value)}"

    def to_json(self) -> dict[str, Any]:
        """The edit as JSON-ready data."""
        out: dict[str, Any] = {
            "file": self.file,
            "path": list(self.path),
            "key": self.shown,
            "before": self.before,
            "after": self.value,
        }
        if self.comment is not None:
            out["comment"] = self.comment
        return out


def scalar_text(value: Scalar) -> str:
    """The YAML text of a scalar as a spec writes it (``"595"``, ``v26.7.0``, ``false``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if (
        _PLAIN_STRING.match(value) and value.lower() not in _RESERVED and not re.fullmatch(r"[0-9.]+", value)
    ) or re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _like(old: str, value: Scalar) -> str:
    """``value`` written in the quoting of the token it replaces (``'580'`` stays single-quoted)."""
    if isinstance(value, str) and not isinstance(value, bool):
        if old.startswith("'"):
            return "'" + value.replace("'", "''") + "'"
        if old.startswith('"'):
            return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return scalar_text(value)


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    return yaml


def _documents(text: str, file: str) -> tuple[Any, ...]:
    try:
        return _parsed(text)
    except YAMLError as exc:
        raise GpuspecError(f"{file}: cannot edit: not YAML ({exc.__class__.__name__})") from None


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> tuple[Any, ...]:
    """The round-trip documents of ``text``, shared by every caller: read them, never change them.

    An upgrade search looks up keys in the same few spec texts thousands of times (each candidate step reads
    what a key held before it), and a round-trip parse of a cluster file costs tens of milliseconds.
    """
    return tuple(_yaml().load_all(io.StringIO(text)))


def lookup(text: str, file: str, path: Sequence[str | int]) -> Any:
    """The value at ``path`` of the first document of ``text`` (None when a key on the way is absent).

    The value is shared with other lookups of the same text: read it, never change it.
    """
    node: Any = next((d for d in _documents(text, file) if d is not None), None)
    for key in path:
        if (isinstance(node, CommentedMap) and isinstance(key, str) and key in node) or (
            isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node)
        ):
            node = node[key]
        else:
            return None
    return node


def _scalar_end(line: str, start: int) -> int:
    """Where the scalar that starts at column ``start`` of ``line`` ends (quotes, or up to a comment)."""
    quote = line[start : start + 1]
    if quote in ('"', "'"):
        i = start + 1
        while i < len(line):
            if line[i] == "\\" and quote == '"':
                i += 2
                continue
            if line[i] == quote:
                if quote == "'" and line[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        return len(line)
    comment = line.find(" #", start)
    end = comment if comment >= 0 else len(line.rstrip("\r\n"))
    return len(line[:end].rstrip())


def _block_lines(key: str, value: Any, indent: int, step: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, Mapping):
        out = [f"{pad}{key}:\n"]
        for k, v in value.items():
            out += _block_lines(str(k), v, indent + step, step)
        return out
    return [f"{pad}{key}: {scalar_text(value)}\n"]


def _step(node: CommentedMap) -> int:
    """The indentation step of nested mappings in ``node`` (2 when it has none)."""
    for key, child in node.items():
        if isinstance(child, CommentedMap) and len(child) and not child.fa.flow_style():
            inner = int(child.lc.key(next(iter(child)))[1]) - int(node.lc.key(key)[1])
            if inner > 0:
                return inner
    return 2


def apply_edit(text: str, edit: KeyEdit) -> str:
    """``text`` with ``edit`` applied in place; a GpuspecError when the path cannot be edited that way.

    A node on the way that YAML shares (an anchor and its aliases) is written out at every use first, so the edit
    changes this use only: one ``driver:`` block anchored for two pools stays what it was for the other pool."""
    if edit.comment is not None:
        return _add_comment(text, edit)
    for _ in range(32):  # each round writes out one shared node
        expanded = _unshare(text, edit)
        if expanded is None:
            return _apply_edit(text, edit)
        text = expanded
    raise GpuspecError(f"{edit.file}: cannot edit {edit.shown}: too many YAML anchors on the way")


def _add_comment(text: str, edit: KeyEdit) -> str:
    """``text`` with ``edit.comment`` on a line of its own above the value at ``edit.path`` (followed as far as the
    document allows, as findings are located), indented as that line is; unchanged when the line above already
    says it."""
    node: Any = lookup(text, edit.file, ())
    container: Any = None
    key: str | int | None = None
    for part in edit.path:
        if (isinstance(node, CommentedMap) and isinstance(part, str) and part in node) or (
            isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node)
        ):
            container, key, node = node, part, node[part]
        else:
            break
    if container is None:
        raise GpuspecError(f"{edit.file}: cannot comment {edit.shown}: the spec has no such place")
    line_no = container.lc.value(key)[0] if isinstance(container, CommentedMap) else container.lc.item(key)[0]
    lines = text.splitlines(keepends=True)
    line = lines[line_no]
    indent = line[: len(line) - len(line.lstrip(" "))]
    comment = f"{indent}# {edit.comment}\n"
    if line_no > 0 and lines[line_no - 1] == comment:
        return text
    lines.insert(line_no, comment)
    return "".join(lines)


def _unshare(text: str, edit: KeyEdit) -> str | None:
    """``text`` with the first shared (anchored) mapping on ``edit``'s path written out at each of its uses; None
    when the path crosses none."""
    doc = lookup(text, edit.file, ())
    node: Any = doc
    for key in edit.path:
        if isinstance(node, CommentedMap) and node.merge:
            raise GpuspecError(
                f"{edit.file}: cannot edit {edit.shown}: the mapping on the way takes keys from a YAML merge key "
                "(<<: *anchor)", hint="write those keys out in the file, then run the step again")
        if not ((isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node))
                or (isinstance(node, CommentedMap) and isinstance(key, str) and key in node)):
            return None
        child = node[key]
        if isinstance(child, CommentedMap) and child.anchor.value:
            return _write_out(text, doc, child, edit.file, edit.shown)
        node = child
    return None


def _write_out(text: str, doc: Any, shared: CommentedMap, file: str, shown: str) -> str:
    """``text`` with every alias of the anchored mapping ``shared`` replaced by a block copy and its anchor dropped."""
    name = shared.anchor.value
    lines = text.splitlines(keepends=True)
    uses: list[tuple[int, int]] = []  # (line, column of the key) of each mapping key whose value is ``shared``

    def walk(node: Any) -> None:
        if isinstance(node, CommentedMap):
            for key, value in node.items():
                if value is shared:
                    uses.append(tuple(node.lc.key(key)))
                elif isinstance(value, (CommentedMap, CommentedSeq)):
                    walk(value)
        elif isinstance(node, CommentedSeq):
            for value in node:
                if value is shared:
                    raise GpuspecError(f"{file}: cannot edit {shown}: a list item is the alias *{name}",
                                       hint="write the item out in the file, then run the step again")
                if isinstance(value, (CommentedMap, CommentedSeq)):
                    walk(value)

    walk(doc)
    body = _plain(shared)
    for line_no, col in sorted(uses, reverse=True):
        line = lines[line_no]
        alias = line.find(f"*{name}", col)
        if alias >= 0 and line[col:alias].rstrip().endswith(":"):
            end = alias + 1 + len(name)
            block = _block_lines("", body, col, _step(shared) if len(shared) else 2)[1:]
            lines[line_no:line_no + 1] = [line[:alias].rstrip() + line[end:].rstrip("\r\n") + "\n", *block]
        else:
            anchor = line.find(f"&{name}", col)
            if anchor < 0:
                raise GpuspecError(f"{file}: cannot edit {shown}: the anchor &{name} is not where YAML says",
                                   hint="write the anchored value out at every use, then run the step again")
            end = anchor + 1 + len(name)
            lines[line_no] = line[:anchor].rstrip() + line[end:]
    return "".join(lines)


def _plain(node: Any) -> Any:
    """A mapping of ruamel nodes as plain data (nested mappings kept, scalars as written)."""
    if isinstance(node, CommentedMap):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        raise GpuspecError("cannot write out an anchored list", hint="write the list out in the file")
    return node


def _apply_edit(text: str, edit: KeyEdit) -> str:
    """:func:`apply_edit` of a path that crosses no shared node."""
    lines = text.splitlines(keepends=True)
    doc = lookup(text, edit.file, ())
    node: Any = doc
    *head, last = edit.path
    missing: list[str] = []
    for i, key in enumerate(head):
        if (isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node)) or (
            isinstance(node, CommentedMap) and isinstance(key, str) and key in node
        ):
            node = node[key]
        elif isinstance(node, CommentedMap) and isinstance(key, str):
            missing = [str(k) for k in head[i:]]
            break
        else:
            raise GpuspecError(f"{edit.file}: cannot edit {edit.shown}: the spec has no such place")
    if not isinstance(node, CommentedMap) or node.fa.flow_style():
        raise GpuspecError(f"{edit.file}: cannot edit {edit.shown} in place (not a block mapping)")
    if missing:
        if edit.value is None:
            return text  # nothing to delete
        value: Any = edit.value
        for key in reversed([*missing[1:], str(last)]):
            value = {key: value}
        return _insert(lines, node, missing[0], value)
    if str(last) in node:
        key = str(last)
        if isinstance(node[key], (CommentedMap, CommentedSeq)):
            raise GpuspecError(f"{edit.file}: cannot edit {edit.shown}: it is not a scalar")
        line_no, col = node.lc.value(key)
        if edit.value is None:
            key_line = node.lc.key(key)[0]
            if line_no != key_line:
                raise GpuspecError(f"{edit.file}: cannot delete {edit.shown}: its value is not on the key's line")
            if _first_key_inline(node, key, lines):
                raise GpuspecError(f"{edit.file}: cannot delete {edit.shown}: it opens a list item")
            del lines[key_line]
            return "".join(lines)
        line = lines[line_no]
        end = _scalar_end(line, col)
        lines[line_no] = line[:col] + _like(line[col:end], edit.value) + _without_provenance(line[end:])
        return "".join(lines)
    if edit.value is None:
        return text
    return _insert(lines, node, str(last), edit.value)


#: The comment `gpuspec import` puts after a value it read from the running cluster (audit/draft.py).
PROVENANCE = "# from the cluster:"


def _without_provenance(rest: str) -> str:
    """The rest of an edited value's line without import's provenance comment: the value no longer comes from the
    cluster, so the comment would be untrue."""
    at = rest.find(PROVENANCE)
    if at < 0:
        return rest
    return rest[:at].rstrip() + rest[len(rest.rstrip("\r\n")):]


def _first_key_inline(node: CommentedMap, key: str, lines: list[str]) -> bool:
    """True when ``key`` is written on a ``- `` line (the first key of a list item)."""
    line_no, col = node.lc.key(key)
    return bool(lines[line_no][:col].strip().startswith("-"))


def _insert(lines: list[str], node: CommentedMap, key: str, value: Any) -> str:
    """Add ``key: value`` to the block mapping ``node``: after its last key whose value is a one-line scalar."""
    keys = list(node)
    if not keys:
        raise GpuspecError(f"cannot add {key}: its mapping is empty")
    col = node.lc.key(keys[0])[1]
    step = _step(node)
    after: int | None = None
    for k in keys:
        if isinstance(node[k], (CommentedMap, CommentedSeq)):
            continue
        k_line, _ = node.lc.key(k)
        v_line, _ = node.lc.value(k)
        if k_line == v_line:
            after = k_line
    block = _block_lines(key, value, col, step)
    if after is None:
        first_line = node.lc.key(keys[0])[0]
        if lines[first_line][:col].strip().startswith("-"):
            raise GpuspecError(f"cannot add {key}: no place for it in its mapping")
        lines[first_line:first_line] = block
    else:
        lines[after + 1 : after + 1] = block
    return "".join(lines)


def apply_edits(texts: Mapping[str, str], edits: Sequence[KeyEdit]) -> dict[str, str]:
    """The spec texts (by file relative to the fleet folder) with every edit applied, in order."""
    out = dict(texts)
    for edit in edits:
        if edit.file not in out:
            raise GpuspecError(f"{edit.file}: no such spec file")
        out[edit.file] = apply_edit(out[edit.file], edit)
    return out


def write_atomic(path: Path, text: str, *, shown: str | None = None) -> None:
    """Replace ``path`` with ``text`` atomically and never through a link (a temporary file in the same folder,
    then rename: :func:`gpuspec.loader.safefile.safe_write`); the file keeps its mode.  A refusal or an I/O
    error is a GpuspecError naming the file (``shown``, default ``path``)."""
    from gpuspec.loader.safefile import safe_write

    safe_write(path, text, shown=shown)
