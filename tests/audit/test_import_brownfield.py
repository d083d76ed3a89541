"""`gpuspec import` of a brownfield EKS cluster as it runs: init, import, fill the exceptions, validate/lint/render.

The exports (tests/audit/fixtures/brownfield/) are what `kubectl get nodes -o json`,
`kubectl get clusterpolicies,nvidiadrivers -o json`, `helm get values -a -o json` and `helm list -o json` print
for an EKS cluster on GPU Operator v24.9.2 and Kubernetes 1.31 with two H100 node groups (main, canary): in
h100-main one node's driver did not come back, one runs a hand-installed 535 driver, one has a failed MIG
config and one a forgotten gpu.deploy.dcgm-exporter=false label.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from audit_cli import HERE, run_gpuspec
from ruamel.yaml import YAML

EXPORTS = HERE / "fixtures" / "brownfield"
DEAD = "ip-10-0-5-17.ec2.internal"
HAND_DRIVER = "ip-10-0-6-17.ec2.internal"
MIG_FAILED = "ip-10-0-7-17.ec2.internal"
DCGM_OFF = "ip-10-0-8-17.ec2.internal"


def _import(repo: Path, *extra: str) -> tuple[int, str]:
    result = run_gpuspec(
        "import", "--name", "train-east", "--output", str(repo),
        "--nodes", str(EXPORTS / "nodes.json"),
        "--clusterpolicies", str(EXPORTS / "clusterpolicies.json"),
        "--helm-values", str(EXPORTS / "helm-values.json"),
        "--helm-release", str(EXPORTS / "helm-list.json"), *extra)
    return result.code, result.err


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "gpu-fleet"
    assert run_gpuspec("init", str(root)).code == 0
    return root


def _fill(pack: Path, expires: str) -> None:
    text = pack.read_text(encoding="utf-8")
    assert text.count("'TODO: review'") == 3, text
    text = (text.replace("owner: 'TODO: review'", "owner: gpu-platform@acme.example")
            .replace("reason: 'TODO: review'", "reason: adopted as it runs; upgrade to v26.7 planned")
            .replace("expires: 'TODO: review'", f"expires: {expires}"))
    pack.write_text(text, encoding="utf-8")


def _gates(root: Path) -> list[int]:
    fleet, policies = str(root / "fleet"), str(root / "policies")
    return [run_gpuspec("validate", fleet, "--policies", policies).code,
            run_gpuspec("lint", fleet, "--policies", policies).code,
            run_gpuspec("render", fleet, "--policies", policies, "--out", str(root / "rendered")).code]


def test_draft_pins_what_runs_and_reports_faulty_nodes(repo: Path) -> None:
    code, err = _import(repo)
    assert code == 0, err
    text = (repo / "fleet" / "clusters" / "train-east.yaml").read_text(encoding="utf-8")
    doc = YAML(typ="safe").load(text)
    assert doc["operator"]["version"] == "v24.9.2"
    assert "helm list: release gpu-operator chart gpu-operator-v24.9.2" in text
    assert doc["kubernetes"] == {"version": "1.31", "distribution": "eks", "runtime": "containerd"}
    assert doc["operator"]["namespace"] == "gpu-operator"
    assert "namespace: gpu-operator # from the cluster: helm list: release gpu-operator namespace" in text
    pools = {p["name"]: p for p in doc["pools"]}
    assert sorted(pools) == ["h100-canary", "h100-main"]  # one pool per node group and product, faults no pools
    assert pools["h100-main"]["nodeSelector"] == {"eks.amazonaws.com/nodegroup": "h100-main"}
    assert pools["h100-canary"]["nodeSelector"] == {"eks.amazonaws.com/nodegroup": "h100-canary"}
    assert pools["h100-main"]["nodes"] == 8 and pools["h100-canary"]["nodes"] == 2
    for pool in pools.values():
        assert pool["driver"] == {"source": "operator", "branch": "550", "version": "550.127.08",
                                  "kernelModuleType": "proprietary"}
        assert pool["mig"] == {"strategy": "single", "layout": "all-disabled"}
        assert pool["os"] == {"distribution": "amazonlinux", "version": "2",
                              "kernel": "5.10.228-219.884.amzn2.x86_64"}
        assert pool["gpu"] == {"product": "H100-SXM5-80GB", "count": 8}
    assert doc["rollout"]["canaryPool"] == "h100-canary"
    assert "gpuspec.io/pool" not in text and "kubectl label" not in text
    # the faulty nodes are findings, as audit reports them, by name
    assert f"GS760 1 node of pool 'h100-main' is labelled as GPU node but advertises no allocatable GPUs: {DEAD}" in err
    assert f"GS771 pool 'h100-main' expects driver 550.127.08 but 1 node runs 535.216.01: {HAND_DRIVER}" in err
    assert f"GS780 MIG configuration failed (nvidia.com/mig.config.state=failed) on 1 node of pool 'h100-main': " \
           f"{MIG_FAILED}" in err
    assert f"GS776 dcgm-exporter is switched off by nvidia.com/gpu.deploy.dcgm-exporter=false on 1 node of pool " \
           f"'h100-main': {DCGM_OFF}" in err
    # the same findings as `gpuspec audit` gives for the export against the draft
    audit = run_gpuspec("audit", "--cluster", "train-east", "--nodes", str(EXPORTS / "nodes.json"),
                        "--clusterpolicies", str(EXPORTS / "clusterpolicies.json"), str(repo / "fleet"))
    for rule in ("GS760", "GS771", "GS775", "GS780", "GS782", "GS776", "GS790"):
        assert rule in audit.out and rule in err


def test_exceptions_gate_validate_lint_render_until_filled(repo: Path) -> None:
    code, err = _import(repo)
    assert code == 0, err
    pack = repo / "policies" / "adopted-train-east.yaml"
    data = YAML(typ="safe").load(pack.read_text(encoding="utf-8"))
    assert data["extends"] == "default"
    [exception] = data["exceptions"]
    values = exception.pop("values")  # bound to what was adopted (issue 44)
    assert exception == {"rules": ["GS202", "GS204"], "cluster": "train-east", "owner": "TODO: review",
                         "reason": "TODO: review", "expires": "TODO: review"}
    assert set(values) == {"operator", "kubernetes"} and values["operator"].startswith("v")
    fleet_yaml = YAML(typ="safe").load((repo / "fleet" / "fleet.yaml").read_text(encoding="utf-8"))
    assert fleet_yaml["policy"]["packs"] == ["site", "adopted-train-east"]
    validate = run_gpuspec("validate", str(repo / "fleet"), "--policies", str(repo / "policies"))
    assert validate.code == 1 and "GS009" in validate.out and "GS202" in validate.out
    assert _gates(repo)[1:] == [1, 1]

    _fill(pack, "2099-12-31")
    assert _gates(repo) == [0, 0, 0]
    rendered = repo / "rendered"
    values = YAML(typ="safe").load((rendered / "clusters" / "train-east" / "gpu-operator.values.yaml")
                                   .read_text(encoding="utf-8"))
    assert values["driver"]["version"] == "550.127.08"
    assert values["mig"]["strategy"] == "single"
    assert values["dcgmExporter"]["enabled"] is True
    app = (rendered / "gitops" / "argocd" / "train-east" / "gpu-operator.application.yaml").read_text(encoding="utf-8")
    assert "targetRevision: v24.9.2" in app

    _fill_expired(pack)
    gates = _gates(repo)
    assert gates == [1, 1, 1], gates
    assert "GS003" in run_gpuspec("validate", str(repo / "fleet"), "--policies", str(repo / "policies")).out


def _fill_expired(pack: Path) -> None:
    pack.write_text(pack.read_text(encoding="utf-8").replace("expires: 2099-12-31", "expires: 2026-01-31"),
                    encoding="utf-8")


def test_draft_without_release_export_leaves_operator_todo(tmp_path: Path) -> None:
    result = run_gpuspec("import", "--name", "train-east", "--nodes", str(EXPORTS / "nodes.json"))
    assert result.code == 0, result.err
    assert "version: 'TODO: review'  # TODO: review: no export names the running release" in result.out
    # the ClusterPolicy alone names it through the validator image tag
    result = run_gpuspec("import", "--name", "train-east", "--nodes", str(EXPORTS / "nodes.json"),
                         "--clusterpolicies", str(EXPORTS / "clusterpolicies.json"))
    assert "version: v24.9.2  # from the cluster: ClusterPolicy spec.validator.version" in result.out


@pytest.mark.parametrize(("option", "content", "message"), [
    ("--nodes", '{"kind": "List", "items": [', "nodes.json:1:"),
    ("--clusterpolicies", json.dumps({"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "x"}}]}),
     "expected ClusterPolicy or NVIDIADriver"),
    ("--helm-release", json.dumps({"chart": "gpu-operator-v24.9.2"}), "not the output of `helm list -o json`"),
    ("--helm-values", "driver: [unclosed", "invalid YAML"),
])
def test_unusable_export_is_exit_2_and_writes_nothing(repo: Path, tmp_path: Path, option: str, content: str,
                                                      message: str) -> None:
    bad = tmp_path / ("nodes.json" if option == "--nodes" else "bad.json")
    bad.write_text(content, encoding="utf-8")
    args = {"--nodes": str(EXPORTS / "nodes.json"), option: str(bad)}
    flat = [item for pair in args.items() for item in pair]
    result = run_gpuspec("import", "--name", "train-east", "--output", str(repo), *flat)
    assert result.code == 2
    assert str(bad) in result.err and message in result.err, result.err
    assert not (repo / "fleet" / "clusters" / "train-east.yaml").exists()
    assert not (repo / "policies" / "adopted-train-east.yaml").exists()


def test_draft_on_standard_output_reports_the_outliers_too() -> None:
    result = run_gpuspec("import", "--name", "train-east", "--nodes", str(EXPORTS / "nodes.json"),
                         "--helm-release", str(EXPORTS / "helm-list.json"))
    assert result.code == 0, result.err
    assert result.out.startswith("# Drafted by `gpuspec import`")
    assert f"GS760 1 node of pool 'h100-main' is labelled as GPU node but advertises no allocatable GPUs: {DEAD}" \
        in result.err
    assert "gpuspec-import-" not in result.err  # the scratch fleet never shows


def _mirrored_exports(tmp_path: Path) -> Path:
    """The brownfield ClusterPolicy export as an air-gapped cluster runs it: every nvcr.io repository mirrored."""
    text = (EXPORTS / "clusterpolicies.json").read_text(encoding="utf-8")
    mirrored = text.replace('"repository": "nvcr.io/', '"repository": "harbor.dc-east.acme.internal/nvcr/')
    assert mirrored != text
    path = tmp_path / "clusterpolicies.json"
    path.write_text(mirrored, encoding="utf-8")
    return path


def _import_mirrored(repo: Path, policies: Path) -> tuple[int, str]:
    result = run_gpuspec(
        "import", "--name", "train-east", "--output", str(repo), "--nodes", str(EXPORTS / "nodes.json"),
        "--clusterpolicies", str(policies), "--helm-release", str(EXPORTS / "helm-list.json"))
    return result.code, result.err


def test_draft_names_the_fleet_mirror_the_cluster_pulls_from(repo: Path, tmp_path: Path) -> None:
    settings = repo / "fleet" / "fleet.yaml"
    settings.write_text(settings.read_text(encoding="utf-8") + (
        "mirrors:\n  - name: dc-east\n    registries:\n      nvcr.io: harbor.dc-east.acme.internal/nvcr\n"
        "    chart:\n      repository: oci://harbor.dc-east.acme.internal/charts/nvidia\n"), encoding="utf-8")
    code, err = _import_mirrored(repo, _mirrored_exports(tmp_path))
    assert code == 0, err
    draft = (repo / "fleet" / "clusters" / "train-east.yaml").read_text(encoding="utf-8")
    assert "mirror: dc-east  # from the cluster: its image repositories follow fleet mirror dc-east" in draft


def test_draft_without_a_matching_mirror_drafts_it_into_fleet_yaml(repo: Path, tmp_path: Path) -> None:
    """The mirror the cluster pulls through is added to fleet.yaml (registries as the cluster rewrites them); its
    chart repository, which no export shows, stays a placeholder validate refuses until it is filled in."""
    code, err = _import_mirrored(repo, _mirrored_exports(tmp_path))
    assert code == 0, err
    assert "added mirror harbor-dc-east-acme-internal" in err
    draft = YAML(typ="safe").load((repo / "fleet" / "clusters" / "train-east.yaml").read_text(encoding="utf-8"))
    assert draft["mirror"] == "harbor-dc-east-acme-internal"
    settings = repo / "fleet" / "fleet.yaml"
    [mirror] = YAML(typ="safe").load(settings.read_text(encoding="utf-8"))["mirrors"]
    assert mirror == {"name": "harbor-dc-east-acme-internal", "chart": {"repository": "TODO: review"},
                      "registries": {"nvcr.io": "harbor.dc-east.acme.internal/nvcr"}}
    _fill(repo / "policies" / "adopted-train-east.yaml", "2099-12-31")
    validate = run_gpuspec("validate", str(repo / "fleet"), "--policies", str(repo / "policies"))
    assert validate.code == 2 and "fleet.yaml:" in validate.out + validate.err
    assert "the chart repository is still to be filled in" in validate.out + validate.err
    settings.write_text(settings.read_text(encoding="utf-8").replace(
        "repository: 'TODO: review'", "repository: oci://harbor.dc-east.acme.internal/charts/nvidia"), encoding="utf-8")
    # No export says where this cluster pulls NFD from or where its driver containers get OS packages: lint says
    # so, and the adoption accepts none of it (air-gap findings are fixed in the spec, never excepted)
    lint = run_gpuspec("lint", str(repo / "fleet"), "--policies", str(repo / "policies"))
    assert lint.code == 1 and "GS401" in lint.out and "GS404" in lint.out
    pack = YAML(typ="safe").load((repo / "policies" / "adopted-train-east.yaml").read_text(encoding="utf-8"))
    assert pack["exceptions"][0]["rules"] == ["GS202", "GS204"]
    settings.write_text(settings.read_text(encoding="utf-8").replace(
        "      nvcr.io: harbor.dc-east.acme.internal/nvcr\n",
        "      nvcr.io: harbor.dc-east.acme.internal/nvcr\n      registry.k8s.io: harbor.dc-east.acme.internal/k8s\n"
        "    packageRepoConfigMap: dc-east-apt\n"), encoding="utf-8")
    assert _gates(repo) == [0, 0, 0]
    values = (repo / "rendered" / "clusters" / "train-east" / "gpu-operator.values.yaml").read_text(encoding="utf-8")
    assert "harbor.dc-east.acme.internal/nvcr/nvidia" in values and "repository: nvcr.io" not in values


def test_standalone_draft_without_a_matching_mirror_says_which_registries_to_declare(tmp_path: Path) -> None:
    result = run_gpuspec("import", "--name", "train-east", "--nodes", str(EXPORTS / "nodes.json"),
                         "--clusterpolicies", str(_mirrored_exports(tmp_path)),
                         "--helm-release", str(EXPORTS / "helm-list.json"))
    assert result.code == 0, result.err
    assert "\nmirror:" not in result.out
    assert "registries nvcr.io: harbor.dc-east.acme.internal/nvcr" in result.out and "TODO: review" in result.out


def test_registry_prefixes_follow_the_chart_defaults() -> None:
    from gpuspec.audit.mirror_match import matching_mirror, registry_prefixes

    repos = {"driver": "harbor.x/nvcr/nvidia", "dcgm": "harbor.x/nvcr/nvidia/cloud-native", "toolkit": "quay.io/me"}
    assert registry_prefixes(repos, "v24.9.2") == {"nvcr.io": "harbor.x/nvcr"}
    assert registry_prefixes(repos, "v1.0.0") == {}, "no chart index for the release: nothing inferred"
    mirrors = [{"name": "other", "registries": {"nvcr.io": "harbor.y/nvcr"}},
               {"name": "x", "registries": {"nvcr.io": "harbor.x/nvcr/", "registry.k8s.io": "harbor.x/k8s"}}]
    assert matching_mirror({"nvcr.io": "harbor.x/nvcr"}, mirrors) == "x"
    assert matching_mirror({"nvcr.io": "harbor.z/nvcr"}, mirrors) is None
    assert matching_mirror({}, mirrors) is None


def _stub_chart_at(release: str, upstream: Path, mini_chart: Path, target: Path) -> Path:
    """The project's stub chart at ``release``: its templates with the release's real values.yaml and CRDs, and a
    node-feature-discovery subchart stub (the real chart's dependency), so verify reads the release's keys."""
    shutil.copytree(mini_chart, target)
    meta = target / "Chart.yaml"
    meta.write_text(meta.read_text(encoding="utf-8").replace("v25.10.1", release)
                    + "dependencies:\n  - name: node-feature-discovery\n    version: v0.16.6\n"
                      "    condition: nfd.enabled\n", encoding="utf-8")
    shutil.copyfile(upstream / "gpu-operator" / release / "values.yaml", target / "values.yaml")
    shutil.rmtree(target / "crds")
    shutil.copytree(upstream / "gpu-operator" / release / "crds", target / "crds")
    nfd = target / "charts" / "node-feature-discovery"
    nfd.mkdir(parents=True)
    (nfd / "Chart.yaml").write_text("apiVersion: v2\nname: node-feature-discovery\nversion: v0.16.6\n")
    (nfd / "values.yaml").write_text("image:\n  repository: registry.k8s.io/nfd/node-feature-discovery\n"
                                     "  tag: v0.16.6\nworker:\n  tolerations: []\n")
    return target


def test_the_adopted_release_renders_what_verify_accepts(repo: Path, tmp_path: Path, shared_dir: Path,
                                                         tools_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The adopted v24.9.2 cluster's output passes verify: kustomize builds, every object against Kubernetes 1.31
    and the release's real CRDs, values keys against the release's real values.yaml, the Argo CD project.  What
    verify may still say is about the stub chart's templates (its ClusterPolicy is not the real v24.9.2 one)."""
    monkeypatch.setenv("PATH", f"{tools_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    code, err = _import(repo)
    assert code == 0, err
    _fill(repo / "policies" / "adopted-train-east.yaml", "2099-12-31")
    assert _gates(repo) == [0, 0, 0]
    upstream = shared_dir / "upstream"
    chart = _stub_chart_at("v24.9.2", upstream, HERE.parent / "fixtures" / "charts" / "gpu-operator-mini",
                           tmp_path / "chart")
    result = run_gpuspec("verify", str(repo / "fleet"), "--rendered", str(repo / "rendered"), "--cluster",
                         "train-east", "--policies", str(repo / "policies"), "--chart", str(chart),
                         "--crds", str(upstream / "argocd"), "--crds", str(upstream / "prometheus-operator"),
                         "--format", "json")
    assert result.code in (0, 1), result.err
    findings = result.json()["findings"]
    stub_template = [f for f in findings if f["ruleId"] == "GS930"
                     or (f["ruleId"] == "GS909" and "(helm output" in f["message"])]
    others = [f"{f['ruleId']} {f['message']}" for f in findings if f not in stub_template]
    assert others == [], others
    assert all(f["file"].endswith("train-east/gpu-operator.values.yaml") for f in stub_template)


def test_verify_of_the_adopted_release_fails_on_a_key_the_release_lacks(repo: Path, tmp_path: Path,
                                                                        shared_dir: Path, tools_bin: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same gate fails when the rendered values use a key v24.9.2's chart does not know (a hand edit here;
    a wrongly pinned newer release in practice)."""
    monkeypatch.setenv("PATH", f"{tools_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    assert _import(repo)[0] == 0
    _fill(repo / "policies" / "adopted-train-east.yaml", "2099-12-31")
    assert _gates(repo) == [0, 0, 0]
    values = repo / "rendered" / "clusters" / "train-east" / "gpu-operator.values.yaml"
    edited = values.read_text(encoding="utf-8").replace("  usePrecompiled: false\n",
                                                        "  usePrecompiled: false\n  kernelModuleType: open\n")
    values.write_text(edited, encoding="utf-8")
    upstream = shared_dir / "upstream"
    chart = _stub_chart_at("v24.9.2", upstream, HERE.parent / "fixtures" / "charts" / "gpu-operator-mini",
                           tmp_path / "chart")
    result = run_gpuspec("verify", str(repo / "fleet"), "--rendered", str(repo / "rendered"), "--cluster",
                         "train-east", "--policies", str(repo / "policies"), "--chart", str(chart), "--format", "json")
    assert result.code == 1
    assert any(f["ruleId"] == "GS903" and "driver.kernelModuleType" in f["message"] for f in result.json()["findings"])
