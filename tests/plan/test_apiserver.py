"""Switching a pool between compiled and precompiled drivers: a new NVIDIADriver, never a refused update (GS810)."""

from __future__ import annotations

import json
from pathlib import Path

from gpuspec.rollout.records import ChangeKind, Disruption
from gpuspec.rules.registry import changeset_findings

from .helpers import FleetRepo, gpuspec, pool


def _gs810(repo: FleetRepo) -> list[dict[str, object]]:
    result = gpuspec(repo, "lint", "--base", "HEAD", "--format", "json")
    return [f for f in json.loads(result.stdout)["findings"] if f["ruleId"] in ("GS810", "GS811")]


def test_own_nvidiadriver_switch_is_a_replacement_the_plan_describes(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["driver"] = {"source": "precompiled", "branch": "535"}
    changes = [c for c in repo.changes() if c.kind is ChangeKind.DRIVER and c.pool == "t4-batch"]
    assert len(changes) == 1
    change = changes[0]
    assert change.disruption is Disruption.DRIVER_RELOAD
    assert "NVIDIADriver t4-batch is replaced by t4-batch-precompiled" in change.impact
    assert "spec.usePrecompiled is immutable" in change.impact
    assert "outside the upgrade policy" in change.impact and "all 8 node(s)" in change.impact
    assert any(d.startswith("before the sync: cordon") for d in change.details)
    assert any("delete NVIDIADriver t4-batch by hand" in d for d in change.details)
    assert _gs810(repo) == []  # a new object: nothing for the API server to refuse


def test_default_nvidiadriver_switch_is_refused_and_the_plan_says_the_sync_fails(repo: FleetRepo) -> None:
    # l40s-canary and l40s (13 nodes) run the chart's default NVIDIADriver; its usePrecompiled flips.
    with repo.cluster("infer-north") as data:
        for name in ("l40s-canary", "l40s"):
            pool(data, name)["driver"] = {"source": "precompiled", "branch": "580"}
    found = _gs810(repo)
    assert [(f["ruleId"], f["specPath"]) for f in found] == [
        ("GS810", "clusters[infer-north].pools[l40s-canary].driver")]
    assert "NVIDIADriver/default" in str(found[0]["message"])
    assert "spec.usePrecompiled: false -> true" in str(found[0]["message"])
    assert "kubectl delete nvidiadriver default" in str(found[0]["hint"])
    change = next(c for c in repo.changes() if c.kind is ChangeKind.DRIVER and c.pool == "l40s")
    assert "the sync fails (GS810)" in change.impact


def test_changeset_findings_runs_the_apiserver_rules_too(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["priorityClasses"][0]["value"] = 600000
    findings = changeset_findings(None, "HEAD", Path("fleet"))
    assert [f.rule_id for f in findings if f.rule_id == "GS810"] == ["GS810"]


def test_plan_names_an_update_the_api_server_refuses(repo: FleetRepo) -> None:
    # No class of the plan's diff covers priority classes; the rendered-object comparison does.
    with repo.cluster("infer-north") as data:
        data["priorityClasses"][0]["value"] = 600000
    refused = [c for c in repo.changes() if c.kind is ChangeKind.UPDATE_REFUSED]
    assert [(c.cluster, c.summary, c.before, c.after) for c in refused] == [(
        "infer-north",
        "the sync fails: the API server refuses the update of PriorityClass/inference-serving value (GS810)",
        "500000", "600000")]
    assert "create a PriorityClass under a new name" in refused[0].rollback
    result = gpuspec(repo, "plan", "--base", "HEAD")
    assert result.returncode == 0, result.stderr
    assert "the sync fails: the API server refuses the update of PriorityClass/inference-serving" in result.stdout


def test_plan_of_a_replacement_has_no_refused_update(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["driver"] = {"source": "precompiled", "branch": "535"}
    assert not [c for c in repo.changes() if c.kind is ChangeKind.UPDATE_REFUSED]
