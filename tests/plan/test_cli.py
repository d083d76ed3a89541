"""`gpuspec plan --base REV`: text, JSON and (golden) Markdown output, exit codes, no tracebacks."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from gpuspec.cli.plan_cmd import plan_command
from gpuspec.plan.markdown import COMMENT_MARKER, cell, mermaid_label

from .helpers import FleetRepo, gpuspec, pool, tenant

GOLDEN = Path(__file__).parent / "golden"


def bump_two_pools(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        for name in ("l40s-canary", "l40s"):
            pool(data, name)["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    repo.commit("infer-north: driver branch 595 on the L40S pools")


def test_plan_head_1_prints_both_pools_wave_order_and_rollback_notes(repo: FleetRepo) -> None:
    bump_two_pools(repo)
    result = gpuspec(repo, "plan", "--base", "HEAD~1")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "2 change(s) in 1 cluster(s): 2 driver reload" in out
    assert "wave 1 - cluster infer-north" in out
    canary, rest = out.index("canary pool l40s-canary"), out.index("pool wave 2: l40s")
    assert canary < rest
    assert out.count("rollback: Revert the pool's driver to 580.173.02") == 2
    assert "harbor.dc-north.acme.internal/nvcr/nvidia/driver:580.173.02-ubuntu22.04" in out
    assert (
        "rollout order (disruptive steps): infer-north/canary pool l40s-canary -> infer-north/pool wave 2: l40s" in out
    )


def test_plan_json(repo: FleetRepo) -> None:
    bump_two_pools(repo)
    result = gpuspec(repo, "plan", "--base", "HEAD~1", "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["base"] == {"rev": "HEAD~1", "commit": repo.git("rev-parse", "HEAD~1")}
    assert data["summary"]["worst"] == "driver-reload" and data["summary"]["clusters"] == ["infer-north"]
    assert [s["label"] for s in data["steps"]] == ["canary pool l40s-canary", "pool wave 2: l40s"]
    assert [c["pool"] for c in data["changes"]] == ["l40s-canary", "l40s"]
    assert data["changes"][0]["wave"] == {"cluster": 1, "pool": 1, "canary": True, "stage": 1}


def test_bad_revision_exits_2_without_traceback(repo: FleetRepo) -> None:
    result = gpuspec(repo, "plan", "--base", "origin/nope")
    assert result.returncode == 2
    assert "unknown git revision 'origin/nope'" in result.stderr and "Traceback" not in result.stderr


def test_unusable_head_exits_2(repo: FleetRepo) -> None:
    (repo.fleet / "clusters/train-east.yaml").write_text("pools: [\n", encoding="utf-8")
    result = gpuspec(repo, "plan", "--base", "HEAD")
    assert result.returncode == 2 and "is unusable" in result.stderr and "Traceback" not in result.stderr


def test_missing_base_option_is_a_usage_error(repo: FleetRepo) -> None:
    result = gpuspec(repo, "plan")
    assert result.returncode == 2 and "--base" in result.stderr


def test_no_changes(repo: FleetRepo) -> None:
    result = CliRunner().invoke(plan_command, ["--base", "HEAD"])
    assert result.exit_code == 0 and "no fleet changes since HEAD" in result.output


def test_output_file(repo: FleetRepo, tmp_path: Path) -> None:
    bump_two_pools(repo)
    target = tmp_path / "plan.md"
    result = CliRunner().invoke(plan_command, ["--base", "HEAD~1", "--format", "markdown", "--output", str(target)])
    assert result.exit_code == 0 and result.output == ""
    assert target.read_text(encoding="utf-8").startswith(COMMENT_MARKER)


def test_markdown_golden(repo: FleetRepo) -> None:
    """A change across two fleet waves: canary drivers, a MIG layout, a quota, a Kubernetes bump."""
    with repo.cluster("infer-north") as data:
        pool(data, "l40s-canary")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
        tenant(data, "inference")["gpuQuota"] = 96
    with repo.cluster("train-east") as data:
        data["kubernetes"]["version"] = "1.35"
        pool(data, "a100-mig")["mig"] = {"strategy": "mixed", "layout": "all-balanced"}
        pool(data, "h100")["sharing"] = {"mode": "time-slicing", "replicas": 2, "justification": "a | b"}
    result = CliRunner().invoke(plan_command, ["--base", "HEAD", "--format", "markdown"])
    assert result.exit_code == 0, result.output
    text = result.output.replace(repo.git("rev-parse", "HEAD")[:12], "BASECOMMIT")
    golden = GOLDEN / "plan-two-waves.md"
    if os.environ.get("GPUSPEC_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_markdown_escaping() -> None:
    assert cell("a | b\nc") == "a \\| b c"
    assert cell(None) == "–"
    assert mermaid_label('x "y" <z>') == "x #quot;y#quot; &lt;z&gt;"


def test_only_changed_cluster_files_are_read(repo: FleetRepo) -> None:
    """With fleet.yaml unchanged, a cluster file that is the same at base and head is never parsed."""
    (repo.fleet / "clusters/zz-broken.yaml").write_text("pools: [\n", encoding="utf-8")
    repo.commit("an unusable file that stays unchanged")
    bump_two_pools(repo)
    result = gpuspec(repo, "plan", "--base", "HEAD~1")
    assert result.returncode == 0, result.stderr
    assert "2 change(s) in 1 cluster(s): 2 driver reload" in result.stdout
    with repo.fleet_settings() as settings:
        settings["metadata"]["labels"] = {"touched": "yes"}
    result = gpuspec(repo, "plan", "--base", "HEAD~1")
    assert result.returncode == 2 and "zz-broken.yaml" in result.stderr
