"""Change-set findings about one step of a rollout: its duration against the maintenance window (GS830), the
acknowledgment of its downgrade (GS831)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

STEP_EXCEEDS_WINDOW = Entry(
    id="GS830",
    title="Disruptive step cannot finish in one maintenance window",
    severity=Severity.WARNING,
    rationale=(
        "Nodes restart only inside `rollout.window`; a driver upgrade that the upgrade controller cannot finish "
        "before the window closes goes on restarting nodes outside it, or leaves the pool half upgraded."
    ),
    doc="""
For every disruptive step of the change (cluster-wide, canary pool, each pool wave) of a cluster with a
`rollout.window`, `lint --base` estimates the worst-case duration as `gpuspec plan` shows it and warns when it is
longer than the window's `length`, or has no bound at all.

The estimate follows the GPU Operator's upgrade controller (k8s-operator-libs `pkg/upgrade` as vendored by
gpu-operator v26.7.0): nodes upgrade `maxParallelUpgrades` at a time (0 = all), never more than `maxUnavailable`
(a percentage of the nodes the ClusterPolicy or the pool's NVIDIADriver manages, rounded up); each node takes the
`waitForCompletion` timeout (with a pod selector), the GPU pod deletion timeout, the drain timeout (when drain is
on) and `rollout.perNodeSeconds.driverReload`.  A timeout of 0 waits without bound; `maxUnavailable: 0` never
starts a node.  Operand restarts roll one node at a time (`perNodeSeconds.operandRestart`); a MIG repartition
takes one node's `perNodeSeconds.migRepartition`, all nodes at once.  Steps no controller rolls
(`autoUpgrade: false`, drivers on the host image) are not judged.

Fix it by raising `maxParallelUpgrades`/`maxUnavailable`, bounding the timeouts, lengthening the window, or
accept that the step spans windows (a policy exception for GS830 with its reason).  See docs/pr-workflow.md
("How long a step takes, and maintenance windows").

Failing: a driver change on a 12-node pool, one node at a time at 25 minutes each (5h), with a 4h window.
Passing: the same change with `maxParallelUpgrades: 2` and `maxUnavailable: 2` (2h 30m).
""",
    tags=("change-set", "rollout"),
    source="NVIDIA k8s-operator-libs pkg/upgrade (upgrade_inplace.go ProcessUpgradeRequiredNodes, common_manager.go "
    "GetUpgradesAvailable, upgrade_state.go ApplyState) vendored by gpu-operator v26.7.0 "
    "(k8s-operator-libs v0.0.0-20260629200812-d720f2557494); gpu-operator values.yaml v26.7.0 driver.upgradePolicy "
    "and daemonsets.rollingUpdate",
)

STALE_ROLLBACK_ACKNOWLEDGMENT = Entry(
    id="GS831",
    title="Downgrade acknowledged only by a rollback flag left from an earlier change",
    severity=Severity.ERROR,
    rationale=(
        "`operator.rollback: true` acknowledges the downgrade of the change that sets it. When the base revision "
        "already carries it, the flag is not in this change's diff: a second downgrade would pass GS803 without "
        "anyone having written, or reviewed, an acknowledgment for it."
    ),
    doc="""
The rollback flag's life: the change that downgrades a cluster's operator or a pool's driver sets
`operator.rollback: true` (GS803 asks for it); the next change removes it (GS822 reports it while it stays).
This rule closes the gap between the two: a change that downgrades again while the flag is still there from the
base revision is reported, because the flag in its spec acknowledges the earlier downgrade, not this one.

Do the second rollback in two changes: remove `operator.rollback` (the change after the first rollback, as GS822
asks), then downgrade with the flag set again, so the acknowledgment is a line of the downgrade's diff.  A team
that deliberately rolls back twice in a row takes a GS831 exception with its reason.

Failing: the base (the change after a rollback) still has `operator.rollback: true`, and this change also
downgrades pool `t4-batch`'s driver `535.309.01 -> 535.288.01`.  Passing: the same driver downgrade, the base
without the flag and this change setting it.
""",
    tags=("change-set", "rollout"),
)

#: This module's entries, in id order.
ENTRIES: tuple[Entry, ...] = (STEP_EXCEEDS_WINDOW, STALE_ROLLBACK_ACKNOWLEDGMENT)
