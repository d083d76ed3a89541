"""Helm values: only keys the chart of that release knows; every enabled operand pinned; driver modes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuspec.matrix.component_query import template_only_values
from gpuspec.render.context import cluster_context
from gpuspec.render.facts import release_facts
from gpuspec.render.operand_images import component_enabled
from gpuspec.verify.values_keys import commented_keys

from . import fleets
from .fleets import (
    UPSTREAM_TAGS,
    compile_dir,
    coverage_clusters,
    load,
    render_dir,
    two_driver_versions,
    write_fleet,
)

#: Keys of the node-feature-discovery subchart (its own values.yaml, not in gpu-operator's): the image and
#: pull secrets gpuspec pins and mirror-rewrites.
SUBCHART_KEYS = {
    ("node-feature-discovery", "image", "repository"),
    ("node-feature-discovery", "image", "tag"),
    ("node-feature-discovery", "imagePullSecrets"),
}

_SUBCHART_PREFIXES = {k[:i] for k in SUBCHART_KEYS for i in range(1, len(k))}


def _values(out: dict[str, bytes], cluster: str) -> dict[str, Any]:
    data = yaml.safe_load(out[f"clusters/{cluster}/gpu-operator.values.yaml"])
    assert isinstance(data, dict)
    return data


def unknown_keys(values: Any, chart: Any, documented: set[tuple[str, ...]], path: tuple[str, ...] = ()) -> list[str]:
    """Key paths of ``values`` absent from ``chart`` (known: present, below an empty map, or commented-out)."""
    if not isinstance(values, dict):
        return []
    found: list[str] = []
    for key, sub in values.items():
        here = (*path, key)
        if here in SUBCHART_KEYS:
            continue
        if any(k[: len(here)] == here for k in SUBCHART_KEYS) and (not isinstance(chart, dict) or key not in chart):
            found.extend(unknown_keys(sub, {}, documented, here))
            continue
        if not isinstance(chart, dict) or key not in chart:
            if here not in documented:
                found.append(".".join(here))
            continue
        default = chart[key]
        if isinstance(default, dict) and not default and here not in _SUBCHART_PREFIXES:
            continue  # an empty map takes any keys
        found.extend(unknown_keys(sub, default, documented, here))
    return found


@pytest.mark.parametrize("tag", UPSTREAM_TAGS)
def test_only_keys_the_chart_knows(tag: str, tmp_path: Path, upstream: Path) -> None:
    out = {p: b for p, b in _render(tmp_path, tag).items()}
    text = (upstream / "gpu-operator" / tag / "values.yaml").read_text()
    chart = yaml.safe_load(text)
    # Keys the chart's templates read although values.yaml omits them (dcgm/dcgmExporter imagePullSecrets).
    documented = commented_keys(text) | {tuple(k.split(".")) for k in template_only_values()}
    for name in ("everything", "airgap", "host-only"):
        assert unknown_keys(_values(out, name), chart, documented) == [], (tag, name)


def _render(tmp_path: Path, tag: str) -> dict[str, bytes]:
    from gpuspec.pipeline.render import expected_bytes

    return expected_bytes(compile_dir(write_fleet(tmp_path, coverage_clusters(tag))))


def test_unknown_key_detector_can_fail(upstream: Path) -> None:
    chart = yaml.safe_load((upstream / "gpu-operator" / "v26.7.0" / "values.yaml").read_text())
    assert unknown_keys({"driver": {"upgradePolicy": {"podDeletion": {}}}}, chart, set()) == [
        "driver.upgradePolicy.podDeletion"
    ]
    assert unknown_keys({"operator": {"version": "v1"}}, chart, set()) == ["operator.version"]
    assert unknown_keys({"driver": {"nodeSelector": {"anything": "x"}}}, {"driver": {"nodeSelector": {}}}, set()) == []


@pytest.mark.parametrize("tag", UPSTREAM_TAGS)
def test_every_enabled_operand_is_pinned(tag: str, tmp_path: Path) -> None:
    fleet_dir = write_fleet(tmp_path, coverage_clusters(tag))
    fleet = load(fleet_dir)
    out = {p: b for p, b in _render(tmp_path / "r", tag).items()}
    facts = release_facts(tag)
    for cluster in fleet.clusters:
        ctx = cluster_context(fleet, cluster)
        values = _values(out, cluster.name)
        for path, image in facts.images.items():
            if path == "node-feature-discovery" or not image.repository or not component_enabled(ctx, path):
                continue
            node: Any = values
            for part in path.split("."):
                node = node[part]
            want = image.version or facts.tag
            if path == "driver" and ctx.driver_mode == "clusterpolicy":
                want = ctx.drivers[0].spec_version  # the branch for precompiled drivers
            assert node["version"] == want, (cluster.name, path)
            assert node["image"] == image.image
            assert node["version"] not in ("", "latest")
            if cluster.mirror:
                assert node["repository"].startswith("harbor.dc-north.acme.internal/"), (path, node)


def test_validator_and_operator_default_to_release_tag(tmp_path: Path) -> None:
    out = _render(tmp_path, "v26.7.0")
    values = _values(out, "everything")
    assert values["operator"]["version"] == values["validator"]["version"] == "v26.7.0"


def test_air_gapped_values_rewrite_and_pull_secrets(tmp_path: Path) -> None:
    values = _values(_render(tmp_path, "v26.7.0"), "airgap")
    assert values["toolkit"]["repository"] == "harbor.dc-north.acme.internal/nvcr/nvidia/k8s"
    assert values["toolkit"]["imagePullSecrets"] == ["harbor-dc-north-pull"]
    # values.yaml lists no such key for dcgmExporter, but the chart's ClusterPolicy template reads it
    assert values["dcgmExporter"]["imagePullSecrets"] == ["harbor-dc-north-pull"]
    assert values["node-feature-discovery"]["image"] == {
        "repository": "harbor.dc-north.acme.internal/k8s/nfd/node-feature-discovery", "tag": "v0.19.0",
    }
    assert values["driver"]["repoConfig"] == {"configMapName": "ubuntu-jammy-mirror"}
    assert values["driver"]["certConfig"] == {"name": "acme-internal-ca"}


def test_multi_driver_cluster_uses_the_default_nvidiadriver_first(tmp_path: Path) -> None:
    """v26.7.0+: NVIDIA's documented migration -- the chart's default NVIDIADriver carries the driver of the most
    nodes, and only pools whose driver differs get an NVIDIADriver of their own."""
    out = _render(tmp_path, "v26.7.0")
    driver = _values(out, "airgap")["driver"]
    assert driver["enabled"] is True
    assert driver["nvidiaDriverCRD"] == {"enabled": True, "deployDefaultCR": True}
    first, _ = two_driver_versions("v26.7.0")
    assert driver["version"] == first and driver["usePrecompiled"] is False  # pools new and mps (8 nodes)
    drivers = sorted(p for p in out if "/nvidiadriver-" in p)
    assert drivers == [f"clusters/airgap/nvidiadriver-{p}.yaml" for p in ("old", "pre")]
    pre = yaml.safe_load(out["clusters/airgap/nvidiadriver-pre.yaml"])
    assert pre["spec"]["usePrecompiled"] is True and pre["spec"]["version"] == "595"
    assert pre["spec"]["nodeSelector"] == {"acme.example/gpu-pool": "pre"} and pre["spec"]["default"] is False


def test_before_v26_7_every_pool_gets_its_own_nvidiadriver(tmp_path: Path) -> None:
    out = _render(tmp_path, "v26.3.3")
    driver = _values(out, "airgap")["driver"]
    assert driver["nvidiaDriverCRD"] == {"enabled": True, "deployDefaultCR": False}
    drivers = sorted(p for p in out if "/nvidiadriver-" in p)
    assert drivers == [f"clusters/airgap/nvidiadriver-{p}.yaml" for p in ("mps", "new", "old", "pre")]


def test_default_nvidiadriver_false_keeps_an_nvidiadriver_per_pool_on_v26_7(tmp_path: Path) -> None:
    """operator.defaultNVIDIADriver: false -- the first step of GS813's sequence: no chart default NVIDIADriver."""
    clusters = [fleets.cluster("one", operator={"version": "v26.7.0", "driverManagement": "nvidiadriver",
                                                "defaultNVIDIADriver": False},
                               pools=[fleets.pool("a", "L40S", 4), fleets.pool("b", "L40S", 4)])]
    out = render_dir(write_fleet(tmp_path, clusters))
    assert _values(out, "one")["driver"]["nvidiaDriverCRD"] == {"enabled": True, "deployDefaultCR": False}
    assert sorted(p for p in out if "/nvidiadriver-" in p) == [
        "clusters/one/nvidiadriver-a.yaml", "clusters/one/nvidiadriver-b.yaml"]


def test_driver_management_nvidiadriver_with_one_driver(tmp_path: Path) -> None:
    """The mode switch on its own: every pool keeps its driver, the default NVIDIADriver takes over the nodes."""
    clusters = [fleets.cluster("one", operator={"version": "v26.7.0", "driverManagement": "nvidiadriver"},
                        pools=[fleets.pool("a", "L40S", 4), fleets.pool("b", "L40S", 4)])]
    out = render_dir(write_fleet(tmp_path, clusters))
    driver = _values(out, "one")["driver"]
    assert driver["nvidiaDriverCRD"] == {"enabled": True, "deployDefaultCR": True}
    assert driver["version"] == release_facts("v26.7.0").driver_default
    assert not [p for p in out if "/nvidiadriver-" in p]


def test_default_nvidiadriver_through_helm_template(tmp_path: Path, tools_bin: Path) -> None:
    """helm template of the rendered values: exactly one default NVIDIADriver, with the default pools' driver."""
    import subprocess

    mini = Path(__file__).resolve().parents[1] / "fixtures" / "charts" / "gpu-operator-mini"
    out = _render(tmp_path, "v26.7.0")
    values = tmp_path / "values.yaml"
    values.write_bytes(out["clusters/airgap/gpu-operator.values.yaml"])
    proc = subprocess.run([str(tools_bin / "helm"), "template", "gpu-operator", str(mini), "-f", str(values)],
                          capture_output=True, text=True, check=True)
    nvds = [d for d in yaml.safe_load_all(proc.stdout) if d and d.get("kind") == "NVIDIADriver"]
    first, _ = two_driver_versions("v26.7.0")
    assert [(d["metadata"]["name"], d["spec"]["default"], d["spec"]["version"]) for d in nvds] == [
        ("default", True, first)
    ]
    assert nvds[0]["spec"]["repository"].startswith("harbor.dc-north.acme.internal/")
    assert "nodeSelector" not in nvds[0]["spec"]


def test_single_driver_cluster_uses_clusterpolicy_and_rollout(tmp_path: Path) -> None:
    driver = _values(_render(tmp_path, "v26.7.0"), "everything")["driver"]
    assert driver["nvidiaDriverCRD"] == {"enabled": False}
    assert driver["version"] == release_facts("v26.7.0").driver_default
    assert driver["kernelModuleType"] == "open"
    policy = driver["upgradePolicy"]
    assert policy["maxUnavailable"] == "10%"
    assert policy["gpuPodDeletion"] == {"force": True, "timeoutSeconds": 300, "deleteEmptyDir": False}
    assert policy["drain"]["timeoutSeconds"] == 600 and policy["drain"]["deleteEmptyDir"] is True
    assert policy["waitForCompletion"] == {"timeoutSeconds": 60, "podSelector": "app=training"}


def test_host_drivers_only_disable_the_driver(tmp_path: Path) -> None:
    values = _values(_render(tmp_path, "v26.7.0"), "host-only")
    assert values["driver"]["enabled"] is False
    assert values["nfd"] == {"enabled": False} and "node-feature-discovery" not in values
    assert values["dcgmExporter"]["enabled"] is False
    assert values["dcgmExporter"]["serviceMonitor"] == {"enabled": False}
    assert values["mig"]["strategy"] == "single"


def test_mig_and_sharing_wiring(tmp_path: Path) -> None:
    out = _render(tmp_path, "v26.7.0")
    values = _values(out, "everything")
    assert values["mig"]["strategy"] == "mixed"
    assert values["migManager"]["config"] == {"name": "gpuspec-mig-config", "default": "all-disabled"}
    assert values["devicePlugin"]["config"] == {"name": "gpuspec-device-plugin-config", "default": "default"}
    mig = yaml.safe_load(yaml.safe_load(out["clusters/everything/mig-config.yaml"])["data"]["config.yaml"])
    assert mig["version"] == "v1"
    assert mig["mig-configs"]["custom-mig"] == [
        {"devices": [0, 1, 2, 3], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
        {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}},
    ]
    data = yaml.safe_load(out["clusters/everything/device-plugin-config.yaml"])["data"]
    shared = yaml.safe_load(data["shared"])
    assert shared["sharing"]["timeSlicing"] == {
        "renameByDefault": False, "failRequestsGreaterThanOne": True,
        "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
    }
    mps = yaml.safe_load(yaml.safe_load(out["clusters/airgap/device-plugin-config.yaml"])["data"]["mps"])
    assert mps["sharing"]["mps"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 2}]
    labels = yaml.safe_load(out["clusters/everything/node-labels.yaml"])["pools"]
    assert labels["mig"]["labels"]["nvidia.com/mig.config"] == "custom-mig"
    assert labels["shared"]["labels"]["nvidia.com/device-plugin.config"] == "shared"
    # The VM pool: without the workload label the operator gives its nodes the default `container` stack.
    vm = [name for name, entry in labels.items() if "nvidia.com/gpu.workload.config" in entry["labels"]]
    assert vm and all(labels[n]["labels"]["nvidia.com/gpu.workload.config"] == "vm-passthrough" for n in vm)
    assert "nvidia.com/gpu.workload.config" not in labels["mig"]["labels"]


def test_pool_taints_are_tolerated(tmp_path: Path) -> None:
    values = _values(_render(tmp_path, "v26.7.0"), "everything")
    tolerations = values["daemonsets"]["tolerations"]
    assert {"key": "acme.example/gpu", "operator": "Equal", "value": "mig", "effect": "NoSchedule"} in tolerations
    assert {"key": "acme.example/dedicated", "operator": "Exists", "effect": "NoExecute"} in tolerations
    assert tolerations[0] == {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def test_air_gapped_cluster_mirrors_every_image_and_gives_every_operand_the_secret(tmp_path: Path) -> None:
    """Disabled operands point to the mirror too, and dcgm/dcgmExporter (read by the templates) get the secret."""
    values = _values(_render(tmp_path, "v26.7.0"), "airgap")
    facts = release_facts("v26.7.0")
    for path, image in facts.images.items():
        if path == "node-feature-discovery" or not image.repository or not image.image:
            continue
        node: Any = values
        for part in path.split("."):
            node = node[part]
        assert node["repository"].startswith("harbor.dc-north.acme.internal/"), path
        if "." not in path:
            assert node["imagePullSecrets"] == ["harbor-dc-north-pull"], path
    assert values["dcgm"]["enabled"] is False and values["dcgm"]["imagePullSecrets"] == ["harbor-dc-north-pull"]
    assert values["dcgmExporter"]["imagePullSecrets"] == ["harbor-dc-north-pull"]


def test_online_cluster_pins_only_what_runs(tmp_path: Path) -> None:
    values = _values(_render(tmp_path, "v26.7.0"), "host-only")
    assert "repository" not in values["dcgm"] and "imagePullSecrets" not in values["dcgmExporter"]


def test_mirrored_clusterpolicy_through_helm_template(tmp_path: Path, tools_bin: Path) -> None:
    """helm template of the air-gapped values: no image of the ClusterPolicy names nvcr.io, each has the secret."""
    import subprocess

    mini = Path(__file__).resolve().parents[1] / "fixtures" / "charts" / "gpu-operator-mini"
    values = tmp_path / "values.yaml"
    values.write_bytes(_render(tmp_path / "r", "v26.7.0")["clusters/airgap/gpu-operator.values.yaml"])
    proc = subprocess.run([str(tools_bin / "helm"), "template", "gpu-operator", str(mini), "-f", str(values)],
                          capture_output=True, text=True, check=True)
    policy = next(d for d in yaml.safe_load_all(proc.stdout) if d and d.get("kind") == "ClusterPolicy")
    assert "nvcr.io" not in yaml.safe_dump(policy)
    for name in ("dcgm", "dcgmExporter", "driver", "toolkit"):
        assert policy["spec"][name]["imagePullSecrets"] == ["harbor-dc-north-pull"], name
