"""`gpuspec lint --base REV` adds the change-set findings to the lint gate."""

from __future__ import annotations

import json

from .helpers import FleetRepo, gpuspec, pool


def test_lint_base_reports_gs804_and_fails(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        for name in ("l40s-canary", "l40s"):
            pool(data, name)["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    result = gpuspec(repo, "lint", "--base", "HEAD", "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    found = [f for f in report["findings"] if f["ruleId"].startswith("GS8")]
    assert [(f["ruleId"], f["file"], f["specPath"]) for f in found] == [
        ("GS804", "fleet/clusters/infer-north.yaml", "clusters[infer-north].pools[l40s].driver")
    ]
    lines = (repo.fleet / "clusters/infer-north.yaml").read_text(encoding="utf-8").splitlines()
    above = [line.strip() for line in lines[: found[0]["line"]] if line.strip().startswith("- name:")]
    assert above[-1] == "- name: l40s"


def test_lint_base_clean_change_passes_and_lint_without_base_ignores_gs8xx(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        pool(data, "l40s-canary")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
        pool(data, "l40s")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    without = gpuspec(repo, "lint", "--format", "json")
    assert not [f for f in json.loads(without.stdout)["findings"] if f["ruleId"].startswith("GS8")]
    with repo.cluster("infer-north") as data:
        pool(data, "l40s")["driver"] = {"source": "operator", "branch": "580", "version": "580.173.02"}
    result = gpuspec(repo, "lint", "--base", "HEAD", "--format", "json")
    assert not [f for f in json.loads(result.stdout)["findings"] if f["ruleId"].startswith("GS8")]


def test_lint_base_bad_revision_exits_2(repo: FleetRepo) -> None:
    result = gpuspec(repo, "lint", "--base", "nope")
    assert result.returncode == 2 and "unknown git revision 'nope'" in result.stderr
    assert "Traceback" not in result.stderr


def _drift_l40s(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        for name in ("l40s-canary", "l40s"):
            pool(data, name)["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}


def test_lint_base_applies_policy_severity_to_change_set_rules(repo: FleetRepo) -> None:
    _drift_l40s(repo)
    (repo.root / "policies" / "default.yaml").write_text(
        "apiVersion: gpuspec.io/v1alpha1\nkind: PolicyPack\nmetadata:\n  name: default\n"
        "rules:\n  GS804:\n    severity: warning\n", encoding="utf-8")
    result = gpuspec(repo, "lint", "--base", "HEAD", "--format", "json")
    found = [f for f in json.loads(result.stdout)["findings"] if f["ruleId"] == "GS804"]
    assert [f["severity"] for f in found] == ["warning"]
    assert result.returncode == 0, result.stdout


def test_lint_base_honours_inline_suppression_of_change_set_rule(repo: FleetRepo) -> None:
    _drift_l40s(repo)
    path = repo.fleet / "clusters/infer-north.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    result = gpuspec(repo, "lint", "--base", "HEAD", "--format", "json")
    finding = next(f for f in json.loads(result.stdout)["findings"] if f["ruleId"] == "GS804")
    indent = lines[finding["line"] - 1][: len(lines[finding["line"] - 1]) - len(lines[finding["line"] - 1].lstrip())]
    lines.insert(finding["line"] - 1, f"{indent}# gpuspec: ignore GS804 -- canary soak done out of band\n")
    path.write_text("".join(lines), encoding="utf-8")
    result = gpuspec(repo, "lint", "--base", "HEAD", "--format", "json")
    assert not [f for f in json.loads(result.stdout)["findings"] if f["ruleId"] == "GS804"], result.stdout
    assert result.returncode == 0
