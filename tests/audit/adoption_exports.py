"""Builds the exports of the clusters the adoption tests import, as `kubectl` and `helm` print them.

Each cluster is what its team installed: `helm install` of the GPU Operator chart at a release tag with a few values
of its own (``USER_VALUES``).  From those:

* ``helm-values.json``: `helm get values -a -o json`, the computed values: the release's real values.yaml
  (../shared/upstream/gpu-operator/<tag>/values.yaml) with the team's values merged in;
* ``clusterpolicies.json``: `kubectl get clusterpolicies,nvidiadrivers -o json`: the ClusterPolicy the chart at the
  tag writes for those values -- its templates as gpuspec's chart-intent data records them (which values path each
  line writes, under which ``if``; the real templates are not in ../shared), over the real values.yaml, with the
  operand-labels helper's Helm labels -- as the API server stores it (the release's real CRD defaults applied), with
  metadata and status;
* ``helm-list.json``: `helm list -o json`;
* ``nodes.json`` (new clusters): `kubectl get nodes -o json` with the labels NFD, GFD and the operator set.

`python tests/audit/adoption_exports.py` rewrites the files below fixtures/ (it needs ../shared/upstream);
tests/audit/test_import_adoption.py checks that the committed files are current.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml
from audit_fixtures import base_node, driver_labels, gpu_node, node_list

from gpuspec.matrix.chartintent import chart_intent, merge_values
from gpuspec.matrix.chartspec import chart_spec
from gpuspec.verify.schemas import CrdSet

FIXTURES = Path(__file__).parent / "fixtures"

#: The Harbor mirror of the air-gapped cluster: every registry the chart pulls from, NFD's included.
HARBOR = "harbor.dc1.acme.internal"
MIRRORED = {"nvcr.io": f"{HARBOR}/nvcr", "registry.k8s.io": f"{HARBOR}/k8s"}


def _mirrored(upstream_values: dict[str, Any]) -> dict[str, Any]:
    """The values NVIDIA's air-gapped procedure sets: every operand's ``repository`` on the local registry."""
    out: dict[str, Any] = {}

    def walk(node: Any, into: dict[str, Any]) -> None:
        for key, value in node.items():
            if isinstance(value, dict):
                inner: dict[str, Any] = {}
                walk(value, inner)
                if inner:
                    into[key] = inner
            elif key == "repository" and isinstance(value, str) and value.startswith("nvcr.io/"):
                into[key] = MIRRORED["nvcr.io"] + value[len("nvcr.io"):]

    walk({k: v for k, v in upstream_values.items() if k != "node-feature-discovery"}, out)
    out["node-feature-discovery"] = {"image": {
        "repository": f"{MIRRORED['registry.k8s.io']}/nfd/node-feature-discovery"}}
    return out


def _airgap_values(upstream_values: dict[str, Any]) -> dict[str, Any]:
    values = _mirrored(upstream_values)
    return merge_values(values, {
        "operator": {"defaultRuntime": "containerd"},
        "psa": {"enabled": True},  # kubeadm with the restricted Pod Security level enforced cluster-wide
        "driver": {"repoConfig": {"configMapName": "acme-apt-mirror"},
                   "certConfig": {"name": "acme-harbor-ca"}},
        "devicePlugin": {"config": {"name": "time-slicing-config"}},  # NVIDIA's time-slicing procedure
    })


#: Cluster -> (release tag, the team's values as a function of the release's values.yaml, ClusterPolicy state).
CLUSTERS: dict[str, tuple[str, Any, str]] = {
    "brownfield": ("v24.9.2", lambda up: {
        "operator": {"defaultRuntime": "containerd"},
        "driver": {"version": "550.127.08"},
        "dcgmExporter": {"serviceMonitor": {"enabled": True}},
    }, "notReady"),
    "airgap-kubeadm": ("v24.9.2", _airgap_values, "ready"),
    "custom-mig": ("v25.3.4", lambda up: {
        "psa": {"enabled": True},
        "driver": {"version": "570.172.08"},
        "mig": {"strategy": "mixed"},
        "migManager": {"config": {"name": "custom-mig-parted-config"}},
    }, "ready"),
}


def upstream_values(shared: Path, tag: str) -> dict[str, Any]:
    """The release's real values.yaml."""
    data = yaml.safe_load((shared / "upstream" / "gpu-operator" / tag / "values.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def computed_values(shared: Path, tag: str, user: dict[str, Any]) -> dict[str, Any]:
    """`helm get values -a`: the chart's values.yaml with the user's values merged in."""
    return merge_values(upstream_values(shared, tag), user)


def _status(state: str, namespace: str) -> dict[str, Any]:
    ready = state == "ready"
    return {"namespace": namespace, "state": state, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False",
         "reason": "Reconciled" if ready else "OperandNotReady",
         "message": "" if ready else "ClusterPolicy is not ready, states not ready: [state-driver]"},
        {"type": "Error", "status": "False" if ready else "True", "reason": "Ready" if ready else "OperandNotReady",
         "message": ""}]}


def cluster_policy(shared: Path, tag: str, user: dict[str, Any], state: str,
                   namespace: str = "gpu-operator") -> dict[str, Any]:
    """The ClusterPolicy of a `helm install` at ``tag`` with the user's values, as `kubectl get` prints it."""
    intent = chart_intent(tag)
    assert intent is not None, tag
    spec = chart_spec(user, upstream_values(shared, tag), intent, tag).spec
    spec.setdefault("daemonsets", {})["labels"] = {  # the operand-labels helper of _helpers.tpl
        **spec.get("daemonsets", {}).get("labels", {}),
        "helm.sh/chart": f"gpu-operator-{tag}", "app.kubernetes.io/managed-by": "Helm"}
    obj = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
           "metadata": {"name": "cluster-policy", "generation": 2, "uid": f"uid-{tag}",
                        "labels": {"app.kubernetes.io/component": "gpu-operator",
                                   "app.kubernetes.io/managed-by": "Helm"},
                        "annotations": {"meta.helm.sh/release-name": "gpu-operator",
                                        "meta.helm.sh/release-namespace": namespace}},
           "spec": spec}
    crds = CrdSet.from_paths([shared / "upstream" / "gpu-operator" / tag / "crds"])
    stored = copy.deepcopy(crds.defaulted(obj))
    stored["status"] = _status(state, namespace)
    return stored


def helm_list(tag: str, namespace: str = "gpu-operator") -> list[dict[str, Any]]:
    """`helm list -o json` of the release."""
    return [{"name": "gpu-operator", "namespace": namespace, "revision": "3",
             "updated": "2026-09-01 07:12:40.50132 +0000 UTC", "status": "deployed",
             "chart": f"gpu-operator-{tag}", "app_version": tag}]


def _kubeadm(node: dict[str, Any], kubelet: str = "v1.30.11") -> dict[str, Any]:
    """A node of a kubeadm cluster on bare metal: no provider ID, no cloud labels."""
    node["spec"].pop("providerID", None)
    labels = node["metadata"]["labels"]
    for key in [k for k in labels if k.startswith(("topology.kubernetes.io/", "node.kubernetes.io/instance-type"))]:
        del labels[key]
    labels["nvidia.com/gpu.machine"] = "PowerEdge-XE9680"
    node["status"]["nodeInfo"].update(kubeletVersion=kubelet, kubeProxyVersion=kubelet,
                                       containerRuntimeVersion="containerd://1.7.24")
    return node


def airgap_nodes() -> list[dict[str, Any]]:
    """dc1-infer: two L40S nodes time-sliced 4 ways by the cluster's own ConfigMap (key l40s-ts4), two H100 nodes."""
    nodes = [_kubeadm(base_node(f"dc1-cp-{i}", "bare-metal")) for i in range(2)]
    for i in range(2):
        nodes.append(_kubeadm(gpu_node(
            f"dc1-l40s-{i}", "bare-metal", "NVIDIA-L40S-SHARED", 4, 46068, "ada-lovelace", ("8", "9"),
            {"nvidia.com/gpu": 16},
            {"acme.example/pool": "infer-l40s", "nvidia.com/device-plugin.config": "l40s-ts4",
             "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing",
             **driver_labels("550", "144", "03")})))
    for i in range(2):
        nodes.append(_kubeadm(gpu_node(
            f"dc1-h100-{i}", "bare-metal", "NVIDIA-H100-80GB-HBM3", 8, 81559, "hopper", ("9", "0"),
            {"nvidia.com/gpu": 8},
            {"acme.example/pool": "infer-h100", "nvidia.com/mig.capable": "true",
             "nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.config.state": "success",
             "nvidia.com/gpu.deploy.mig-manager": "true", **driver_labels("550", "144", "03")})))
    return nodes


#: The custom MIG layout of lab-mig's A100 nodes: GPUs 0-5 one 3g.40gb, one 2g.20gb, two 1g.10gb; GPUs 6-7 seven
#: 1g.10gb (config a100-split of ConfigMap custom-mig-parted-config).
MIG_DEVICES = {"1g.10gb": 6 * 2 + 2 * 7, "2g.20gb": 6, "3g.40gb": 6}
_MIG_SLICES = {"1g.10gb": ("1", "1", "9728"), "2g.20gb": ("2", "2", "19968"), "3g.40gb": ("3", "3", "40192")}


def mig_nodes() -> list[dict[str, Any]]:
    """lab-mig: three A100 80GB nodes, MIG mixed, custom config a100-split (GFD's per-profile counts)."""
    nodes = [_kubeadm(base_node("lab-cp-0", "bare-metal"), "v1.31.7")]
    for i in range(3):
        labels = {"acme.example/pool": "a100-mig", "nvidia.com/mig.capable": "true",
                  "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.config": "a100-split",
                  "nvidia.com/mig.config.state": "success", "nvidia.com/gpu.deploy.mig-manager": "true",
                  **driver_labels("570", "172", "08")}
        for profile, count in MIG_DEVICES.items():
            gi, ci, memory = _MIG_SLICES[profile]
            labels.update({f"nvidia.com/mig-{profile}.count": str(count),
                           f"nvidia.com/mig-{profile}.memory": memory,
                           f"nvidia.com/mig-{profile}.slices.gi": gi, f"nvidia.com/mig-{profile}.slices.ci": ci,
                           f"nvidia.com/mig-{profile}.multiprocessors": str(14 * int(gi)),
                           f"nvidia.com/mig-{profile}.product": f"NVIDIA-A100-SXM4-80GB-MIG-{profile}"})
        nodes.append(_kubeadm(gpu_node(
            f"lab-a100-{i}", "bare-metal", "NVIDIA-A100-SXM4-80GB", 8, 81920, "ampere", ("8", "0"),
            {f"nvidia.com/mig-{p}": c for p, c in MIG_DEVICES.items()}, labels), "v1.31.7"))
    return nodes


def _json(document: Any) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def render_all(shared: Path) -> dict[str, str]:
    """Path (relative to fixtures/) -> JSON text of every export of :data:`CLUSTERS`."""
    files: dict[str, str] = {}
    for name, (tag, user_of, state) in CLUSTERS.items():
        user = user_of(upstream_values(shared, tag))
        files[f"{name}/helm-values.json"] = _json(computed_values(shared, tag, user))
        files[f"{name}/clusterpolicies.json"] = _json(
            {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
             "items": [cluster_policy(shared, tag, user, state)]})
        if name != "brownfield":  # its helm-list.json is as written by hand (revision 4 of the release)
            files[f"{name}/helm-list.json"] = _json(helm_list(tag))
    files["airgap-kubeadm/nodes.json"] = _json(node_list(airgap_nodes()))
    files["custom-mig/nodes.json"] = _json(node_list(mig_nodes()))
    return files


def shared_dir() -> Path:
    """The shared/ folder beside the checkout (or $GPUSPEC_SHARED), as tests/conftest.py finds it."""
    env = os.environ.get("GPUSPEC_SHARED")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "shared"


if __name__ == "__main__":
    written = render_all(shared_dir())
    for rel, text in written.items():
        (FIXTURES / rel).parent.mkdir(parents=True, exist_ok=True)
        (FIXTURES / rel).write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {len(written)} files below {FIXTURES}\n")
