"""The runbook sections (rollback criteria, shift handover, disaster recovery, autoscaling) say what rendered/ says."""

from __future__ import annotations

import math
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.handover.documents import HandoverSettings, cluster_document
from gpuspec.handover.facts import cluster_facts
from gpuspec.render.context import cluster_context
from tests.render.fleets import cluster, compile_dir, load, pool, write_fleet

from .helpers import EXAMPLE_CLUSTERS, REPO_ROOT, copy_example, documents, section, tables, unquote

RENDERED = REPO_ROOT / "rendered"
KUBECTL = REPO_ROOT / ".tools" / "bin" / "kubectl"


def _yaml(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def _doc(name: str) -> str:
    return (RENDERED / "handover" / f"{name}.md").read_text(encoding="utf-8")


def _shell_lines(text: str) -> list[list[str]]:
    """Every line of every ``sh`` block in ``text``, split as a POSIX shell splits it."""
    out, inside = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            inside = stripped == "```sh"
            continue
        if inside and stripped:
            out.append(shlex.split(stripped.split(" | ")[0].split(" > ")[0]))
    return out


def _facts(tmp_path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    fleet_dir = write_fleet(tmp_path, [doc])
    fleet = load(fleet_dir)
    plan = compile_dir(fleet_dir)
    return cluster_facts(cluster_context(fleet, fleet.clusters[0]), plan.clusters[0], {})


@pytest.mark.parametrize("name", EXAMPLE_CLUSTERS)
def test_rollback_alerts_are_the_rendered_operator_alerts(name: str) -> None:
    rule = _yaml(RENDERED / "clusters" / name / "monitoring" / "alerts.yaml")[0]
    rendered = [r["alert"] for g in rule["spec"]["groups"] for r in g["rules"] if r["alert"].startswith("GPUOperator")]
    text = section(_doc(name), "Rollback criteria: when to roll back, and how")
    assert rendered and all(f"`{a}`" in text for a in rendered)
    assert f'alertname=~"{"|".join(rendered)}"' in text
    assert "GPUXidError`" not in text.split("### Roll back the operator control plane")[0].split("no rollback")[0]


@pytest.mark.parametrize("name", EXAMPLE_CLUSTERS)
def test_rollback_and_shift_commands_select_the_rendered_pools(name: str) -> None:
    fleet_doc = yaml.safe_load((REPO_ROOT / "fleet" / "clusters" / f"{name}.yaml").read_text())
    selectors = {",".join(f"{k}={v}" for k, v in sorted(p["nodeSelector"].items())) for p in fleet_doc["pools"]}
    doc = _doc(name)
    for heading in ("Rollback criteria: when to roll back, and how", "Shift-handover checklist"):
        used = [argv[argv.index("-l") + 1] for argv in _shell_lines(section(doc, heading))
                if argv[:2] == ["kubectl", "get"] and "-l" in argv and argv[2] == "nodes"]
        assert {u.split(",nvidia.com/gpu-driver-upgrade-state=")[0] for u in used} == selectors
        for selector in used:
            base = ",".join(p for p in selector.split(",") if not p.startswith("nvidia.com/gpu-driver-upgrade-state="))
            assert base in selectors, selector


def test_gpu_threshold_follows_rollback_below_percent(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    spec_file = root / "fleet" / "clusters" / "train-east.yaml"
    spec_file.write_text(spec_file.read_text().replace("  maxUnavailable: 10%\n",
                                                       "  maxUnavailable: 10%\n  rollbackBelowPercent: 75\n"))
    text = section(documents(root)["handover/train-east.md"], "Rollback criteria: when to roll back, and how")
    assert "rollbackBelowPercent`, 75%" in text
    assert f"fewer than {math.ceil(2 * 8 * 0.75)} nvidia.com/gpu advertised (75% of 2 x 8)" in text
    # h100 autoscales (min 16): its floor is the minimum's GPUs, not the planned 32 nodes'
    assert f"fewer than {math.ceil(16 * 8 * 0.75)} nvidia.com/gpu advertised (75% of the autoscaler's minimum, " \
        "16 x 8)" in text
    assert f"fewer than {math.ceil(6 * 28 * 0.75)} nvidia.com/mig-1g.10gb advertised" in text


def test_disaster_recovery_restores_rendered_objects_in_order() -> None:
    doc = _doc("train-east")
    text = section(doc, "Disaster recovery: restore order")
    steps = [line for line in text.splitlines() if line[:2] in ("1.", "2.", "3.", "4.")]
    assert [s[:2] for s in steps] == ["1.", "2.", "3.", "4."]
    assert "CRDs" in steps[0] and "clusterpolicies.nvidia.com" in steps[0]
    assert "Namespaces" in steps[1] and "GitOps" in steps[2] and "reconciliation" in steps[3]
    foundation = set()
    for path in (RENDERED / "clusters" / "train-east").glob("*.yaml"):
        for d in _yaml(path):
            if isinstance(d, dict) and d.get("kind") in ("Namespace", "PriorityClass", "ResourceQuota", "LimitRange"):
                foundation.add(f"{d['kind']} {d['metadata']['name']}")
    assert foundation and all(f"`{o}`" in steps[1] for o in foundation)
    apps = {d["metadata"]["name"] for p in (RENDERED / "gitops/argocd/train-east").glob("*.yaml") for d in _yaml(p)}
    assert all(f"`Application {a}`" in steps[2] for a in apps)
    for argv in _shell_lines(text):
        if argv[:2] == ["kubectl", "apply"] and "-f" in argv and argv[argv.index("-f") + 1] != "-":
            assert (REPO_ROOT / argv[argv.index("-f") + 1]).exists(), argv
    assert "Do not restore" in text and "operand Pods" in text


@pytest.mark.skipif(not KUBECTL.exists(), reason="kubectl not installed (scripts/install-tools)")
def test_disaster_recovery_flux_step_builds_with_kustomize() -> None:
    text = section(_doc("infer-north"), "Disaster recovery: restore order")
    argv = next(a for a in _shell_lines(text) if a[:3] == ["kubectl", "apply", "-k"])
    result = subprocess.run([str(KUBECTL), "kustomize", str(REPO_ROOT / argv[3])], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert "kind: Kustomization" in result.stdout


def test_autoscaling_section_is_the_rendered_file() -> None:
    rendered = _yaml(RENDERED / "clusters" / "train-east" / "autoscaling.yaml")[0]
    text = section(_doc("train-east"), "Autoscaling: the readiness gate")
    rows = tables(text)[0]
    assert {unquote(r["Pool"]): (r["Autoscaler"], int(r["Min"]), int(r["Max"])) for r in rows} == {
        name: (p["autoscaler"], p["min"], p["max"]) for name, p in rendered["pools"].items()}
    asg = rendered["pools"]["h100"]["autoScalingGroupTags"]
    for tag, value in asg["tags"].items():
        assert f"{asg['prefix']}{tag}={value}" in text
    assert all(f"`{flag}`" in text for flag in rendered["clusterAutoscalerFlags"])
    assert "## Autoscaling" not in _doc("infer-north")


def test_openshift_control_plane_rollback_goes_through_olm(tmp_path: Path) -> None:
    doc = cluster("ocp", kubernetes={"version": "1.32", "distribution": "openshift", "openshiftVersion": "4.19",
                                     "runtime": "cri-o"},
                  operator={"version": "v26.7.0", "namespace": "nvidia-gpu-operator"},
                  pools=[pool("a100", product="A100-SXM4-80GB", os={"distribution": "rhcos", "version": "4.19"},
                              driver={"source": "operator", "branch": "580"})])
    facts = _facts(tmp_path, doc)
    plane = facts["rollback_criteria"]["control_plane"]
    assert plane["kind"] == "olm"
    assert plane["csv"] == "gpu-operator-certified.v26.7.0"
    assert "kubectl -n nvidia-gpu-operator delete subscriptions.operators.coreos.com gpu-operator-certified" \
        in plane["commands"]
    first = facts["disaster_recovery"]["steps"][0]
    assert "OLM" in first["what"] and "Subscription gpu-operator-certified" in first["objects"]
    assert first["commands"][0] == "kubectl apply -k rendered/clusters/ocp/olm"


def test_flux_control_plane_rollback_names_the_helm_release(tmp_path: Path) -> None:
    facts = _facts(tmp_path, cluster("fx", gitops={"tool": "flux"}))
    plane = facts["rollback_criteria"]["control_plane"]
    assert plane["kind"] == "helm" and plane["tool"] == "flux"
    assert "helm -n gpu-operator history gpu-operator" in plane["commands"]
    assert facts["disaster_recovery"]["steps"][2]["commands"] == ["kubectl apply -k rendered/gitops/flux/fx"]


def test_host_driver_pool_rolls_back_the_node_image(tmp_path: Path) -> None:
    facts = _facts(tmp_path, cluster("h", pools=[pool("gpu", driver={"source": "host"})]))
    assert facts["rollback_criteria"]["drivers"] == [
        {"pool": "gpu", "host": True, "image": "", "version": "", "commands": []}]
    assert not any("driver" in c["check"] for c in facts["shift_checklist"] if c["check"].startswith("Pool"))


def test_compliance_section_lists_the_set_and_the_gaps(tmp_path: Path) -> None:
    doc = cluster("gov", operator={"version": "v25.10.1"}, compliance="government-ready")
    facts = _facts(tmp_path, doc)["compliance"]
    rows = {r["operand"]: r for r in facts["rows"]}
    assert facts["status"] == "documented" and facts["line"] == "25.10"
    assert rows["node-feature-discovery"]["listed"] == "no"
    assert rows["driver.manager"]["listed"] == "yes" and rows["toolkit"]["image"] == ""
    assert rows["driver"]["image"] == "nvcr.io/nvidia/driver-stig-fips/gpu-driver-stig-fips:580.95.05-stig-fips"
    assert facts["images_gap"]
    newer = _facts(tmp_path / "newer", cluster("gov", compliance="government-ready"))["compliance"]
    assert newer["status"] == "cannot-verify" and "v26.3" in newer["gap"]
    assert {r["listed"] for r in newer["rows"]} == {"cannot verify"}
    assert _facts(tmp_path / "none", cluster("plain"))["compliance"]["set"] == ""


def test_compliance_section_renders_only_when_asked(tmp_path: Path) -> None:
    fleet_dir = write_fleet(tmp_path, [cluster("gov", operator={"version": "v25.10.1"},
                                               compliance="government-ready")])
    fleet = load(fleet_dir)
    plan = compile_dir(fleet_dir)
    text = cluster_document(cluster_context(fleet, fleet.clusters[0]), plan.clusters[0],
                            HandoverSettings(fleet_dir=fleet_dir))[0].decode()
    body = section(text, "Compliance: government-ready")
    row = next(r for r in tables(body)[0] if unquote(r["Operand"]) == "node-feature-discovery")
    assert row["In the set"] == "no"
    assert "Source gap:" in body
    assert "## Compliance" not in _doc("train-east")
