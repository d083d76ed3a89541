"""What audit says about one node, node by node (pure): the conditions `gpuspec migrate` must answer for.

Audit groups its findings by pool and value; the migration needs them per node, to give each flagged node its
steps or say why it is left out.  Each :class:`Flag` is one audit condition of one node, with its finding id, and:

* ``blocks``: the migration would not fix it and must not go on top of it (a kernel or OS the driver is not built
  for, another GPU than the pool's, a failed or pending MIG reconfiguration, a driver upgrade that failed or is
  under way, a node that is not ready or that someone cordoned, a node in two pools);
* ``unavailable``: the node is already out of service, so it counts against its pool's ``maxUnavailable``;
* ``handled``: the migration's own steps put it right (hand-set labels, an operand switched off by a label, a
  missing taint, a MIG config label, operands on a node of an unmanaged pool);
* none of these: for the spec's owner to look at; the node can still be migrated (audit's finding stays).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuspec.audit.check import PREINSTALLED, advertised_problem
from gpuspec.audit.expect import expected_mig_config, expected_operands, expected_resources
from gpuspec.audit.facts import (
    DEPLOY_PREFIX,
    MIG_DISABLED,
    UPGRADE_FAILED,
    UPGRADE_IN_PROGRESS,
    NodeFacts,
    version_key,
)
from gpuspec.audit.host import hand_set_labels, kubelet_minor, os_image_problem, runtime_name
from gpuspec.catalogue import audit as R
from gpuspec.catalogue import audit_host as H
from gpuspec.catalogue.entry import Entry
from gpuspec.matrix.query import default_driver
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, MigStrategy
from gpuspec.model.resolve import effective_driver, operator_version


@dataclass(frozen=True)
class Flag:
    """One audit condition of one node."""

    entry: Entry
    text: str
    blocks: bool = False
    unavailable: bool = False
    handled: bool = False

    def __str__(self) -> str:
        return f"{self.text} ({self.entry.id})"


def operands_switched_off(node: NodeFacts, cluster: Cluster, pool: Pool) -> dict[str, str]:
    """The deploy labels (key -> "false") that switch off an operand the pool's nodes should run."""
    return {DEPLOY_PREFIX + o: "false" for o in expected_operands(cluster, pool) if node.deploy.get(o) == "false"}


def mig_config_to_set(node: NodeFacts, pool: Pool) -> str | None:
    """The ``nvidia.com/mig.config`` value the node should carry when it carries another (None: in line, or the
    pool's config name is not known from the spec)."""
    want = expected_mig_config(pool)
    if want is None or node.mig_config == want:
        return None
    if pool.mig.strategy is MigStrategy.NONE and node.mig_config in (None, MIG_DISABLED):
        return None
    return want


def _hardware(node: NodeFacts, pool: Pool) -> list[Flag]:
    flags: list[Flag] = []
    if node.product is not None and not node.product.accepts(pool.gpu.product):
        flags.append(Flag(R.PRODUCT_MISMATCH, f"its GPUs are {node.product_label}, the pool declares "
                                               f"{pool.gpu.product}", blocks=True))
    if pool.mig.strategy is not MigStrategy.SINGLE and node.gpu_count is not None and node.gpu_count != pool.gpu.count:
        flags.append(Flag(R.COUNT_MISMATCH, f"it reports {node.gpu_count} GPUs, the pool declares {pool.gpu.count}",
                          blocks=True))
    if node.product_label is None:
        flags.append(Flag(R.GFD_LABELS_MISSING, "GPU Feature Discovery has not labelled it"))
    if node.advertised == 0:
        flags.append(Flag(R.NO_GPUS_ADVERTISED, "it advertises no allocatable GPUs"))
    else:
        problem = advertised_problem(node, expected_resources(pool))
        if problem:
            flags.append(Flag(R.ADVERTISED_MISMATCH, f"it advertises {problem}"))
    return flags


def _state(node: NodeFacts) -> list[Flag]:
    flags: list[Flag] = []
    if not node.ready:
        flags.append(Flag(R.NODE_NOT_READY, f"it is NotReady ({node.ready_reason or 'no reason given'})",
                          blocks=True, unavailable=True))
    if node.upgrade_state == UPGRADE_FAILED:
        flags.append(Flag(R.UPGRADE_FAILED, "its driver upgrade failed", blocks=True, unavailable=True))
    elif node.upgrade_state in UPGRADE_IN_PROGRESS:
        flags.append(Flag(R.UPGRADE_IN_PROGRESS, f"its driver upgrade is under way (state {node.upgrade_state})",
                          blocks=True, unavailable=True))
    elif node.unschedulable and node.ready:
        flags.append(Flag(R.NODE_NOT_READY, "it is cordoned (spec.unschedulable) by someone else",
                          blocks=True, unavailable=True))
    if node.mig_state == "failed":
        flags.append(Flag(R.MIG_FAILED, "its MIG configuration failed (nvidia.com/mig.config.state=failed)",
                          blocks=True, unavailable=True))
    elif node.mig_state in ("pending", "rebooting"):
        flags.append(Flag(R.MIG_PENDING, f"its MIG configuration is {node.mig_state}", blocks=True, unavailable=True))
    return flags


def _driver(node: NodeFacts, pool: Pool, pinned: str | None) -> list[Flag]:
    flags: list[Flag] = []
    host = pool.driver.source is DriverSource.HOST
    deploy = node.deploy.get("driver")
    if host and deploy == "true":
        flags.append(Flag(R.DRIVER_OWNER_MISMATCH, "the operator deploys its driver container on it, the pool "
                                                   "declares driver source host"))
    if pinned and node.driver and version_key(node.driver) != version_key(pinned) and not (
            deploy == PREINSTALLED and not host and pool.managed):  # the host driver the migration removes
        flags.append(Flag(R.DRIVER_SPEC_MISMATCH, f"it runs driver {node.driver}, the pool expects {pinned}"))
    return flags


def _host(node: NodeFacts, cluster: Cluster, pool: Pool) -> list[Flag]:
    flags: list[Flag] = []
    if pool.os.kernel and node.kernel and node.kernel != pool.os.kernel:
        flags.append(Flag(H.KERNEL_MISMATCH, f"it runs kernel {node.kernel}, the pool declares {pool.os.kernel} "
                                             "(the driver is built for the declared kernel)", blocks=True))
    if os_image_problem(node.os_image, pool.os.distribution, pool.os.version):
        flags.append(Flag(H.OS_IMAGE_MISMATCH, f"its OS is {node.os_image!r}, the pool declares "
                                               f"{pool.os.distribution} {pool.os.version}", blocks=True))
    if kubelet_minor(node.kubelet) not in (None, cluster.kubernetes.version):
        flags.append(Flag(H.KUBELET_MISMATCH, f"its kubelet is {node.kubelet}, the cluster declares Kubernetes "
                                              f"{cluster.kubernetes.version}"))
    if runtime_name(node.runtime) not in (None, cluster.kubernetes.runtime.value):
        flags.append(Flag(H.RUNTIME_MISMATCH, f"its container runtime is {node.runtime}, the cluster declares "
                                              f"{cluster.kubernetes.runtime.value}", blocks=True))
    return flags


def _configuration(node: NodeFacts, cluster: Cluster, pool: Pool) -> list[Flag]:
    """Conditions the migration's own steps put right."""
    flags: list[Flag] = []
    hand = hand_set_labels(node, cluster)
    if hand:
        flags.append(Flag(H.HAND_SET_LABELS, "hand-set labels: " + ", ".join(f"{k}={v}" for k, v in hand.items()),
                          handled=True))
    off = operands_switched_off(node, cluster, pool)
    if off:
        flags.append(Flag(R.OPERAND_DISABLED, "operands switched off by label: "
                                              + ", ".join(f"{k}={v}" for k, v in off.items()),
                          handled=True))
    missing = [t for t in pool.taints if (t.key, t.value, t.effect) not in node.taints]
    if missing:
        flags.append(Flag(R.TAINT_MISSING, "it lacks the taint(s) " + ", ".join(
            f"{t.key}={t.value}:{t.effect}" for t in missing), handled=True))
    want = mig_config_to_set(node, pool)
    if want is not None:
        flags.append(Flag(R.MIG_CONFIG_MISMATCH, f"it carries nvidia.com/mig.config={node.mig_config or '<unset>'}, "
                                                 f"the pool's is {want}", handled=True))
    elif pool.mig.strategy is not MigStrategy.NONE and expected_mig_config(pool) is None and \
            node.mig_config in (None, MIG_DISABLED):
        flags.append(Flag(R.MIG_CONFIG_MISMATCH, f"it carries nvidia.com/mig.config={node.mig_config or '<unset>'}, "
                                                 "the pool expects its custom MIG layout"))
    if not pool.managed and (node.labels.get(DEPLOY_PREFIX + "operands") != "false"
                             or any(v == "true" and k != "operands" for k, v in node.deploy.items())):
        flags.append(Flag(H.OPERATOR_ON_UNMANAGED, "the operator's operands are not switched off on this node of an "
                                                   "unmanaged pool", handled=True))
    return flags


def node_flags(node: NodeFacts, cluster: Cluster, pools: Sequence[Pool], pinned: str | None = None) -> list[Flag]:
    """Every audit condition of ``node``, a member of ``pools`` (the first is the one it is migrated into);
    ``pinned``: the driver version the pool expects (None: not compared)."""
    if not pools:
        return []
    pool = pools[0]
    flags: list[Flag] = []
    if len(pools) > 1:
        flags.append(Flag(R.MULTI_POOL_NODE, "it matches the nodeSelectors of pools "
                                             + " and ".join(p.name for p in pools), blocks=True))
    flags += _state(node)
    flags += _hardware(node, pool)
    flags += _host(node, cluster, pool)
    flags += _driver(node, pool, pinned)
    flags += _configuration(node, cluster, pool)
    return flags


def pinned_driver(fleet: Fleet, cluster: Cluster, pool: Pool) -> str | None:
    """The driver version ``pool`` expects, as audit compares it: the pool's or channel's version, else the
    release's default for an operator-installed driver (None: only a branch, or nothing to compare)."""
    driver = effective_driver(fleet, cluster, pool)
    if driver.version:
        return driver.version
    if driver.branch or driver.source is not DriverSource.OPERATOR:
        return None
    release = operator_version(fleet, cluster)
    return default_driver(release) if release else None
