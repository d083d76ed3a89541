"""The one shape in which every finding id is declared: an :class:`Entry` of the catalogue."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from gpuspec.findings import DocPath, Finding, Severity
from gpuspec.origin import origin

#: The rule reference, relative to gpuspec's repository; every entry's help is an anchor in it.
RULES_PAGE = "docs/rules.md"


@dataclass(frozen=True, slots=True)
class Param:
    """A typed parameter a policy pack may set for an entry, with its default and meaning."""

    name: str
    type: type
    default: Any
    description: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One finding id: what it means, how serious it is by default, and how to read and tune it.

    ``doc`` is Markdown (what the check looks at, a failing and a passing example); ``source`` names the
    NVIDIA documentation a domain rule rests on.  ``input_error`` marks findings that make the input
    unusable (exit 2): no policy can change or hide them.
    """

    id: str
    title: str
    severity: Severity
    rationale: str
    doc: str = ""
    params: tuple[Param, ...] = ()
    tags: tuple[str, ...] = ()
    source: str = ""
    input_error: bool = False
    stage: str = field(default="custom", compare=False)

    @property
    def help_page(self) -> str:
        """The anchor of this id in the rule reference, relative to gpuspec's repository."""
        return f"{RULES_PAGE}#{self.id.lower()}"

    @property
    def help_url(self) -> str | None:
        """The URL of :attr:`help_page` in gpuspec's repository at this version (:mod:`gpuspec.origin`); None
        while this gpuspec names no repository (nothing links a repository the project does not own)."""
        url = origin().docs_url(RULES_PAGE)
        return f"{url}#{self.id.lower()}" if url else None

    @property
    def documentation(self) -> str:
        """The long documentation, dedented, without surrounding blank lines."""
        return inspect.cleandoc(self.doc).strip() if self.doc else ""

    @property
    def help_markdown(self) -> str:
        """Rationale, documentation and source as one Markdown text (``explain``, SARIF help)."""
        parts = [self.rationale, self.documentation]
        if self.source:
            parts.append(f"Source: {self.source}")
        return "\n\n".join(p for p in parts if p)

    def defaults(self) -> dict[str, Any]:
        """The entry's parameters with their default values."""
        return {p.name: p.default for p in self.params}

    def finding(
        self,
        message: str,
        file: str | None = None,
        path: DocPath = (),
        hint: str | None = None,
        *,
        at_key: bool = False,
        severity: Severity | None = None,
        tags: tuple[str, ...] = (),
        line: int | None = None,
        column: int | None = None,
    ) -> Finding:
        """A finding of this id at ``file``/``path``, with the default severity unless a policy gives another.

        ``line``/``column`` are for findings about text rather than a document path (e.g. a comment).
        """
        return Finding(
            self.id,
            severity or self.severity,
            message,
            file,
            path,
            hint,
            at_key=at_key,
            line=line,
            column=column,
            tags=(*self.tags, *tags) if tags else self.tags,
        )
