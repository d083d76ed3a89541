"""Change-set rules (GS8xx) beyond their cases in tests/rules/fixtures: the rule contract, multi-commit histories,
removed files, parameters passed directly and the context the rules receive, on real git repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuspec.findings import Finding, Severity
from gpuspec.rules.base import Rule, RuleContext
from gpuspec.rules.changeset import CHANGESET_RULES, ChangeSetContext
from gpuspec.rules.registry import changeset_findings

from .helpers import FleetRepo, pool, tenant


def findings(repo: FleetRepo, rule_id: str, base: str = "HEAD", **kwargs: Any) -> list[Finding]:
    """The findings of one rule from ``base`` to the working tree."""
    result = changeset_findings(repo.root, base, Path("fleet"), **kwargs)
    return [f for f in result if f.rule_id == rule_id]


def bump_driver(data: dict[str, object], name: str, branch: str = "595", version: str = "595.91.07") -> None:
    pool(data, name)["driver"] = {"source": "operator", "branch": branch, "version": version}


def _operator_base(repo: FleetRepo, version: str) -> None:
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = version
    repo.commit(f"operator {version}")


def test_rules_follow_the_contract() -> None:
    ids = [r.entry.id for r in CHANGESET_RULES]
    assert ids == ["GS801", "GS802", "GS803", "GS804", "GS805", "GS806", "GS807", "GS808", "GS813", "GS820"]
    for rule in CHANGESET_RULES:
        assert isinstance(rule, Rule) and rule.needs_base
        assert rule.entry.title and rule.entry.rationale and rule.entry.documentation
        assert rule.entry.severity is (Severity.WARNING if rule.entry.id == "GS807" else Severity.ERROR)


def test_change_set_rules_find_nothing_without_a_base(repo: FleetRepo) -> None:
    from gpuspec.loader.fleetload import load_fleet

    fleet = load_fleet(Path("fleet")).fleet
    assert fleet is not None
    for rule in CHANGESET_RULES:
        assert list(rule.check(RuleContext(fleet=fleet))) == []


def test_clean_change_has_no_findings(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        bump_driver(data, "l40s-canary")
    assert changeset_findings(repo.root, "HEAD", Path("fleet")) == []


# ---------------------------------------------------------------- GS801


def _unpinned_on(repo: FleetRepo, version: str) -> None:
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = version
        for p in data["pools"]:
            p["driver"] = {"source": "operator"}
    repo.commit("unpinned")


def test_gs801_counts_a_release_default_driver_that_moves_with_the_operator(repo: FleetRepo) -> None:
    _unpinned_on(repo, "v26.3.3")
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    [finding] = findings(repo, "GS801")
    assert "2 layers" in finding.message and "release-default driver" in finding.message
    plan_drivers = [c for c in repo.plan().changes if c.kind.value == "driver" and c.derived]
    assert plan_drivers and all(c.dimension is not None for c in plan_drivers)  # plan and lint --base agree


def test_gs801_passes_an_operator_bump_with_pinned_drivers(repo: FleetRepo) -> None:
    _operator_base(repo, "v26.3.3")
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    assert findings(repo, "GS801") == []


# ---------------------------------------------------------------- GS804


def test_gs804_sees_the_release_default_driver_moving_with_the_operator(repo: FleetRepo) -> None:
    _unpinned_on(repo, "v26.3.3")
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    found = findings(repo, "GS804")
    assert {f.message.split("'")[3] for f in found} == {"l40s", "t4-batch"}
    assert all("with the operator release" in f.message for f in found)


def test_gs804_implied_driver_passes_when_the_canary_runs_it(repo: FleetRepo) -> None:
    _operator_base(repo, "v26.3.3")
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    assert findings(repo, "GS804") == []


def test_gs804_operator_needs_an_earlier_wave_cluster_on_the_target(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.3.3"
    with repo.fleet_settings() as data:
        data["channels"][0]["operator"] = "v26.3.3"
    repo.commit("both on 26.3.3")
    with repo.fleet_settings() as data:  # train-east (wave 2) follows stable
        data["channels"][0]["operator"] = "v26.7.0"
    [finding] = findings(repo, "GS804")
    assert "cluster 'train-east' (wave 2) moves to operator v26.7.0" in finding.message
    assert finding.file == "fleet/fleet.yaml" and finding.path == ("channels", 0, "operator")
    # the wave-1 cluster may go first
    with repo.fleet_settings() as data:
        data["channels"][0]["operator"] = "v26.3.3"
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    assert findings(repo, "GS804") == []
    repo.commit("canary cluster first")
    with repo.fleet_settings() as data:
        data["channels"][0]["operator"] = "v26.7.0"
    assert findings(repo, "GS804") == []


# ---------------------------------------------------------------- GS805

EXCEPTION_PACK = """\
apiVersion: gpuspec.io/v1alpha1
kind: PolicyPack
metadata:
  name: default
rules: {}
exceptions:
  - rules: [GS501]
    cluster: train-east
    owner: platform
    reason: whole cluster
    expires: 2099-01-01
  - rules: [GS502]
    cluster: infer-north
    pool: t4-batch
    owner: platform
    reason: batch nodes upgrade in bulk
    expires: 2099-01-01
"""


def test_gs805_removed_cluster_named_by_an_exception(repo: FleetRepo) -> None:
    repo.write("policies/default.yaml", EXCEPTION_PACK)
    repo.commit("exceptions")
    (repo.fleet / "clusters/train-east.yaml").unlink()
    [finding] = findings(repo, "GS805")
    assert finding.path == ("exceptions", 0) and "cluster 'train-east' is removed" in finding.message


# ---------------------------------------------------------------- GS806


def test_gs806_fails_on_a_hand_edit_of_rendered(repo: FleetRepo) -> None:
    values = repo.root / "rendered/clusters/train-east/gpu-operator.values.yaml"
    values.write_text("driver:\n  enabled: false\n", encoding="utf-8")
    repo.commit("hand edit")
    (repo.root / "rendered/extra.yaml").write_text("x: 1\n", encoding="utf-8")  # untracked counts too
    [finding] = findings(repo, "GS806", base="HEAD~1")
    assert finding.file == "rendered/clusters/train-east/gpu-operator.values.yaml"
    assert "2 file(s) in rendered/ changed since HEAD~1 while fleet/ and policies/ did not" in finding.message


def test_gs806_passes_when_the_spec_changed_too(repo: FleetRepo) -> None:
    (repo.root / "rendered/clusters/train-east/gpu-operator.values.yaml").write_text("a: 2\n", encoding="utf-8")
    with repo.cluster("train-east") as data:
        pool(data, "h100")["nodes"] = 40
    assert findings(repo, "GS806") == []


def test_gs806_uses_the_given_folders(repo: FleetRepo) -> None:
    (repo.root / "rendered/clusters/train-east/gpu-operator.values.yaml").write_text("a: 2\n", encoding="utf-8")
    assert len(findings(repo, "GS806")) == 1
    assert findings(repo, "GS806", rendered_dir=Path("elsewhere")) == []


# ---------------------------------------------------------------- engine hooks


def test_severity_override_and_disable(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        bump_driver(data, "l40s-canary")
        bump_driver(data, "l40s")
    [warning] = findings(repo, "GS804", severities={"GS804": Severity.WARNING})
    assert warning.severity is Severity.WARNING and warning.tags == ("change-set",)
    assert findings(repo, "GS804", enabled={"GS804": False}) == []


def test_context_carries_base_and_head(repo: FleetRepo) -> None:
    from gpuspec.rules.changeset import changeset_context

    with repo.cluster("infer-north") as data:
        bump_driver(data, "l40s-canary")
    ctx = changeset_context(None, "HEAD", Path("fleet"))
    assert isinstance(ctx, ChangeSetContext) and ctx.base is not None
    assert ctx.fleet_rel == "fleet" and ctx.policies_rel == "policies" and ctx.rendered_rel == "rendered"
    assert ctx.changed_files == ("fleet/clusters/infer-north.yaml",)
    assert [c.pool for c in ctx.changes] == ["l40s-canary"]


# ---------------------------------------------------------------- GS807


def test_gs807_names_the_provisioning_step_of_a_mig_layout_change(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        pool(data, "a100-mig")["mig"] = {"strategy": "mixed", "layout": "all-balanced"}
    [finding] = findings(repo, "GS807")
    assert finding.severity is Severity.WARNING
    assert "nvidia.com/mig.config=all-balanced" in finding.message and "GS782" in finding.message
    [change] = [c for c in repo.changes() if c.kind.value == "mig"]
    assert "mig-manager sets nvidia.com/mig.config.state=pending" in change.impact
    assert "does not evict or drain" in change.impact and "GPU pods are evicted" not in change.impact


def test_gs807_custom_geometry_under_the_same_name_and_no_mig_change(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        tenant(data, "research")["gpuQuota"] = 100
    assert findings(repo, "GS807") == []
    with repo.cluster("train-east") as data:
        pool(data, "a100-mig")["mig"]["custom"][1]["profiles"] = {"7g.80gb": 1}
    [finding] = findings(repo, "GS807")
    assert "keeps its name custom-a100-mig" in finding.message


# ---------------------------------------------------------------- GS808


def test_gs808_fails_when_a_pool_pin_switches_driver_management(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        bump_driver(data, "h100-canary")
    [finding] = findings(repo, "GS808")
    assert "ClusterPolicy -> NVIDIADriver resources" in finding.message and "driver change" in finding.message
    [switch] = [c for c in repo.changes() if c.kind.value == "driver-management"]
    assert switch.pool is None and "every GPU node of the cluster (40 node(s) in 3 pool(s))" in switch.impact
    assert switch.dimension is not None and switch.disruption.value == "driver-reload"


def test_gs808_passes_the_switch_alone_and_then_the_pin(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["operator"]["driverManagement"] = "nvidiadriver"
    assert findings(repo, "GS808") == []
    assert [c.kind.value for c in repo.changes()] == ["driver-management"]
    repo.commit("switch")
    with repo.cluster("train-east") as data:
        bump_driver(data, "h100-canary")
    assert findings(repo, "GS808") == [] and findings(repo, "GS804") == []
    assert "driver-management" not in [c.kind.value for c in repo.changes()]


def test_gs808_refuses_the_switch_before_v26_7(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["operator"] = {**data["operator"], "version": "v26.3.3"}
        del data["operator"]["channel"]
    repo.commit("v26.3.3")
    with repo.cluster("train-east") as data:
        data["operator"]["driverManagement"] = "nvidiadriver"
    [finding] = findings(repo, "GS808")
    assert "v26.3.3 does not support" in finding.message


def test_gs804_one_rollout_wave_per_change(repo: FleetRepo) -> None:
    """infer-north: l40s-canary (wave 1) runs 580 in the base; l40s is wave 2, t4-batch wave 3."""
    with repo.cluster("infer-north") as data:
        bump_driver(data, "l40s-canary")
    repo.commit("canary on 595")
    with repo.cluster("infer-north") as data:
        bump_driver(data, "l40s")
        bump_driver(data, "t4-batch")
    found = findings(repo, "GS804")
    assert [f.message.split("'")[3] for f in found] == ["t4-batch"]
    assert "(wave 3)" in found[0].message and "one rollout wave per change" in found[0].message
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["driver"] = {"source": "operator", "branch": "535", "version": "535.309.01"}
    assert findings(repo, "GS804") == []


# ---------------------------------------------------------------- GS821, GS822


def test_gs821_fleet_waves_one_per_change_and_in_order(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        bump_driver(data, "l40s-canary")
    with repo.cluster("train-east") as data:
        bump_driver(data, "h100-canary")
    [both] = findings(repo, "GS821")
    assert "'train-east' (fleet wave 2)" in both.message and "'infer-north' (fleet wave 1)" in both.message
    with repo.cluster("train-east") as data:
        pool(data, "h100-canary")["driver"] = {"source": "operator"}
    assert findings(repo, "GS821") == [], "the wave-1 cluster alone"
    repo.commit("infer-north canary on 595")
    with repo.cluster("train-east") as data:
        bump_driver(data, "h100-canary")
    assert findings(repo, "GS821") == [], "no earlier-wave cluster has H100 pools to hold the wave back"


def test_gs821_an_earlier_wave_ahead_proves_the_stepping_stone(repo: FleetRepo) -> None:
    """Issue 44: staging (wave 1) went on to v26.7.0; the wave-2 cluster's first step is v26.3.3."""
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.7.0"
    with repo.cluster("train-east") as data:
        data["operator"].pop("channel", None)
        data["operator"]["version"] = "v25.10.1"
    repo.commit("infer-north on v26.7.0, train-east on v25.10.1")
    with repo.cluster("train-east") as data:
        data["operator"]["version"] = "v26.3.3"
    assert findings(repo, "GS821") == [] and [f for f in findings(repo, "GS804") if "earlier wave" in f.message] == []
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = "v26.3.3"
    repo.commit("infer-north rolled back to v26.3.3")
    with repo.cluster("train-east") as data:
        data["operator"]["version"] = "v26.7.0"
    [behind] = findings(repo, "GS821")
    assert "run it (or a later one) in the base" in behind.message


def test_gs822_rollback_flag_lives_one_change(repo: FleetRepo) -> None:
    _operator_base(repo, "v26.7.0")
    with repo.cluster("infer-north") as data:
        data["operator"].update(version="v26.3.3", rollback=True)
    assert findings(repo, "GS822") == [] and findings(repo, "GS803") == []
    repo.commit("roll back the operator")
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["nodes"] = 9
    [left] = findings(repo, "GS822")
    assert "left from the previous change's downgrade" in left.message and left.path == ("operator", "rollback")
    with repo.cluster("infer-north") as data:
        data["operator"].pop("rollback")
    assert findings(repo, "GS822") == []
