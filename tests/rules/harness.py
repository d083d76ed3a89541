"""Build a fleet from the fixture base plus an overlay folder and lint it."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpuspec.findings import Finding
from gpuspec.pipeline.lint import LintResult, lint_fleet

FIXTURES = Path(__file__).parent / "fixtures"
REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_FLEET = REPO_ROOT / "fleet"
EXAMPLE_POLICIES = REPO_ROOT / "policies"
#: The base repository every fleet-stage case overlays (fleet/ here; a case adds fleet/, policies/ files).
BASE_REPO = FIXTURES / "_base"
BASE = BASE_REPO / "fleet"


def build_fleet(tmp: Path, overlay: Path | None = None, files: dict[str, str] | None = None) -> Path:
    """Copy the base fleet to ``tmp/fleet``, then the overlay folder's files and ``files`` over it."""
    fleet = tmp / "fleet"
    shutil.copytree(BASE, fleet)
    if overlay is not None and (overlay / "fleet").is_dir():  # a rule case folder: its fleet/ files
        overlay = overlay / "fleet"
    if overlay is not None:
        for source in overlay.rglob("*.yaml"):
            if source.name == "expect.yaml":
                continue
            target = fleet / source.relative_to(overlay)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    for rel, text in (files or {}).items():
        target = fleet / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return fleet


def lint(fleet: Path, policies: Path | None = None, **kwargs: object) -> LintResult:
    """Lint ``fleet`` with the given policies folder (default: none, so the built-in default pack)."""
    return lint_fleet(fleet, policies or fleet.parent / "no-policies", **kwargs)  # type: ignore[arg-type]


def where(finding: Finding, fleet: Path) -> tuple[str, str, int, int]:
    """A finding as (rule id, file relative to the fleet, line, column)."""
    file = Path(finding.file or "")
    try:
        rel = file.resolve().relative_to(fleet.resolve()).as_posix()
    except ValueError:
        rel = str(file)
    return finding.rule_id, rel, finding.line or 0, finding.column or 0
