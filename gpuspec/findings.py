"""The finding record every stage produces and every reporter consumes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

#: Tag of findings whose source line may hold a secret: reporters show no excerpt of it.
SENSITIVE = "sensitive"

#: One step of a path inside a YAML document: a mapping key or a sequence index.
PathPart = str | int
DocPath = tuple[PathPart, ...]


class Severity(StrEnum):
    """How serious a finding is; ordered error > warning > info."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """A number that orders severities: higher is more serious."""
        return {"info": 0, "warning": 1, "error": 2}[self.value]


#: Tag of a finding whose rule states a preference of gpuspec's that yields to an NVIDIA constraint in this change
#: (reported at warning severity at most, with the reason in its message).
YIELDS = "yields"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem, tied to a place in a spec file.

    ``file`` and ``path`` say where the problem is (the file as the user named
    it, and the key/index path inside its YAML document).  ``line``,
    ``column`` and ``spec_path`` are filled in by :func:`gpuspec.loader.positions.locate_findings`
    just before reporting, so stages that produce findings never read files.
    ``at_key`` points the position at the mapping key instead of its value.
    """

    rule_id: str
    severity: Severity
    message: str
    file: str | None = None
    path: DocPath = ()
    hint: str | None = None
    at_key: bool = False
    line: int | None = None
    column: int | None = None
    spec_path: str | None = None
    tags: tuple[str, ...] = field(default=())

    def located(self, line: int, column: int, spec_path: str) -> Finding:
        """Return a copy carrying a resolved line, column and spec path."""
        return replace(self, line=line, column=column, spec_path=spec_path)

    def with_severity(self, severity: Severity) -> Finding:
        """Return a copy with another severity (policy overrides); a finding of a preference that yields (tag
        :data:`YIELDS`) stays at warning severity at most."""
        if YIELDS in self.tags and severity.rank > Severity.WARNING.rank:
            severity = Severity.WARNING
        return replace(self, severity=severity)

    def sort_key(self) -> tuple[str, int, int, str, str]:
        """Key that orders findings by file, position, rule and message."""
        return (self.file or "", self.line or 0, self.column or 0, self.rule_id, self.message)

    def data(self) -> tuple[Any, ...]:
        """The finding as plain data (for the user cache; :meth:`from_data` makes it again)."""
        return (self.rule_id, self.severity.value, self.message, self.file, self.path, self.hint, self.at_key,
                self.line, self.column, self.spec_path, self.tags)

    @classmethod
    def from_data(cls, data: Any) -> Finding:
        """The finding stored as :meth:`data`; TypeError or ValueError when ``data`` is not one."""
        rule_id, severity, message, file, path, hint, at_key, line, column, spec_path, tags = data
        return cls(rule_id, Severity(severity), message, file, tuple(path), hint, at_key, line, column, spec_path,
                   tuple(tags))


#: How a finding was suppressed, in SARIF's words: an inline directive, or a policy exception.
IN_SOURCE = "inSource"
EXTERNAL = "external"


@dataclass(frozen=True, slots=True)
class Suppressed:
    """A finding that a suppression or policy exception covers: kept for reports that show it as suppressed.

    ``kind`` is :data:`IN_SOURCE` (``# gpuspec: ignore``) or :data:`EXTERNAL` (a policy exception);
    ``justification`` is the reason written with it.
    """

    finding: Finding
    kind: str
    justification: str

    def data(self) -> tuple[Any, ...]:
        """The suppressed finding as plain data (see :meth:`Finding.data`)."""
        return (self.finding.data(), self.kind, self.justification)

    @classmethod
    def from_data(cls, data: Any) -> Suppressed:
        """The suppressed finding stored as :meth:`data`; TypeError or ValueError when ``data`` is not one."""
        finding, kind, justification = data
        return cls(Finding.from_data(finding), kind, justification)
