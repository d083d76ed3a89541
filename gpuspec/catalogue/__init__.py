"""The finding catalogue: every finding id of every stage, declared once, as plain data.

Each area's module declares its entries (``ENTRIES``); this index puts them together, checks that no id is
declared twice, and answers look-ups.  Code that reports a finding does so through its entry
(``entry.finding(...)``); ``rules``, ``explain``, reporters and the docs read the same entries.
"""

from __future__ import annotations

import difflib
from types import ModuleType

from gpuspec.catalogue import (
    airgap,
    audit,
    changeset,
    engine,
    matrix,
    observability,
    rollout,
    security,
    validate,
    verify,
)
from gpuspec.catalogue.entry import Entry, Param

__all__ = ["CATALOGUE", "Entry", "Param", "get", "policy_entries", "suggest"]

#: Each area module with the stage that reports its ids, in id order.
AREAS: tuple[tuple[str, ModuleType], ...] = (
    ("lint engine", engine),
    ("validate", validate),
    ("support matrix", matrix),
    ("air-gap", airgap),
    ("rollout", rollout),
    ("security", security),
    ("observability", observability),
    ("audit", audit),
    ("change set", changeset),
    ("verify", verify),
)

#: Stages whose ids policy packs configure (severity, parameters, exceptions, suppressions).
POLICY_STAGES = frozenset(
    {"lint engine", "support matrix", "air-gap", "rollout", "security", "observability", "change set"}
)


def _build() -> dict[str, Entry]:
    entries: dict[str, Entry] = {}
    for stage, module in AREAS:
        for entry in module.ENTRIES:
            if entry.id in entries:
                raise RuntimeError(f"finding id {entry.id} is declared twice")
            if entry.stage != "custom":
                raise RuntimeError(f"finding id {entry.id} declares its own stage")
            # The stage is the area's, set here once; the area modules stay plain declarations.
            object.__setattr__(entry, "stage", stage)
            entries[entry.id] = entry
    return dict(sorted(entries.items()))


#: Finding id → its entry, sorted by id.
CATALOGUE: dict[str, Entry] = _build()


def get(rule_id: str) -> Entry | None:
    """The entry of ``rule_id`` (case-insensitive), or None."""
    return CATALOGUE.get(rule_id.strip().upper())


def policy_entries() -> dict[str, Entry]:
    """The entries policy packs may configure, by id (lint engine, lint rules and change-set rules)."""
    return {i: e for i, e in CATALOGUE.items() if e.stage in POLICY_STAGES}


def suggest(rule_id: str, known: list[str] | None = None) -> list[str]:
    """Ids close to ``rule_id``, best first (for did-you-mean messages)."""
    choices = known if known is not None else list(CATALOGUE)
    wanted = rule_id.strip().upper()
    close = difflib.get_close_matches(wanted, choices, n=6, cutoff=0.6)
    # Ids are fixed-width: a typo usually keeps the other characters in place, so rank by those first.
    close.sort(key=lambda c: -sum(a == b for a, b in zip(c, wanted, strict=False)))
    return close[:3]
