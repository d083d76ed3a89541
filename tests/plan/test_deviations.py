"""Deliberate deviations and acceptance checks in `plan` and `lint --base` (GS820)."""

from __future__ import annotations

from pathlib import Path

from gpuspec.plan.output import plan_json, render_text
from gpuspec.rules.registry import changeset_findings

from .helpers import FleetRepo, pool

STALE = {"path": "operator.initContainer.imagePullPolicy", "value": "Always", "reason": "mirror re-pushes tags",
         "owner": "gpu-platform"}


def _pin(repo: FleetRepo, version: str, overrides: list[dict[str, str]]) -> None:
    with repo.cluster("infer-north") as data:
        data["operator"]["version"] = version
        data["overrides"] = overrides


def test_an_upgrade_that_drops_an_overridden_key_is_flagged(repo: FleetRepo) -> None:
    _pin(repo, "v25.10.1", [STALE])
    repo.commit("override on v25.10.1")
    _pin(repo, "v26.3.3", [STALE])
    found = [f for f in changeset_findings(repo.root, "HEAD", Path("fleet")) if f.rule_id == "GS820"]
    assert [(f.path, f.severity.value) for f in found] == [(("overrides", 0, "path"), "error")]
    assert "no longer exists in the GPU Operator v26.3.3 chart" in found[0].message
    [line] = [c for c in repo.changes() if c.kind.value == "deviation"]
    assert "operator.initContainer.imagePullPolicy" in line.summary and line.cluster == "infer-north"
    # dropping the override with the upgrade is clean
    _pin(repo, "v26.3.3", [])
    assert [f for f in changeset_findings(repo.root, "HEAD", Path("fleet")) if f.rule_id == "GS820"] == []


def test_a_default_that_changed_under_an_override_is_flagged(repo: FleetRepo) -> None:
    tolerations = {"path": "operator.tolerations", "value": [], "reason": "operator runs on untainted nodes"}
    _pin(repo, "v25.10.1", [tolerations])
    repo.commit("override on v25.10.1")
    _pin(repo, "v26.3.3", [tolerations])
    [finding] = [f for f in changeset_findings(repo.root, "HEAD", Path("fleet")) if f.rule_id == "GS820"]
    assert "changed the default under override 'operator.tolerations'" in finding.message


def test_plan_lists_deviation_changes_and_the_acceptance_checks_it_runs(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["overrides"] = [{"path": "daemonsets.priorityClassName", "value": "gpu-operands", "reason": "outrank"}]
        pool(data, "l40s")["acceptance"] = {"enabled": False}
    plan = repo.plan()
    [change] = [c for c in plan.changes if c.kind.value == "deviation"]
    assert change.summary == 'deviation added: chart value daemonsets.priorityClassName = "gpu-operands"'
    assert "reason: outrank" in change.impact and change.disruption.value == "operand-restart"
    checks = plan.acceptance["infer-north"]
    assert checks[:-1] == ["l40s-canary (nvidia.com/gpu): smoke, shared",
                           "t4-batch (nvidia.com/gpu): smoke, all-gpus, dcgm-diag"]
    assert "train-east" not in plan.acceptance  # an unchanged cluster runs no checks
    text = render_text(plan)
    assert "acceptance checks this change runs:" in text
    assert "infer-north: l40s-canary (nvidia.com/gpu): smoke, shared" in text
    assert plan_json(plan)["acceptance"]["infer-north"]["checks"] == checks[:-1]
