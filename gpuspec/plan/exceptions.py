"""Policy exceptions as raw YAML: which cluster and pool each one names (for GS805).

Packs are read with gpuspec's YAML reader but not validated: a pack that does
not parse is the policy engine's finding, not a change-set finding, so it is
skipped here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuspec.findings import DocPath
from gpuspec.loader.fleetload import display_path
from gpuspec.loader.yamlread import YamlProblem, read_yaml

POLICY_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class ExceptionRef:
    """One policy exception: its file, document path, cluster (``*`` = every cluster), optional pool and rules."""

    file: str
    path: DocPath
    cluster: str
    pool: str | None
    rules: tuple[str, ...]

    def names(self, cluster: str, pool: str | None) -> bool:
        """True when it names ``pool`` of ``cluster`` (``*`` counts), or names ``cluster`` when ``pool`` is None."""
        if pool is None:
            return self.cluster == cluster
        return self.pool == pool and self.cluster in ("*", cluster)


def read_exceptions(policies_dir: Path | None) -> list[ExceptionRef]:
    """Every exception in the policy packs of ``policies_dir`` (none when the folder does not exist)."""
    if policies_dir is None or not policies_dir.is_dir():
        return []
    refs: list[ExceptionRef] = []
    for path in sorted(p for p in policies_dir.iterdir() if p.suffix in POLICY_SUFFIXES and p.is_file()):
        shown = display_path(path)
        try:
            data = read_yaml(path, shown)
        except YamlProblem:
            continue
        entries = data.get("exceptions") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            continue
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("cluster"), str):
                continue
            pool = entry.get("pool")
            rules = entry.get("rules")
            refs.append(
                ExceptionRef(
                    shown, ("exceptions", index), entry["cluster"], pool if isinstance(pool, str) else None,
                    tuple(str(r) for r in rules) if isinstance(rules, list) else (),
                )
            )
    return refs
