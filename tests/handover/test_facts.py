"""Every version and name in the handover documents equals what rendered/ and `gpuspec matrix` say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers import EXAMPLE_CLUSTERS, REPO_ROOT, section, tables, unquote

RENDERED = REPO_ROOT / "rendered"


def _yaml(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def _doc(name: str) -> str:
    return (RENDERED / "handover" / f"{name}.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def matrix() -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-m", "gpuspec.cli.main", "matrix", "v26.7.0", "--format", "json"],
                            capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _codes(cell: str) -> list[str]:
    return [part.strip("`") for part in cell.split("`, `")] if cell != "–" else []


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_images_and_versions(cluster: str, matrix: dict[str, Any]) -> None:
    doc = _doc(cluster)
    rows = tables(section(doc, "Pinned versions and image sources"))[0]
    images_txt = [line for line in (RENDERED / "clusters" / cluster / "images.txt").read_text().splitlines()
                  if not line.startswith("#")]
    assert sorted(unquote(r["Pulled from"]) for r in rows) == sorted(images_txt)
    values = _yaml(RENDERED / "clusters" / cluster / "gpu-operator.values.yaml")[0]
    components = matrix["components"]
    checked = 0
    for row in rows:
        tag = unquote(row["Tag"])
        pulled = unquote(row["Pulled from"])
        assert pulled.endswith(":" + tag)
        for path in unquote(row["Component"]).split(", "):
            if path in ("driver", "node-feature-discovery", "acceptance checks"):
                continue
            if path not in components:  # the acceptance Jobs' sample image: pulled by a rendered Job
                jobs = [d for f in (RENDERED / "clusters" / cluster).glob("acceptance/job-*.yaml") for d in _yaml(f)]
                assert pulled in {c["image"] for j in jobs if j["kind"] == "Job"
                                  for c in j["spec"]["template"]["spec"]["containers"]}, path
                continue
            node = values
            for part in path.split("."):
                node = node[part]
            assert node["version"] == tag, path
            assert pulled.startswith(node["repository"] + "/" + node["image"] + ":"), path
            assert (components[path]["version"] or matrix["version"]) == tag, path
            checked += 1
    assert checked >= 6
    nfd = values["node-feature-discovery"]["image"]
    assert f"{nfd['repository']}:{nfd['tag']}" in images_txt
    nfd_row = next(r for r in rows if unquote(r["Component"]) == "node-feature-discovery")
    upstream = matrix["node_feature_discovery"]["image"]
    assert unquote(nfd_row["Pulled from"]).endswith(upstream.split("/", 1)[1])
    assert unquote(nfd_row["Tag"]) == upstream.rsplit(":", 1)[1]


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_operator_chart_and_drivers(cluster: str, matrix: dict[str, Any]) -> None:
    doc = _doc(cluster)
    overview = tables(doc.split("## Contacts")[0])[0]
    release = next(r["Value"] for r in overview if r["Setting"] == "GPU Operator")
    assert release.startswith(f"`{matrix['version']}`, chart `{matrix['helm_chart_version']}`")
    gitops = sorted((RENDERED / "gitops").glob(f"*/{cluster}/**/*.yaml"))
    chart_versions = {
        d["spec"].get("chart", {}).get("spec", {}).get("version") or d["spec"].get("ref", {}).get("tag")
        or next((s.get("targetRevision") for s in d["spec"].get("sources", []) if s.get("chart")), None)
        for f in gitops for d in _yaml(f) if d.get("kind") in ("HelmRelease", "OCIRepository", "Application")
    } - {None}
    assert chart_versions == {matrix["helm_chart_version"]}
    # Driver per pool: the pool's own NVIDIADriver, else the values' driver (the ClusterPolicy's, or from v26.7.0
    # the chart's default NVIDIADriver), and the driver image pulled.
    placement = tables(section(doc, "Placement scheme"))[0]
    drivers = {unquote(r["Pool"]): r["Driver"].split("`")[1] for r in placement}
    nvd = {d["metadata"]["name"]: d["spec"]["version"]
           for f in (RENDERED / "clusters" / cluster).glob("nvidiadriver-*.yaml") for d in _yaml(f)}
    values = _yaml(RENDERED / "clusters" / cluster / "gpu-operator.values.yaml")[0]
    expected = {pool: nvd.get(pool, values["driver"]["version"]) for pool in drivers}
    assert drivers == expected
    crd = values["driver"].get("nvidiaDriverCRD", {})
    for row in placement:
        pool = unquote(row["Pool"])
        if pool in nvd:
            assert row["Driver"].endswith(f"via NVIDIADriver `{pool}`")
        elif crd.get("enabled"):
            assert crd.get("deployDefaultCR") and row["Driver"].endswith("via NVIDIADriver `default`")
        else:
            assert row["Driver"].endswith("via ClusterPolicy `cluster-policy`")
    images = (RENDERED / "clusters" / cluster / "images.txt").read_text()
    for version in drivers.values():
        assert f"driver:{version}-ubuntu22.04" in images
    assert set(drivers.values()) <= set(matrix["drivers"]["versions"])


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_names_match_rendered_objects(cluster: str) -> None:
    doc = _doc(cluster)
    base = RENDERED / "clusters" / cluster
    # Node labels per pool.
    labels = _yaml(base / "node-labels.yaml")[0]["pools"]
    rows = tables(section(doc, "Placement scheme"))[1]
    assert {unquote(r["Pool"]): _codes(r["Labels"]) for r in rows} == {
        pool: [f"{k}={v}" for k, v in sorted(entry["labels"].items())] for pool, entry in labels.items()}
    # Alerts: name, severity, for.
    rule = _yaml(base / "monitoring" / "alerts.yaml")[0]
    rendered_alerts = {(r["alert"], r["labels"]["severity"], r["for"]) for r in rule["spec"]["groups"][0]["rules"]}
    rows = tables(section(doc, "Monitoring and alerts"))[0]
    assert {(unquote(r["Alert"]), r["Severity"], unquote(r["For"])) for r in rows} == rendered_alerts
    assert f"PrometheusRule `{rule['metadata']['name']}`" in doc
    # RBAC roles and their subjects.
    rbac = _yaml(base / "rbac.yaml")
    rows = tables(section(doc, "Roles: who may change what"))[0]
    assert {r["Role"] for r in rows} == {f"{d['kind']} `{d['metadata']['name']}`" for d in rbac
                                        if d["kind"] in ("Role", "ClusterRole")}
    subjects = {f"{s['kind']} {s['name']}" for d in rbac if "subjects" in d for s in d["subjects"]}
    assert {s for r in rows for s in _codes(r["Bound to"])} == subjects
    # GitOps object names.
    names = {d["metadata"]["name"] for f in (RENDERED / "gitops").glob(f"*/{cluster}/**/*.yaml") for d in _yaml(f)
             if d.get("kind") in ("Application", "HelmRelease")}
    assert names and all(f"`{n}`" in doc for n in names)
    # Tenant quota objects and ConfigMaps the chain names exist in rendered/.
    objects = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for f in base.glob("*.yaml")
               for d in _yaml(f) if isinstance(d, dict) and "kind" in d and "metadata" in d}
    quotas = {(ns, name) for kind, ns, name in objects if kind == "ResourceQuota"}
    assert quotas and all(f"kubectl -n {ns} describe resourcequota {name}\n" in doc for ns, name in quotas)
    assert doc.count("describe resourcequota") == len(quotas)
    configmaps = {name for kind, _, name in objects if kind == "ConfigMap"}
    for name in ("gpuspec-mig-config", "gpuspec-device-plugin-config"):
        assert (f"ConfigMap `{name}`" in doc) == (name in configmaps), name


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_deviations_and_acceptance_jobs_match_rendered(cluster: str) -> None:
    doc = _doc(cluster)
    base = RENDERED / "clusters" / cluster
    record = _yaml(base / "deviations.yaml")[0]["deviations"] if (base / "deviations.yaml").is_file() else []
    part = section(doc, "Deliberate deviations")
    if not record:
        assert "No deliberate deviations are recorded" in part
    else:
        rows = tables(part)[0]
        assert [(unquote(r["Setting"]), json.loads(unquote(r["Value"]))) for r in rows] == [
            (d["path"], d["value"]) for d in record]
        for row, d in zip(rows, record, strict=True):
            assert row["Target"].startswith(f"`{d['target']}`")
            assert d["reason"].split(" ")[0] in row["Reason"]
    jobs = [d for f in sorted((base / "acceptance").glob("*.yaml")) for d in _yaml(f) if d.get("kind") == "Job"]
    part = section(doc, "Acceptance checklist")
    if not jobs:
        assert "No validation Jobs are rendered" in part
    else:
        rows = tables(part)[0]
        assert {(unquote(r["Pool"]), unquote(r["Job"]), unquote(r["Namespace"])) for r in rows} == {
            (j["metadata"]["labels"]["gpuspec.io/pool"], j["metadata"]["name"], j["metadata"]["namespace"])
            for j in jobs}
        for j in jobs:
            assert f"logs job/{j['metadata']['name']} --all-containers" in part
