"""Helpers of the handover tests: render a fleet's documents, read Markdown tables and sections."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from gpuspec.pipeline.render import prepare

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CLUSTERS = ("infer-north", "train-east")
_PIPE = re.compile(r"(?<!\\)\|")


def copy_example(tmp_path: Path) -> Path:
    """A copy of the example fleet repository (fleet/ and policies/) under ``tmp_path``; returns its root."""
    root = tmp_path / "repo"
    shutil.copytree(REPO_ROOT / "fleet", root / "fleet")
    shutil.copytree(REPO_ROOT / "policies", root / "policies")
    return root


def documents(root: Path = REPO_ROOT) -> dict[str, str]:
    """The handover documents ``gpuspec render`` produces for the fleet under ``root``, by output path."""
    prepared = prepare(root / "fleet", root / "policies")
    assert prepared.rendered is not None, [f.message for f in prepared.validation.findings]
    return {p: b.decode("utf-8") for p, b in prepared.rendered.files.items() if p.startswith("handover/")}


def section(markdown: str, heading: str) -> str:
    """The text below ``## heading`` up to the next heading of level 2."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
    assert match, f"no section {heading!r}"
    return match.group(1)


def unquote(cell: str) -> str:
    """A table cell without its code backticks and escapes."""
    cell = cell.strip()
    if cell.startswith("`") and cell.endswith("`"):
        cell = cell.strip("`").strip()
    return cell.replace("\\|", "|")


def tables(text: str) -> list[list[dict[str, str]]]:
    """Every pipe table in ``text`` as rows keyed by header (cells as written)."""
    out: list[list[dict[str, str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header = [h.strip() for h in _PIPE.split(lines[i].strip())[1:-1]]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in _PIPE.split(lines[i].strip())[1:-1]]
                assert len(cells) == len(header), lines[i]
                rows.append(dict(zip(header, cells, strict=True)))
                i += 1
            out.append(rows)
        else:
            i += 1
    return out
