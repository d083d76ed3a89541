"""OpenShift render: OLM objects and a ClusterPolicy custom resource that validate against the real CRDs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.render.filetree import YamlFile
from gpuspec.render.openshift import clusterpolicy_spec
from gpuspec.verify.schemas import CrdSet
from tests.render.fleets import cluster, compile_dir, example_settings, pool, write_fleet

REPO = Path(__file__).resolve().parents[2]
MINI_CHART = REPO / "tests" / "fixtures" / "charts" / "gpu-operator-mini"


def _ocp_cluster(name: str = "ocp", **extra: Any) -> dict[str, Any]:
    return cluster(
        name,
        kubernetes={"version": "1.32", "distribution": "openshift", "openshiftVersion": "4.19", "runtime": "cri-o"},
        operator={"version": "v26.7.0", "namespace": "nvidia-gpu-operator"},
        pools=[pool("a100", product="A100-SXM4-80GB",
                    os={"distribution": "rhcos", "version": "4.19"}, driver={"source": "operator", "branch": "580"})],
        **extra,
    )


def _docs(plan: Any, path: str) -> list[dict[str, Any]]:
    cp = plan.clusters[0]
    found = cp.files[path]
    assert isinstance(found, YamlFile)
    return [d for d in found.documents if isinstance(d, dict)]


def _by_kind(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in docs}


def test_openshift_cluster_renders_pinned_olm_subscription(tmp_path: Path) -> None:
    plan = compile_dir(write_fleet(tmp_path, [_ocp_cluster()]))
    olm = _by_kind(_docs(plan, "clusters/ocp/olm/gpu-operator.olm.yaml"))
    sub = olm["Subscription"]["spec"]
    assert sub == {"name": "gpu-operator-certified", "channel": "v26.7",
                   "startingCSV": "gpu-operator-certified.v26.7.0",
                   "installPlanApproval": "Manual", "source": "certified-operators",
                   "sourceNamespace": "openshift-marketplace"}
    assert olm["OperatorGroup"]["spec"] == {"targetNamespaces": ["nvidia-gpu-operator"]}
    nfd = _by_kind(_docs(plan, "clusters/ocp/olm/nfd.olm.yaml"))
    assert nfd["Subscription"]["spec"]["name"] == "nfd"
    assert "NodeFeatureDiscovery" in nfd
    values = _docs(plan, "clusters/ocp/gpu-operator.values.yaml")[0]
    assert values["platform"] == {"openshift": True}
    assert values["operator"]["use_ocp_driver_toolkit"] is True
    assert values["nfd"] == {"enabled": False}  # the NFD Operator labels the nodes; no second NFD
    cp = _docs(plan, "clusters/ocp/clusterpolicy.yaml")[0]
    assert cp["spec"] == clusterpolicy_spec(values, "v26.7.0")
    assert cp["spec"]["operator"]["use_ocp_driver_toolkit"] is True
    assert "clusters/ocp/gpu-operator.application.yaml" not in plan.clusters[0].files


def test_declared_nfd_is_not_installed_again(tmp_path: Path) -> None:
    doc = _ocp_cluster()
    doc["operator"]["operands"] = {"nfd": False}
    plan = compile_dir(write_fleet(tmp_path, [doc]))
    assert "clusters/ocp/olm/nfd.olm.yaml" not in plan.clusters[0].files


def test_disconnected_openshift_subscribes_to_the_mirrored_catalog(tmp_path: Path) -> None:
    settings = example_settings()
    settings["mirrors"][0]["catalogSources"] = {"certified-operators": "cs-certified-operator-index",
                                                "redhat-operators": "cs-redhat-operator-index"}
    plan = compile_dir(write_fleet(tmp_path, [_ocp_cluster(mirror="dc-north")], settings=settings))
    olm = _by_kind(_docs(plan, "clusters/ocp/olm/gpu-operator.olm.yaml"))
    assert olm["Subscription"]["spec"]["source"] == "cs-certified-operator-index"
    nfd = _by_kind(_docs(plan, "clusters/ocp/olm/nfd.olm.yaml"))
    assert nfd["Subscription"]["spec"]["source"] == "cs-redhat-operator-index"


@pytest.mark.parametrize("tool", ["argocd", "flux"])
def test_openshift_objects_validate_against_the_real_crds(tool: str, tmp_path: Path, shared_dir: Path) -> None:
    upstream = shared_dir / "upstream"
    crds = CrdSet.from_paths([upstream / "olm", upstream / "gpu-operator" / "v26.7.0" / "crds"])
    doc = _ocp_cluster(gitops={"tool": tool})
    plan = compile_dir(write_fleet(tmp_path, [doc]))
    checked = set()
    for path in ("clusters/ocp/olm/gpu-operator.olm.yaml", "clusters/ocp/olm/nfd.olm.yaml",
                 "clusters/ocp/clusterpolicy.yaml"):
        for obj in _docs(plan, path):
            if obj["apiVersion"] == "v1":
                continue
            assert crds.knows(obj["apiVersion"], obj["kind"]), obj["kind"]
            assert crds.validate(obj) == [], (obj["kind"], crds.validate(obj))
            checked.add(obj["kind"])
    assert checked == {"OperatorGroup", "Subscription", "NodeFeatureDiscovery", "ClusterPolicy"}


def test_installplan_approval_job_approves_only_the_pinned_csv(tmp_path: Path) -> None:
    plan = compile_dir(write_fleet(tmp_path, [_ocp_cluster()]))
    docs = _docs(plan, "clusters/ocp/olm/installplan-approval.yaml")
    kinds = _by_kind(docs)
    assert kinds["Role"]["rules"] == [{"apiGroups": ["operators.coreos.com"], "resources": ["installplans"],
                                       "verbs": ["get", "list", "patch"]}]
    job = kinds["Job"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    sub = _by_kind(_docs(plan, "clusters/ocp/olm/gpu-operator.olm.yaml"))["Subscription"]["spec"]
    assert env == {"NAMESPACE": "nvidia-gpu-operator", "CSV": sub["startingCSV"]}
    assert container["image"] == "registry.redhat.io/openshift4/ose-cli:v4.19"
    assert job["metadata"]["annotations"]["argocd.argoproj.io/hook"] == "Sync"
    assert kinds["Role"]["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-1"


def test_openshift_kustomizations_build(tmp_path: Path, tools_bin: Path) -> None:
    """The OLM folder and the overlay build with the real kubectl kustomize."""
    from gpuspec.pipeline.render import expected_bytes

    fleet_dir = write_fleet(tmp_path, [_ocp_cluster()])
    plan = compile_dir(fleet_dir)
    out = tmp_path / "rendered"
    for rel, data in expected_bytes(plan).items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for folder in ("clusters/ocp/olm", "clusters/ocp"):
        built = subprocess.run([str(tools_bin / "kubectl"), "kustomize", str(out / folder)],
                               check=True, capture_output=True, text=True).stdout
        kinds = {d["kind"] for d in yaml.safe_load_all(built) if d}
        assert ("Subscription" in kinds) if folder.endswith("olm") else ("ClusterPolicy" in kinds)


def test_openshift_images_list_the_catalogs_and_not_the_chart_nfd(tmp_path: Path) -> None:
    plan = compile_dir(write_fleet(tmp_path, [_ocp_cluster()]))
    images = set(plan.clusters[0].images.values())
    assert "registry.redhat.io/redhat/certified-operator-index:v4.19" in images
    assert "registry.redhat.io/redhat/redhat-operator-index:v4.19" in images
    assert "registry.redhat.io/openshift4/ose-cli:v4.19" in images
    assert not any("node-feature-discovery" in i for i in images)


def test_verify_builds_and_validates_the_olm_objects(tmp_path: Path, shared_dir: Path, tools_bin: Path) -> None:
    """verify builds clusters/<c>/olm and validates Subscription, OperatorGroup, NodeFeatureDiscovery and the
    ClusterPolicy against the real CRDs: no 'no schema' warning, no schema error for them."""
    from gpuspec.pipeline.render import expected_bytes
    from gpuspec.pipeline.verify import VerifyOptions, verify_fleet

    fleet_dir = write_fleet(tmp_path, [_ocp_cluster()])
    out = tmp_path / "rendered"
    for rel, data in expected_bytes(compile_dir(fleet_dir)).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    upstream = shared_dir / "upstream"
    result = verify_fleet(VerifyOptions(
        fleet_dir=fleet_dir, rendered_dir=out, charts=[MINI_CHART], helm=tools_bin / "helm", cache_dir=None,
        crd_paths=[upstream / "olm", upstream / "gpu-operator" / "v26.7.0" / "crds"]))
    about_olm = [f for f in result.findings
                 if any(k in f.message for k in ("Subscription", "OperatorGroup", "NodeFeatureDiscovery",
                                                  "ClusterPolicy"))]
    assert about_olm == [], [(f.rule_id, f.message) for f in about_olm]
    built = result.clusters[0].objects
    # A broken Subscription in the OLM folder is caught by the OLM CRD: the folder is really built and validated.
    olm_file = out / "clusters" / "ocp" / "olm" / "gpu-operator.olm.yaml"
    olm_file.write_text(olm_file.read_text().replace("installPlanApproval: Manual", "installPlanApproval: 7"))
    broken = verify_fleet(VerifyOptions(
        fleet_dir=fleet_dir, rendered_dir=out, charts=[MINI_CHART], helm=tools_bin / "helm", cache_dir=None,
        crd_paths=[upstream / "olm", upstream / "gpu-operator" / "v26.7.0" / "crds"]))
    assert any("Subscription" in f.message and "installPlanApproval" in f.message for f in broken.findings), [
        (f.rule_id, f.message) for f in broken.findings]
    assert built == broken.clusters[0].objects


def test_airgapped_approval_job_pulls_the_cli_image_through_the_mirror(tmp_path: Path) -> None:
    settings = example_settings()
    settings["mirrors"][0]["registries"]["registry.redhat.io"] = "harbor.dc-north.acme.internal/redhat"
    plan = compile_dir(write_fleet(tmp_path, [_ocp_cluster(mirror="dc-north")], settings=settings))
    job = _by_kind(_docs(plan, "clusters/ocp/olm/installplan-approval.yaml"))["Job"]
    pod = job["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "harbor.dc-north.acme.internal/redhat/openshift4/ose-cli:v4.19"
    assert pod["imagePullSecrets"] == [{"name": "harbor-dc-north-pull"}]
    assert plan.clusters[0].images["registry.redhat.io/openshift4/ose-cli:v4.19"] == (
        "harbor.dc-north.acme.internal/redhat/openshift4/ose-cli:v4.19")
