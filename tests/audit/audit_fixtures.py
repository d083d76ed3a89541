"""Builds the node-inventory fixtures of the audit tests (`kubectl get nodes -o json` documents).

Labels are the ones NFD, GPU Feature Discovery and the GPU Operator set on real
nodes.  `python tests/audit/audit_fixtures.py` rewrites fixtures/nodes/*.json and the input files of the audit
ids' cases in tests/rules/fixtures/<ID>/{fail,pass}/ (nodes.json, clusterpolicies.json);
test_fixture_files_are_current checks the committed files match this generator.
"""

from __future__ import annotations

import copy
import json
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
#: The one layout of every id's failing and passing case (tests/rules/test_rule_fixtures.py runs them).
RULE_CASES = Path(__file__).parent.parent / "rules" / "fixtures"
NODES_DIR = FIXTURES / "nodes"
FLEET_DIR = FIXTURES / "fleet"

Node = dict[str, Any]

DRIVER = ("580", "95", "05")
OPERATOR_DEPLOY = {
    "nvidia.com/gpu.deploy.container-toolkit": "true",
    "nvidia.com/gpu.deploy.dcgm": "true",
    "nvidia.com/gpu.deploy.dcgm-exporter": "true",
    "nvidia.com/gpu.deploy.device-plugin": "true",
    "nvidia.com/gpu.deploy.driver": "true",
    "nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
    "nvidia.com/gpu.deploy.node-status-exporter": "true",
    "nvidia.com/gpu.deploy.operator-validator": "true",
}


def driver_labels(major: str, minor: str, rev: str) -> dict[str, str]:
    """The driver version labels GFD writes (both the old and the new label names)."""
    return {
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev,
        "nvidia.com/cuda.driver-version.full": f"{major}.{minor}.{rev}",
        "nvidia.com/cuda.driver-version.major": major,
        "nvidia.com/cuda.driver-version.minor": minor,
        "nvidia.com/cuda.driver-version.revision": rev,
        "nvidia.com/cuda.runtime-version.full": "13.0",
        "nvidia.com/cuda.runtime-version.major": "13",
        "nvidia.com/cuda.runtime-version.minor": "0",
    }


def base_node(name: str, instance_type: str, zone: str = "us-east-1a") -> Node:
    """A Ready node without GPUs, as kubectl prints it (fields trimmed to the realistic essentials)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"0000-{name}",
            "creationTimestamp": "2026-08-01T10:00:00Z",
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": instance_type,
                "topology.kubernetes.io/region": "us-east-1",
                "topology.kubernetes.io/zone": zone,
                "feature.node.kubernetes.io/cpu-model.vendor_id": "Intel",
                "feature.node.kubernetes.io/kernel-version.full": "5.15.0-143-generic",
                "feature.node.kubernetes.io/kernel-version.major": "5",
                "feature.node.kubernetes.io/kernel-version.minor": "15",
                "feature.node.kubernetes.io/kernel-version.revision": "0",
                "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
                "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04",
                "feature.node.kubernetes.io/system-os_release.VERSION_ID.major": "22",
                "feature.node.kubernetes.io/system-os_release.VERSION_ID.minor": "04",
            },
        },
        "spec": {"providerID": f"aws:///{zone}/i-{zlib.crc32(name.encode()):08x}"},
        "status": {
            "addresses": [{"type": "Hostname", "address": name}],
            "capacity": {"cpu": "96", "ephemeral-storage": "1966788624Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "2113442416Ki", "pods": "110"},
            "allocatable": {"cpu": "95690m", "ephemeral-storage": "1812578380231", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": "2102956656Ki", "pods": "110"},
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                 "message": "kubelet has sufficient memory available"},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
                 "message": "kubelet has no disk pressure"},
                {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
                 "message": "kubelet has sufficient PID available"},
                {"type": "Ready", "status": "True", "reason": "KubeletReady",
                 "message": "kubelet is posting ready status. AppArmor enabled"},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "5.15.0-143-generic",
                "kubeProxyVersion": "v1.33.4",
                "kubeletVersion": "v1.33.4",
                "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.5 LTS",
            },
        },
    }


def gpu_node(name: str, instance_type: str, product: str, count: int, memory: int, family: str,
             compute: tuple[str, str], resources: dict[str, int], extra: dict[str, str] | None = None,
             taints: list[dict[str, str]] | None = None) -> Node:
    """A healthy GPU node after the GPU Operator finished: NFD, operator and GFD labels, GPU resources."""
    node = base_node(name, instance_type)
    labels = node["metadata"]["labels"]
    labels.update({
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "feature.node.kubernetes.io/pci-15b3.present": "true",
        "nvidia.com/gpu.present": "true",
        **OPERATOR_DEPLOY,
        "nvidia.com/gfd.timestamp": "1756300000",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.family": family,
        "nvidia.com/gpu.compute.major": compute[0],
        "nvidia.com/gpu.compute.minor": compute[1],
        "nvidia.com/gpu.machine": instance_type,
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "false",
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/mps.capable": "false",
        "nvidia.com/gpu-driver-upgrade-state": "upgrade-done",
        **driver_labels(*DRIVER),
    })
    labels.update(extra or {})
    if taints:
        node["spec"]["taints"] = taints
    for key in ("capacity", "allocatable"):
        node["status"][key].update({k: str(v) for k, v in resources.items()})
    return node


H100_TAINT = [{"key": "acme.example/gpu", "value": "h100", "effect": "NoSchedule"}]


def h100(name: str) -> Node:
    """A node of pool h100: 8 x H100 SXM5 80GB."""
    return gpu_node(name, "p5.48xlarge", "NVIDIA-H100-80GB-HBM3", 8, 81559, "hopper", ("9", "0"),
                    {"nvidia.com/gpu": 8},
                    {"acme.example/gpu-pool": "h100", "nvidia.com/mig.capable": "true",
                     "nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.config.state": "success",
                     "nvidia.com/gpu.deploy.mig-manager": "true"},
                    copy.deepcopy(H100_TAINT))


def a100_mig(name: str) -> Node:
    """A node of pool a100-mig: 8 x A100 80GB, MIG mixed (4 GPUs 7x1g.10gb, 4 GPUs 2x3g.40gb)."""
    return gpu_node(name, "p4de.24xlarge", "NVIDIA-A100-SXM4-80GB", 8, 81920, "ampere", ("8", "0"),
                    {"nvidia.com/mig-1g.10gb": 28, "nvidia.com/mig-3g.40gb": 8},
                    {"acme.example/gpu-pool": "a100-mig", "nvidia.com/mig.capable": "true",
                     "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config": "custom-a100-mig",
                     "nvidia.com/mig.config.state": "success", "nvidia.com/gpu.deploy.mig-manager": "true",
                     "nvidia.com/mig-1g.10gb.count": "28", "nvidia.com/mig-1g.10gb.memory": "9728",
                     "nvidia.com/mig-1g.10gb.slices.gi": "1", "nvidia.com/mig-1g.10gb.slices.ci": "1",
                     "nvidia.com/mig-3g.40gb.count": "8", "nvidia.com/mig-3g.40gb.memory": "40192",
                     "nvidia.com/mig-3g.40gb.slices.gi": "3", "nvidia.com/mig-3g.40gb.slices.ci": "3"})


def l40s(name: str) -> Node:
    """A node of pool l40s: 4 x L40S time-sliced 4 ways (renameByDefault false → -SHARED product)."""
    return gpu_node(name, "g6e.12xlarge", "NVIDIA-L40S-SHARED", 4, 46068, "ada-lovelace", ("8", "9"),
                    {"nvidia.com/gpu": 16},
                    {"acme.example/accelerator": "l40s", "nvidia.com/gpu.replicas": "4",
                     "nvidia.com/gpu.sharing-strategy": "time-slicing"})


def healthy() -> list[Node]:
    """The healthy inventory of cluster lab: every pool full, ready and as declared, plus two CPU nodes."""
    return [
        base_node("cpu-0", "m7i.4xlarge"),
        base_node("cpu-1", "m7i.4xlarge"),
        h100("gpu-h100-0"),
        h100("gpu-h100-1"),
        a100_mig("gpu-a100-0"),
        l40s("gpu-l40s-0"),
    ]


def node_list(nodes: list[Node]) -> dict[str, Any]:
    """Wrap nodes the way `kubectl get nodes -o json` does."""
    return {"apiVersion": "v1", "kind": "List", "items": nodes, "metadata": {"resourceVersion": ""}}


def _find(nodes: list[Node], name: str) -> Node:
    return next(n for n in nodes if n["metadata"]["name"] == name)


def _labels(nodes: list[Node], name: str) -> dict[str, str]:
    labels: dict[str, str] = _find(nodes, name)["metadata"]["labels"]
    return labels


def _set_gpus(node: Node, resource: str, count: int) -> None:
    for key in ("capacity", "allocatable"):
        node["status"][key][resource] = str(count)


def unmatched_gpu_node(nodes: list[Node]) -> None:
    """A new H100 node joined without the pool label."""
    extra = h100("gpu-h100-new")
    del extra["metadata"]["labels"]["acme.example/gpu-pool"]
    nodes.append(extra)


def two_pools(nodes: list[Node]) -> None:
    """Someone labelled an H100 node as an L40S accelerator too."""
    _labels(nodes, "gpu-h100-1")["acme.example/accelerator"] = "l40s"


def not_ready(nodes: list[Node]) -> None:
    """An H100 node stopped posting status."""
    ready = next(c for c in _find(nodes, "gpu-h100-1")["status"]["conditions"] if c["type"] == "Ready")
    ready.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.")


def idle(nodes: list[Node]) -> None:
    """The idle-cluster case: the driver did not come back after a reboot; the device plugin advertises 0 GPUs."""
    _set_gpus(_find(nodes, "gpu-h100-0"), "nvidia.com/gpu", 0)


def driver_drift(nodes: list[Node]) -> None:
    """One H100 node still runs the previous driver."""
    _labels(nodes, "gpu-h100-1").update(driver_labels("580", "82", "07"))


def driver_off_spec(nodes: list[Node]) -> None:
    """Every H100 node runs a driver the spec does not pin."""
    for name in ("gpu-h100-0", "gpu-h100-1"):
        _labels(nodes, name).update(driver_labels("570", "172", "08"))


def mig_failed(nodes: list[Node]) -> None:
    """MIG Manager failed to repartition (a GPU process was running); the node still offers full GPUs."""
    node = _find(nodes, "gpu-a100-0")
    labels = node["metadata"]["labels"]
    labels["nvidia.com/mig.config.state"] = "failed"
    for key in [k for k in labels if k.startswith("nvidia.com/mig-")]:
        del labels[key]
    for key in ("capacity", "allocatable"):
        for resource in [r for r in node["status"][key] if r.startswith("nvidia.com/mig-")]:
            del node["status"][key][resource]
    _set_gpus(node, "nvidia.com/gpu", 8)


def mig_pending(nodes: list[Node]) -> None:
    """MIG Manager is still applying the layout."""
    _labels(nodes, "gpu-a100-0")["nvidia.com/mig.config.state"] = "pending"


def mig_config_mismatch(nodes: list[Node]) -> None:
    """Someone set the MIG config label of the A100 node by hand to all-disabled."""
    _labels(nodes, "gpu-a100-0")["nvidia.com/mig.config"] = "all-disabled"


def mig_on_plain_pool(nodes: list[Node]) -> None:
    """An H100 node of a pool without MIG was partitioned by hand."""
    _labels(nodes, "gpu-h100-0")["nvidia.com/mig.config"] = "all-1g.10gb"


def product_mismatch(nodes: list[Node]) -> None:
    """An A100 machine carries the H100 pool label."""
    _labels(nodes, "gpu-h100-1").update({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                                         "nvidia.com/gpu.family": "ampere"})


def count_mismatch(nodes: list[Node]) -> None:
    """One GPU of an H100 node fell off the bus (Xid 79): 7 GPUs seen and advertised."""
    node = _find(nodes, "gpu-h100-0")
    node["metadata"]["labels"]["nvidia.com/gpu.count"] = "7"
    _set_gpus(node, "nvidia.com/gpu", 7)


def sharing_mismatch(nodes: list[Node]) -> None:
    """The L40S node advertises its 4 GPUs without time-slicing replicas (sharing config not applied)."""
    _set_gpus(_find(nodes, "gpu-l40s-0"), "nvidia.com/gpu", 4)


def sharing_config_renamed(nodes: list[Node]) -> None:
    """The L40S node takes its time-slicing config from a key of another name (a ConfigMap set up by hand)."""
    _labels(nodes, "gpu-l40s-0")["nvidia.com/device-plugin.config"] = "l40s-ts4"


def upgrade_failed(nodes: list[Node]) -> None:
    """The driver upgrade failed on an H100 node and left it cordoned."""
    node = _find(nodes, "gpu-h100-1")
    node["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"] = "upgrade-failed"
    node["spec"]["unschedulable"] = True
    node["spec"]["taints"].append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                                   "timeAdded": "2026-08-20T03:12:44Z"})


def taint_missing(nodes: list[Node]) -> None:
    """An H100 node was re-created without the pool's taint."""
    del _find(nodes, "gpu-h100-1")["spec"]["taints"]


def operand_disabled(nodes: list[Node]) -> None:
    """The device plugin was switched off on an H100 node by a deploy label and never switched back."""
    _labels(nodes, "gpu-h100-0")["nvidia.com/gpu.deploy.device-plugin"] = "false"


def driver_preinstalled(nodes: list[Node]) -> None:
    """The operator found a host driver on an H100 node although the spec says operator-managed."""
    _labels(nodes, "gpu-h100-1")["nvidia.com/gpu.deploy.driver"] = "pre-installed"


def upgrade_in_progress(nodes: list[Node]) -> None:
    """The upgrade controller is deleting GPU pods on a cordoned H100 node."""
    node = _find(nodes, "gpu-h100-0")
    node["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"] = "pod-deletion-required"
    node["spec"]["unschedulable"] = True


def unknown_product(nodes: list[Node]) -> None:
    """The L40S node reports a product string gpuspec's map does not know."""
    _labels(nodes, "gpu-l40s-0")["nvidia.com/gpu.product"] = "NVIDIA-A10G-SHARED"


def gfd_missing(nodes: list[Node]) -> None:
    """GPU Feature Discovery is not running on an H100 node: its GFD labels are gone."""
    labels = _labels(nodes, "gpu-h100-1")
    for key in [k for k in labels if k.startswith(("nvidia.com/gpu.", "nvidia.com/cuda."))
                and not k.startswith("nvidia.com/gpu.deploy.") and k != "nvidia.com/gpu.present"]:
        del labels[key]


#: Drift class → (mutation of the healthy inventory, rule ids audit must report, nothing else).
DRIFTS: dict[str, tuple[Callable[[list[Node]], None], set[str]]] = {
    "unmatched-gpu-node": (unmatched_gpu_node, {"GS750"}),
    "two-pools": (two_pools, {"GS751", "GS753", "GS762", "GS763", "GS761"}),
    "not-ready": (not_ready, {"GS754", "GS752"}),
    "idle": (idle, {"GS760", "GS752"}),
    "driver-drift": (driver_drift, {"GS770", "GS771"}),
    "driver-off-spec": (driver_off_spec, {"GS771"}),
    "mig-failed": (mig_failed, {"GS780", "GS761"}),
    "mig-pending": (mig_pending, {"GS781"}),
    "mig-config-mismatch": (mig_config_mismatch, {"GS782"}),
    "mig-on-plain-pool": (mig_on_plain_pool, {"GS782"}),
    "product-mismatch": (product_mismatch, {"GS762"}),
    "count-mismatch": (count_mismatch, {"GS763", "GS761"}),
    "sharing-mismatch": (sharing_mismatch, {"GS761"}),
    "sharing-config-renamed": (sharing_config_renamed, {"GS783"}),
    "upgrade-failed": (upgrade_failed, {"GS772", "GS754", "GS752"}),
    "taint-missing": (taint_missing, {"GS755"}),
    "operand-disabled": (operand_disabled, {"GS776"}),
    "driver-preinstalled": (driver_preinstalled, {"GS775"}),
    "upgrade-in-progress": (upgrade_in_progress, {"GS773", "GS754", "GS752"}),
    "unknown-product": (unknown_product, {"GS764"}),
    "gfd-missing": (gfd_missing, {"GS765"}),
}


def drifted(name: str) -> list[Node]:
    """The healthy inventory with drift ``name`` applied."""
    nodes = healthy()
    DRIFTS[name][0](nodes)
    return nodes


def operator_resources(policy_state: str = "ready", driver_state: str = "ready",
                       driver_version: str = "580.95.05") -> dict[str, Any]:
    """What `kubectl get clusterpolicies,nvidiadrivers -o json` prints for cluster lab."""
    def conditions(state: str) -> list[dict[str, str]]:
        if state == "ready":
            return [{"type": "Ready", "status": "True", "reason": "Reconciled", "message": "",
                     "lastTransitionTime": "2026-08-20T03:00:00Z"},
                    {"type": "Error", "status": "False", "reason": "Ready", "message": "",
                     "lastTransitionTime": "2026-08-20T03:00:00Z"}]
        return [{"type": "Ready", "status": "False", "reason": "OperandNotReady",
                 "message": "ClusterPolicy is not ready, states not ready: [state-driver]",
                 "lastTransitionTime": "2026-08-20T03:00:00Z"},
                {"type": "Error", "status": "True", "reason": "DriverNotReady",
                 "message": "driver pods are not ready on 1 node", "lastTransitionTime": "2026-08-20T03:00:00Z"}]

    return {
        "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
        "items": [
            {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
             "metadata": {"name": "cluster-policy", "generation": 3},
             "spec": {"operator": {"defaultRuntime": "containerd"}, "driver": {"enabled": True,
                                                                               "useNvidiaDriverCRD": True}},
             "status": {"state": policy_state, "namespace": "gpu-operator", "conditions": conditions(policy_state)}},
            {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver",
             "metadata": {"name": "h100"},
             "spec": {"driverType": "gpu", "repository": "nvcr.io/nvidia", "image": "driver",
                      "version": driver_version, "nodeSelector": {"acme.example/gpu-pool": "h100"}},
             "status": {"state": driver_state, "namespace": "gpu-operator", "conditions": conditions(driver_state)}},
        ],
    }


def lab_cluster_policy(**changes: Any) -> dict[str, Any]:
    """The ClusterPolicy cluster lab runs when it runs its spec: what the chart at its release writes for the Helm
    values gpuspec renders (gpuspec's chart data), as the API server stores it, ready; ``changes`` (dotted spec
    path -> value) are what someone changed by hand since."""
    from gpuspec.audit.operator_render import CLUSTER_POLICY, from_chart_data
    from gpuspec.kube.crddefaults import defaulted
    from gpuspec.loader.fleetload import load_fleet

    fleet = load_fleet(FLEET_DIR).fleet
    assert fleet is not None
    cluster = fleet.cluster("lab")
    assert cluster is not None
    rendered = from_chart_data(fleet, cluster)
    obj = defaulted({"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
                     "metadata": {"name": "cluster-policy", "generation": 1},
                     "spec": rendered.specs[CLUSTER_POLICY]}, "ClusterPolicy", rendered.release)
    for path, value in changes.items():
        node = obj["spec"]
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    obj["status"] = {"state": "ready", "namespace": "gpu-operator", "conditions": [
        {"type": "Ready", "status": "True", "reason": "Reconciled", "message": "",
         "lastTransitionTime": "2026-08-20T03:00:00Z"}]}
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [obj]}


#: Round-trip ids -> the hand change of their failing case's ClusterPolicy (the passing case runs the spec).
SETTING_CASES: dict[str, dict[str, Any]] = {
    "GS785": {"devicePlugin.config.name": "time-slicing-config"},
    "GS786": {"dcgmExporter.repository": "registry.acme.example/nvidia/k8s"},
}

#: Inventories other audit tests read from fixtures/nodes besides the rule cases.
NODE_FILES = ("count-mismatch", "idle", "taint-missing")
#: Operator-resource ids → the export of their failing case (the passing case is the ready export).
RESOURCE_CASES: dict[str, dict[str, str]] = {
    "GS790": {"policy_state": "notReady"},
    "GS791": {"driver_state": "notReady"},
    "GS792": {"policy_state": "ignored"},
    "GS793": {"driver_version": "570.172.08"},
}


def _json(document: Any) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def case_drift(rule_id: str) -> str:
    """The drift class whose inventory is the failing case of ``rule_id``: the one reporting fewest other ids."""
    return min((name for name, (_, ids) in DRIFTS.items() if rule_id in ids), key=lambda n: (len(DRIFTS[n][1]), n))


def render_all() -> dict[str, str]:
    """Path (relative to tests/) → JSON text of every node and operator-resource fixture."""
    healthy_text = _json(node_list(healthy()))
    files = {"audit/fixtures/nodes/healthy.json": healthy_text}
    files |= {f"audit/fixtures/nodes/drift-{name}.json": _json(node_list(drifted(name))) for name in NODE_FILES}
    for rule_id in sorted(set().union(*(ids for _, ids in DRIFTS.values()))):
        files[f"rules/fixtures/{rule_id}/fail/nodes.json"] = _json(node_list(drifted(case_drift(rule_id))))
        files[f"rules/fixtures/{rule_id}/pass/nodes.json"] = healthy_text
    for rule_id, change in RESOURCE_CASES.items():
        files[f"rules/fixtures/{rule_id}/fail/nodes.json"] = healthy_text
        files[f"rules/fixtures/{rule_id}/fail/clusterpolicies.json"] = _json(operator_resources(**change))
        files[f"rules/fixtures/{rule_id}/pass/nodes.json"] = healthy_text
        files[f"rules/fixtures/{rule_id}/pass/clusterpolicies.json"] = _json(operator_resources())
    for rule_id, changes in SETTING_CASES.items():
        files[f"rules/fixtures/{rule_id}/fail/nodes.json"] = healthy_text
        files[f"rules/fixtures/{rule_id}/fail/clusterpolicies.json"] = _json(lab_cluster_policy(**changes))
        files[f"rules/fixtures/{rule_id}/pass/nodes.json"] = healthy_text
        files[f"rules/fixtures/{rule_id}/pass/clusterpolicies.json"] = _json(lab_cluster_policy())
    return files


TESTS_DIR = Path(__file__).parent.parent

if __name__ == "__main__":
    for rel, text in render_all().items():
        (TESTS_DIR / rel).parent.mkdir(parents=True, exist_ok=True)
        (TESTS_DIR / rel).write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {len(render_all())} files below {TESTS_DIR}\n")
