"""Generated sections of README.md and docs/*.md, kept between marker comments.

A section is ``<!-- NAME:start -->`` ... ``<!-- NAME:end -->``; its body is regenerated from the code:

* ``spec-reference``: every key of the spec files (:func:`gpuspec.model.reference.spec_reference`);
* ``rules-reference``: every finding id (:func:`gpuspec.catalogue.reference.rules_reference`);
* ``rule-areas``: one row per catalogue area, linking docs/rules.md;
* ``rule-table:AREA``: the ids of one catalogue area (``engine``, ``validate``, ``matrix``, ... ``verify``);
* ``cli-reference``: every command's usage, help and options (:func:`gpuspec.cli.reference.cli_reference`).

``python -m gpuspec.gendocs`` rewrites the sections in place; ``--check`` lists stale files and exits 1.
The test suite runs the check, so a change to the catalogue or the models comes with its docs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from gpuspec.catalogue.reference import AREA_NAMES, area_entries, area_summary, rule_table, rules_reference
from gpuspec.model.reference import spec_reference

_MARKER = re.compile(r"<!-- (?P<name>[a-z][a-z0-9:-]*):start -->\n(?P<body>.*?)<!-- (?P=name):end -->", re.DOTALL)


def _cli_reference() -> str:
    from gpuspec.cli.reference import cli_reference

    return cli_reference()


def section_text(name: str, link: str) -> str:
    """The generated body of section ``name``; ``link`` is the path of docs/rules.md from the file it is in."""
    generators: dict[str, Callable[[], str]] = {
        "spec-reference": spec_reference,
        "rules-reference": rules_reference,
        "rule-areas": lambda: area_summary(link),
        "cli-reference": _cli_reference,
    }
    if name.startswith("rule-table:"):
        area = name.split(":", 1)[1]
        if area not in AREA_NAMES:
            raise KeyError(f"unknown rule-table area {area!r} (known: {', '.join(AREA_NAMES)})")
        return rule_table(area_entries(area), link)
    if name not in generators:
        raise KeyError(f"unknown generated section {name!r}")
    return generators[name]()


def sections(text: str) -> list[str]:
    """The names of the generated sections in ``text``, in order."""
    return [m.group("name") for m in _MARKER.finditer(text)]


def regenerate(text: str, link: str = "rules.md") -> str:
    """``text`` with the body of every generated section rewritten."""
    return _MARKER.sub(
        lambda m: f"<!-- {m['name']}:start -->\n\n{section_text(m['name'], link).rstrip()}\n\n<!-- {m['name']}:end -->",
        text,
    )


def documents(root: Path) -> list[Path]:
    """README.md and every docs/*.md below ``root``."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def rules_link(root: Path, document: Path) -> str:
    """The relative link from ``document`` to docs/rules.md."""
    return "rules.md" if document.parent == root / "docs" else "docs/rules.md"


def stale(root: Path) -> list[Path]:
    """The documents whose generated sections differ from what the code generates now."""
    out = []
    for path in documents(root):
        text = path.read_text(encoding="utf-8")
        if regenerate(text, rules_link(root, path)) != text:
            out.append(path)
    return out


def main(argv: list[str]) -> int:
    """Rewrite the generated sections below the current folder (``--check``: only list stale files)."""
    root = Path.cwd()
    if "--check" in argv:
        old = stale(root)
        for path in old:
            sys.stdout.write(f"{path.relative_to(root)}: generated sections are stale (python -m gpuspec.gendocs)\n")
        return 1 if old else 0
    for path in stale(root):
        path.write_text(regenerate(path.read_text(encoding="utf-8"), rules_link(root, path)), encoding="utf-8")
        sys.stdout.write(f"rewrote {path.relative_to(root)}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    raise SystemExit(main(sys.argv[1:]))
