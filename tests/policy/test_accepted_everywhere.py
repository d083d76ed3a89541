"""An adopted cluster outside the support matrix (operator v24.9.2 on EKS 1.31: GS202, GS204) under policy
exceptions: validate, lint, render, handover and plan all accept it while the exceptions are owned and live,
and all fail (exit 1, the finding) once they expire; placeholders and structural ids are refused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from audit.audit_cli import run_gpuspec
from plan.helpers import GIT_ENV

BEFORE = "2026-12-01"
AFTER = "2027-04-01"

FLEET = """\
apiVersion: gpuspec.io/v1alpha1
kind: Fleet
metadata:
  name: adopted
git:
  repoURL: https://git.example.internal/gpu-fleet.git
"""

CLUSTER = """\
apiVersion: gpuspec.io/v1alpha1
kind: Cluster
metadata:
  name: train
kubernetes:
  version: "1.31"
  distribution: eks
  runtime: containerd
operator:
  version: v24.9.2
gitops:
  tool: argocd
rollout:
  maxParallelUpgrades: 1
  maxUnavailable: 25%
  drain:
    enable: true
  podDeletion:
    timeoutSeconds: 300
pools:
  - name: h100
    nodeSelector:
      eks.amazonaws.com/nodegroup: gpu-h100
    nodes: 4
    gpu: {product: H100-SXM5-80GB, count: 8}
    os: {distribution: ubuntu, version: "22.04", kernel: 5.15.0-143-generic}
    driver: {source: operator, branch: "550", version: 550.127.08}
"""


def _pack(owner: str = "gpu-platform@example.com", expires: str = "2027-03-31", rules: str = "GS202, GS204") -> str:
    return f"""\
apiVersion: gpuspec.io/v1alpha1
kind: PolicyPack
metadata:
  name: default
exceptions:
  - rules: [{rules}]
    cluster: train
    owner: {owner}
    reason: adopted as it runs today; the upgrade to v25.10 and Kubernetes 1.33 is planned for Q1
    expires: {expires}
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV, "HOME": str(root.parent)},
                   capture_output=True, check=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "fleet" / "clusters").mkdir(parents=True)
    (root / "policies").mkdir()
    (root / "fleet" / "fleet.yaml").write_text(FLEET, encoding="utf-8")
    (root / "fleet" / "clusters" / "train.yaml").write_text(CLUSTER, encoding="utf-8")
    (root / "policies" / "default.yaml").write_text(_pack(), encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "adopt train")
    return root


def test_without_exceptions_the_adopted_cluster_fails_validate(repo: Path) -> None:
    (repo / "policies" / "default.yaml").write_text(_pack(rules="GS601"), encoding="utf-8")
    result = run_gpuspec("validate", "--today", BEFORE, cwd=repo)
    assert result.code == 1
    assert "error GS202" in result.out and "error GS204" in result.out


def test_live_exceptions_are_honoured_by_every_command(repo: Path) -> None:
    for args in (["validate"], ["lint"], ["render"], ["render", "--check"], ["handover", "--output", "docs"]):
        result = run_gpuspec(*args, "--today", BEFORE, cwd=repo)
        assert result.code == 0, (args, result.out, result.err)
        assert "GS202" not in result.out + result.err and "GS204" not in result.out + result.err, args
    base = repo / "rendered" / "clusters" / "train"
    values = yaml.safe_load((base / "gpu-operator.values.yaml").read_text(encoding="utf-8"))
    assert values["operator"]["version"] == "v24.9.2"
    assert values["driver"]["version"].startswith("550.127.08")
    assert {"kustomization.yaml", "node-labels.yaml", "rbac.yaml", "images.txt"} <= {p.name for p in base.iterdir()}
    assert (repo / "rendered" / "gitops" / "argocd" / "train").is_dir()
    record = yaml.safe_load((base / "deviations.yaml").read_text(encoding="utf-8"))
    assert [(a["rule"], a["owner"], a["expires"], a["path"]) for a in record["accepted"]] == [
        ("GS204", "gpu-platform@example.com", "2027-03-31", "clusters[train].kubernetes.version"),
        ("GS202", "gpu-platform@example.com", "2027-03-31", "clusters[train].operator.version"),
    ]
    assert record["accepted"][0]["acceptedBy"] == {"file": "policies/default.yaml", "path": "exceptions.0"}
    for document in (repo / "rendered" / "handover" / "train.md", repo / "docs" / "train.md"):
        text = document.read_text(encoding="utf-8")
        assert "### Accepted findings" in text
        assert "| `GS202` | `clusters[train].operator.version` |" in text
        assert "| 2027-03-31 | `policies/default.yaml (exceptions.0)` |" in text
    # The SARIF log of lint marks them accepted, with owner and expiry.
    sarif = run_gpuspec("lint", "--today", BEFORE, "--format", "sarif", cwd=repo).json()
    suppressed = [r for r in sarif["runs"][0]["results"] if r.get("suppressions")]
    assert sorted(r["ruleId"] for r in suppressed) == ["GS202", "GS204"]
    assert "owner gpu-platform@example.com, expires 2027-03-31" in suppressed[0]["suppressions"][0]["justification"]


def test_deviations_lists_the_accepted_findings(repo: Path) -> None:
    result = run_gpuspec("deviations", "--today", BEFORE, cwd=repo)
    assert result.code == 0, result.err
    assert "train: 2 accepted finding(s)" in result.out
    assert "owner: gpu-platform@example.com, expires: 2027-03-31" in result.out
    doc = run_gpuspec("deviations", "--format", "json", "--today", BEFORE, cwd=repo).json()
    assert [a["rule"] for a in doc["accepted"]["train"]] == ["GS204", "GS202"]
    assert "| `GS202` | `clusters[train].operator.version` |" in run_gpuspec(
        "deviations", "--format", "markdown", "--today", BEFORE, cwd=repo).out


def test_plan_works_with_accepted_clusters_at_both_revisions(repo: Path) -> None:
    cluster = repo / "fleet" / "clusters" / "train.yaml"
    cluster.write_text(CLUSTER.replace("nodes: 4", "nodes: 6"), encoding="utf-8")
    result = run_gpuspec("plan", "--base", "HEAD", "--today", BEFORE, cwd=repo)
    assert result.code == 0, result.out + result.err
    assert "train" in result.out and "h100" in result.out
    assert result.err == ""


def test_expired_exceptions_fail_every_command(repo: Path) -> None:
    assert run_gpuspec("render", "--today", BEFORE, cwd=repo).code == 0  # stamped: must not vouch later
    (repo / "fleet" / "clusters" / "train.yaml").write_text(CLUSTER.replace("nodes: 4", "nodes: 6"),
                                                            encoding="utf-8")
    for args in (["validate"], ["lint"], ["render"], ["handover"], ["images"], ["deviations"],
                 ["plan", "--base", "HEAD"]):
        result = run_gpuspec(*args, "--today", AFTER, cwd=repo)
        text = result.out + result.err
        assert result.code == 1, (args, text)
        assert "error GS003 exception for GS202, GS204 in train (owner gpu-platform@example.com) expired on " \
               "2027-03-31 (today is 2027-04-01)" in text, (args, text)
        if args[0] != "plan":  # plan judges the exceptions, not the spec
            assert "error GS202" in text and "error GS204" in text, args


def test_render_stamp_does_not_outlive_an_exception(repo: Path) -> None:
    assert run_gpuspec("render", "--today", BEFORE, cwd=repo).code == 0
    assert run_gpuspec("render", "--today", BEFORE, cwd=repo).code == 0
    result = run_gpuspec("render", "--check", "--today", AFTER, cwd=repo)
    assert result.code == 1 and "GS003" in result.err


def test_the_last_day_still_counts(repo: Path) -> None:
    assert run_gpuspec("validate", "--today", "2027-03-31", cwd=repo).code == 0
    assert run_gpuspec("validate", "--today", "2027-04-01", cwd=repo).code == 1


@pytest.mark.parametrize("field", ["owner", "expires"])
def test_a_todo_placeholder_is_reported_until_filled(repo: Path, field: str) -> None:
    pack = _pack(**{field: '"TODO: review"'})
    (repo / "policies" / "default.yaml").write_text(pack, encoding="utf-8")
    for command in ("validate", "lint", "render"):
        result = run_gpuspec(command, "--today", BEFORE, cwd=repo)
        text = result.out + result.err
        assert result.code == 1, text
        assert f"error GS009 exception for GS202, GS204 in train has no {field} yet ('TODO: review')" in text
        assert "error GS202" in text  # a placeholder accepts nothing


def test_an_exception_for_a_structural_finding_is_refused(repo: Path) -> None:
    (repo / "policies" / "default.yaml").write_text(_pack(rules="GS202, GS204, GS101"), encoding="utf-8")
    result = run_gpuspec("validate", "--today", BEFORE, cwd=repo)
    assert result.code == 1
    assert "policies/default.yaml:6:27: error GS008 exception in train names GS101, which cannot be accepted" \
        in result.out
    assert "error GS202" not in result.out and "error GS204" not in result.out  # the other ids still apply


def test_an_inline_suppression_cannot_accept_a_support_matrix_finding(repo: Path) -> None:
    cluster = repo / "fleet" / "clusters" / "train.yaml"
    cluster.write_text(CLUSTER.replace("version: v24.9.2", "version: v24.9.2  # gpuspec: ignore GS202 -- later"),
                       encoding="utf-8")
    (repo / "policies" / "default.yaml").write_text(_pack(rules="GS204"), encoding="utf-8")
    result = run_gpuspec("lint", "--today", BEFORE, cwd=repo)
    assert result.code == 1
    assert "error GS008 inline suppression names GS202, which it cannot accept" in result.out
    assert "error GS202" in result.out
    assert "error GS202" in run_gpuspec("validate", "--today", BEFORE, cwd=repo).out
