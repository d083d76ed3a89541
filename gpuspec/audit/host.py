"""Audit of what sits under the GPU stack of each node (pure; no I/O).

Kernel, OS image, kubelet and container runtime from ``status.nodeInfo`` against the pool's and the
cluster's spec; node labels that nothing but a person set; and an export of which no node belongs to
the cluster.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuspec.audit.facts import NodeFacts, node_names
from gpuspec.catalogue import audit_host as R
from gpuspec.catalogue.entry import Entry
from gpuspec.findings import DocPath, Finding
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.resolve import pool_path

#: Label key prefixes (the part before "/") set by controllers, not by people: NFD, GFD and the GPU Operator,
#: cloud providers' node groups, Karpenter, Cluster API, OpenShift.  Kubernetes' own (kubernetes.io, k8s.io and
#: their subdomains) are matched by suffix in :func:`controller_label`.
CONTROLLER_DOMAINS = (
    "nvidia.com",  # GFD, the operator, MIG Manager, the device plugin
    "eks.amazonaws.com", "k8s.amazonaws.com", "vpc.amazonaws.com", "alpha.eksctl.io", "eksctl.io",
    "topology.ebs.csi.aws.com",
    "cloud.google.com", "topology.gke.io", "node.gke.io", "addon.gke.io",
    "kubernetes.azure.com", "topology.disk.csi.azure.com",
    "karpenter.sh", "karpenter.k8s.aws", "karpenter.azure.com",
    "cluster.x-k8s.io", "x-k8s.io",
    "node.openshift.io", "machine.openshift.io", "machineconfiguration.openshift.io",
)

#: Domains whose subdomains are Kubernetes' own well-known labels (kubernetes.io/hostname,
#: node.kubernetes.io/instance-type, topology.kubernetes.io/zone, feature.node.kubernetes.io/* of NFD ...).
KUBERNETES_DOMAINS = ("kubernetes.io", "k8s.io")


def _domain_matches(domain: str, known: str) -> bool:
    return domain == known or domain.endswith("." + known)


def controller_label(key: str) -> bool:
    """True when a label ``key`` belongs to a known controller (or Kubernetes itself), not to a person."""
    domain = key.split("/", 1)[0] if "/" in key else ""
    if not domain:
        return False
    return any(_domain_matches(domain, d) for d in (*KUBERNETES_DOMAINS, *CONTROLLER_DOMAINS))


def hand_set_labels(node: NodeFacts, cluster: Cluster) -> dict[str, str]:
    """The labels of ``node`` that no pool selector of ``cluster``, no known controller and no spec field explains."""
    explained = {key for pool in cluster.pools for key in pool.node_selector}
    return {k: v for k, v in sorted(node.labels.items()) if k not in explained and not controller_label(k)}


#: How each OS distribution of the spec names itself at the start of `osImage` (from /etc/os-release PRETTY_NAME).
OS_IMAGE_NAMES: dict[str, tuple[str, ...]] = {
    "ubuntu": ("ubuntu",),
    "rhel": ("red hat enterprise linux",),
    "rhcos": ("red hat enterprise linux coreos",),
    "rocky": ("rocky linux",),
    "sles": ("suse linux enterprise server", "sles"),
    "cos": ("container-optimized os",),
    "amazonlinux": ("amazon linux",),
    "azurelinux": ("microsoft azure linux", "cbl-mariner", "azure linux"),
}

#: Distributions whose `osImage` version is not the spec's version format (RHCOS, COS): only the name is compared.
NAME_ONLY = frozenset({"rhcos", "cos"})

_VERSION = re.compile(r"(\d+(?:\.\d+)*)(?:\s+SP(\d+))?")


def os_image_problem(os_image: str, distribution: str, version: str) -> str | None:
    """Why ``os_image`` is not ``distribution`` ``version``, or None when it is (or cannot be told apart)."""
    text = os_image.strip().lower()
    if not text:
        return None
    names = OS_IMAGE_NAMES.get(distribution, ())
    if distribution == "rhel" and text.startswith("red hat enterprise linux coreos"):
        return "another distribution"
    if not any(text.startswith(n) for n in names):
        return "another distribution"
    if distribution in NAME_ONLY:
        return None
    found = _VERSION.search(os_image)
    if found is None:
        return None
    seen = found.group(1) + (f".{found.group(2)}" if found.group(2) else "")
    want = version.split(".")
    return None if seen.split(".")[: len(want)] == want else "another version"


def kubelet_minor(kubelet_version: str) -> str | None:
    """The Kubernetes minor ("1.31") of a kubelet version such as ``v1.31.4-eks-a737599``, or None."""
    found = re.match(r"v?(\d+)\.(\d+)", kubelet_version.strip())
    return f"{found.group(1)}.{found.group(2)}" if found else None


def runtime_name(container_runtime_version: str) -> str | None:
    """The runtime ("containerd", "cri-o", "docker") of a version such as ``containerd://1.7.22``, or None."""
    scheme, sep, _ = container_runtime_version.partition("://")
    return scheme.strip().lower() if sep and scheme.strip() else None


def _names(nodes: Sequence[NodeFacts]) -> str:
    return node_names(nodes)


def _plural(count: int) -> str:
    return f"{count} node{'' if count == 1 else 's'}"


class _Out:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.findings: list[Finding] = []

    def add(self, entry: Entry, message: str, path: DocPath, hint: str | None = None) -> None:
        self.findings.append(entry.finding(message, self.cluster.source_file, path, hint))

    def by_value(self, entry: Entry, nodes: Sequence[NodeFacts], value: dict[str, str],
                 message: str, path: DocPath, hint: str | None = None) -> None:
        """One finding per observed value (``{value}``, ``{count}``, ``{nodes}`` and a verb's ``{s}`` filled in)."""
        groups: dict[str, list[NodeFacts]] = {}
        for node in nodes:
            if node.name in value:
                groups.setdefault(value[node.name], []).append(node)
        for seen in sorted(groups):
            members = groups[seen]
            self.add(entry, message.format(value=seen, count=_plural(len(members)), nodes=_names(members),
                                        s="s" if len(members) == 1 else ""),
                     path, hint)


def _check_pool_hosts(out: _Out, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> None:
    label = f"pool {pool.name!r}"
    if pool.os.kernel:
        want = pool.os.kernel
        out.by_value(R.KERNEL_MISMATCH, nodes, {n.name: n.kernel for n in nodes if n.kernel and n.kernel != want},
                     f"{label} declares kernel {want} but {{count}} run{{s}} kernel {{value}}: {{nodes}}",
                     pool_path(cluster, pool, "os", "kernel"),
                     "the driver is built for the declared kernel: pin the kernel on the nodes (or update "
                     "os.kernel and re-render), then check the driver pods")
    os_text = f"{pool.os.distribution} {pool.os.version}"
    out.by_value(R.OS_IMAGE_MISMATCH, nodes,
                 {n.name: n.os_image for n in nodes
                  if os_image_problem(n.os_image, pool.os.distribution, pool.os.version)},
                 f"{label} declares OS {os_text} but {{count}} report{{s}} osImage {{value!r}}: {{nodes}}",
                 pool_path(cluster, pool, "os"))


def _check_cluster_hosts(out: _Out, cluster: Cluster, nodes: Sequence[NodeFacts]) -> None:
    version = cluster.kubernetes.version
    out.by_value(R.KUBELET_MISMATCH, nodes,
                 {n.name: n.kubelet for n in nodes if kubelet_minor(n.kubelet) not in (None, version)},
                 f"cluster {cluster.name!r} declares Kubernetes {version} but {{count}} run{{s}} kubelet {{value}}: "
                 "{nodes}",
                 ("kubernetes", "version"))
    runtime = cluster.kubernetes.runtime.value
    out.by_value(R.RUNTIME_MISMATCH, nodes,
                 {n.name: n.runtime for n in nodes if runtime_name(n.runtime) not in (None, runtime)},
                 f"cluster {cluster.name!r} declares container runtime {runtime} but {{count}} run{{s}} {{value}}: "
                 "{nodes}",
                 ("kubernetes", "runtime"))


def _check_hand_labels(out: _Out, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> None:
    for node in sorted(nodes, key=lambda n: n.name):
        labels = hand_set_labels(node, cluster)
        if labels:
            listed = ", ".join(f"{k}={v}" for k, v in labels.items())
            out.add(R.HAND_SET_LABELS,
                    f"node {node.name} of pool {pool.name!r} carries {len(labels)} hand-set "
                    f"label{'' if len(labels) == 1 else 's'} no selector, controller or spec field explains: "
                    f"{listed}",
                    pool_path(cluster, pool, "nodeSelector"),
                    "add them to the pool's nodeSelector if provisioning sets them, or record and remove them "
                    "(gpuspec migrate prints the commands)")


#: The node label that switches every operand off (hybrid mode).
DEPLOY_OPERANDS = "nvidia.com/gpu.deploy.operands"


def _check_unmanaged(out: _Out, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts]) -> None:
    if pool.managed:
        return
    for node in sorted(nodes, key=lambda n: n.name):
        running = sorted(k for k, v in node.deploy.items() if v == "true" and k != "operands")
        if node.labels.get(DEPLOY_OPERANDS) != "false" or running:
            what = f"operands {', '.join(running)} deployed" if running else "no nvidia.com/gpu.deploy.operands=false"
            out.add(R.OPERATOR_ON_UNMANAGED,
                    f"node {node.name} of unmanaged pool {pool.name!r} has {what}",
                    pool_path(cluster, pool, "managed"),
                    f"kubectl label node {node.name} {DEPLOY_OPERANDS}=false --overwrite "
                    "(rendered node-labels.yaml lists it)")


def audit_hosts(cluster: Cluster, nodes: Sequence[NodeFacts], members: dict[str, list[Pool]],
                display: str = "the node export") -> list[Finding]:
    """Findings about the nodes' kernel, OS, kubelet, runtime and hand-set labels, and an export of another cluster.

    ``members`` maps each node name to the pools whose nodeSelector matches it.
    """
    out = _Out(cluster)
    if not any(members.get(n.name) for n in nodes):
        gpus = sum(1 for n in nodes if n.has_gpus)
        out.add(R.NO_NODE_OF_CLUSTER,
                f"none of the {_plural(len(nodes))} in {display} ({gpus} with NVIDIA GPUs) matches a pool of "
                f"cluster {cluster.name!r}: the export is of another cluster, or every nodeSelector is wrong",
                ("pools",),
                f"export the nodes of {cluster.name} (kubectl --context <{cluster.name}> get nodes -o json), "
                "or fix the pools' nodeSelectors")
        return out.findings
    in_pools = [n for n in nodes if members.get(n.name)]
    _check_cluster_hosts(out, cluster, in_pools)
    for pool in cluster.pools:
        pool_nodes = [n for n in in_pools if pool in members[n.name]]
        _check_pool_hosts(out, cluster, pool, pool_nodes)
        _check_hand_labels(out, cluster, pool, pool_nodes)
        _check_unmanaged(out, cluster, pool, pool_nodes)
    return out.findings
