"""`plan --base`: rendered objects a change removes per GitOps unit, and what garbage collection deletes with them."""

from __future__ import annotations

from gpuspec.plan.markdown import render_markdown
from gpuspec.plan.output import plan_json, render_text

from .helpers import FleetRepo


def test_removing_a_pool_and_its_tenant_names_the_nvidiadriver_and_what_gc_deletes(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["pools"] = [p for p in data["pools"] if p["name"] != "t4-batch"]
        data["tenants"] = [t for t in data["tenants"] if t["name"] != "batch"]
    plan = repo.plan()
    removed = {(r.unit, r.kind, r.namespace, r.name): r for r in plan.removals}
    driver = removed[("infer-north-gpu-operator-overlay", "NVIDIADriver", "", "t4-batch")]
    assert driver.pruned and "lose their driver" in driver.consequence
    quota = removed[("infer-north-gpu-operator-overlay", "ResourceQuota", "batch-etl", "gpuspec-gpu-quota")]
    assert quota.pruned
    # The tenant's Namespace opts out of prune (Prune=false / prune: disabled): it stays.
    namespace = removed[("infer-north-gpu-operator-overlay", "Namespace", "", "batch-etl")]
    assert not namespace.pruned and "left in the cluster" in namespace.describe()
    text = render_text(plan)
    assert "objects this change removes" in text
    assert "infer-north / infer-north-gpu-operator-overlay: NVIDIADriver t4-batch: deleted by prune" in text
    data = plan_json(plan)
    assert {"cluster": "infer-north", "unit": "infer-north-gpu-operator-overlay", "kind": "NVIDIADriver",
            "name": "t4-batch", "namespace": None, "pruned": True,
            "garbageCollected": driver.consequence} in data["removals"]


def test_a_change_that_removes_nothing_reports_no_removals(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["tenants"][0]["gpuQuota"] = 96
    plan = repo.plan()
    assert plan.changes and plan.removals == []
    assert "objects this change removes" not in render_text(plan)


def test_the_pr_comment_lists_removals(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["pools"] = [p for p in data["pools"] if p["name"] != "t4-batch"]
        data["tenants"] = [t for t in data["tenants"] if t["name"] != "batch"]
    text = render_markdown(repo.plan())
    assert "### Objects this change removes" in text
    assert "| `infer-north` | `infer-north-gpu-operator-overlay` | NVIDIADriver `t4-batch` | prune |" in text
