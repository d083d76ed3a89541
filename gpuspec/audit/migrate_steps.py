"""The procedure of one hand-configured GPU node and its one-step rollback (pure; prints nothing, runs nothing).

Cordon, drain, record the labels and taints, remove the hand-set labels and the labels that switch an operand
off, remove the host driver where the operator takes over, apply the pool's labels (the MIG config too) and
taints, wait for the operator's validator, run a test pod, uncordon.  The rollback restores every label the
procedure touched as it was before (``--overwrite``: a label the procedure set, such as
``nvidia.com/gpu.deploy.driver=true``, is set back to its old value, or removed when the node had none) and removes
the taints it added.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from gpuspec.audit.facts import DEPLOY_PREFIX, MIG_CONFIG, NodeFacts
from gpuspec.audit.host import hand_set_labels
from gpuspec.audit.node_flags import mig_config_to_set, operands_switched_off
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.cluster_specs import DrainSpec
from gpuspec.model.pool_specs import DriverSource

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
    """The procedure of one node: why it is migrated, its steps, its one-step rollback, and what else audit says
    of it that the procedure leaves as it is (``notes``)."""

    node: str
    pool: str
    reasons: tuple[str, ...]
    steps: tuple[Step, ...]
    rollback: str
    notes: tuple[str, ...] = ()


def _q(text: str) -> str:
    return shlex.quote(text)


def takes_over_driver(node: NodeFacts, pool: Pool) -> bool:
    """True when the operator is to install the driver on ``node`` where the host's (or nobody's) is today."""
    takes_over = pool.managed and pool.driver.source is not DriverSource.HOST
    return takes_over and node.labels.get(DEPLOY_DRIVER) in (PREINSTALLED, None)


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
    off = operands_switched_off(node, cluster, pool)
    if off:
        reasons.append("operands switched off by label: " + ", ".join(f"{k}={v}" for k, v in off.items()))
    missing = [t for t in pool.taints if (t.key, t.value, t.effect) not in node.taints]
    if missing:
        reasons.append("lacks the pool's taint(s) " + ", ".join(f"{t.key}={t.value}:{t.effect}" for t in missing))
    want = mig_config_to_set(node, pool)
    if want is not None:
        reasons.append(f"{MIG_CONFIG}={node.mig_config or '<unset>'} instead of the pool's {want}")
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


def _host_driver_step(cluster: Cluster, pool: Pool) -> Step:
    removal = (HOST_DRIVER_REMOVAL.get(f"{pool.os.distribution} {pool.os.version}")
               or HOST_DRIVER_REMOVAL.get(pool.os.distribution))
    node_image = NODE_GROUP_IMAGES.get(cluster.kubernetes.distribution.value)
    commands = (
        (f"# {cluster.kubernetes.distribution.value}: {node_image}",) if node_image else
        (*removal, "sudo reboot") if removal else
        (f"# {pool.os.distribution}: no host package step; reimage the node without the NVIDIA driver",)
    )
    return Step(f"remove the host driver (on the node, {pool.os.distribution} {pool.os.version}; "
                "a runfile install: sudo nvidia-uninstall)", commands, host=True)


def restore_command(name: str, before: dict[str, str], changed: Sequence[str]) -> str | None:
    """The one ``kubectl label`` that sets every label of ``changed`` back to its value in ``before`` (removed when
    the node had none), or None when nothing changed."""
    parts = [f"{k}={_q(before[k])}" if k in before else f"{k}-" for k in dict.fromkeys(changed)]
    return f"kubectl label node {name} " + " ".join(parts) + " --overwrite" if parts else None


def node_migration(node: NodeFacts, cluster: Cluster, pool: Pool, reasons: Sequence[str], resource: str,
                   image: str, drain: DrainSpec, notes: Sequence[str] = ()) -> NodeMigration:
    """The steps and the rollback of one node."""
    name = node.name
    record = f"gpuspec-migrate-{name}"
    removed = [*hand_set_labels(node, cluster), *operands_switched_off(node, cluster, pool)]
    wanted = dict(pool.node_selector)
    if not pool.managed:
        wanted[DEPLOY_OPERANDS] = "false"
    mig = mig_config_to_set(node, pool)
    if mig is not None:
        wanted[MIG_CONFIG] = mig
    added = {k: v for k, v in sorted(wanted.items()) if node.labels.get(k) != v}
    missing_taints = [t for t in pool.taints if (t.key, t.value, t.effect) not in node.taints]
    host_driver = takes_over_driver(node, pool)
    changed: list[str] = [*removed]
    steps: list[Step] = [
        Step("cordon", (f"kubectl cordon {name}",)),
        Step("drain", (drain_command(name, drain),)),
        Step("record labels and taints", (
            f"kubectl get node {name} -o jsonpath='{{.metadata.labels}}' > {record}.labels.json",
            f"kubectl get node {name} -o jsonpath='{{.spec.taints}}' > {record}.taints.json",
        )),
    ]
    if removed:
        steps.append(Step("remove hand-set labels and operand switches",
                          ("kubectl label node " + name + " " + " ".join(f"{k}-" for k in removed),)))
    if host_driver:
        steps.append(_host_driver_step(cluster, pool))
        steps.append(Step("let the operator install its driver", (
            f"kubectl wait node/{name} --for=condition=Ready --timeout=900s",
            f"kubectl label node {name} {DEPLOY_DRIVER}=true --overwrite",
        )))
        changed.append(DEPLOY_DRIVER)
    label_commands = []
    if added:
        label_commands.append(f"kubectl label node {name} "
                              + " ".join(f"{k}={_q(v)}" for k, v in added.items()) + " --overwrite")
        changed += list(added)
    label_commands += [f"kubectl taint node {name} {t.key}={t.value}:{t.effect} --overwrite" for t in missing_taints]
    if label_commands:
        steps.append(Step("apply the pool's labels" + (" and taints" if missing_taints else ""),
                          tuple(label_commands)))
    namespace = cluster.operator.namespace
    if mig is not None and pool.managed:
        steps.append(Step(f"wait for MIG Manager to apply {mig}", (
            f"kubectl wait node/{name} --for=jsonpath='{{.metadata.labels.nvidia\\.com/mig\\.config\\.state}}'=success "
            "--timeout=1200s",)))
    if pool.managed:
        steps.append(Step("wait for the operator's validator", (
            f"kubectl -n {namespace} wait pod -l {VALIDATOR_SELECTOR} --field-selector spec.nodeName={name} "
            "--for=condition=Ready --timeout=1200s",
            f"kubectl wait node/{name} --for=jsonpath='{{.metadata.labels.nvidia\\.com/gpu\\.present}}'=true "
            "--timeout=300s",
        )))
    steps.append(Step(f"run a test pod that requests {resource}", _test_pod(name, pool, resource, image)))
    steps.append(Step("uncordon", (f"kubectl uncordon {name}",)))
    rollback = [f"kubectl cordon {name}"]
    restore = restore_command(name, node.labels, changed)
    if restore:
        rollback.append(restore)
    rollback += [f"kubectl taint node {name} {t.key}={t.value}:{t.effect}-" for t in missing_taints]
    rollback.append(f"kubectl uncordon {name}")
    return NodeMigration(name, pool.name, tuple(reasons), tuple(steps), " && ".join(rollback), tuple(notes))
