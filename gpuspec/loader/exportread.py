"""Read cluster exports within a memory budget proportional to what they hold.

Every export gpuspec reads (``kubectl get nodes|clusterpolicies,nvidiadrivers|jobs,pods -o json``,
``helm get values -a -o json``, ``helm list -o json``) comes through this module.  A file is read in pieces of a
mebibyte, never whole; the items of a ``kubectl`` List are decoded one at a time (``json``'s C decoder at an
offset of the current piece), so at no time does gpuspec hold the file's bytes, its decoded text and the
objects of all its items together: the caller keeps what it needs of each item (a small model of the fields it
reads) and drops the rest before the next one is decoded.  Standard input is read once into memory (its bytes,
about the size of the export) and decoded from there in the same pieces.

The limits, none of which a real cluster reaches, and where they come from:

* :data:`MAX_EXPORT_BYTES` (256 MiB): the largest export read at all.
* :data:`MAX_OBJECT_CHARS` (8 MiB): the largest single item of a List, or member of the document.  etcd
  refuses a request over 1.5 MiB (its default ``--max-request-bytes``), so no object the API server stores is
  larger; ``kubectl``'s indented JSON of such an object stays well under 8 MiB.
* :data:`MAX_NODES` (20,000): Kubernetes supports clusters of up to 5,000 nodes ("Considerations for large
  clusters", kubernetes.io/docs/setup/best-practices/cluster-large/); four times that.
* :data:`MAX_NAMESPACE_OBJECTS` (20,000 Jobs and Pods of one namespace): SIG Scalability's thresholds
  (kubernetes/community, sig-scalability/configs-and-limits/thresholds.md) put 3,000 pods in one namespace;
  acceptance checks run on a sample of each pool's nodes, so even four checks on every node of a 5,000-node
  cluster fit.
* :data:`MAX_LIST_ITEMS` (200,000): the items of any one export, whatever their namespace: a cluster holds
  at most 150,000 pods (the same kubernetes.io page), plus their Jobs.
* :data:`MAX_HELM_BYTES` (4 MiB, of which at most :data:`MAX_YAML_BYTES`, 1 MiB, when the text is YAML
  rather than JSON): Helm keeps a release, its values included, gzip-compressed in one Secret, and Kubernetes
  caps a Secret at 1 MiB; the GPU Operator's computed values are some 30 KiB.  Helm's exports are documents,
  not Lists, so they are decoded whole; YAML (pure-Python PyYAML) needs some 60 bytes of memory per byte of
  text, hence its lower bound.

Within those counts a List could still be made of little but what gpuspec keeps (thousands of conditions or
taints per node, each a model of some 600 bytes from 13 bytes of JSON): :class:`KeptBudget` estimates what
each item keeps before it is built and stops once the kept objects would take more than
:data:`KEPT_PER_CHAR` (4) times the JSON read so far, plus :data:`KEPT_FLOOR` (64 MiB).  Real exports keep
well under their size: their bulk (a node's images, a pod's spec) is dropped, and strings that recur on every
item (label keys and values) are kept once (:class:`SharedStrings`).

Past a limit the command stops with exit 2 and a message naming the file, never a traceback.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpuspec.errors import GpuspecError
from gpuspec.loader.safefile import UnsafeFile, check_link
from gpuspec.redaction import one_line

MIB = 1024 * 1024
#: Largest export read (bytes); `kubectl get nodes -o json` of 5,000 real GPU nodes is some 100-150 MiB.
MAX_EXPORT_BYTES = 256 * MIB
#: Largest item of a List, or member of an export's top-level object (characters of JSON text).
MAX_OBJECT_CHARS = 8 * MIB
#: Most nodes read from one export.
MAX_NODES = 20_000
#: Most ClusterPolicy and NVIDIADriver objects read from one export (one NVIDIADriver per node, four times over).
MAX_OPERATOR_RESOURCES = 20_000
#: Most Jobs and Pods of the acceptance namespace read from one export.
MAX_NAMESPACE_OBJECTS = 20_000
#: Most items of any one export (objects of every namespace of a `-A` export included).
MAX_LIST_ITEMS = 200_000
#: Largest Helm export (`helm get values -a`, `helm list`), JSON.
MAX_HELM_BYTES = 4 * MIB
#: Largest Helm export given as YAML.
MAX_YAML_BYTES = 1 * MIB
#: Most digits a JSON number may have (Python refuses to convert integers past 4,300 digits).
MAX_NUMBER_DIGITS = 100
#: Display name of standard input in messages.
STDIN = "<stdin>"

_PIECE = 1 * MIB
_WHITESPACE = re.compile(r"[ \t\n\r]*")
#: A syntax error this close to the end of what was read may only mean the value goes on in the next piece.
_CUT_MARGIN = 16
_JSON_HINT = "pass the output of `kubectl get ... -o json` (YAML output is not accepted)"


class _NumberTooLong(Exception):
    """A JSON integer with too many digits (its digit count)."""


def _bounded_int(text: str) -> int:
    if len(text) > MAX_NUMBER_DIGITS:
        raise _NumberTooLong(len(text))
    return int(text)


_DECODER = json.JSONDecoder(parse_int=_bounded_int)


def _too_many_digits(display: str, digits: int) -> GpuspecError:
    return GpuspecError(f"{display}: invalid JSON: a number with {digits} digits (at most {MAX_NUMBER_DIGITS})")


def _mib(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit} bytes"


class Export:
    """An export to read: a file, standard input or text in memory, and the name messages show for it.

    Nothing is read when it is made; :meth:`pieces` reads it, as often as asked (a file is opened again,
    standard input is kept after its first read).
    """

    def __init__(self, display: str, *, path: Path | None = None, text: str | None = None) -> None:
        self.display = display
        self._path = path
        self._text = text
        self._stdin: bytes | None = None

    @classmethod
    def of(cls, source: str | Export, display: str) -> Export:
        """``source`` itself, or an export of the text ``source`` named ``display``."""
        return source if isinstance(source, Export) else cls(display, text=source)

    def _open(self, limit: int) -> int:
        """A descriptor of the file, opened as :func:`~gpuspec.loader.safefile.read_bounded` opens one."""
        assert self._path is not None
        real = check_link(self._path)
        flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NOFOLLOW", 0))
        fd = os.open(real, flags)
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(self.display)
            if not stat.S_ISREG(info.st_mode):
                raise UnsafeFile("is not a regular file (a FIFO, socket or device); gpuspec does not read it")
            if info.st_size > limit:
                raise UnsafeFile(f"is {info.st_size} bytes, larger than the {limit}-byte limit")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def check(self) -> None:
        """Raise the GpuspecError reading would raise for a missing, unsafe or oversized file (files only)."""
        if self._path is not None:
            with self._refusals(MAX_EXPORT_BYTES):
                os.close(self._open(MAX_EXPORT_BYTES))

    def _refusals(self, limit: int) -> _Refusals:
        return _Refusals(self.display, limit)

    def _file_bytes(self, limit: int) -> Iterator[bytes]:
        fd = self._open(limit)
        try:
            total = 0
            while True:
                chunk = os.read(fd, _PIECE)
                if not chunk:
                    return
                total += len(chunk)
                if total > limit:
                    raise UnsafeFile(f"is larger than the {limit}-byte limit")
                yield chunk
        finally:
            os.close(fd)

    def _stdin_bytes(self, limit: int) -> Iterator[bytes]:
        if self._stdin is None:
            try:
                data = sys.stdin.buffer.read(limit + 1) if hasattr(sys.stdin, "buffer") else \
                    sys.stdin.read(limit + 1).encode("utf-8", "surrogatepass")
            except (OSError, ValueError) as exc:
                raise GpuspecError(f"{STDIN}: cannot read: {exc}") from None
            self._stdin = data
        if len(self._stdin) > limit:
            raise GpuspecError(f"{STDIN}: larger than the {limit}-byte limit")
        view = memoryview(self._stdin)
        for start in range(0, len(view), _PIECE):
            yield bytes(view[start:start + _PIECE])

    def pieces(self, limit: int = MAX_EXPORT_BYTES) -> Iterator[str]:
        """The export's text in pieces of about a mebibyte; GpuspecError (naming the export) when it cannot be
        read, is not UTF-8 or is larger than ``limit`` bytes."""
        if self._path is None and self._stdin is None and self._text is not None:
            yield self._text
            return
        decoder = codecs.getincrementaldecoder("utf-8")()
        with self._refusals(limit):
            chunks = self._file_bytes(limit) if self._path is not None else self._stdin_bytes(limit)
            for chunk in chunks:
                text = decoder.decode(chunk)
                if text:
                    yield text
            tail = decoder.decode(b"", final=True)
            if tail:
                yield tail

    def read_text(self, limit: int) -> str:
        """The export's whole text (for small exports: at most ``limit`` bytes)."""
        if self._path is None and self._stdin is None and self._text is not None:
            if len(self._text) > limit:
                raise GpuspecError(f"{self.display}: larger than the {_mib(limit)} limit")
            return self._text
        return "".join(self.pieces(limit))


class _Refusals:
    """Turns the ways reading a file fails into GpuspecErrors that name it."""

    def __init__(self, display: str, limit: int) -> None:
        self.display = display
        self.limit = limit

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        shown = one_line(self.display)
        if exc is None or isinstance(exc, GpuspecError):
            return
        if isinstance(exc, FileNotFoundError):
            raise GpuspecError(f"{shown}: no such file",
                               hint="export it with `kubectl get nodes -o json > nodes.json` or pass - for stdin"
                               ) from None
        if isinstance(exc, UnsafeFile):
            raise GpuspecError(f"{shown}: {exc.message}") from None
        if isinstance(exc, IsADirectoryError):
            raise GpuspecError(f"{shown}: is a directory, expected a JSON file") from None
        if isinstance(exc, UnicodeDecodeError):
            raise GpuspecError(f"{shown}: not UTF-8 text") from None
        if isinstance(exc, OSError):
            raise GpuspecError(f"{shown}: cannot read: {exc.strerror or exc}") from None


def open_export(source: str) -> Export:
    """The export ``source`` names (a file path, or ``-`` for standard input), checked but not yet read.

    A file must be a regular file of at most :data:`MAX_EXPORT_BYTES`, never inside a ``.git`` folder, never
    a link out of the repository, a FIFO or a device; a refusal is a GpuspecError naming it.
    """
    if source == "-":
        return Export(STDIN, path=None, text=None)
    export = Export(source, path=Path(source))
    export.check()
    return export


class _Cursor:
    """JSON text read piece by piece: the unread rest of the current pieces, and values decoded from it."""

    def __init__(self, pieces: Iterator[str], display: str) -> None:
        self._pieces = pieces
        self.display = display
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._dropped = 0        # characters before buf
        self._lines = 0          # newlines before buf
        self._line_start = 0     # offset of the first character after the last newline before buf

    def more(self, wanted: int = 0) -> bool:
        """Drop what was read and append at least ``wanted`` more characters (a piece); False at the end."""
        if self.eof:
            return False
        if self.pos:
            newline = self.buf.rfind("\n", 0, self.pos)
            if newline >= 0:
                self._lines += self.buf.count("\n", 0, self.pos)
                self._line_start = self._dropped + newline + 1
            self._dropped += self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
        parts, got = [self.buf], 0
        while got < max(wanted, 1):
            piece = next(self._pieces, None)
            if piece is None:
                self.eof = True
                break
            parts.append(piece)
            got += len(piece)
        self.buf = "".join(parts)
        return got > 0

    @property
    def consumed(self) -> int:
        """Characters read so far."""
        return self._dropped + self.pos

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end of the text)."""
        while True:
            self.pos = _WHITESPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # * always matches
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def error(self, message: str, pos: int | None = None) -> GpuspecError:
        """A JSON syntax error at ``pos`` of the buffer (default: the position), with its line and column."""
        at = self.pos if pos is None else pos
        line = self._lines + self.buf.count("\n", 0, at) + 1
        newline = self.buf.rfind("\n", 0, at)
        column = at - newline if newline >= 0 else self._dropped + at - self._line_start + 1
        return GpuspecError(f"{self.display}:{line}:{column}: invalid JSON: {message}", hint=_JSON_HINT)

    def expect(self, char: str, message: str) -> None:
        """Step over ``char`` (after whitespace), else raise the syntax error ``message``."""
        if self.peek() != char:
            raise self.error(message)
        self.pos += 1

    def value(self, where: str) -> Any:
        """Decode the JSON value at the position (``where`` names it in a message when it is too large)."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(self.buf) - _CUT_MARGIN or exc.msg.startswith("Unterminated string")
                if cut and not self.eof:  # the value may go on in the next piece: read as much again
                    if len(self.buf) - self.pos > MAX_OBJECT_CHARS:
                        raise self.too_large(where) from None
                    self.more(len(self.buf) - self.pos)
                    continue
                raise self.error(exc.msg, exc.pos) from None
            except _NumberTooLong as exc:
                raise _too_many_digits(self.display, exc.args[0]) from None
            except RecursionError:
                raise GpuspecError(f"{self.display}: invalid JSON: nested too deeply") from None
            if end - self.pos > MAX_OBJECT_CHARS:
                raise self.too_large(where)
            if end == len(self.buf) and not self.eof:
                self.more(len(self.buf) - self.pos)  # a number may go on in the next piece
                continue
            self.pos = end
            return value

    def too_large(self, where: str) -> GpuspecError:
        """The error for a value over :data:`MAX_OBJECT_CHARS`."""
        return GpuspecError(
            f"{self.display}: {where} is larger than {_mib(MAX_OBJECT_CHARS)}, more than any object the Kubernetes "
            "API stores (etcd's request limit is 1.5 MiB); not read")

    def finish(self) -> None:
        """Raise unless only whitespace follows."""
        if self.peek():
            raise self.error("Extra data")


class ListReader:
    """One pass over an export in ``kubectl``'s List shape: the elements of its top-level ``items`` array one at
    a time, then the rest of the document.

    After :meth:`items` is exhausted, :attr:`streamed` says whether the document was an object with an
    ``items`` array, and :attr:`document` holds the document: its other members when streamed, else the whole
    value (an object without ``items``, such as a single Node, or anything else).
    """

    def __init__(self, source: str | Export, display: str) -> None:
        self.export = Export.of(source, display)
        self.display = display
        self.streamed = False
        self.document: Any = None
        self._cursor: _Cursor | None = None

    @property
    def consumed(self) -> int:
        """Characters of the export read so far (through the item last given)."""
        cursor = self._cursor
        return 0 if cursor is None else cursor.consumed

    def items(self) -> Iterator[Any]:
        """Each element of the top-level ``items`` array, decoded when asked for."""
        cursor = self._cursor = _Cursor(self.export.pieces(), self.display)
        first = cursor.peek()
        if first == "\ufeff":
            raise cursor.error("Unexpected UTF-8 BOM (decode using utf-8-sig)")
        if first != "{":
            self.document = cursor.value("the document")
            cursor.finish()
            return
        cursor.pos += 1
        members: dict[str, Any] = {}
        if cursor.peek() == "}":
            cursor.pos += 1
        else:
            while True:
                if cursor.peek() != '"':
                    raise cursor.error("Expecting property name enclosed in double quotes")
                key = cursor.value("a member name")
                cursor.expect(":", "Expecting ':' delimiter")
                if key == "items" and cursor.peek() == "[" and not self.streamed:
                    self.streamed = True
                    yield from self._elements(cursor)
                elif key == "items" and self.streamed:
                    raise GpuspecError(f"{self.display}: the document has two members named items")
                else:
                    members[key] = cursor.value(f"the member {one_line(key[:63])!r}")
                following = cursor.peek()
                cursor.pos += 1
                if following == "}":
                    break
                if following != ",":
                    cursor.pos -= 1
                    raise cursor.error("Expecting ',' delimiter")
        cursor.finish()
        self.document = members

    def _elements(self, cursor: _Cursor) -> Iterator[Any]:
        cursor.pos += 1  # the [
        if cursor.peek() == "]":
            cursor.pos += 1
            return
        index = 0
        while True:
            if index >= MAX_LIST_ITEMS:
                raise GpuspecError(f"{self.display}: more than {MAX_LIST_ITEMS:,} items; no cluster has that many "
                                   "objects of one kind (Kubernetes supports 150,000 pods per cluster); not read")
            yield cursor.value(f"items[{index}]")
            index += 1
            following = cursor.peek()
            cursor.pos += 1
            if following == "]":
                return
            if following != ",":
                cursor.pos -= 1
                raise cursor.error("Expecting ',' delimiter")

    def objects(self, single_kinds: tuple[str, ...]) -> Iterator[Any]:
        """The items of a List; else the document itself when it is one object whose kind is in ``single_kinds``
        (nothing otherwise: the caller reports the shape of :attr:`document`)."""
        yield from self.items()
        if not self.streamed and isinstance(self.document, dict) and self.document.get("kind") in single_kinds:
            yield self.document


def load_json(source: str | Export, display: str) -> Any:
    """The whole JSON document of ``source`` (a small export: its items are not streamed), with a GpuspecError
    naming ``display`` and the line and column of a syntax error."""
    cursor = _Cursor(Export.of(source, display).pieces(), display)
    if cursor.peek() == "\ufeff":
        raise cursor.error("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    value = cursor.value("the document")
    cursor.finish()
    return value


def helm_document(source: str | Export, display: str) -> tuple[Any, str]:
    """A Helm export decoded as JSON when it is JSON (at most :data:`MAX_HELM_BYTES`): ``(value, "")``; else its
    text for a YAML parser (then at most :data:`MAX_YAML_BYTES`): ``(None, text)``."""
    export = Export.of(source, display)
    text = export.read_text(MAX_HELM_BYTES)
    stripped = text.lstrip(" \t\r\n")
    if stripped[:1] in ("{", "["):
        try:
            return _DECODER.decode(text), ""
        except _NumberTooLong as exc:
            raise _too_many_digits(display, exc.args[0]) from None
        except (json.JSONDecodeError, RecursionError):
            pass  # YAML's flow style, or broken: the YAML parser says where
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise GpuspecError(f"{one_line(display)}: a YAML export larger than {_mib(MAX_YAML_BYTES)}; not read",
                           hint="export it as JSON (-o json), which may be up to "
                                f"{_mib(MAX_HELM_BYTES)}")
    return None, text


class SharedStrings:
    """One copy of each short string of an export: label keys and values, resource names and condition texts
    recur on every node, and keeping one of each is most of what a node costs."""

    #: Longest string shared; most distinct strings kept for sharing.
    MAX_LENGTH = 256
    MAX_STRINGS = 1_000_000

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, value: Any, depth: int = 3) -> Any:
        """``value`` (a string, or a dict or list of them up to ``depth`` levels) with its strings shared."""
        if isinstance(value, str):
            if len(value) > self.MAX_LENGTH:
                return value
            seen = self._seen.get(value)
            if seen is not None:
                return seen
            if len(self._seen) < self.MAX_STRINGS:
                self._seen[value] = value
            return value
        if depth <= 0:
            return value
        if isinstance(value, dict):
            return {self(k, 0): self(v, depth - 1) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v, depth - 1) for v in value]
        return value

    def within(self, item: Any, *path: str, depth: int = 3) -> None:
        """Share the strings of ``item[path[0]][path[1]]...`` in place, when that path leads through objects."""
        parent = item
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and path[-1] in parent:
            parent[path[-1]] = self(parent[path[-1]], depth)


#: What one kept object costs in memory beyond its strings (a pydantic model and its containers), in bytes;
#: measured with tracemalloc on gpuspec's models, rounded up.
OBJECT_COST = 3_000
#: One entry of a kept map (a label, an annotation, a resource of capacity or allocatable, a nodeSelector term).
ENTRY_COST = 150
#: One kept small model (a condition, a taint, an owner reference).
MODEL_COST = 600
#: One kept container status (its state models included).
STATUS_COST = 1_700
#: Memory the kept objects may take whatever the export's size (one object being decoded takes about as much).
KEPT_FLOOR = 64 * MIB
#: Memory the kept objects may take per character of export read.
KEPT_PER_CHAR = 4


def entries(item: Any, *path: str) -> int:
    """The number of entries of the object or array at ``path`` in ``item`` (0 when there is none)."""
    value = item
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return len(value) if isinstance(value, dict | list) else 0


class KeptBudget:
    """The memory the objects kept from one export may take: :data:`KEPT_FLOOR` plus :data:`KEPT_PER_CHAR` times
    what was read of it, estimated from what each object keeps (its labels, taints, conditions, container
    statuses) before it is built.

    A real export keeps far less than it holds (the images a node lists, a pod's spec); one whose objects are
    made of little but kept entries, thousands of conditions or taints per node, stops here with exit 2
    instead of building gigabytes of models.
    """

    def __init__(self, reading: ListReader) -> None:
        self.reading = reading
        self.kept = 0

    def check(self, cost: int, where: str) -> None:
        """Raise a GpuspecError unless an object of ``cost`` (named ``where``) fits."""
        allowed = KEPT_FLOOR + KEPT_PER_CHAR * self.reading.consumed
        if self.kept + cost > allowed:
            raise GpuspecError(
                f"{one_line(self.reading.display)}: {where} and the objects before it keep more labels, "
                f"conditions, taints and statuses than a real export of this size holds (some "
                f"{(self.kept + cost) // MIB} MiB of memory for {self.reading.consumed // MIB} MiB of JSON, at most "
                f"{KEPT_PER_CHAR} times its size); not read")

    def charge(self, cost: int) -> None:
        """Count an object of ``cost`` as kept."""
        self.kept += cost
