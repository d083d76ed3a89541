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
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from gpuspec.audit.facts import (
    GPU_REPLICAS,
    MIG_DISABLED,
    MIG_RESOURCE_PREFIX,
    NFD_KERNEL,
    NFD_OS_ID,
    NFD_OS_VERSION,
    SHARED_SUFFIX,
    SHARING_STRATEGY,
    NodeFacts,
)
from gpuspec.audit.inventory import Node
from gpuspec.audit.products import base_product
from gpuspec.errors import GpuspecError
from gpuspec.matrix.query import mig_layout, mig_profiles
from gpuspec.spec.models import API_VERSION, DNS_LABEL_PATTERN, Cluster

#: The label gpuspec proposes when no existing label selects exactly one pool.
POOL_LABEL = "gpuspec.io/pool"
TODO = "TODO: review"

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


@dataclass(frozen=True, order=True)
class PoolKey:
    """What makes nodes one pool: identical GPUs, OS, kernel, driver, MIG and sharing."""

    product: str
    count: int
    os_id: str
    os_version: str
    kernel: str
    driver: str
    driver_host: bool
    mig_strategy: str
    mig_config: str
    sharing: str
    replicas: int


@dataclass
class DraftPool:
    """A proposed pool: its nodes, name and selector."""

    key: PoolKey
    nodes: list[NodeFacts]
    name: str = ""
    selector: dict[str, str] = field(default_factory=dict)
    selector_proposed: bool = False
    product_known: bool = True
    taints: list[tuple[str, str, str]] = field(default_factory=list)


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def pool_key(node: NodeFacts) -> PoolKey:
    """The grouping key of a GPU node."""
    labels = node.labels
    product = node.product.product_id if node.product else base_product(node.product_label or "unknown")
    mig_config = node.mig_config or MIG_DISABLED
    mig_on = mig_config != MIG_DISABLED
    sharing = labels.get(SHARING_STRATEGY, "none")
    replicas = _int(labels.get(GPU_REPLICAS), 1)
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


def group_pools(nodes: Sequence[NodeFacts]) -> tuple[list[DraftPool], list[NodeFacts]]:
    """Group GPU nodes into proposed pools; also return GPU nodes that cannot be drafted (no GFD labels)."""
    groups: dict[PoolKey, list[NodeFacts]] = defaultdict(list)
    skipped: list[NodeFacts] = []
    for node in nodes:
        if not node.has_gpus:
            continue
        if node.product_label is None or not (node.gpu_count or node.capacity.get("nvidia.com/gpu")):
            skipped.append(node)
            continue
        groups[pool_key(node)].append(node)
    pools: list[DraftPool] = []
    used: set[str] = set()
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda n: n.name)
        pool = DraftPool(key, members, product_known=members[0].product is not None)
        base = _name(key)
        name, index = base, 2
        while name in used:
            name, index = f"{base}-{index}", index + 1
        pool.name = name
        used.add(name)
        common = set(members[0].taints)
        for node in members[1:]:
            common &= node.taints
        pool.taints = sorted(t for t in common if not t[0].startswith("node.kubernetes.io/")
                             and t[2] in ("NoSchedule", "PreferNoSchedule", "NoExecute")
                             and _LABEL_KEY.match(t[0]) and _LABEL_VALUE.match(t[1]))
        pools.append(pool)
    for pool in pools:
        found = _selector(pool, nodes)
        if found:
            pool.selector = {found[0]: found[1]}
        else:
            pool.selector = {POOL_LABEL: pool.name}
            pool.selector_proposed = True
    return pools, skipped


# ---------------------------------------------------------------------------------------------- YAML


def _map(*items: tuple[str, Any]) -> CommentedMap:
    cm = CommentedMap()
    for key, value in items:
        cm[key] = value
    return cm


def _todo(cm: CommentedMap, key: str, text: str = TODO) -> None:
    cm.yaml_add_eol_comment(text if text.startswith("TODO") else f"{TODO}: {text}", key)


def _kube_facts(nodes: Sequence[Node]) -> tuple[str | None, str, str]:
    versions = [n.status.node_info.kubelet_version for n in nodes if n.status.node_info.kubelet_version]
    runtimes = [n.status.node_info.container_runtime_version for n in nodes]
    kube = None
    if versions:
        match = re.match(r"^v?(1\.[0-9]{1,2})\.", min(versions))
        kube = match.group(1) if match else None
    sample = " ".join(versions).lower()
    distribution = "upstream"
    for marker, name in (("rke2", "rke2"), ("k3s", "k3s"), ("-eks-", "eks"), ("-gke.", "gke"), ("k0s", "k0s")):
        if marker in sample:
            distribution = name
            break
    runtime = "cri-o" if any(r.startswith("cri-o://") for r in runtimes) else "containerd"
    return kube, distribution, runtime


def _pool_map(pool: DraftPool) -> CommentedMap:
    key = pool.key
    selector = CommentedMap(pool.selector)
    if pool.selector_proposed:
        selector.yaml_add_eol_comment(
            f"TODO: no existing label selects exactly these nodes; apply it: kubectl label node "
            f"{' '.join(n.name for n in pool.nodes)} {POOL_LABEL}={pool.name}", POOL_LABEL)
    gpu = _map(("product", key.product), ("count", key.count))
    if not pool.product_known:
        _todo(gpu, "product", "TODO: GFD product string not in gpuspec's map; write the support-matrix product id")
    if key.mig_strategy == "single":
        _todo(gpu, "count", "TODO: with MIG strategy single GFD reports MIG devices; write physical GPUs per node")
    os_map = _map(("distribution", OS_IDS.get(key.os_id, key.os_id or "ubuntu")),
                  ("version", key.os_version or "22.04"))
    if key.os_id not in OS_IDS:
        _todo(os_map, "distribution", f"TODO: NFD reported OS id {key.os_id or '<none>'!r}; set a supported one")
    if not key.os_version:
        _todo(os_map, "version", "TODO: NFD reported no OS version")
    if key.kernel:
        os_map["kernel"] = key.kernel
    driver = _map(("source", "host" if key.driver_host else "operator"))
    if _DRIVER_VERSION.match(key.driver):
        driver["branch"] = key.driver.split(".", 1)[0]
        driver["version"] = key.driver
        _todo(driver, "version", "TODO: review: the version the nodes run today; pin the one you want")
    else:
        _todo(driver, "source", "TODO: review: GFD reported no driver version; pin branch/version")
    out = _map(("name", pool.name), ("nodeSelector", selector), ("nodes", len(pool.nodes)), ("gpu", gpu),
               ("os", os_map), ("driver", driver))
    if key.mig_strategy != "none":
        out["mig"] = _mig_map(pool)
    if key.sharing != "none":
        out["sharing"] = _map(("mode", key.sharing), ("replicas", key.replicas),
                              ("justification", "TODO: why sharing GPUs without memory or fault isolation is "
                                                "acceptable on this pool"))
    if pool.taints:
        taints = CommentedSeq()
        for t_key, t_value, effect in pool.taints:
            taints.append(_map(("key", t_key), ("value", t_value), ("effect", effect)))
        out["taints"] = taints
    return out


def infer_custom_layout(pool: DraftPool) -> list[tuple[list[int], str, int]] | None:
    """A custom MIG layout (devices, profile, instances per GPU) that explains the MIG resources a pool advertises.

    Node labels give only totals per profile, not which GPU holds what, so
    this assumes the common shape: each GPU carries one profile as many times
    as it fits (the support matrix's per-profile limit), GPUs in index order.
    None when the totals do not fit that shape.
    """
    key = pool.key
    totals = {name[len(MIG_RESOURCE_PREFIX):]: count for name, count in pool.nodes[0].allocatable.items()
              if name.startswith(MIG_RESOURCE_PREFIX) and count > 0 and not name.endswith(SHARED_SUFFIX)}
    profiles = {p.name: p.max_instances for p in (mig_profiles(key.product) or [])}
    if not totals or key.mig_strategy != "mixed" or any(p not in profiles for p in totals):
        return None
    groups: list[tuple[list[int], str, int]] = []
    next_gpu = 0
    for profile, total in sorted(totals.items()):
        per_gpu = profiles[profile]
        if total % per_gpu:
            return None
        gpus = total // per_gpu
        groups.append((list(range(next_gpu, next_gpu + gpus)), profile, per_gpu))
        next_gpu += gpus
    return groups if next_gpu <= key.count else None


def _mig_map(pool: DraftPool) -> CommentedMap:
    key = pool.key
    mig = _map(("strategy", key.mig_strategy))
    if mig_layout(key.mig_config) is not None:
        mig["layout"] = key.mig_config
        _todo(mig, "layout", "TODO: review: the nvidia.com/mig.config the nodes use")
        return mig
    groups = infer_custom_layout(pool)
    if groups is None:
        mig["layout"] = key.mig_config
        _todo(mig, "layout", f"TODO: {key.mig_config!r} is not a named layout; write its custom: layout")
        return mig
    custom = CommentedSeq()
    for devices, profile, instances in groups:
        custom.append(_map(("devices", CommentedSeq(devices)), ("profiles", _map((profile, instances)))))
        custom[-1]["devices"].fa.set_flow_style()
    mig["custom"] = custom
    _todo(mig, "custom", f"TODO: review: inferred from the MIG resources of config {key.mig_config!r}; "
                         "which GPU holds which profile is not in the node labels")
    return mig


def draft_cluster(name: str, nodes: Sequence[Node], facts: Sequence[NodeFacts], operator_version: str,
                  gitops_tool: str = "argocd") -> tuple[CommentedMap, list[str]]:
    """A commented cluster spec for ``nodes`` and notes for the user (nodes skipped, drafts that need work)."""
    if not re.match(DNS_LABEL_PATTERN, name):
        raise GpuspecError(f"cluster name {name!r} is not a DNS-1123 label (lowercase letters, digits, -)")
    pools, skipped = group_pools(facts)
    if not pools:
        raise GpuspecError("the inventory has no node with NVIDIA GPUs and GPU Feature Discovery labels; "
                           "nothing to draft", hint="is the GPU Operator (GFD) running on the cluster?")
    kube, distribution, runtime = _kube_facts(nodes)
    doc = CommentedMap()
    doc["apiVersion"] = API_VERSION
    doc["kind"] = "Cluster"
    doc["metadata"] = _map(("name", name))
    kubernetes = _map(("version", kube or "1.33"), ("distribution", distribution), ("runtime", runtime))
    if kube is None:
        _todo(kubernetes, "version", "TODO: the inventory reports no kubelet version")
    _todo(kubernetes, "distribution", "guessed from the kubelet version")
    doc["kubernetes"] = kubernetes
    operator = _map(("version", operator_version), ("namespace", "gpu-operator"))
    _todo(operator, "version", "TODO: review: pin the release the cluster runs, or use channel: from fleet.yaml")
    doc["operator"] = operator
    gitops = _map(("tool", gitops_tool))
    _todo(gitops, "tool", "TODO: review: argocd or flux, with their settings")
    doc["gitops"] = gitops
    rollout = _map(("autoUpgrade", True), ("maxParallelUpgrades", 1), ("maxUnavailable", "25%"))
    _todo(rollout, "autoUpgrade", "TODO: review: canaryPool, waves and drain settings")
    doc["rollout"] = rollout
    seq = CommentedSeq(_pool_map(p) for p in pools)
    for index, pool in enumerate(pools):
        names = ", ".join(n.name for n in pool.nodes[:6])
        more = f" and {len(pool.nodes) - 6} more" if len(pool.nodes) > 6 else ""
        seq.yaml_set_comment_before_after_key(index, before=f"{len(pool.nodes)} node(s): {names}{more}", indent=2)
    doc["pools"] = seq
    doc.yaml_set_start_comment(
        f"Drafted by `gpuspec import` from a node inventory of cluster {name}: {len(pools)} pool(s).\n"
        "Review every line marked TODO, then run `gpuspec validate`.")
    notes = []
    if skipped:
        notes.append(f"{len(skipped)} GPU node(s) without GPU Feature Discovery labels were left out: "
                     + ", ".join(n.name for n in skipped))
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
