"""Judge whether exported node state, operator resources and acceptance Jobs show the spec really running (pure).

Per pool of the scope (the whole cluster, or one pool):

- ``nodes``: the pool's nodeSelector matches at least its declared node count, every matched node Ready and
  schedulable (a cordoned node is still being worked on);
- ``driver``: every node reports (GFD's ``nvidia.com/cuda.driver-version.*`` labels) the driver the spec
  pins, or a driver of the pinned branch, or the default driver of the operator release;
- ``upgrade``: no node in a driver upgrade: ``nvidia.com/gpu-driver-upgrade-state`` is ``upgrade-done`` or
  absent (no upgrade ran); ``upgrade-failed`` and every in-progress state fail;
- ``gpus``: every node advertises exactly the allocatable GPU resources the spec makes (full, shared and MIG
  resource names, per node);
- ``mig`` (MIG pools): MIG Manager applied the pool's layout (``nvidia.com/mig.config`` as the spec says,
  ``nvidia.com/mig.config.state=success``);
- ``nvidiadriver`` (pools with their own NVIDIADriver): the rendered NVIDIADriver is exported, at the
  rendered version, ``status.state`` ready;
- ``acceptance``: every acceptance Job of the rendered revision for the pool passed (`acceptance report`).

And once for the cluster: ``clusterpolicy``, every ClusterPolicy ``status.state`` ready.  Evidence that was
not exported (no ``--clusterpolicies``, no ``--jobs`` where checks are rendered) fails the gate: a promotion
is never granted on what was not looked at.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gpuspec.acceptance.expected import RenderedAcceptance
from gpuspec.acceptance.report import AcceptanceReport
from gpuspec.audit.check import advertised_problem, matches
from gpuspec.audit.expect import expected_mig_config, expected_resources
from gpuspec.audit.facts import (
    MIG_DISABLED,
    UPGRADE_MARKS,
    UPGRADE_SKIP,
    NodeFacts,
    node_names,
    version_key,
)
from gpuspec.audit.inventory import OperatorResource
from gpuspec.gate.rendered import RenderedDriver
from gpuspec.matrix.query import default_driver
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, MigStrategy
from gpuspec.model.resolve import effective_driver, operator_version

#: The upgrade-state label value of a node whose driver upgrade finished.
UPGRADE_DONE = "upgrade-done"
#: The ``status.state`` of a ClusterPolicy or NVIDIADriver whose operands are all ready.
READY = "ready"


class Verdict(StrEnum):
    """The outcome of one criterion."""

    PASS = "pass"
    FAIL = "fail"
    NO_EVIDENCE = "no-evidence"


@dataclass(frozen=True)
class Criterion:
    """One thing the gate demands, its verdict, a one-line summary and the facts behind it."""

    name: str
    verdict: Verdict
    summary: str
    details: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """True when the criterion holds."""
        return self.verdict is Verdict.PASS


@dataclass(frozen=True)
class PoolGate:
    """The criteria of one pool, the nodes its selector matched and the driver it must run."""

    pool: str
    nodes: tuple[str, ...]
    target_driver: str | None
    criteria: tuple[Criterion, ...]

    @property
    def passed(self) -> bool:
        """True when every criterion of the pool holds."""
        return all(c.passed for c in self.criteria)


@dataclass(frozen=True)
class GateResult:
    """The gate's answer for a cluster or one pool: cluster-wide criteria, per-pool criteria, the evidence read."""

    cluster: str
    pool: str | None
    revision: str | None
    cluster_criteria: tuple[Criterion, ...]
    pools: tuple[PoolGate, ...]
    acceptance: AcceptanceReport | None
    unmanaged: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """True when every criterion holds: the scope really runs the spec."""
        return all(c.passed for c in self.cluster_criteria) and all(p.passed for p in self.pools)

    def failures(self) -> list[tuple[str, Criterion]]:
        """Every criterion that does not hold, with its scope (``cluster`` or the pool name)."""
        out = [("cluster", c) for c in self.cluster_criteria if not c.passed]
        for pool in self.pools:
            out += [(pool.pool, c) for c in pool.criteria if not c.passed]
        return out


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _grouped(nodes: Sequence[NodeFacts], key: Callable[[NodeFacts], str | None]) -> list[str]:
    """One line per distinct problem value: ``value: node-a, node-b``."""
    groups: dict[str, list[NodeFacts]] = defaultdict(list)
    for node in nodes:
        value = key(node)
        if value is not None:
            groups[value].append(node)
    return [f"{value}: {node_names(groups[value])}" for value in sorted(groups)]


def _verdict(details: list[str]) -> Verdict:
    return Verdict.FAIL if details else Verdict.PASS


def nodes_criterion(pool: Pool, nodes: Sequence[NodeFacts]) -> Criterion:
    """The pool has its declared nodes, each Ready and schedulable."""
    details = _grouped(nodes, lambda n: None if n.ready else f"NotReady ({n.ready_reason or 'no reason given'})")
    details += _grouped(nodes, lambda n: "cordoned (spec.unschedulable)" if n.ready and n.unschedulable else None)
    if len(nodes) < pool.nodes:
        details.insert(0, f"the nodeSelector matches {len(nodes)} of the {pool.nodes} declared nodes")
    usable = sum(1 for n in nodes if n.ready and not n.unschedulable)
    summary = f"{usable} of {pool.nodes} declared nodes Ready and schedulable"
    if len(nodes) > pool.nodes:
        summary += f" ({len(nodes)} matched)"
    return Criterion("nodes", _verdict(details), summary, tuple(details))


def target_driver(fleet: Fleet, cluster: Cluster, pool: Pool) -> tuple[str | None, Callable[[str], bool] | None]:
    """The driver the pool must run as text (``580.95.05``, ``branch 580``) and a test of a node's version."""
    driver = effective_driver(fleet, cluster, pool)
    if driver.version:
        want = version_key(driver.version)
        return driver.version, lambda v: version_key(v) == want
    if driver.branch:
        branch = driver.branch
        return f"branch {branch}", lambda v: v.split(".", 1)[0] == branch
    if driver.source is DriverSource.OPERATOR:
        release = operator_version(fleet, cluster)
        default = default_driver(release) if release else None
        if default:
            want_default = version_key(default)
            return default, lambda v: version_key(v) == want_default
    return None, None


def driver_criterion(target: str | None, test: Callable[[str], bool] | None,
                     nodes: Sequence[NodeFacts]) -> Criterion:
    """Every node reports the target driver (or, when the spec pins none, all report the same one)."""
    details = _grouped(nodes, lambda n: None if n.driver else "reports no driver version (no GFD driver labels)")
    reported = [n for n in nodes if n.driver]
    if test is not None:
        details += _grouped(reported, lambda n: None if test(n.driver or "") else f"runs {n.driver}")
        summary = f"target {target}: {sum(1 for n in reported if test(n.driver or ''))} of {len(nodes)} nodes"
    else:
        versions = sorted({n.driver for n in reported if n.driver}, key=version_key)
        if len(versions) > 1:
            details += _grouped(reported, lambda n: f"runs {n.driver}")
        summary = f"the spec pins no driver; nodes report {', '.join(versions) or 'none'}"
    return Criterion("driver", _verdict(details), summary, tuple(details))


def _upgrade_problem(node: NodeFacts) -> str | None:
    """What the driver upgrade state machine says is unfinished on ``node`` (None: nothing)."""
    if node.upgrade_state not in (None, UPGRADE_DONE):
        return f"nvidia.com/gpu-driver-upgrade-state={node.upgrade_state}"
    if node.upgrade_marks.get(UPGRADE_SKIP, "").lower() == "true":
        return f"{UPGRADE_SKIP}=true: the upgrade controller never moves it to a new driver"
    marks = sorted(k for k in node.upgrade_marks if k in UPGRADE_MARKS)
    return f"{marks[0]}: {UPGRADE_MARKS[marks[0]]}" if marks else None


def upgrade_criterion(nodes: Sequence[NodeFacts]) -> Criterion:
    """No node is in a driver upgrade, left by a failed one, marked for one, or skipped by the controller (every
    label and annotation the upgrade state machine acts on)."""
    details = _grouped(nodes, _upgrade_problem)
    done = sum(1 for n in nodes if n.upgrade_state == UPGRADE_DONE)
    summary = (f"{done} upgrade-done, {sum(1 for n in nodes if n.upgrade_state is None)} without an upgrade state"
               if not details else f"{_plural(len(nodes) - done, 'node')} not upgrade-done")
    return Criterion("upgrade", _verdict(details), summary, tuple(details))


def gpus_criterion(pool: Pool, nodes: Sequence[NodeFacts]) -> Criterion:
    """Every node advertises exactly the allocatable GPU resources the spec makes."""
    want = expected_resources(pool)

    def problem(node: NodeFacts) -> str | None:
        if node.advertised == 0:
            return "advertises no GPU resources"
        found = advertised_problem(node, want)
        return f"advertises {found}" if found else None

    details = _grouped(nodes, problem)
    return Criterion("gpus", _verdict(details), f"expected {want.describe()} per node", tuple(details))


def mig_criterion(pool: Pool, nodes: Sequence[NodeFacts]) -> Criterion:
    """MIG Manager applied the pool's layout on every node."""
    want = expected_mig_config(pool)

    def problem(node: NodeFacts) -> str | None:
        have = node.mig_config or "<unset>"
        if want is not None and node.mig_config != want:
            return f"nvidia.com/mig.config={have}"
        if want is None and node.mig_config in (None, MIG_DISABLED):
            return f"nvidia.com/mig.config={have}"
        if node.mig_state != "success":
            return f"nvidia.com/mig.config.state={node.mig_state or '<unset>'}"
        return None

    details = _grouped(nodes, problem)
    return Criterion("mig", _verdict(details), f"layout {want or 'custom'} applied (state success)", tuple(details))


def clusterpolicy_criterion(resources: Sequence[OperatorResource] | None) -> Criterion:
    """Every ClusterPolicy is ready (and there is one)."""
    if resources is None:
        return Criterion("clusterpolicy", Verdict.NO_EVIDENCE, "no export of ClusterPolicies was given",
                         ("pass --clusterpolicies (kubectl get clusterpolicies,nvidiadrivers -o json)",))
    policies = [r for r in resources if r.kind == "ClusterPolicy"]
    if not policies:
        return Criterion("clusterpolicy", Verdict.FAIL, "the export holds no ClusterPolicy",
                         ("the GPU Operator is not installed, or the export is incomplete",))
    details = [_state_text(r) for r in policies if r.status.state != READY]
    ready = len(policies) - len(details)
    return Criterion("clusterpolicy", _verdict(details), f"{ready} of {len(policies)} ClusterPolicies ready",
                     tuple(details))


def _state_text(resource: OperatorResource) -> str:
    bad = [c for c in resource.status.conditions
           if (c.type == "Ready" and c.status != "True") or (c.type == "Error" and c.status == "True")]
    why = "; ".join(f"{c.type}={c.status}" + (f" {c.reason}" if c.reason else "")
                    + (f": {c.message}" if c.message else "") for c in bad)
    return f"{resource.kind} {resource.metadata.name} is {resource.status.state or '<no state>'}" + \
        (f" ({why})" if why else "")


def nvidiadriver_criterion(pool: Pool, nodes: Sequence[NodeFacts], rendered: Sequence[RenderedDriver],
                           resources: Sequence[OperatorResource] | None) -> Criterion | None:
    """The pool's NVIDIADrivers (rendered for it, or exported and selecting its nodes) are ready.

    None when the pool has none (the ClusterPolicy installs its driver, or the host has it).
    """
    mine = [d for d in rendered if d.pool == pool.name]
    exported = [r for r in resources or () if r.kind == "NVIDIADriver"]
    selecting = [r for r in exported if r.metadata.name not in {d.name for d in mine}
                 and any(matches(r.spec.node_selector, n.labels) for n in nodes)]
    if not mine and not selecting:
        return None
    if resources is None:
        return Criterion("nvidiadriver", Verdict.NO_EVIDENCE, "no export of NVIDIADrivers was given",
                         ("pass --clusterpolicies or --nvidiadrivers (kubectl get nvidiadrivers -o json)",))
    by_name = {r.metadata.name: r for r in exported}
    details: list[str] = []
    for driver in mine:
        found = by_name.get(driver.name)
        if found is None:
            details.append(f"NVIDIADriver {driver.name} of the rendered revision is not in the export")
            continue
        if driver.version and found.spec.version != driver.version:
            details.append(f"NVIDIADriver {driver.name} installs {found.spec.version or '<no version>'}, "
                           f"the rendered revision {driver.version}")
        if found.status.state != READY:
            details.append(_state_text(found))
    details += [_state_text(r) for r in selecting if r.status.state != READY]
    names = ", ".join(sorted({d.name for d in mine} | {r.metadata.name for r in selecting}))
    return Criterion("nvidiadriver", _verdict(details), f"NVIDIADriver {names}", tuple(details))


def acceptance_criterion(pool: Pool, rendered: RenderedAcceptance, report: AcceptanceReport | None) -> Criterion:
    """Every acceptance check of the rendered revision for the pool passed."""
    expected = rendered.of_pool(pool.name)
    if not expected:
        return Criterion("acceptance", Verdict.PASS, "no acceptance checks are rendered for this pool")
    if report is None:
        return Criterion("acceptance", Verdict.NO_EVIDENCE,
                         f"{_plural(len(expected), 'check')} rendered, no export of the acceptance Jobs was given",
                         ("pass --jobs (kubectl get jobs,pods -n gpuspec-acceptance -o json)",))
    checks = report.of_pool(pool.name)
    details = [f"{c.check} ({c.job}): {c.status.value}: {c.reason}" for c in checks if not c.passed]
    passed = sum(1 for c in checks if c.passed)
    return Criterion("acceptance", _verdict(details), f"{passed} of {len(checks)} checks of this revision passed",
                     tuple(details))


def pool_gate(fleet: Fleet, cluster: Cluster, pool: Pool, nodes: Sequence[NodeFacts],
              resources: Sequence[OperatorResource] | None, drivers: Sequence[RenderedDriver],
              rendered: RenderedAcceptance, report: AcceptanceReport | None) -> PoolGate:
    """Every criterion of one pool over the nodes its nodeSelector matches."""
    target, test = target_driver(fleet, cluster, pool)
    criteria = [nodes_criterion(pool, nodes), driver_criterion(target, test, nodes), upgrade_criterion(nodes),
                gpus_criterion(pool, nodes)]
    if pool.mig.strategy is not MigStrategy.NONE:
        criteria.append(mig_criterion(pool, nodes))
    driver = nvidiadriver_criterion(pool, nodes, drivers, resources)
    if driver is not None:
        criteria.append(driver)
    criteria.append(acceptance_criterion(pool, rendered, report))
    return PoolGate(pool.name, tuple(sorted(n.name for n in nodes)), target, tuple(criteria))


def gate(fleet: Fleet, cluster: Cluster, pools: Sequence[Pool], nodes: Sequence[NodeFacts],
         resources: Sequence[OperatorResource] | None, drivers: Sequence[RenderedDriver],
         rendered: RenderedAcceptance, report: AcceptanceReport | None, scope_pool: str | None = None,
         policies_exported: bool = True) -> GateResult:
    """The gate over ``pools`` of ``cluster``; ``resources`` / ``report`` None mean that evidence was not exported.

    Pools the operator does not manage (``managed: false``) are not the rollout's: they are listed, not gated.
    ``policies_exported`` False says ``resources`` holds only NVIDIADrivers (no ClusterPolicy export was given).
    """
    results = tuple(
        pool_gate(fleet, cluster, pool, [n for n in nodes if matches(pool.node_selector, n.labels)], resources,
                  drivers, rendered, report)
        for pool in pools if pool.managed
    )
    unmanaged = tuple(p.name for p in pools if not p.managed)
    policies = clusterpolicy_criterion(resources if policies_exported else None)
    return GateResult(cluster.name, scope_pool, rendered.digest, (policies,), results, report, unmanaged)
