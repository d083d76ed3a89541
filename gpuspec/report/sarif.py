"""SARIF 2.1.0 report for code scanning: rule metadata of the rules hit, regions, repository-relative URIs."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from gpuspec.catalogue.entry import Entry
from gpuspec.escaping import json_text
from gpuspec.findings import Finding, Suppressed
from gpuspec.report.base import ReportContext

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"

_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def repo_root(start: Path | None = None) -> Path:
    """The root of the git repository holding ``start`` (default: the working directory), else ``start`` itself."""
    return _repo_root(os.path.realpath(start or Path.cwd()))


@lru_cache(maxsize=8)
def _repo_root(real: str) -> Path:
    here = Path(real)
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return here


def repo_relative(file: str, root: Path | None = None) -> str | None:
    """``file`` as a POSIX path relative to the repository root, or None when it lies outside."""
    base = root or repo_root()
    try:
        return Path(os.path.realpath(file)).relative_to(base).as_posix()
    except ValueError:
        return None


def _fingerprint(finding: Finding) -> str:
    key = "\0".join((finding.rule_id, finding.file or "", finding.spec_path or "", finding.message))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _rule(rule_id: str, doc: Entry | None) -> dict[str, object]:
    if doc is None:
        return {"id": rule_id, "shortDescription": {"text": rule_id}}
    first = doc.rationale.strip() or doc.title
    return {
        "id": rule_id,
        "name": "".join(w.capitalize() for w in doc.title.replace("-", " ").split() if w.isalnum()) or rule_id,
        "shortDescription": {"text": doc.title},
        "fullDescription": {"text": first},
        **({"helpUri": doc.help_url} if doc.help_url else {}),
        "help": {"text": doc.help_markdown or doc.title, "markdown": doc.help_markdown or doc.title},
        "defaultConfiguration": {"level": _LEVELS.get(doc.severity.value, "warning")},
    }


def _location(finding: Finding, root: Path) -> dict[str, object] | None:
    if not finding.file:
        return None
    rel = repo_relative(finding.file, root)
    artifact: dict[str, object]
    if rel is not None:
        artifact = {"uri": quote(rel), "uriBaseId": SRCROOT}
    else:
        artifact = {"uri": Path(os.path.realpath(finding.file)).as_uri()}
    physical: dict[str, object] = {"artifactLocation": artifact}
    if finding.line:
        physical["region"] = {"startLine": finding.line, "startColumn": finding.column or 1}
    location: dict[str, object] = {"physicalLocation": physical}
    if finding.spec_path:
        location["logicalLocations"] = [{"fullyQualifiedName": finding.spec_path, "kind": "member"}]
    return location


class SarifReporter:
    """Report as a SARIF 2.1.0 log with one run."""

    def render(self, findings: Sequence[Finding], context: ReportContext) -> str:
        """Return the findings as a SARIF document (JSON)."""
        root = repo_root()
        hidden: dict[int, Suppressed] = {}
        everything = list(findings)
        for s in context.suppressed:
            hidden[len(everything)] = s
            everything.append(s.finding)
        ids = sorted({f.rule_id for f in everything})
        index = {rule_id: i for i, rule_id in enumerate(ids)}
        results = []
        for position, f in enumerate(everything):
            text = f.message + (f"\nhint: {f.hint}" if f.hint else "")
            result: dict[str, object] = {
                "ruleId": f.rule_id,
                "ruleIndex": index[f.rule_id],
                "level": _LEVELS.get(f.severity.value, "warning"),
                "message": {"text": text},
                "partialFingerprints": {"gpuspecFinding/v1": _fingerprint(f)},
            }
            location = _location(f, root)
            if location is not None:
                result["locations"] = [location]
            if position in hidden:
                how = hidden[position]
                result["suppressions"] = [{"kind": how.kind, "status": "accepted", "justification": how.justification}]
            results.append(result)
        doc = {
            "$schema": SARIF_SCHEMA,
            "version": SARIF_VERSION,
            "runs": [{
                "tool": {"driver": {
                    "name": "gpuspec",
                    "version": context.tool_version,
                    "semanticVersion": context.tool_version,
                    "rules": [_rule(rule_id, context.rule_docs.get(rule_id)) for rule_id in ids],
                }},
                "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
                "invocations": [{"executionSuccessful": context.execution_successful,
                                 "commandLine": f"gpuspec {context.command}"}],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }],
        }
        return json_text(doc, indent=2) + "\n"  # readable non-ASCII text, never a raw bidi control
