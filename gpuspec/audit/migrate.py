"""The node-by-node migration of hand-configured GPU nodes onto the spec (pure; prints nothing, runs nothing).

For every node of the cluster that is configured by hand today (a host-installed driver, hand-set labels, a
device plugin outside the operator, or a node of a `managed: false` pool), the exact `kubectl` commands that
move it onto its pool: cordon, drain, record and remove the hand-set labels, remove the host driver where the
operator takes over, apply the pool labels, wait for the operator's validator, run a test pod, uncordon; and a
one-step rollback.  Nodes go in batches no larger than the rollout's ``maxUnavailable``.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuspec.audit.facts import DEPLOY_PREFIX, NodeFacts
from gpuspec.audit.host import hand_set_labels
from gpuspec.model.models import Cluster, DrainSpec, DriverSource, Pool

#: The operator's validator pods (DaemonSet nvidia-operator-validator).
VALIDATOR_SELECTOR = "app=nvidia-operator-validator"
#: The label that switches every operand off on a node (hybrid mode).
DEPLOY_OPERANDS = DEPLOY_PREFIX + "operands"
DEPLOY_DRIVER = DEPLOY_PREFIX + "driver"
DEPLOY_DEVICE_PLUGIN = DEPLOY_PREFIX + "device-plugin"
#: The value the operator's driver container sets on ``nvidia.com/gpu.deploy.driver`` when it finds a driver on
#: the host, disabling itself there (GPU Operator release notes: "NVIDIA driver container will auto-disable itself
#: on the node with pre-installed drivers by applying label nvidia.com/gpu.deploy.driver=pre-installed"); the
#: validator (cmd/nvidia-validator, validateHostDriver) likewise prefers a working ``nvidia-smi`` on the host.  The
#: label stays after the host driver is gone, so the migration sets it back to ``true``.
PREINSTALLED = "pre-installed"

#: Host commands that remove a package-installed NVIDIA driver, per OS distribution of the spec (and version where
#: the package manager differs: Amazon Linux 2 has yum, Amazon Linux 2023 dnf).
HOST_DRIVER_REMOVAL: dict[str, tuple[str, ...]] = {
    "ubuntu": ("sudo apt-get purge -y '^nvidia-.*' '^libnvidia-.*'", "sudo apt-get autoremove -y"),
    "rhel": ("sudo dnf remove -y 'nvidia-*' 'kmod-nvidia*' 'libnvidia-*'",),
    "rocky": ("sudo dnf remove -y 'nvidia-*' 'kmod-nvidia*' 'libnvidia-*'",),
    "amazonlinux": ("sudo dnf remove -y 'nvidia-*' 'kmod-nvidia*' 'libnvidia-*'",),
    "amazonlinux 2": ("sudo yum remove -y 'nvidia-*' 'kmod-nvidia*' 'libnvidia-*'",),
    "sles": ("sudo zypper --non-interactive remove 'nvidia-*'",),
    "azurelinux": ("sudo tdnf remove -y 'nvidia-*' 'cuda-*'",),
}
#: Distributions whose GPU nodes come from a cloud node group image: a package removal lasts until the node is
#: replaced, so the node group's image must change (the accelerated/GPU image carries the driver).
NODE_GROUP_IMAGES: dict[str, str] = {
    "eks": "set the node group's AMI type to one without the NVIDIA driver (e.g. AL2023_x86_64_STANDARD, not the "
           "*_NVIDIA accelerated AMI) and replace the node, instead of removing packages",
    "gke": "GKE installs its own driver unless the node pool has gpu-driver-version=disabled: recreate the node "
           "pool with driver installation disabled and replace the node",
    "aks": "add a node pool that skips AKS's driver install (az aks nodepool add --gpu-driver none, Azure CLI "
           "2.72.2 or later; before: --skip-gpu-driver-install); existing nodes keep theirs, so move or scale the "
           "pool to zero and back",
}


@dataclass(frozen=True)
class Step:
    """One step of a node's procedure: a title and its commands (``host``: run on the node, not with kubectl)."""

    title: str
    commands: tuple[str, ...]
    host: bool = False


@dataclass(frozen=True)
class NodeMigration:
    """The procedure of one node: why it is migrated, its steps and its one-step rollback."""

    node: str
    pool: str
    reasons: tuple[str, ...]
    steps: tuple[Step, ...]
    rollback: str


@dataclass
class MigrationPlan:
    """Every node to migrate, in batches, and the batch size with how it was derived."""

    cluster: str
    batch_size: int
    batch_rule: str
    batches: list[list[NodeMigration]] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)

    @property
    def nodes(self) -> int:
        """How many nodes the plan migrates."""
        return sum(len(b) for b in self.batches)


def scaled_max_unavailable(value: int | str, total: int) -> int:
    """``maxUnavailable`` as the upgrade controller scales it over ``total`` nodes (a percentage rounds up), at
    least 1."""
    if isinstance(value, int):
        return max(1, value)
    percent = int(value.rstrip("%"))
    return max(1, math.ceil(percent * total / 100))


def _q(text: str) -> str:
    return shlex.quote(text)


def migration_reasons(node: NodeFacts, cluster: Cluster, pool: Pool) -> list[str]:
    """Why ``node`` is configured by hand today (empty: the operator and the spec already own it)."""
    reasons: list[str] = []
    if not pool.managed:
        reasons.append("its pool is managed: false (hybrid mode)")
    deploy_driver = node.labels.get(DEPLOY_DRIVER)
    operator_driver = pool.managed and pool.driver.source is not DriverSource.HOST
    if deploy_driver == PREINSTALLED and operator_driver:
        reasons.append(f"host-installed driver ({DEPLOY_DRIVER}={PREINSTALLED})")
    elif deploy_driver is None and operator_driver:
        reasons.append(f"no operator driver labels ({DEPLOY_DRIVER} absent)")
    if node.advertised > 0 and DEPLOY_DEVICE_PLUGIN not in node.labels and pool.managed:
        reasons.append(f"advertises GPUs without the operator's device plugin ({DEPLOY_DEVICE_PLUGIN} absent)")
    hand = hand_set_labels(node, cluster)
    if hand:
        reasons.append("hand-set labels: " + ", ".join(f"{k}={v}" for k, v in hand.items()))
    return reasons


def drain_command(node: str, drain: DrainSpec) -> str:
    """The `kubectl drain` of ``node`` with the rollout's drain settings."""
    parts = ["kubectl", "drain", node, "--ignore-daemonsets", f"--timeout={drain.timeout_seconds}s"]
    if drain.delete_empty_dir:
        parts.append("--delete-emptydir-data")
    if drain.force:
        parts.append("--force")
    if drain.pod_selector:
        parts.append(f"--pod-selector={_q(drain.pod_selector)}")
    return " ".join(parts)


def _test_pod(node: str, pool: Pool, resource: str, image: str) -> tuple[str, ...]:
    name = f"gpuspec-migrate-{node}"[:63].rstrip("-.")
    spec = {
        "spec": {
            "nodeName": node,  # a cordoned node takes no scheduled pod; nodeName bypasses the scheduler
            "restartPolicy": "Never",
            "tolerations": [{"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
                            for t in pool.taints],
            "containers": [{"name": "gpu-test", "image": image, "resources": {"limits": {resource: 1}}}],
        }
    }
    overrides = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return (
        f"kubectl run {name} --image={_q(image)} --restart=Never --overrides={_q(overrides)}",
        f"kubectl wait pod/{name} --for=jsonpath='{{.status.phase}}'=Succeeded --timeout=300s",
        f"kubectl logs pod/{name}",
        f"kubectl delete pod/{name}",
    )


def node_migration(node: NodeFacts, cluster: Cluster, pool: Pool, reasons: Sequence[str], resource: str,
                   image: str, drain: DrainSpec) -> NodeMigration:
    """The steps and the rollback of one node."""
    name = node.name
    hand = hand_set_labels(node, cluster)
    record = f"gpuspec-migrate-{name}"
    wanted = dict(pool.node_selector)
    if not pool.managed:
        wanted[DEPLOY_OPERANDS] = "false"
    added = {k: v for k, v in sorted(wanted.items()) if node.labels.get(k) != v}
    missing_taints = [t for t in pool.taints if (t.key, t.value, t.effect) not in node.taints]
    takes_over = pool.managed and pool.driver.source is not DriverSource.HOST
    host_driver = takes_over and node.labels.get(DEPLOY_DRIVER) in (PREINSTALLED, None)
    steps: list[Step] = [
        Step("cordon", (f"kubectl cordon {name}",)),
        Step("drain", (drain_command(name, drain),)),
        Step("record labels and taints", (
            f"kubectl get node {name} -o jsonpath='{{.metadata.labels}}' > {record}.labels.json",
            f"kubectl get node {name} -o jsonpath='{{.spec.taints}}' > {record}.taints.json",
        )),
    ]
    if hand:
        steps.append(Step("remove hand-set labels",
                          ("kubectl label node " + name + " " + " ".join(f"{k}-" for k in hand),)))
    if host_driver:
        removal = (HOST_DRIVER_REMOVAL.get(f"{pool.os.distribution} {pool.os.version}")
                   or HOST_DRIVER_REMOVAL.get(pool.os.distribution))
        node_image = NODE_GROUP_IMAGES.get(cluster.kubernetes.distribution.value)
        commands = (
            (f"# {cluster.kubernetes.distribution.value}: {node_image}",) if node_image else
            (*removal, "sudo reboot") if removal else
            (f"# {pool.os.distribution}: no host package step; reimage the node without the NVIDIA driver",)
        )
        steps.append(Step(f"remove the host driver (on the node, {pool.os.distribution} {pool.os.version}; "
                          "a runfile install: sudo nvidia-uninstall)", commands, host=True))
        steps.append(Step("let the operator install its driver", (
            f"kubectl wait node/{name} --for=condition=Ready --timeout=900s",
            f"kubectl label node {name} {DEPLOY_DRIVER}=true --overwrite",
        )))
    label_commands = []
    if added:
        label_commands.append(f"kubectl label node {name} "
                              + " ".join(f"{k}={_q(v)}" for k, v in added.items()) + " --overwrite")
    label_commands += [f"kubectl taint node {name} {t.key}={t.value}:{t.effect} --overwrite" for t in missing_taints]
    if label_commands:
        steps.append(Step("apply the pool's labels" + (" and taints" if missing_taints else ""),
                          tuple(label_commands)))
    namespace = cluster.operator.namespace
    if pool.managed:
        steps.append(Step("wait for the operator's validator", (
            f"kubectl -n {namespace} wait pod -l {VALIDATOR_SELECTOR} --field-selector spec.nodeName={name} "
            "--for=condition=Ready --timeout=1200s",
            f"kubectl wait node/{name} --for=jsonpath='{{.metadata.labels.nvidia\\.com/gpu\\.present}}'=true "
            "--timeout=300s",
        )))
    steps.append(Step(f"run a test pod that requests {resource}", _test_pod(name, pool, resource, image)))
    steps.append(Step("uncordon", (f"kubectl uncordon {name}",)))
    restore = [f"{k}={_q(v)}" for k, v in hand.items()] + [f"{k}-" for k in added if k not in node.labels]
    restore += [f"{k}={_q(node.labels[k])}" for k in added if k in node.labels]
    rollback = [f"kubectl cordon {name}"]
    if restore:
        rollback.append(f"kubectl label node {name} " + " ".join(restore) + " --overwrite")
    rollback += [f"kubectl taint node {name} {t.key}={t.value}:{t.effect}-" for t in missing_taints]
    if host_driver:
        rollback.append(f"kubectl label node {name} {DEPLOY_DRIVER}={node.labels.get(DEPLOY_DRIVER, '')}"
                        if DEPLOY_DRIVER in node.labels else f"kubectl label node {name} {DEPLOY_DRIVER}-")
    rollback.append(f"kubectl uncordon {name}")
    return NodeMigration(name, pool.name, tuple(reasons), tuple(steps), " && ".join(rollback))


def _pool_resource(pool: Pool) -> str:
    from gpuspec.audit.expect import expected_resources

    counts = expected_resources(pool).counts
    return sorted(counts)[0] if counts else "nvidia.com/gpu"


def migration_plan(cluster: Cluster, nodes: Sequence[NodeFacts], members: dict[str, list[Pool]],
                   image: str) -> MigrationPlan:
    """The batches of hand-configured nodes of ``cluster`` with their procedures; ``members`` maps a node to the
    pools whose nodeSelector matches it (a node of no pool is listed in ``unmatched``, not migrated)."""
    rollout = cluster.rollout
    drain = rollout.drain or DrainSpec()
    managed_total = sum(1 for n in nodes if members.get(n.name) and n.has_gpus)
    size = scaled_max_unavailable(rollout.max_unavailable, managed_total)
    rule = (f"maxUnavailable {rollout.max_unavailable} of {managed_total} GPU nodes"
            + (", rounded up" if isinstance(rollout.max_unavailable, str) else ""))
    canary = rollout.canary_pool
    todo: list[tuple[tuple[int, int, str, str], NodeMigration]] = []
    unmatched: list[str] = []
    for node in nodes:
        pools = members.get(node.name, [])
        if not pools:
            if node.has_gpus:
                unmatched.append(node.name)
            continue
        pool = pools[0]
        reasons = migration_reasons(node, cluster, pool)
        if not reasons:
            continue
        order = (0 if pool.name == canary else 1, pool.wave, pool.name, node.name)
        todo.append((order, node_migration(node, cluster, pool, reasons, _pool_resource(pool), image, drain)))
    ordered = [m for _, m in sorted(todo, key=lambda item: item[0])]
    batches = [ordered[i:i + size] for i in range(0, len(ordered), size)]
    return MigrationPlan(cluster.name, size, rule, batches, sorted(unmatched))


def _node_text(m: NodeMigration, markdown: bool) -> list[str]:
    lines: list[str] = []
    if markdown:
        lines += [f"#### Node `{m.node}` (pool `{m.pool}`)", "", "Why: " + "; ".join(m.reasons) + ".", ""]
        for number, step in enumerate(m.steps, start=1):
            lines.append(f"{number}. {step.title}" + (" — **host step, on the node itself**" if step.host else ""))
            lines += ["", "   ```sh", *(f"   {c}" for c in step.commands), "   ```", ""]
        lines += ["Rollback (one step; the recorded labels and taints restored):", "", "```sh", m.rollback, "```", ""]
        return lines
    lines += [f"  node {m.node} (pool {m.pool})", "    why: " + "; ".join(m.reasons)]
    for number, step in enumerate(m.steps, start=1):
        lines.append(f"    {number}. {step.title}" + (" [HOST STEP: run on the node]" if step.host else ""))
        lines += [f"       {c}" for c in step.commands]
    lines += ["    rollback:", f"       {m.rollback}", ""]
    return lines


def format_plan(plan: MigrationPlan, markdown: bool = False) -> str:
    """The plan as text (``markdown`` False) or as a Markdown section."""
    head = (f"{plan.nodes} node(s) of cluster {plan.cluster} to migrate, in batches of at most {plan.batch_size} "
            f"({plan.batch_rule}). gpuspec runs nothing: run each batch, check it, then the next.")
    lines = [f"## Node-by-node migration: cluster `{plan.cluster}`", "", head, ""] if markdown else [head, ""]
    if not plan.batches:
        lines.append("Every node of a pool is already configured by the operator and the spec: nothing to migrate.")
    for index, batch in enumerate(plan.batches, start=1):
        names = ", ".join(m.node for m in batch)
        lines += [f"### Batch {index}: {names}", ""] if markdown else [f"batch {index}: {names}"]
        for m in batch:
            lines += _node_text(m, markdown)
    if plan.unmatched:
        text = "GPU nodes matched by no pool (not migrated; add a pool first): " + ", ".join(plan.unmatched)
        lines += ["", text] if markdown else [text]
    return "\n".join(lines).rstrip() + "\n"
