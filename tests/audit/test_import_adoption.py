"""Faithful adoption: `gpuspec import` of running clusters whose first sync changes nothing.

The exports (tests/audit/fixtures/{airgap-kubeadm,custom-mig,brownfield}/, written by adoption_exports.py) are what
`kubectl` and `helm` print for clusters installed with `helm install` at a release tag: the ClusterPolicy as the
chart at that tag writes it for the team's values (over the release's real values.yaml, with its real CRD defaults),
nodes with the labels NFD and GFD set.

* dc1-infer: air-gapped kubeadm on v24.9.2, a Harbor mirror for every image including NFD, an apt-mirror ConfigMap
  (driver.repoConfig), a CA ConfigMap (driver.certConfig), and its own time-slicing ConfigMap
  `time-slicing-config` whose key `l40s-ts4` the L40S nodes select.
* lab-mig: kubeadm on v25.3.4 whose A100 nodes run a custom MIG config `a100-split` (GPUs 0-5: 3g.40gb + 2g.20gb +
  2x 1g.10gb, GPUs 6-7: 7x 1g.10gb) from ConfigMap `custom-mig-parted-config`; only GFD's per-profile counts say so.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from adoption_exports import FIXTURES, MIG_DEVICES, render_all
from audit_cli import run_gpuspec
from ruamel.yaml import YAML

from gpuspec.audit.draft_base import DraftPool, PoolKey
from gpuspec.audit.facts import node_facts
from gpuspec.audit.inventory import parse_nodes
from gpuspec.audit.mig_draft import infer_custom_layout
from gpuspec.audit.specdiff import differences, image_refs

AIRGAP = FIXTURES / "airgap-kubeadm"
MIG = FIXTURES / "custom-mig"
HARBOR = "harbor.dc1.acme.internal"


def _safe(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "gpu-fleet"
    assert run_gpuspec("init", str(root)).code == 0
    return root


def _import(repo: Path, name: str, exports: Path, *extra: str) -> tuple[int, str]:
    result = run_gpuspec("import", "--name", name, "--output", str(repo), "--nodes", str(exports / "nodes.json"),
                         "--clusterpolicies", str(exports / "clusterpolicies.json"),
                         "--helm-values", str(exports / "helm-values.json"),
                         "--helm-release", str(exports / "helm-list.json"), *extra)
    return result.code, result.err


def _fill(repo: Path, name: str) -> None:
    """What the person adopting does: the mirror's chart repository, owner, reason and expiry of the exceptions."""
    settings = repo / "fleet" / "fleet.yaml"
    settings.write_text(settings.read_text(encoding="utf-8").replace(
        "repository: 'TODO: review'", f"repository: oci://{HARBOR}/charts/nvidia"), encoding="utf-8")
    pack = repo / "policies" / f"adopted-{name}.yaml"
    pack.write_text(pack.read_text(encoding="utf-8")
                    .replace("owner: 'TODO: review'", "owner: gpu-platform@acme.example")
                    .replace("reason: 'TODO: review'", "reason: adopted as it runs; upgrade planned")
                    .replace("expires: 'TODO: review'", "expires: 2099-12-31"), encoding="utf-8")


def _gates(repo: Path) -> list[int]:
    fleet, policies = str(repo / "fleet"), str(repo / "policies")
    return [run_gpuspec("validate", fleet, "--policies", policies).code,
            run_gpuspec("lint", fleet, "--policies", policies).code,
            run_gpuspec("render", fleet, "--policies", policies, "--out", str(repo / "rendered")).code]


def _audit(repo: Path, name: str, exports: Path) -> Any:
    return run_gpuspec("audit", "--cluster", name, "--nodes", str(exports / "nodes.json"),
                       "--clusterpolicies", str(exports / "clusterpolicies.json"),
                       "--helm-values", str(exports / "helm-values.json"), "--format", "json", str(repo / "fleet"))


def _pack_rules(repo: Path, name: str) -> list[str]:
    pack = _safe(repo / "policies" / f"adopted-{name}.yaml")
    return [rule for exception in pack["exceptions"] for rule in exception["rules"]]


def test_exports_are_current(shared_dir: Path) -> None:
    """The committed exports are what adoption_exports.py writes from ../shared/upstream."""
    for rel, text in render_all(shared_dir).items():
        assert (FIXTURES / rel).read_text(encoding="utf-8") == text, f"run tests/audit/adoption_exports.py ({rel})"


def test_air_gapped_cluster_is_adopted_as_it_runs(repo: Path) -> None:
    code, err = _import(repo, "dc1-infer", AIRGAP)
    assert code == 0, err
    assert "round trip: the draft renders the ClusterPolicy, NVIDIADrivers and images the cluster runs" in err
    assert all(re.fullmatch(r"GS[23][0-9]{2}", rule) for rule in _pack_rules(repo, "dc1-infer"))
    assert _pack_rules(repo, "dc1-infer") == ["GS202"]  # release line 24.9 is out of support: only that
    draft = _safe(repo / "fleet" / "clusters" / "dc1-infer.yaml")
    assert draft["operator"]["configMaps"] == {"devicePlugin": "time-slicing-config", "devicePluginDefault": ""}
    l40s = next(p for p in draft["pools"] if p["gpu"]["product"] == "L40S")
    assert l40s["sharing"]["configName"] == "l40s-ts4" and l40s["sharing"]["replicas"] == 4
    assert draft["overrides"] == [{"path": "operator.defaultRuntime", "value": "containerd",
                                   "reason": "TODO: review: the cluster runs it so (ClusterPolicy "
                                             "spec.operator.defaultRuntime); say why"}]
    [mirror] = _safe(repo / "fleet" / "fleet.yaml")["mirrors"]
    assert draft["mirror"] == mirror["name"]
    assert mirror["registries"] == {"nvcr.io": f"{HARBOR}/nvcr", "registry.k8s.io": f"{HARBOR}/k8s"}
    assert (mirror["packageRepoConfigMap"], mirror["caConfigMap"]) == ("acme-apt-mirror", "acme-harbor-ca")

    _fill(repo, "dc1-infer")
    assert _gates(repo) == [0, 0, 0]
    images = run_gpuspec("images", str(repo / "fleet"), "--policies", str(repo / "policies"), "--cluster",
                         "dc1-infer")
    assert images.code == 0 and images.out.strip(), images.err
    assert [line for line in images.out.splitlines() if not line.startswith(f"{HARBOR}/")] == []
    assert f"{HARBOR}/k8s/nfd/node-feature-discovery:" in images.out
    rendered = repo / "rendered" / "clusters" / "dc1-infer"
    values = _safe(rendered / "gpu-operator.values.yaml")
    assert values["driver"]["repoConfig"] == {"configMapName": "acme-apt-mirror"}
    assert values["devicePlugin"]["config"] == {"name": "time-slicing-config", "default": ""}
    [configmap] = list(YAML(typ="safe").load_all((rendered / "device-plugin-config.yaml").read_text()))
    assert configmap["metadata"]["name"] == "time-slicing-config" and list(configmap["data"]) == ["l40s-ts4"]
    labels = _safe(rendered / "node-labels.yaml")["pools"][l40s["name"]]["labels"]
    assert labels["nvidia.com/device-plugin.config"] == "l40s-ts4"

    # the same round trip on the running cluster later: nothing drifted
    audit = _audit(repo, "dc1-infer", AIRGAP)
    assert [f for f in audit.json()["findings"] if f["ruleId"] in ("GS783", "GS785", "GS786")] == []


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def test_a_lost_setting_fails_the_round_trip_at_its_line(repo: Path) -> None:
    assert _import(repo, "dc1-infer", AIRGAP)[0] == 0
    _fill(repo, "dc1-infer")
    settings = repo / "fleet" / "fleet.yaml"
    mirror_line = _line_of(settings, "- name: harbor-dc1-acme-internal")
    settings.write_text(re.sub(r"\n *packageRepoConfigMap: acme-apt-mirror[^\n]*", "",
                               settings.read_text(encoding="utf-8")), encoding="utf-8")
    cluster = repo / "fleet" / "clusters" / "dc1-infer.yaml"
    text = cluster.read_text(encoding="utf-8")
    cluster.write_text(re.sub(r"\n *configName: l40s-ts4[^\n]*", "",
                              re.sub(r"\n *devicePlugin: time-slicing-config[^\n]*", "", text)), encoding="utf-8")
    audit = _audit(repo, "dc1-infer", AIRGAP)
    assert audit.code == 1
    found = {(f["ruleId"], Path(f["file"]).name, f["line"]): f["message"] for f in audit.json()["findings"]
             if f["ruleId"] in ("GS783", "GS785", "GS786")}
    repo_config = found[("GS785", "fleet.yaml", mirror_line)]  # the mirror's entry, where the field was
    assert "spec.driver.repoConfig.configMapName: the cluster runs \"acme-apt-mirror\"" in repo_config
    assert "mirrors[].packageRepoConfigMap" in repo_config
    edited = cluster.read_text(encoding="utf-8")
    name = found[("GS785", "dc1-infer.yaml", _line_of(cluster, "devicePluginDefault:"))]  # in configMaps
    assert "spec.devicePlugin.config.name: the cluster runs \"time-slicing-config\"" in name
    assert "operator.configMaps.devicePlugin" in name
    relabel = [m for (rule, _, line), m in found.items() if rule == "GS783"]
    assert relabel == ["pool 'l40s-shared' expects nvidia.com/device-plugin.config=l40s-shared but 2 nodes carry "
                       "l40s-ts4: dc1-l40s-0, dc1-l40s-1"], found
    assert "sharing:" in edited


def test_custom_mig_layout_comes_from_gfd_counts_and_is_audited_at_once(repo: Path) -> None:
    code, err = _import(repo, "lab-mig", MIG)
    assert code == 0, err
    assert "does not load" not in err
    assert "round trip: the draft renders the ClusterPolicy, NVIDIADrivers and images the cluster runs" in err
    assert all(re.fullmatch(r"GS[23][0-9]{2}", rule) for rule in _pack_rules(repo, "lab-mig"))
    draft = _safe(repo / "fleet" / "clusters" / "lab-mig.yaml")
    assert draft["operator"]["configMaps"] == {"mig": "custom-mig-parted-config"}
    [pool] = draft["pools"]
    assert pool["mig"] == {"strategy": "mixed", "configName": "a100-split", "custom": [
        {"devices": [0, 1, 2, 3, 4, 5], "profiles": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}},
        {"devices": [6, 7], "profiles": {"1g.10gb": 7}}]}
    _fill(repo, "lab-mig")
    assert _gates(repo) == [0, 0, 0]
    rendered = repo / "rendered" / "clusters" / "lab-mig"
    [configmap] = list(YAML(typ="safe").load_all((rendered / "mig-config.yaml").read_text()))
    assert configmap["metadata"]["name"] == "custom-mig-parted-config"
    layouts = YAML(typ="safe").load(configmap["data"]["config.yaml"])["mig-configs"]
    assert sorted(layouts) == ["a100-split", "all-disabled"]
    assert _safe(rendered / "node-labels.yaml")["pools"][pool["name"]]["labels"]["nvidia.com/mig.config"] == \
        "a100-split"
    audit = _audit(repo, "lab-mig", MIG)
    assert audit.code == 0, audit.out
    assert audit.json()["findings"] == []


def test_brownfield_psa_is_the_one_change_gpuspec_makes_on_purpose(repo: Path) -> None:
    """The EKS cluster runs psa.enabled false (the chart default); gpuspec always sets it: a warning that says so,
    not an error of the draft."""
    exports = FIXTURES / "brownfield"
    code, err = _import(repo, "train-east", exports)
    assert code == 0, err
    psa = [line for line in err.splitlines() if "GS785" in line]
    assert len(psa) == 1 and "warning GS785 ClusterPolicy spec.psa.enabled: the cluster runs false" in psa[0]
    assert "gpuspec always sets psa.enabled: true" in psa[0]


def test_real_chart_option_compares_with_helm_template(repo: Path, tmp_path: Path, shared_dir: Path,
                                                       tools_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --chart the chart's objects come from `helm template` of that chart: here the project's mini chart (a
    subset of the real templates) with v24.9.2's real values.yaml, so the round trip names the fields it lacks."""
    from test_import_brownfield import _stub_chart_at

    monkeypatch.setenv("PATH", f"{tools_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    chart = _stub_chart_at("v24.9.2", shared_dir / "upstream",
                           Path(__file__).parent.parent / "fixtures" / "charts" / "gpu-operator-mini", tmp_path / "c")
    code, err = _import(repo, "dc1-infer", AIRGAP, "--chart", str(chart))
    assert code == 1
    assert f"(chart {chart})" in err and "GS785" in err


# ------------------------------------------------------------------------------------------ units


def _pool(totals: dict[str, int], gpus: int = 8, whole: int = 0) -> DraftPool:
    labels = {f"nvidia.com/mig-{p}.count": str(c) for p, c in totals.items()}
    node = {"kind": "Node", "metadata": {"name": "n", "labels": {
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": str(gpus), **labels}},
        "status": {"allocatable": {"nvidia.com/gpu": str(whole)}}}
    facts = node_facts(parse_nodes(json.dumps({"kind": "List", "items": [node]}), "n.json")[0])
    key = PoolKey("A100-SXM4-80GB", gpus, "ubuntu", "22.04", "", "", False, "mixed", "split", "none", 1)
    return DraftPool(key, [facts])


def test_custom_layout_inference() -> None:
    assert infer_custom_layout(_pool({"1g.10gb": 56})) == [("all", {"1g.10gb": 7})]
    assert infer_custom_layout(_pool({"3g.40gb": 8, "1g.10gb": 8})) == [("all", {"1g.10gb": 1, "3g.40gb": 1})]
    assert infer_custom_layout(_pool({"1g.10gb": 28, "3g.40gb": 8})) == [
        ([0, 1, 2, 3], {"1g.10gb": 7}), ([4, 5, 6, 7], {"3g.40gb": 2})]
    assert infer_custom_layout(_pool(MIG_DEVICES)) == [
        ([0, 1, 2, 3, 4, 5], {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}), ([6, 7], {"1g.10gb": 7})]
    assert infer_custom_layout(_pool({"3g.40gb": 4}, whole=6)) == [([0, 1], {"3g.40gb": 2})]  # 6 GPUs MIG off
    assert infer_custom_layout(_pool({"1g.10gb": 57})) is None  # more than 8 GPUs hold
    assert infer_custom_layout(_pool({"9g.99gb": 8})) is None  # no such profile


def test_spec_differences_as_the_operator_reads_them() -> None:
    rendered = {"gds": {"enabled": False, "repository": "nvcr.io/nvidia/cloud-native", "image": "nvidia-fs"},
                "daemonsets": {"labels": {"helm.sh/chart": "gpu-operator-v24.9.2"}},
                "driver": {"repoConfig": {"configMapName": ""}, "startupProbe": {"periodSeconds": 10}},
                "vfioManager": {"enabled": False}, "sandboxWorkloads": {"enabled": False},
                "toolkit": {"repository": "h/k8s", "image": "container-toolkit", "version": "v1"}}
    running = {"daemonsets": {"labels": {"app.kubernetes.io/managed-by": "Helm"}},
               "driver": {"startupProbe": {"periodSeconds": "10"}, "licensingConfig": {"configMapName": "lic"}},
               "vfioManager": {"enabled": True},
               "toolkit": {"repository": "nvcr.io/nvidia/k8s", "image": "container-toolkit", "version": "v1"}}
    # gds off here and absent there, Helm's labels, "" = absent, numbers as text, sandbox operands without sandbox
    # workloads, image parts (compared as references): no difference; the licensing ConfigMap is one
    assert [(d.path, d.running) for d in differences(rendered, running)] == [
        ("driver.licensingConfig.configMapName", "lic")]
    assert image_refs(rendered, running) == {"toolkit": "h/k8s/container-toolkit:v1"}
    assert image_refs(running, rendered)["toolkit"] == "nvcr.io/nvidia/k8s/container-toolkit:v1"
