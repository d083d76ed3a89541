"""What is accepted stays visible: an adopted air-gapped cluster whose air-gap findings (GS401, GS404) a policy
exception accepts and whose missing canary pool (GS501) an inline suppression accepts. `lint` is green, and
`deviations` (text, JSON, Markdown), the rendered `deviations.yaml` and the handover document list every one of
them with its scope, owner, expiry and reason -- not only the support-matrix findings validate sees. A rule of a
still-used exception that accepts nothing any more is reported on its own (GS004 at that rule)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from audit.audit_cli import run_gpuspec
from plan.helpers import GIT_ENV

TODAY = "2026-12-01"

FLEET = """\
apiVersion: gpuspec.io/v1alpha1
kind: Fleet
metadata:
  name: adopted
git:
  repoURL: https://git.example.internal/gpu-fleet.git
mirrors:
  - name: dc1
    registries:
      nvcr.io: harbor.dc1.example.internal/nvcr
    chart:
      repository: oci://harbor.dc1.example.internal/charts/nvidia
    pullSecrets: [harbor-pull]
"""

CLUSTER = """\
apiVersion: gpuspec.io/v1alpha1
kind: Cluster
metadata:
  name: dc1-infer
kubernetes:
  version: "1.33"
operator:
  version: v26.7.0
mirror: dc1
gitops:
  tool: argocd
rollout:  # gpuspec: ignore GS501 -- both racks take changes together until the canary rack is racked
  maxParallelUpgrades: 1
  maxUnavailable: 25%
  drain:
    enable: true
  podDeletion:
    timeoutSeconds: 300
pools:
  - name: l40s
    nodeSelector:
      example.com/pool: l40s
    nodes: 4
    gpu: {product: L40S, count: 4}
    os: {distribution: ubuntu, version: "22.04", kernel: 5.15.0-143-generic}
  - name: h100
    nodeSelector:
      example.com/pool: h100
    nodes: 4
    gpu: {product: H100-SXM5-80GB, count: 8}
    os: {distribution: ubuntu, version: "22.04", kernel: 5.15.0-143-generic}
"""

PACK = """\
apiVersion: gpuspec.io/v1alpha1
kind: PolicyPack
metadata:
  name: default
exceptions:
  - rules: [{rules}]
    cluster: dc1-infer
    owner: dc1-ops@example.com
    reason: the NFD image and the apt mirror come with the next Harbor sync
    expires: 2027-03-31
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
    (root / "fleet" / "clusters" / "dc1-infer.yaml").write_text(CLUSTER, encoding="utf-8")
    (root / "policies" / "default.yaml").write_text(PACK.format(rules="GS401, GS404"), encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "adopt dc1-infer")
    return root


def test_the_air_gap_findings_and_the_suppression_are_what_lint_accepts(repo: Path) -> None:
    (repo / "policies" / "default.yaml").write_text(PACK.format(rules="GS601"), encoding="utf-8")
    (repo / "fleet" / "clusters" / "dc1-infer.yaml").write_text(CLUSTER.replace("  # gpuspec: ignore", "  # no"),
                                                                  encoding="utf-8")
    result = run_gpuspec("lint", "--today", TODAY, cwd=repo)
    assert result.code == 1
    for rule in ("GS401", "GS404", "GS501"):
        assert f" {rule} " in result.out, (rule, result.out)
    (repo / "policies" / "default.yaml").write_text(PACK.format(rules="GS401, GS404"), encoding="utf-8")
    (repo / "fleet" / "clusters" / "dc1-infer.yaml").write_text(CLUSTER, encoding="utf-8")
    result = run_gpuspec("lint", "--today", TODAY, cwd=repo)
    assert result.code == 0, result.out + result.err
    assert "GS004" not in result.out and "GS006" not in result.out


def test_deviations_lists_every_accepted_finding_in_every_format(repo: Path) -> None:
    text = run_gpuspec("deviations", "--today", TODAY, cwd=repo)
    assert text.code == 0, text.err
    out = text.out
    assert "dc1-infer: 3 accepted finding(s)" in out
    assert "  GS401 cluster dc1-infer: Air-gap mirror covers every registry of the operator release" in out
    assert "  GS404 cluster dc1-infer:" in out
    assert "  GS501 line 12: Multi-pool cluster names a canary pool" in out
    assert "reason: the NFD image and the apt mirror come with the next Harbor sync" in out
    assert "owner: dc1-ops@example.com, expires: 2027-03-31" in out
    assert "accepted by: policy exception policies/default.yaml (exceptions.0)" in out
    assert "reason: both racks take changes together until the canary rack is racked" in out
    assert "owner: none, expires: never (inline suppression)" in out
    assert "accepted by: inline suppression fleet/clusters/dc1-infer.yaml:12" in out

    doc = run_gpuspec("deviations", "--format", "json", "--today", TODAY, cwd=repo).json()
    records = doc["accepted"]["dc1-infer"]
    assert [(r["rule"], r["kind"], r["scope"]) for r in records] == [
        ("GS401", "exception", "cluster dc1-infer"), ("GS404", "exception", "cluster dc1-infer"),
        ("GS501", "suppression", "line 12"),
    ]
    assert {r.get("owner") for r in records[:2]} == {"dc1-ops@example.com"}
    assert {r.get("expires") for r in records[:2]} == {"2027-03-31"}
    assert records[2]["acceptedBy"] == {"file": "fleet/clusters/dc1-infer.yaml", "line": 12}
    assert "owner" not in records[2] and "expires" not in records[2]

    markdown = run_gpuspec("deviations", "--format", "markdown", "--today", TODAY, cwd=repo).out
    assert "| `GS401` | cluster dc1-infer | Air-gap mirror covers every registry" in markdown
    assert ("| both racks take changes together until the canary rack is racked | none (inline) | never | "
            "inline suppression `fleet/clusters/dc1-infer.yaml:12` |") in markdown
    # (an @ in a table cell is kept from becoming a mention)
    assert ("| dc1-ops@&#8203;example.com | 2027-03-31 | policy exception `policies/default.yaml (exceptions.0)` |"
            in markdown)


def test_render_and_the_handover_carry_them(repo: Path) -> None:
    result = run_gpuspec("render", "--today", TODAY, cwd=repo)
    assert result.code == 0, result.out + result.err
    record = yaml.safe_load((repo / "rendered" / "clusters" / "dc1-infer" / "deviations.yaml").read_text())
    assert [(a["rule"], a["kind"]) for a in record["accepted"]] == [
        ("GS401", "exception"), ("GS404", "exception"), ("GS501", "suppression")]
    assert run_gpuspec("handover", "--output", "docs", "--today", TODAY, cwd=repo).code == 0
    for document in (repo / "rendered" / "handover" / "dc1-infer.md", repo / "docs" / "dc1-infer.md"):
        text = document.read_text(encoding="utf-8")
        assert "### Accepted findings" in text
        assert "| `GS401` | cluster dc1-infer |" in text
        assert "| 2027-03-31 | `policies/default.yaml (exceptions.0)` |" in text
        assert ("| `GS501` | line 12 | Multi-pool cluster names a canary pool | both racks take changes together "
                "until the canary rack is racked | none (inline suppression) | never | "
                "`fleet/clusters/dc1-infer.yaml:12` |") in text
    # A fixed suppression disappears from the next render (the cluster file is the input that changed).
    (repo / "fleet" / "clusters" / "dc1-infer.yaml").write_text(CLUSTER.replace("  # gpuspec: ignore", "  # was"),
                                                                  encoding="utf-8")
    assert run_gpuspec("render", "--today", TODAY, cwd=repo).code == 0
    record = yaml.safe_load((repo / "rendered" / "clusters" / "dc1-infer" / "deviations.yaml").read_text())
    assert [a["rule"] for a in record["accepted"]] == ["GS401", "GS404"]


def test_a_stale_rule_of_a_used_exception_is_reported_on_its_own(repo: Path) -> None:
    (repo / "policies" / "default.yaml").write_text(PACK.format(rules="GS401, GS302, GS404"), encoding="utf-8")
    result = run_gpuspec("lint", "--today", TODAY, cwd=repo)
    assert result.code == 0, result.out  # GS004 is a warning
    lines = [line for line in result.out.splitlines() if " GS004 " in line]
    assert len(lines) == 1, result.out
    assert lines[0].startswith("policies/default.yaml:6:")
    assert "accepts no GS302 finding any more (its other rules still match: GS401, GS404)" in lines[0]
    # deviations still shows the exception's live rules, and says GS302 accepts nothing today
    records = run_gpuspec("deviations", "--format", "json", "--today", TODAY, cwd=repo).json()["accepted"]["dc1-infer"]
    stale = next(r for r in records if r["rule"] == "GS302")
    assert "no GS302 finding in cluster dc1-infer today" in stale["message"]
