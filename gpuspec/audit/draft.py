"""`gpuspec import`: draft a cluster spec from a node inventory, as commented round-trip YAML.

Nodes with NVIDIA GPUs are grouped into pools by GPU product and count, OS,
kernel, driver, MIG configuration and sharing.  Each pool gets a nodeSelector:
an existing label that exactly that group carries, else a proposed
`gpuspec.io/pool` label the operator must apply.  Values gpuspec cannot read
from the inventory get defaults marked `# TODO: review`.
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from gpuspec.audit.draft_base import (
    TODO,
    DraftPool,
    PoolKey,
    as_int,
    cmap,
    from_cluster,
    majority,
    todo,
)
from gpuspec.audit.facts import (
    GPU_REPLICAS,
    MIG_DISABLED,
    NFD_KERNEL,
    NFD_OS_ID,
    NFD_OS_VERSION,
    SHARING_STRATEGY,
    NodeFacts,
)
from gpuspec.audit.inventory import Node
from gpuspec.audit.mig_draft import infer_custom_layout as infer_custom_layout
from gpuspec.audit.mig_draft import mig_map
from gpuspec.audit.mirror_match import matching_mirror, registry_prefixes
from gpuspec.audit.products import base_product
from gpuspec.audit.running import RunningState
from gpuspec.audit.settings_draft import config_maps, mirror_settings
from gpuspec.errors import GpuspecError
from gpuspec.model.cluster import Cluster
from gpuspec.model.patterns import DNS_LABEL_PATTERN
from gpuspec.model.types import API_VERSION

#: The node label that selects a node's device-plugin config (its key in the device-plugin ConfigMap).
DEVICE_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
#: The label gpuspec proposes when no existing label selects exactly one pool.
POOL_LABEL = "gpuspec.io/pool"

#: NFD os_release.ID values → the spec's OS distribution names.
OS_IDS = {"ubuntu": "ubuntu", "rhel": "rhel", "rhcos": "rhcos", "rocky": "rocky", "sles": "sles", "cos": "cos",
          "amzn": "amazonlinux", "azurelinux": "azurelinux", "mariner": "azurelinux"}

#: Label keys that never make a pool selector (per-node, topology, or owned by NFD / NVIDIA / Kubernetes).
_EXCLUDED_PREFIXES = ("nvidia.com/", "feature.node.kubernetes.io/", "nfd.node.kubernetes.io/",
                      "node-role.kubernetes.io/", "topology.kubernetes.io/", "failure-domain.beta.kubernetes.io/",
                      "beta.kubernetes.io/", "topology.gke.io/", "node.kubernetes.io/exclude")
_EXCLUDED_KEYS = frozenset({"kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os"})
#: Labels cloud node pools carry: preferred as selectors when they fit.
_PREFERRED_KEYS = ("cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool",
                   "kubernetes.azure.com/agentpool", "agentpool")
_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")
_DRIVER_VERSION = re.compile(r"^[0-9]{3}\.[0-9]{1,3}(\.[0-9]{1,3})?$")


def pool_key(node: NodeFacts) -> PoolKey:
    """The grouping key of a GPU node."""
    labels = node.labels
    product = node.product.product_id if node.product else base_product(node.product_label or "unknown")
    mig_config = node.mig_config or MIG_DISABLED
    mig_on = mig_config != MIG_DISABLED
    sharing = labels.get(SHARING_STRATEGY, "none")
    replicas = as_int(labels.get(GPU_REPLICAS), 1)
    return PoolKey(
        product=product,
        count=node.gpu_count or node.capacity.get("nvidia.com/gpu", 0),
        os_id=labels.get(NFD_OS_ID, ""),
        os_version=labels.get(NFD_OS_VERSION, ""),
        kernel=labels.get(NFD_KERNEL, ""),
        driver=node.driver or "",
        driver_host=node.deploy.get("driver") == "pre-installed",
        mig_strategy=(node.mig_strategy or "single") if mig_on else "none",
        mig_config=mig_config if mig_on else "",
        sharing=sharing if sharing in ("time-slicing", "mps") and replicas > 1 else "none",
        replicas=replicas if sharing in ("time-slicing", "mps") else 1,
    )


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:40].strip("-") or "gpu"


def _name(key: PoolKey) -> str:
    # A custom MIG config rendered by gpuspec is called custom-<pool>: keep that pool name so the
    # drafted spec renders the config name the nodes already carry.
    if key.mig_config and key.mig_config.startswith("custom-"):
        rest = key.mig_config[len("custom-"):]
        if re.match(DNS_LABEL_PATTERN, rest):
            return rest
    name = _slug(key.product)
    if key.mig_strategy != "none":
        name += "-mig"
    if key.sharing != "none":
        name += "-shared"
    return name


def _candidates(labels: dict[str, str]) -> list[tuple[str, str]]:
    out = []
    for key, value in labels.items():
        if key in _EXCLUDED_KEYS or key.startswith(_EXCLUDED_PREFIXES):
            continue
        if _LABEL_KEY.match(key) and _LABEL_VALUE.match(value) and value:
            out.append((key, value))
    return out


def _selector(pool: DraftPool, all_nodes: Sequence[NodeFacts]) -> tuple[str, str] | None:
    members = {n.name for n in pool.nodes}
    shared = set(_candidates(pool.nodes[0].labels))
    for node in pool.nodes[1:]:
        shared &= set(_candidates(node.labels))
    exact = [
        (k, v) for k, v in shared
        if {n.name for n in all_nodes if n.labels.get(k) == v} == members
    ]
    if not exact:
        return None

    def rank(item: tuple[str, str]) -> tuple[int, str]:
        key = item[0]
        if key in _PREFERRED_KEYS:
            return (0, f"{_PREFERRED_KEYS.index(key):02d}")
        if any(word in key for word in ("pool", "group", "gpu", "accelerator")):
            return (1, key)
        return (2, key) if key == _INSTANCE_TYPE else (3, key)

    return min(exact, key=rank)


#: Labels the provisioning layer sets on every node of a node group / node pool (stable across replacement).
PROVISIONING_LABELS = ("eks.amazonaws.com/nodegroup", "cloud.google.com/gke-nodepool",
                       "kubernetes.azure.com/agentpool", "karpenter.sh/nodepool",
                       "cluster.x-k8s.io/deployment-name")


def _majority_key(members: Sequence[NodeFacts]) -> PoolKey:
    healthy = [n for n in members if n.product_label is not None and n.advertised > 0] or list(members)
    keys = [pool_key(n) for n in healthy]
    fields = {name: majority([getattr(k, name) for k in keys]) for name in PoolKey.__dataclass_fields__}
    return PoolKey(**fields)


def _provisioning(node: NodeFacts, pool_label: str | None) -> tuple[str, str] | None:
    for key in ((pool_label,) if pool_label else PROVISIONING_LABELS):
        value = node.labels.get(key)
        if value:
            return key, value
    return None


def group_pools(nodes: Sequence[NodeFacts], pool_label: str | None = None) -> tuple[list[DraftPool], list[NodeFacts]]:
    """Group GPU nodes into pools by provisioning label, then GPU product; also return GPU nodes left out.

    A node's pool is its node group (the label its provisioning sets) and its GPU product; a node of the
    group without a product label (GFD did not run) joins the group's most common product.  How the members
    of a pool differ from its majority is for the audit checks to report, not a reason for another pool.
    Nodes without a provisioning label (and no GFD product) are left out.
    """
    groups: dict[tuple[str, str, str], list[NodeFacts]] = defaultdict(list)
    pending: list[NodeFacts] = []
    skipped: list[NodeFacts] = []
    for node in nodes:
        if not node.has_gpus:
            continue
        prov = _provisioning(node, pool_label)
        if node.product_label is None:
            (pending if prov else skipped).append(node)
            continue
        product = node.product.product_id if node.product else base_product(node.product_label)
        groups[(*(prov or ("", "")), product)].append(node)
    for node in pending:
        prov = _provisioning(node, pool_label)
        assert prov is not None
        candidates = sorted(((len(ms), k) for k, ms in groups.items() if k[:2] == prov), reverse=True)
        if candidates:
            groups[candidates[0][1]].append(node)
        else:
            skipped.append(node)
    per_group: dict[tuple[str, str], int] = defaultdict(int)
    for key in groups:
        per_group[key[:2]] += 1
    pools: list[DraftPool] = []
    used: set[str] = set()
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda n: n.name)
        pool_key_ = _majority_key(members)
        pool = DraftPool(pool_key_, members, product_known=any(n.product is not None for n in members))
        label_key, value, product = key
        if value:
            base = _slug(value) if per_group[key[:2]] == 1 else _slug(f"{value}-{product}")
            pool.selector = {label_key: value}
            if per_group[key[:2]] > 1:
                pool.selector["nvidia.com/gpu.product"] = members[0].product_label or product
        else:
            base = _name(pool_key_)
        name, index = base, 2
        while name in used:
            name, index = f"{base}-{index}", index + 1
        pool.name = name
        used.add(name)
        counts: dict[tuple[str, str, str], int] = defaultdict(int)
        for node in members:
            for taint in node.taints:
                counts[taint] += 1
        pool.taints = sorted(t for t, n in counts.items() if n * 2 > len(members)
                             and not t[0].startswith("node.kubernetes.io/")
                             and t[2] in ("NoSchedule", "PreferNoSchedule", "NoExecute")
                             and _LABEL_KEY.match(t[0]) and _LABEL_VALUE.match(t[1]))
        pools.append(pool)
    for pool in pools:
        if pool.selector:
            continue
        found = _selector(pool, nodes)
        if found:
            pool.selector = {found[0]: found[1]}
        else:
            pool.selector = {POOL_LABEL: pool.name}
            pool.selector_proposed = True
    return pools, skipped


# ---------------------------------------------------------------------------------------------- YAML


_OS_IMAGES = (("ubuntu", "ubuntu", r"([0-9]{2}\.[0-9]{2})"),
              ("red hat enterprise linux coreos", "rhcos", r"([0-9]+\.[0-9]+)"),
              ("red hat enterprise linux", "rhel", r"([0-9]+\.[0-9]+)"), ("rocky", "rocky", r"([0-9]+\.[0-9]+)"),
              ("amazon linux", "amazonlinux", r"([0-9]{4}|\b2\b)"), ("sles", "sles", r"([0-9]+(?:\.[0-9]+)?)"),
              ("suse", "sles", r"([0-9]+(?:\.[0-9]+)?)"), ("container-optimized os", "cos", r"([0-9]+)"),
              ("azure linux", "azurelinux", r"([0-9]+\.[0-9]+)"))


def os_from_image(image: str) -> tuple[str, str] | None:
    """Distribution and version from a node's `status.nodeInfo.osImage` (e.g. "Ubuntu 22.04.5 LTS")."""
    lower = image.lower()
    for marker, distribution, version in _OS_IMAGES:
        if marker in lower:
            match = re.search(version, image[lower.index(marker) + len(marker):])
            if match:
                return distribution, match.group(1)
    return None


def _distribution(nodes: Sequence[Node]) -> tuple[str, str] | None:
    """The Kubernetes distribution and the evidence, from provider IDs, labels and kubelet versions."""
    for node in nodes:
        labels, provider = node.labels, node.spec.provider_id
        kubelet = node.status.node_info.kubelet_version.lower()
        if any(k.startswith("node.openshift.io/") for k in labels) or "rhcos" in node.status.node_info.os_image.lower():
            return "openshift", f"node {node.name}: OpenShift labels / RHCOS"
        if provider.startswith("aws://") and ("eks.amazonaws.com/nodegroup" in labels or "-eks-" in kubelet
                                              or "eks.amazonaws.com/compute-type" in labels):
            return "eks", f"node {node.name}: providerID aws://, EKS labels"
        if provider.startswith("gce://") and ("cloud.google.com/gke-nodepool" in labels or "-gke." in kubelet):
            return "gke", f"node {node.name}: providerID gce://, GKE labels"
        if provider.startswith("azure://") and "kubernetes.azure.com/agentpool" in labels:
            return "aks", f"node {node.name}: providerID azure://, AKS labels"
        for marker, name in (("rke2", "rke2"), ("k3s", "k3s"), ("-eks-", "eks"), ("-gke.", "gke")):
            if marker in kubelet:
                return name, f"node {node.name}: kubeletVersion {node.status.node_info.kubelet_version}"
    return None


def _kube_facts(nodes: Sequence[Node]) -> tuple[str | None, tuple[str, str] | None, str]:
    versions = [n.status.node_info.kubelet_version for n in nodes if n.status.node_info.kubelet_version]
    runtimes = [n.status.node_info.container_runtime_version for n in nodes]
    kube = None
    if versions:
        match = re.match(r"^v?(1\.[0-9]{1,2})\.", majority(versions))
        kube = match.group(1) if match else None
    runtime = "cri-o" if any(r.startswith("cri-o://") for r in runtimes) else "containerd"
    return kube, _distribution(nodes), runtime


def _pool_map(pool: DraftPool, nodes: dict[str, Node], state: RunningState, keep_strategy: bool) -> CommentedMap:
    key = pool.key
    names = [n.name for n in pool.nodes if n.name in nodes]
    selector = CommentedMap(pool.selector)
    if pool.selector_proposed:
        selector.yaml_add_eol_comment(
            f"TODO: no existing label selects exactly these nodes; apply it: kubectl label node "
            f"{' '.join(n.name for n in pool.nodes)} {POOL_LABEL}={pool.name}", POOL_LABEL)
    else:
        for label in pool.selector:
            from_cluster(selector, label, "the node group's provisioning label" if label in PROVISIONING_LABELS
                  else "a label these nodes share")
    gpu = cmap(("product", key.product), ("count", key.count))
    from_cluster(gpu, "count", "GFD labels nvidia.com/gpu.product, nvidia.com/gpu.count")
    if not pool.product_known:
        todo(gpu, "product", "TODO: GFD product string not in gpuspec's map; write the support-matrix product id")
    if key.mig_strategy == "single":
        todo(gpu, "count", "TODO: with MIG strategy single GFD reports MIG devices; write physical GPUs per node")
    images = [os_from_image(nodes[n].status.node_info.os_image) for n in names]
    image = majority([i for i in images if i]) if any(images) else None
    kernels = [nodes[n].status.node_info.kernel_version for n in names if nodes[n].status.node_info.kernel_version]
    if image:
        os_map = cmap(("distribution", image[0]), ("version", image[1]))
        from_cluster(os_map, "version", "status.nodeInfo.osImage")
    else:
        os_map = cmap(("distribution", OS_IDS.get(key.os_id, key.os_id or "ubuntu")),
                      ("version", key.os_version or "22.04"))
        if key.os_id not in OS_IDS:
            todo(os_map, "distribution", f"TODO: NFD reported OS id {key.os_id or '<none>'!r}; set a supported one")
        if not key.os_version:
            todo(os_map, "version", "TODO: the export reports no OS version")
    kernel = majority(kernels) if kernels else key.kernel
    if kernel:
        os_map["kernel"] = kernel
        from_cluster(os_map, "kernel", "status.nodeInfo.kernelVersion" if kernels else "NFD kernel label")
    driver = cmap(("source", "host" if key.driver_host else "operator"))
    version = key.driver if _DRIVER_VERSION.match(key.driver) else None
    origin = "node labels nvidia.com/cuda.driver-version.*"
    if version is None and state.driver_version is not None and not key.driver_host:
        version, origin = state.driver_version.value, state.driver_version.origin
    if version:
        driver["branch"] = version.split(".", 1)[0]
        driver["version"] = version
        from_cluster(driver, "version", origin)
    else:
        todo(driver, "source", "TODO: review: the export reports no driver version; pin branch/version")
    if state.kernel_module_type is not None and not key.driver_host:
        driver["kernelModuleType"] = state.kernel_module_type.value
        from_cluster(driver, "kernelModuleType", state.kernel_module_type.origin)
    out = cmap(("name", pool.name), ("nodeSelector", selector), ("nodes", len(pool.nodes)), ("gpu", gpu),
               ("os", os_map), ("driver", driver))
    if key.mig_strategy != "none":
        out["mig"] = mig_map(pool)
    elif keep_strategy:
        running = majority([n.mig_strategy or "" for n in pool.nodes])
        origin = "node label nvidia.com/mig.strategy"
        if not running and state.mig_strategy is not None:
            running, origin = state.mig_strategy.value, state.mig_strategy.origin
        if running in ("single", "mixed") and majority([n.mig_config or "" for n in pool.nodes]) == MIG_DISABLED:
            # MIG-capable GPUs with MIG off under a single/mixed strategy: keep the strategy the operator runs
            mig = cmap(("strategy", running), ("layout", MIG_DISABLED))
            from_cluster(mig, "strategy", origin)
            from_cluster(mig, "layout", "node label nvidia.com/mig.config")
            out["mig"] = mig
    if key.sharing != "none":
        sharing = cmap(("mode", key.sharing), ("replicas", key.replicas),
                       ("justification", "TODO: why sharing GPUs without memory or fault isolation is "
                                         "acceptable on this pool"))
        config = majority([n.labels.get(DEVICE_PLUGIN_CONFIG, "") for n in pool.nodes])
        if config and config != pool.name and re.match(_LABEL_VALUE, config):
            sharing["configName"] = config
            from_cluster(sharing, "configName", f"node label {DEVICE_PLUGIN_CONFIG} (kept: a new name would relabel "
                                                "the nodes and restart their device plugin)")
        out["sharing"] = sharing
    if pool.taints:
        taints = CommentedSeq()
        for t_key, t_value, effect in pool.taints:
            taints.append(cmap(("key", t_key), ("value", t_value), ("effect", effect)))
        out["taints"] = taints
        out.yaml_add_eol_comment("from the cluster: taints most of the pool's nodes carry", "taints")
    return out


def draft_cluster(name: str, nodes: Sequence[Node], facts: Sequence[NodeFacts], operator_version: str | None,
                  gitops_tool: str = "argocd", state: RunningState | None = None,
                  pool_label: str | None = None, mirrors: Sequence[Any] = ()) -> tuple[CommentedMap, list[str]]:
    """A commented cluster spec for ``nodes`` as they run, and notes for the user (nodes left out, open TODOs).

    ``operator_version`` is a release the user chose (--operator-version); otherwise the release ``state``
    read from the Helm release or the ClusterPolicy; otherwise a TODO. ``mirrors`` are the fleet's
    (fleet.yaml ``mirrors``): the one whose registries the cluster's image repositories follow is named.
    """
    state = state or RunningState()
    if not re.match(DNS_LABEL_PATTERN, name):
        raise GpuspecError(f"cluster name {name!r} is not a DNS-1123 label (lowercase letters, digits, -)")
    pools, skipped = group_pools(facts, pool_label)
    if not pools:
        raise GpuspecError("the inventory has no node with NVIDIA GPUs and GPU Feature Discovery labels; "
                           "nothing to draft", hint="is the GPU Operator (GFD) running on the cluster?")
    by_name = {n.name: n for n in nodes}
    kube, distribution, runtime = _kube_facts(nodes)
    doc = CommentedMap()
    doc["apiVersion"] = API_VERSION
    doc["kind"] = "Cluster"
    doc["metadata"] = cmap(("name", name))
    kubernetes = cmap(("version", kube or TODO), ("distribution", distribution[0] if distribution else "upstream"),
                      ("runtime", runtime))
    if kube is None:
        todo(kubernetes, "version", "TODO: review: the inventory reports no kubelet version")
    else:
        from_cluster(kubernetes, "version", "status.nodeInfo.kubeletVersion")
    if distribution:
        from_cluster(kubernetes, "distribution", distribution[1])
    else:
        todo(kubernetes, "distribution", "TODO: review: no provider ID or label names the distribution")
    from_cluster(kubernetes, "runtime", "status.nodeInfo.containerRuntimeVersion")
    doc["kubernetes"] = kubernetes
    namespace = state.namespace.value if state.namespace else "gpu-operator"
    if operator_version is not None:
        operator = cmap(("version", operator_version), ("namespace", namespace))
        operator.yaml_add_eol_comment("chosen with --operator-version", "version")
    elif state.operator_version is not None:
        operator = cmap(("version", state.operator_version.value), ("namespace", namespace))
        from_cluster(operator, "version", state.operator_version.origin)
    else:
        operator = cmap(("version", TODO), ("namespace", namespace))
        todo(operator, "version", "TODO: review: no export names the running release; pass --helm-release or "
                                   "--clusterpolicies, or write the release the cluster runs")
    if state.namespace is None:
        todo(operator, "namespace", "TODO: review: the namespace the operator runs in")
    else:
        from_cluster(operator, "namespace", state.namespace.origin)
    operands = CommentedMap()
    if "dcgmExporter" in state.operands:
        dcgm = cmap(("enabled", state.operands["dcgmExporter"].value))
        from_cluster(dcgm, "enabled", state.operands["dcgmExporter"].origin)
        if state.service_monitor is not None:
            dcgm["serviceMonitor"] = state.service_monitor.value
            from_cluster(dcgm, "serviceMonitor", state.service_monitor.origin)
        operands["dcgmExporter"] = dcgm
    for key in ("nfd", "cdi", "gds", "gdrcopy", "rdma", "sandboxWorkloads"):
        if key in state.operands:
            operands[key] = state.operands[key].value
            from_cluster(operands, key, state.operands[key].origin)
    if operands:
        operator["operands"] = operands
    doc["operator"] = operator
    release = operator.get("version")
    prefixes = registry_prefixes(state.repositories, release if isinstance(release, str) else None)
    matched = matching_mirror(prefixes, mirrors, mirror_settings(state))
    if matched is not None:
        doc["mirror"] = matched
        doc.yaml_add_eol_comment(f"from the cluster: its image repositories follow fleet mirror {matched}", "mirror")
    elif state.repositories or state.pull_secrets:
        registries = sorted({r.split("/", 1)[0] for r in state.repositories.values()})
        rewrite = ", ".join(f"{host}: {prefix}" for host, prefix in sorted(prefixes.items()))
        doc.yaml_set_comment_before_after_key(
            "operator", after=f"TODO: review: the cluster pulls images from {', '.join(registries) or 'nvcr.io'}"
            f" (pull secrets: {', '.join(state.pull_secrets) or 'none'}"
            + (f"; registries {rewrite}" if rewrite else "") + "); declare that mirror in fleet.yaml "
            "mirrors: (with its chart repository) and name it here with `mirror: <name>`", after_indent=0)
    gitops = cmap(("tool", gitops_tool))
    todo(gitops, "tool", "TODO: review: argocd or flux, with their settings")
    doc["gitops"] = gitops
    doc["rollout"] = _rollout_map(state, pools)
    # MIG off under a single/mixed strategy keeps that strategy, unless a MIG pool sets the cluster's anyway
    keep = all(p.key.mig_strategy == "none" for p in pools)
    seq = CommentedSeq(_pool_map(p, by_name, state, keep) for p in pools)
    canary = doc["rollout"].get("canaryPool")
    for pool_map in seq:
        if canary and pool_map["name"] != canary:
            pool_map["wave"] = 2
            pool_map.yaml_add_eol_comment("after the canary node group (wave 1)", "wave")
    for index, pool in enumerate(pools):
        names = ", ".join(n.name for n in pool.nodes[:6])
        more = f" and {len(pool.nodes) - 6} more" if len(pool.nodes) > 6 else ""
        seq.yaml_set_comment_before_after_key(index, before=f"{len(pool.nodes)} node(s): {names}{more}", indent=2)
    doc["pools"] = seq
    kept = config_maps(state, any("sharing" in p for p in seq), any("custom" in p.get("mig", {}) for p in seq))
    if kept:
        operator["configMaps"] = kept
    read = ", ".join(["node inventory", *state.sources])
    doc.yaml_set_start_comment(
        f"Drafted by `gpuspec import` from cluster {name} as it runs ({read}): {len(pools)} pool(s).\n"
        "Review every line marked TODO, then run `gpuspec validate`.")
    notes = []
    if skipped:
        notes.append(f"{len(skipped)} GPU node(s) without GPU Feature Discovery labels or a node group label "
                     "were left out: " + ", ".join(n.name for n in skipped))
        doc.yaml_set_comment_before_after_key(
            "pools", before="Left out (GPU nodes without GFD labels): " + ", ".join(n.name for n in skipped))
    proposed = [p.name for p in pools if p.selector_proposed]
    if proposed:
        notes.append(f"pools {', '.join(proposed)} need the label {POOL_LABEL} applied to their nodes "
                     "(see the comments in the file)")
    problems = validation_problems(doc)
    if problems:
        notes.append("the draft does not validate yet: " + "; ".join(problems))
    return doc, notes


def _rollout_map(state: RunningState, pools: Sequence[DraftPool]) -> CommentedMap:
    rollout = CommentedMap()
    canary = [p.name for p in pools if "canary" in p.name]
    if len(canary) == 1 and len(pools) > 1:
        rollout["canaryPool"] = canary[0]
        from_cluster(rollout, "canaryPool", "a node group named canary")
    defaults = {"autoUpgrade": True, "maxParallelUpgrades": 1, "maxUnavailable": "25%"}
    for key, default in defaults.items():
        read = state.upgrade.get(key)
        rollout[key] = read.value if read else default
        if read:
            from_cluster(rollout, key, read.origin)
        else:
            todo(rollout, key, "TODO: review: not in the exports (chart default)")
    if state.drain:
        drain = CommentedMap()
        for key, read in state.drain.items():
            drain[key] = read.value
            from_cluster(drain, key, read.origin)
        rollout["drain"] = drain
    return rollout


def validation_problems(doc: CommentedMap) -> list[str]:
    """Why the drafted document would not pass the Cluster schema (empty when it does)."""
    try:
        Cluster.model_validate(_plain(doc))
    except ValidationError as exc:
        return [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]]
    return []


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def dump_yaml(doc: CommentedMap) -> str:
    """The document as round-trip YAML text (comments kept, block style, two-space indent)."""
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    stream = io.StringIO()
    yaml.dump(doc, stream)
    return stream.getvalue()
