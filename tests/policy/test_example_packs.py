"""The example fleet lints clean under the default pack and shows findings under the strict pack."""

from __future__ import annotations

from pathlib import Path

from rules.harness import EXAMPLE_FLEET, EXAMPLE_POLICIES

from gpuspec.findings import Severity
from gpuspec.pipeline.lint import lint_fleet
from gpuspec.policy.load import load_policy


def test_example_fleet_is_clean_under_default() -> None:
    result = lint_fleet(EXAMPLE_FLEET, EXAMPLE_POLICIES)
    assert result.usable
    assert result.packs == ["default"]
    assert [(f.rule_id, f.message) for f in result.findings] == []


def test_example_fleet_has_findings_under_strict() -> None:
    result = lint_fleet(EXAMPLE_FLEET, EXAMPLE_POLICIES, packs=["strict"])
    assert result.usable
    assert result.packs == ["default", "strict"]
    got = [(f.rule_id, Path(f.file or "").name, f.line, f.column, f.severity) for f in result.findings]
    assert ("GS502", "train-east.yaml", 33, 24, Severity.ERROR) in got
    assert result.rule_docs["GS502"].title


def test_strict_pack_extends_default_and_raises_warnings() -> None:
    policy = load_policy(EXAMPLE_POLICIES, ["strict"])
    assert policy.usable, policy.findings
    assert policy.rules["GS502"].params["max_parallel_upgrades"] == 1
    for rule_id in ("GS501", "GS502", "GS503", "GS504", "GS602", "GS701", "GS702", "GS703"):
        assert policy.rules[rule_id].severity is Severity.ERROR


def test_inline_suppression_in_the_example_fleet(fleet_copy: Path) -> None:
    cluster = fleet_copy / "clusters" / "train-east.yaml"
    text = cluster.read_text()
    cluster.write_text(text.replace(
        "  maxParallelUpgrades: 2\n",
        "  # gpuspec: ignore GS502 -- two H100 nodes at a time keeps 94% capacity; agreed with research\n"
        "  maxParallelUpgrades: 2\n"))
    result = lint_fleet(fleet_copy, fleet_copy.parent / "policies", packs=["strict"])
    assert [f.rule_id for f in result.findings if f.rule_id in ("GS502", "GS005", "GS006")] == []
