"""Inline suppressions in spec files: ``# gpuspec: ignore GS604 -- reason``.

A directive at the end of a line covers findings on that line; a directive
on a line of its own covers the next line that is not blank or a comment.
Several ids may be given (``GS604, GS705``).  A reason after ``--`` is
required; without one the directive suppresses nothing and is reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuspec.catalogue.engine import SUPPRESSION_UNKNOWN_RULE, SUPPRESSION_UNUSED, SUPPRESSION_WITHOUT_REASON
from gpuspec.findings import IN_SOURCE, Finding, Suppressed
from gpuspec.loader.safefile import UnsafeFile, read_bounded

_DIRECTIVE = re.compile(r"(?:^|\s)(?P<hash>#)\s*gpuspec\s*:\s*ignore\b(?P<body>.*)$", re.IGNORECASE)
_ID = re.compile(r"[A-Za-z][A-Za-z0-9]*[0-9]{3}")


@dataclass
class Suppression:
    """One directive: where it is written, the line it covers, its rule ids and reason."""

    file: str
    line: int
    column: int
    target: int
    rules: tuple[str, ...]
    reason: str
    used: set[str] = field(default_factory=set)


def parse_suppressions(file: str, text: str) -> list[Suppression]:
    """Every ``gpuspec: ignore`` directive in the text of one spec file."""
    lines = text.splitlines()
    found: list[Suppression] = []
    for number, line in enumerate(lines, start=1):
        match = _DIRECTIVE.search(line)
        if not match:
            continue
        body = match["body"]
        ids_part, _, reason = body.partition("--")
        rules = tuple(dict.fromkeys(i.upper() for i in _ID.findall(ids_part)))
        standalone = line[: match.start("hash")].strip() == ""
        target = number
        if standalone:
            target = next(
                (n for n in range(number + 1, len(lines) + 1)
                 if lines[n - 1].strip() and not lines[n - 1].lstrip().startswith("#")),
                number,
            )
        found.append(Suppression(file, number, match.start("hash") + 1, target, rules, reason.strip()))
    return found


#: Largest file whose suppression comments are read (fleet files are smaller still).
MAX_SUPPRESSION_FILE_BYTES = 4 * 1024 * 1024


def read_suppressions(files: Iterable[str]) -> list[Suppression]:
    """The directives of every file in ``files`` (unreadable files have none)."""
    out: list[Suppression] = []
    folders: dict[str, str] = {}  # the files' folders, each resolved once
    for file in files:
        try:
            text = read_bounded(Path(file), MAX_SUPPRESSION_FILE_BYTES, folders=folders).decode("utf-8")
        except (OSError, UnicodeDecodeError, UnsafeFile):
            continue
        # Every directive holds "gnore" in any letter case ("ignore": its "i" may also match a dotless or dotted
        # I under the pattern's IGNORECASE, the other letters only themselves), so files without it are skipped.
        if "gpuspec" in text and "gnore" in text.lower():
            out.extend(parse_suppressions(file, text))
    return out


def apply_suppressions(
    findings: Sequence[Finding],
    suppressions: Sequence[Suppression],
    known: Callable[[str], bool],
    enabled: Callable[[str], bool],
    suppressed: list[Suppressed] | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """Split located ``findings`` into those not suppressed, and the findings about the directives themselves.

    ``known`` says whether a rule id exists; ``enabled`` whether it runs (an
    unused directive for a disabled rule is not reported).  The suppressed findings, with the
    directive's reason, are appended to ``suppressed`` when given.
    """
    problems: list[Finding] = []
    valid: dict[tuple[str, int], list[Suppression]] = {}
    for s in suppressions:
        unknown = [r for r in s.rules if not known(r)]
        for rule in unknown:
            problems.append(SUPPRESSION_UNKNOWN_RULE.finding(
                f"suppression names unknown rule {rule!r}", s.file, (), line=s.line, column=s.column,
                hint="gpuspec rules lists every rule id"))
        if not s.rules:
            problems.append(SUPPRESSION_UNKNOWN_RULE.finding(
                "suppression names no rule id", s.file, (), line=s.line, column=s.column,
                hint="write # gpuspec: ignore GS604 -- reason"))
            continue
        if not s.reason:
            problems.append(SUPPRESSION_WITHOUT_REASON.finding(
                f"suppression of {', '.join(s.rules)} has no reason; it is ignored", s.file, (), line=s.line,
                column=s.column, hint=f"write # gpuspec: ignore {', '.join(s.rules)} -- <why this is acceptable>"))
            continue
        valid.setdefault((s.file, s.target), []).append(s)
    kept: list[Finding] = []
    for finding in findings:
        candidates = valid.get((finding.file or "", finding.line or 0), [])
        match = next((s for s in candidates if finding.rule_id in s.rules), None)
        if match is None:
            kept.append(finding)
        else:
            match.used.add(finding.rule_id)
            if suppressed is not None:
                suppressed.append(Suppressed(finding, IN_SOURCE, match.reason))
    for group in valid.values():
        for s in group:
            unused = [r for r in s.rules if r not in s.used and known(r) and enabled(r)]
            if unused:
                problems.append(SUPPRESSION_UNUSED.finding(
                    f"suppression of {', '.join(unused)} matches no finding on line {s.target}", s.file, (),
                    line=s.line, column=s.column, hint="remove it if the problem is fixed"))
    return kept, problems
