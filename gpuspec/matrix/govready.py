"""NVIDIA's government-ready component sets per release line (packaged data with its source notes)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from gpuspec.matrix.load import read_data_file


@dataclass(frozen=True, slots=True)
class GovReadySet:
    """What the sources say of one release line: the operands (Helm values paths) and the documented images.

    ``status`` is ``documented``, ``cannot-verify`` (the sources give no per-release list; ``gap`` says why) or
    ``none`` (a line before government-ready components were introduced).
    """

    line: str
    status: str
    components: frozenset[str] = frozenset()
    parts_of: dict[str, str] = field(default_factory=dict)
    images: dict[str, dict[str, str]] = field(default_factory=dict)
    gap: str = ""
    images_gap: str = ""
    source: str = ""

    def covers(self, path: str) -> bool:
        """Whether the operand at values ``path`` is in the set (directly or as part of a listed component)."""
        return path in self.components or self.parts_of.get(path, "") in self.components

    def image(self, path: str) -> str | None:
        """``repository/image:version`` of the documented government-ready variant of ``path``, if any."""
        img = self.images.get(path)
        if not img:
            return None
        return f"{img['repository'].rstrip('/')}/{img['image']}:{img['version']}"


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = read_data_file("government-ready")
    return data


def _key(line: str) -> tuple[int, ...]:
    return tuple(int(p) for p in line.split("."))


def government_ready(line: str) -> GovReadySet:
    """The government-ready set of release line ``line`` (e.g. ``"26.3"``)."""
    data = _data()
    if _key(line) < _key(str(data["introduced"])):
        return GovReadySet(line, "none", gap=f"government-ready components start with GPU Operator "
                                             f"{data['introduced']} (release notes 25.10.0)")
    entry = data["lines"].get(line)
    if entry is None:
        return GovReadySet(line, "cannot-verify", gap=f"the sources give no government-ready list for {line}")
    if entry["status"] != "documented":
        return GovReadySet(line, "cannot-verify", gap=str(entry.get("gap", "")))
    return GovReadySet(
        line, "documented", frozenset(entry["components"]), dict(entry.get("parts_of") or {}),
        {k: dict(v) for k, v in (entry.get("images") or {}).items()}, images_gap=str(entry.get("images_gap", "")),
        source=str(entry.get("source", "")),
    )
