"""Human-readable report: one line per finding, a code frame with a caret, and a hint."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from gpuspec.findings import SENSITIVE, Finding
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.redaction import one_line, redact_line
from gpuspec.report.base import ReportContext

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_DIM = "\033[2m"
_BOLD = "\033[1m"
_RESET = "\033[0m"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


#: Largest file a code frame is taken from (the bound of every input file gpuspec reads).
MAX_FRAME_FILE_BYTES = 1024 * 1024
#: Widest source line a code frame shows (longer lines are cut around the column).
MAX_FRAME_WIDTH = 160


def _lines(file: str) -> tuple[str, ...]:
    """The lines of ``file`` when it is a regular file of bounded size inside its repository, else nothing."""
    try:
        info = os.stat(file)
    except (OSError, ValueError):
        return ()
    return _read_lines(os.path.abspath(file), info.st_mtime_ns, info.st_size)


@lru_cache(maxsize=256)
def _read_lines(file: str, _mtime_ns: int, _size: int) -> tuple[str, ...]:
    """The lines of one version of ``file`` (cached by path, modification time and size)."""
    try:
        return tuple(read_bounded(Path(file), MAX_FRAME_FILE_BYTES).decode("utf-8").splitlines())
    except (OSError, UnicodeDecodeError, UnsafeFile):
        return ()


def code_frame(file: str | None, line: int | None, column: int | None) -> list[str]:
    """The source line of a finding with a caret under its column, or nothing if the file cannot be read.

    Only regular files inside their repository are read (never FIFOs, devices or links that leave it), and
    the value of a credential-like key or a credential-shaped text on the line is shown as ``<redacted>``.
    """
    if not file or not line:
        return []
    lines = _lines(file)
    if not 1 <= line <= len(lines):
        return []
    text = one_line(redact_line(lines[line - 1]))
    offset = max((column or 1) - 1, 0)
    if len(text) > MAX_FRAME_WIDTH:  # show a window around the column, not a megabyte-long line
        start = max(0, min(offset - MAX_FRAME_WIDTH // 2, len(text) - MAX_FRAME_WIDTH))
        text = ("…" if start else "") + text[start:start + MAX_FRAME_WIDTH] + "…"
        offset = offset - start + (1 if start else 0)
    gutter = f"{line:>5} | "
    caret = " " * (len(gutter) - 2) + "| " + " " * min(offset, len(text)) + "^"
    return [gutter + text, caret]


class TextReporter:
    """Report for terminals and CI logs."""

    def __init__(self, frames: bool = True) -> None:
        self.frames = frames

    def render(self, findings: Sequence[Finding], context: ReportContext) -> str:
        """Return the findings as readable text with a summary line."""
        def paint(code: str, text: str) -> str:
            return f"{code}{text}{_RESET}" if context.color else text

        out: list[str] = []
        for f in findings:
            where = f"{one_line(f.file or '<fleet>')}:{f.line or 1}:{f.column or 1}"
            sev = paint(_COLORS.get(f.severity.value, ""), f.severity.value)
            spec = f" ({one_line(f.spec_path)})" if f.spec_path else ""
            out.append(f"{paint(_BOLD, where)}: {sev} {one_line(f.rule_id)} {one_line(f.message)}{paint(_DIM, spec)}")
            if self.frames and SENSITIVE not in f.tags:
                out.extend(paint(_DIM, row) for row in code_frame(f.file, f.line, f.column))
            if f.hint:
                out.append(f"  hint: {one_line(f.hint)}")
        counts = Counter(f.severity.value for f in findings)
        if findings:
            parts = [_plural(counts[s], s) for s in ("error", "warning", "info") if counts[s]]
            out.append(f"{context.command}: {', '.join(parts)}")
        else:
            out.append(f"{context.command}: no problems found")
        if context.summary:
            out.append(context.summary)
        return "\n".join(out) + "\n"
