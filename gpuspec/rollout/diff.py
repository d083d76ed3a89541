"""The diff engine: base Fleet x head Fleet -> ordered list of Change records (pure, no I/O)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from gpuspec.findings import DocPath
from gpuspec.matrix.component_query import nvidiadriver_crd_migration
from gpuspec.matrix.query import parse_version
from gpuspec.model.cluster import Cluster, Pool, Tenant
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import MigSpec, MigStrategy
from gpuspec.model.resolve import (
    MIG_CONFIG_LABEL,
    EffectiveDriver,
    effective_driver,
    mig_config_value,
    operator_version,
    pool_path,
)
from gpuspec.render.context import driver_mode
from gpuspec.rollout import driver_facts
from gpuspec.rollout.deviations import deviation_changes
from gpuspec.rollout.impact import (
    driver_rollback,
    managed_pools,
    manages_driver,
    mig_procedure,
    mig_provisioning,
    mig_rollback,
    olm_rollback,
    olm_upgrade_impact,
    operator_rollback,
    reload_procedure,
)
from gpuspec.rollout.records import Change, ChangeKind, Dimension, Disruption


def _shown(value: object) -> str:
    """A rollout setting as the plan names it: compact JSON-like text, ``unset`` for an absent value."""
    if value is None:
        return "unset"
    if isinstance(value, str | int | float | bool):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))


def _dump(model: BaseModel | None) -> Any:
    return None if model is None else model.model_dump(mode="json", by_alias=True, exclude_none=True)


def changed_keys(before: BaseModel | None, after: BaseModel | None) -> list[str]:
    """The top-level keys (spec spelling) whose values differ between two models."""
    a, b = _dump(before) or {}, _dump(after) or {}
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def driver_text(driver: EffectiveDriver) -> str:
    """A one-phrase description of an effective driver: source, branch or version, module type."""
    what = driver.version or (f"branch {driver.branch}" if driver.branch else "release default")
    text = f"{what} ({driver.source.value}"
    if driver.kernel_module_type != "auto":
        text += f", {driver.kernel_module_type} modules"
    return text + ")"


def driver_key(driver: EffectiveDriver) -> tuple[str, str | None, str | None, str]:
    """What identifies a driver target: source, branch, version and kernel module type."""
    return (driver.source.value, driver.branch, driver.version, driver.kernel_module_type)


def mig_text(mig: MigSpec) -> str:
    """A one-phrase description of a MIG setting."""
    if mig.strategy is MigStrategy.NONE:
        return "MIG off"
    if mig.layout:
        return f"{mig.strategy.value}, layout {mig.layout}"
    groups = []
    for group in mig.custom or []:
        devices = "all" if group.devices == "all" else ",".join(str(d) for d in group.devices)
        profiles = "+".join(f"{n}x{p}" for p, n in sorted(group.profiles.items()))
        groups.append(f"GPUs {devices}: {profiles}")
    return f"{mig.strategy.value}, custom " + "; ".join(groups)


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """The numeric parts of an operator or driver version (``v26.3.1`` or ``580.95.05``), or None."""
    if version is None:
        return None
    parsed = parse_version(version)
    if parsed is not None:
        return parsed
    try:
        return tuple(int(p) for p in version.split("."))
    except ValueError:
        return None


def driver_downgrade(before: EffectiveDriver, after: EffectiveDriver) -> bool:
    """True when ``after`` is an older driver than ``before`` (lower branch, or same branch and lower version)."""
    if before.branch and after.branch and before.branch != after.branch:
        return int(after.branch) < int(before.branch)
    a, b = version_tuple(before.version), version_tuple(after.version)
    return a is not None and b is not None and b < a


def operator_proves(running: str | None, target: str) -> bool:
    """True when a cluster running operator ``running`` has proven ``target`` for a later fleet wave: it runs that
    release or a later one (it passed the gate there)."""
    a, b = version_tuple(running), version_tuple(target)
    return running == target or (a is not None and b is not None and a >= b)


def driver_proves(running: EffectiveDriver, target: EffectiveDriver) -> bool:
    """True when a pool running ``running`` has proven driver ``target``: the same driver (source, branch, version,
    module type), or a later one of the same source and module type (a later branch, or a later version of it)."""
    if driver_key(running) == driver_key(target):
        return True
    if (running.source, running.kernel_module_type) != (target.source, target.kernel_module_type):
        return False
    if running.branch and target.branch and running.branch != target.branch:
        return running.branch.isdigit() and target.branch.isdigit() and int(running.branch) > int(target.branch)
    a, b = version_tuple(running.version), version_tuple(target.version)
    return a is not None and b is not None and a >= b


class _Differ:
    """Compares one cluster of the base with the same cluster of the head."""

    def __init__(self, base: Fleet, head: Fleet, old: Cluster, new: Cluster) -> None:
        self.base, self.head, self.old, self.new = base, head, old, new
        self.wave = new.rollout.wave

    def change(self, kind: ChangeKind, summary: str, before: str | None, after: str | None,
               disruption: Disruption, impact: str, rollback: str, *, pool: Pool | None = None,
               file: str | None = None, path: DocPath = (), dimension: Dimension | None = None,
               derived: bool = False, details: tuple[str, ...] = (), downgrade: bool = False) -> Change:
        return Change(
            kind, self.new.name, pool.name if pool else None, summary, before, after, disruption, impact, rollback,
            self.wave, pool.wave if pool else None, bool(pool and pool.name == self.new.rollout.canary_pool),
            file or self.new.source_file, path, dimension, derived, details, downgrade,
        )

    # ------------------------------------------------------------------ locations

    def operator_location(self) -> tuple[str, DocPath]:
        """Where the head spec sets the cluster's operator version (cluster pin or its channel in fleet.yaml)."""
        new = self.new
        if new.operator.version or new.operator.channel != self.old.operator.channel:
            key = "version" if new.operator.version else "channel"
            return new.source_file, ("operator", key)
        for index, channel in enumerate(self.head.settings.channels):
            if channel.name == new.operator.channel:
                return self.head.settings_file, ("channels", index, "operator")
        return new.source_file, ("operator",)

    def driver_location(self, pool: Pool, driver: EffectiveDriver) -> tuple[str, DocPath]:
        """Where the head spec sets a pool's driver (the pool, or the channel it follows)."""
        if driver.from_channel:
            for index, channel in enumerate(self.head.settings.channels):
                if channel.name == self.new.operator.channel:
                    return self.head.settings_file, ("channels", index, "driver")
        return self.new.source_file, pool_path(self.new, pool, "driver")

    # ------------------------------------------------------------------ cluster-wide

    def run(self) -> Iterator[Change]:
        yield from self.kubernetes()
        yield from self.operator()
        yield from self.operands()
        yield from self.driver_management()
        yield from self.mirror()
        yield from self.rollout()
        yield from self.pools()
        yield from self.tenants()

    def kubernetes(self) -> Iterator[Change]:
        keys = changed_keys(self.old.kubernetes, self.new.kubernetes)
        if not keys:
            return
        a, b = _dump(self.old.kubernetes), _dump(self.new.kubernetes)
        details = tuple(f"{k}: {a.get(k)} -> {b.get(k)}" for k in keys)
        version_changed = self.old.kubernetes.version != self.new.kubernetes.version
        summary = (
            f"Kubernetes {self.old.kubernetes.version} -> {self.new.kubernetes.version}"
            if version_changed else "Kubernetes " + ", ".join(keys) + " changed"
        )
        yield self.change(
            ChangeKind.KUBERNETES, summary, self.old.kubernetes.version, self.new.kubernetes.version,
            Disruption.OPERAND_RESTART,
            "gpuspec re-renders values for the new platform; the node upgrade itself (outside gpuspec) usually "
            "cordons and drains every node, restarting operands and GPU pods",
            "Kubernetes downgrades are generally unsupported; revert only the spec if the cluster was not upgraded, "
            "otherwise follow the distribution's procedure.",
            path=("kubernetes", keys[0] if keys[0] != "version" or version_changed else "version"),
            dimension=Dimension.KUBERNETES, details=details,
        )

    def operator(self) -> Iterator[Change]:
        before, after = operator_version(self.base, self.old), operator_version(self.head, self.new)
        file, path = self.operator_location()
        if before is None or after is None:
            return
        if before == after:
            if (self.old.operator.version, self.old.operator.channel) != (
                self.new.operator.version, self.new.operator.channel
            ):
                yield self.change(
                    ChangeKind.OPERATOR_PIN, f"operator {_pin(self.old)} -> {_pin(self.new)} (still {after})",
                    _pin(self.old), _pin(self.new), Disruption.NONE, "same release; nothing is redeployed",
                    "Revert the spec; nothing to undo in the cluster.", file=file, path=path,
                )
            return
        a, b = version_tuple(before), version_tuple(after)
        upgrade = a is None or b is None or b > a
        kind = ChangeKind.OPERATOR_UPGRADE if upgrade else ChangeKind.OPERATOR_DOWNGRADE
        word = "upgrade" if upgrade else "downgrade"
        olm = self.new.kubernetes.distribution.value == "openshift"
        impact = olm_upgrade_impact(before, after) if olm else (
            "helm upgrade of the chart; operand DaemonSets (device plugin, GFD, toolkit, DCGM exporter, validator, "
            "mig-manager) roll to the new images"
        )
        if managed_pools(self.new):
            impact += "; driver pods restart where the driver or k8s-driver-manager image changes (see pool rows)"
        yield self.change(
            kind, f"GPU Operator {word} {before} -> {after}", before, after, Disruption.OPERAND_RESTART, impact,
            (olm_rollback(before, after) if olm else operator_rollback(before, after, self.new)) if upgrade else
            f"This change is itself a rollback; undo it by reverting to {before} (a normal upgrade).",
            file=file, path=path, dimension=Dimension.OPERATOR, downgrade=not upgrade,
        )

    def driver_management(self) -> Iterator[Change]:
        """The switch between ClusterPolicy and NVIDIADriver driver management: every GPU node's driver pod."""
        before, after = driver_mode(self.base, self.old), driver_mode(self.head, self.new)
        if before is None or after is None or before == after or "none" in (before, after):
            return
        version = operator_version(self.head, self.new) or ""
        managed = managed_pools(self.new)
        nodes = sum(p.nodes for p in managed)
        where = f"every GPU node of the cluster ({nodes} node(s) in {len(managed)} pool(s))"
        if after == "nvidiadriver" and nvidiadriver_crd_migration(version):
            impact = (
                f"{where}: the ClusterPolicy's driver DaemonSet is replaced by NVIDIADriver-managed ones (the chart's "
                "default NVIDIADriver first); the upgrade controller moves node by node under the upgrade policy, "
                "and each node's driver pod is replaced (driver reload: " + reload_procedure(self.new) + ")"
            )
        else:
            impact = (
                f"{where}: driver pods are terminated and redeployed by the other controller at once; GPU Operator "
                f"{version} does not migrate between ClusterPolicy and NVIDIADriver management node by node"
            )
        file, path = self.new.source_file, ("operator", "driverManagement") \
            if "driver_management" in self.new.operator.model_fields_set else ("pools",)
        yield self.change(
            ChangeKind.DRIVER_MANAGEMENT, f"driver management {_MODE[before]} -> {_MODE[after]}",
            _MODE[before], _MODE[after], Disruption.DRIVER_RELOAD, impact,
            f"Revert in a change of its own: every node's driver pod is replaced again ({_MODE[after]} -> "
            f"{_MODE[before]}).",
            file=file, path=path, dimension=Dimension.DRIVER,
        )

    def operands(self) -> Iterator[Change]:
        old, new = self.old.operator, self.new.operator
        keys = changed_keys(old.operands, new.operands)
        namespace = old.namespace != new.namespace
        if not keys and not namespace:
            return
        details = [f"operands.{k}: {_dump(old.operands).get(k)} -> {_dump(new.operands).get(k)}" for k in keys]
        if namespace:
            details.insert(0, f"namespace: {old.namespace} -> {new.namespace}")
        driver_side = namespace or bool(set(keys) & {"rdma", "gds", "gdrcopy", "sandboxWorkloads"})
        disruption = (
            Disruption.DRIVER_RELOAD if driver_side and managed_pools(self.new) else Disruption.OPERAND_RESTART
        )
        impact = (
            "operand DaemonSets are added, removed or reconfigured"
            if disruption is Disruption.OPERAND_RESTART
            else "the driver DaemonSet changes (namespace or RDMA/GDS/GDRCopy/sandbox), so every managed node "
            "reloads the driver: " + reload_procedure(self.new)
        )
        yield self.change(
            ChangeKind.OPERANDS, "operator " + ", ".join(["namespace"] * namespace + keys) + " changed",
            ", ".join(d.split(": ", 1)[1].split(" -> ")[0] for d in details),
            ", ".join(d.split(" -> ", 1)[1] for d in details), disruption, impact,
            "Revert the spec; the same restarts happen again.",
            path=("operator", "namespace" if namespace else "operands"),
            details=tuple(details),
        )

    def mirror(self) -> Iterator[Change]:
        before, after = self.old.mirror, self.new.mirror
        if before == after:
            yield from self.mirror_definition()
            return
        managed = bool(managed_pools(self.new))
        previous = self.base.mirror(before)
        yield self.change(
            ChangeKind.MIRROR, f"{_mirror_name(before)} -> {_mirror_name(after)}", before or "online",
            after or "online", Disruption.DRIVER_RELOAD if managed else Disruption.OPERAND_RESTART,
            "every image reference and the chart source move"
            + (": the driver pod template changes, so drivers reload: " + reload_procedure(self.new)
               if managed else ""),
            "Revert the cluster's mirror; "
            + (f"every image must still be in mirror {previous.name}" if previous
               else "the cluster must reach nvcr.io again")
            + "; drivers reload again.",
            path=("mirror",),
        )

    def mirror_definition(self) -> Iterator[Change]:
        name = self.new.mirror
        if name is None:
            return
        old, new = self.base.mirror(name), self.head.mirror(name)
        keys = changed_keys(old, new)
        if not keys or new is None:
            return
        index = next(i for i, m in enumerate(self.head.settings.mirrors) if m.name == name)
        chart_only = set(keys) <= {"chart"}
        managed = bool(managed_pools(self.new))
        disruption = (
            Disruption.NONE if chart_only else Disruption.DRIVER_RELOAD if managed else Disruption.OPERAND_RESTART
        )
        impact = (
            "the chart is pulled from a new place; the release is unchanged"
            if chart_only
            else "image references, pull secrets or driver repository settings change"
            + (": the driver pod template changes, so drivers reload: " + reload_procedure(self.new) if managed else "")
        )
        yield self.change(
            ChangeKind.FLEET_MIRROR, f"mirror {name} definition changed: " + ", ".join(keys), None, None,
            disruption, impact, f"Revert mirror {name} in fleet.yaml; the previous registry paths must still serve "
            "every image.", file=self.head.settings_file, path=("mirrors", index, keys[0]),
            details=tuple(f"{k}: {_dump(old).get(k) if old else None} -> {_dump(new).get(k)}" for k in keys),
        )

    def rollout(self) -> Iterator[Change]:
        keys = changed_keys(self.old.rollout, self.new.rollout)
        if not keys:
            return
        a, b = _dump(self.old.rollout), _dump(self.new.rollout)
        moves = ", ".join(f"{k} {_shown(a.get(k))} -> {_shown(b.get(k))}" for k in keys)
        yield self.change(
            ChangeKind.ROLLOUT, "rollout settings changed: " + moves, None, None, Disruption.NONE,
            "upgrade policy of the operator changes; nothing restarts", "Revert the spec.",
            path=("rollout", keys[0]), details=tuple(f"{k}: {a.get(k)} -> {b.get(k)}" for k in keys),
        )

    # ------------------------------------------------------------------ pools

    def pools(self) -> Iterator[Change]:
        old_names = {p.name for p in self.old.pools}
        new_names = {p.name for p in self.new.pools}
        for pool in self.new.pools:
            if pool.name not in old_names:
                yield self.change(
                    ChangeKind.POOL_ADDED, f"pool {pool.name} added ({_size(pool)})",
                    None, pool.name, Disruption.NONE,
                    "new nodes are labelled and get the operator's operands and driver",
                    "Remove the pool again; its nodes lose the driver (drain them first).", pool=pool,
                    path=pool_path(self.new, pool),
                )
        for pool in self.old.pools:
            if pool.name not in new_names:
                managed = manages_driver(pool)
                yield Change(
                    ChangeKind.POOL_REMOVED, self.new.name, pool.name, f"pool {pool.name} removed",
                    pool.name, None, Disruption.DRIVER_RELOAD if managed else Disruption.NONE,
                    "gpuspec stops managing these nodes: labels, per-pool driver and configs are removed"
                    + ("; if the nodes still run, their driver is uninstalled, so drain and decommission them first"
                       if managed else ""),
                    "Restore the pool's spec; nodes are relabelled and the driver is installed again.",
                    self.wave, pool.wave,
                    pool.name == self.old.rollout.canary_pool, self.new.source_file, ("pools",),
                )
        for pool in self.new.pools:
            old = self.old.pool(pool.name)
            if old is not None:
                yield from self.pool(old, pool)

    def pool(self, old: Pool, new: Pool) -> Iterator[Change]:
        yield from self.driver(old, new)
        yield from self.mig(old, new)
        yield from self.sharing(old, new)
        yield from self.os(old, new)
        yield from self.size(old, new)
        yield from self.settings(old, new)

    def driver(self, old: Pool, new: Pool) -> Iterator[Change]:
        before = effective_driver(self.base, self.old, old)
        after = effective_driver(self.head, self.new, new)
        file, path = self.driver_location(new, after)
        if driver_key(before) != driver_key(after):
            fields = [
                name for name, a, b in (
                    ("source", before.source.value, after.source.value), ("branch", before.branch, after.branch),
                    ("version", before.version, after.version),
                    ("kernelModuleType", before.kernel_module_type, after.kernel_module_type),
                ) if a != b
            ]
            down = driver_downgrade(before, after)
            host_only = before.source.value == after.source.value == "host"
            impact = (
                "driver preinstalled on the host image: the node image must change; the operator does not reload it"
                if host_only
                else "driver reload: " + reload_procedure(self.new, new)
            )
            steps: tuple[str, ...] = ()
            if not host_only and before.source is not after.source:
                impact, steps = self.replacement(new, impact)
            yield self.change(
                ChangeKind.DRIVER, f"driver {'downgrade' if down else 'change'} {driver_text(before)} -> "
                f"{driver_text(after)}", driver_text(before), driver_text(after), Disruption.DRIVER_RELOAD, impact,
                driver_rollback(driver_facts.driver_image(self.base, self.old, old), driver_text(before), self.base,
                                self.old, old),
                pool=new, file=file, path=path, dimension=Dimension.DRIVER,
                details=(*(f"{f} changed" for f in fields), *steps), downgrade=down,
            )
            return
        yield from self.derived_driver(old, new, after)

    def replacement(self, pool: Pool, impact: str) -> tuple[str, tuple[str, ...]]:
        """A pool's switch between compiled and precompiled drivers in NVIDIADriver mode: ``spec.usePrecompiled``
        is immutable, so it is a new NVIDIADriver and the old one's removal, not a rolling update."""
        from gpuspec.rollout.apiserver import CHART_DEFAULT_NVIDIADRIVER, refused_changes, replaced_objects

        own = f"clusters/{self.new.name}/nvidiadriver-{pool.name}.yaml"
        pairs = [(a, b) for a, b in replaced_objects(self.base, self.old, self.head, self.new, "NVIDIADriver")
                 if b.file == own]
        if pairs:
            gone, made = pairs[0][0].key[3], pairs[0][1].key[3]
            text = (
                f"NVIDIADriver {gone} is replaced by {made} (spec.usePrecompiled is immutable, CRD rule "
                f"self == oldSelf, so the variant is in the name): the sync creates {made}, which stays notReady "
                f"(ConflictingNodeSelector) while {gone} still selects the pool's nodes, then prunes {gone}; the "
                f"driver DaemonSet {gone} owns is garbage-collected, so all {pool.nodes} node(s) of the pool lose "
                "their driver pod at once, outside the upgrade policy (no maxParallelUpgrades pacing, no eviction "
                f"or drain by the upgrade controller), and {made}'s DaemonSet installs the new driver: cordon and "
                "drain the pool's nodes before the sync"
            )
            steps = (
                f"before the sync: cordon the pool's nodes and drain their GPU pods ({pool.name}: {pool.nodes} "
                "node(s)); the upgrade controller does not pace this replacement",
                f"sync: {made} is created and {gone} pruned (without pruning, delete NVIDIADriver {gone} by hand: "
                "until then both stay notReady and the old driver keeps running)",
                f"after NVIDIADriver {made} is ready and the pool's acceptance passed: uncordon the nodes",
            )
            return text, steps
        refused = [c for c in refused_changes(self.base, self.old, self.head, self.new)
                   if c.new.key[1:] == ("NVIDIADriver", "", CHART_DEFAULT_NVIDIADRIVER) and c.refusal.verified]
        if refused:
            return (
                impact + "; but the pool runs on the chart's default NVIDIADriver, whose spec.usePrecompiled is "
                "immutable: the API server refuses helm's update and the sync fails (GS810)",
                ("cordon and drain the nodes of the default NVIDIADriver, delete NVIDIADriver default right before "
                 "the sync so helm creates it anew, or give the switching pool a driver of its own first",),
            )
        return impact, ()

    def derived_driver(self, old: Pool, new: Pool, driver: EffectiveDriver) -> Iterator[Change]:
        """A driver reload caused by the operator release: release-default driver or driver-manager image moved."""
        if not manages_driver(new):
            return
        op_before, op_after = operator_version(self.base, self.old), operator_version(self.head, self.new)
        if op_before == op_after:
            return
        file, path = self.operator_location()
        v_before = driver_facts.resolved_driver_version(self.base, self.old, old)
        v_after = driver_facts.resolved_driver_version(self.head, self.new, new)
        m_before, m_after = driver_facts.driver_manager(op_before), driver_facts.driver_manager(op_after)
        rollback = driver_rollback(driver_facts.driver_image(self.base, self.old, old), v_before or driver_text(driver),
                                   self.base, self.old, old)
        if driver.version is None and v_before != v_after:
            yield self.change(
                ChangeKind.DRIVER, f"release-default driver {v_before or 'unknown'} -> {v_after or 'unknown'} "
                f"(operator {op_before} -> {op_after})", v_before, v_after, Disruption.DRIVER_RELOAD,
                "driver reload: " + reload_procedure(self.new, new), rollback, pool=new, file=file, path=path,
                dimension=Dimension.DRIVER, derived=True,
                details=("the pool does not pin a driver version; it follows the operator release",),
            )
        elif m_before != m_after:
            yield self.change(
                ChangeKind.DRIVER, f"driver pods restart: k8s-driver-manager {m_before or 'unknown'} -> "
                f"{m_after or 'unknown'} (operator {op_before} -> {op_after})", m_before, m_after,
                Disruption.DRIVER_RELOAD,
                "driver pod template changes, driver reload: " + reload_procedure(self.new, new),
                rollback, pool=new, file=file, path=path, derived=True,
            )

    def mig(self, old: Pool, new: Pool) -> Iterator[Change]:
        if _dump(old.mig) == _dump(new.mig):
            return
        custom_changed = _dump(old.mig).get("custom") != _dump(new.mig).get("custom")
        layout_changed = custom_changed or old.mig.layout != new.mig.layout
        on_off = (old.mig.strategy is MigStrategy.NONE) != (new.mig.strategy is MigStrategy.NONE)
        repartition = layout_changed or on_off
        label_before, label_after = mig_config_value(old), mig_config_value(new)
        details: tuple[str, ...] = ()
        if label_before != label_after:
            details = (mig_provisioning(self.new, new, label_after),)
        elif custom_changed:
            details = (
                f"the layout keeps its name {label_after}: mig-manager applies the new geometry when the "
                f"{MIG_CONFIG_LABEL} label is set again (or mig-manager restarts) on each node",
            )
        yield self.change(
            ChangeKind.MIG, f"MIG {mig_text(old.mig)} -> {mig_text(new.mig)}", mig_text(old.mig), mig_text(new.mig),
            Disruption.MIG_REPARTITION if repartition else Disruption.OPERAND_RESTART,
            "; ".join((mig_procedure(self.new, new, label_after), *details))
            if repartition
            else "device plugin and GFD restart and advertise MIG devices under other resource names; "
            "pods requesting the old names stop scheduling",
            mig_rollback(mig_text(old.mig)) if repartition else "Revert the spec; the device plugin restarts again.",
            pool=new, path=pool_path(self.new, new, "mig"), details=details,
        )

    def sharing(self, old: Pool, new: Pool) -> Iterator[Change]:
        keys = changed_keys(old.sharing, new.sharing)
        if not keys:
            return
        only_words = set(keys) <= {"justification"}
        yield self.change(
            ChangeKind.SHARING, f"sharing {_sharing(old)} -> {_sharing(new)}"
            + (" (justification only)" if only_words else ""), _sharing(old), _sharing(new),
            Disruption.NONE if only_words else Disruption.OPERAND_RESTART,
            "nothing restarts" if only_words else
            "device plugin and GFD restart with the new sharing config; advertised GPU capacity changes; "
            "running pods keep their GPUs",
            "Revert the spec; pods already scheduled above the old replica count keep running until they end.",
            pool=new, path=pool_path(self.new, new, "sharing", keys[0]),
        )

    def os(self, old: Pool, new: Pool) -> Iterator[Change]:
        keys = changed_keys(old.os, new.os)
        if not keys:
            return
        yield self.change(
            ChangeKind.OS, f"OS {_os(old)} -> {_os(new)}", _os(old), _os(new), Disruption.DRIVER_RELOAD,
            "nodes are re-imaged or rebooted outside gpuspec; the driver is rebuilt or a precompiled image for the "
            "new kernel is pulled on every node: " + reload_procedure(self.new, new),
            "Roll the node image back outside gpuspec and revert the spec; the driver for the old kernel must "
            "still be available.",
            pool=new, path=pool_path(self.new, new, "os", keys[0]), dimension=Dimension.OS,
        )

    def size(self, old: Pool, new: Pool) -> Iterator[Change]:
        if (old.nodes, _dump(old.gpu)) == (new.nodes, _dump(new.gpu)):
            return
        yield self.change(
            ChangeKind.POOL_SIZE, f"pool size {_size(old)} -> {_size(new)}", _size(old), _size(new), Disruption.NONE,
            "capacity and quotas change; existing nodes are not touched", "Revert the spec.",
            pool=new, path=pool_path(self.new, new, "nodes" if old.nodes != new.nodes else "gpu"),
        )

    def settings(self, old: Pool, new: Pool) -> Iterator[Change]:
        a, b = _dump(old), _dump(new)
        keys = [k for k in ("nodeSelector", "taints", "devices", "wave", "autoscaling") if a.get(k) != b.get(k)]
        if not keys:
            return
        devices = "devices" in keys
        yield self.change(
            ChangeKind.POOL_SETTINGS,
            f"pool {', '.join(keys)} changed", None, None,
            Disruption.OPERAND_RESTART if devices or "nodeSelector" in keys else Disruption.NONE,
            ("per-pool operand configuration changes" if devices or "nodeSelector" in keys
             else "scheduling or rollout order changes")
            + ("; the pool's taints are tolerated by the operand DaemonSets (daemonsets.tolerations is cluster-wide): "
               "what rolls is the pod-templates row" if "taints" in keys else ""),
            "Revert the spec.", pool=new, path=pool_path(self.new, new, keys[0]),
            details=tuple(f"{k}: {a.get(k)} -> {b.get(k)}" for k in keys),
        )

    # ------------------------------------------------------------------ tenants

    def tenants(self) -> Iterator[Change]:
        old = {t.name: t for t in self.old.tenants}
        new_index = {t.name: i for i, t in enumerate(self.new.tenants)}
        for tenant in self.new.tenants:
            path: DocPath = ("tenants", new_index[tenant.name])
            if tenant.name not in old:
                yield self.change(
                    ChangeKind.TENANT_ADDED, f"tenant {tenant.name} added ({_quota(tenant)})", None, _quota(tenant),
                    Disruption.NONE, "namespaces get ResourceQuotas and access to their pools",
                    "Remove the tenant again.", path=path,
                )
                continue
            keys = changed_keys(old[tenant.name], tenant)
            if keys:
                yield self.change(
                    ChangeKind.TENANT_CHANGED, f"tenant {tenant.name}: " + ", ".join(keys) + " changed",
                    _quota(old[tenant.name]), _quota(tenant), Disruption.NONE,
                    "ResourceQuotas and pool access are updated; running pods are not evicted, a lower quota only "
                    "blocks new pods", "Revert the spec.", path=(*path, keys[0]),
                )
        for name, tenant in old.items():
            if name not in new_index:
                yield self.change(
                    ChangeKind.TENANT_REMOVED, f"tenant {name} removed", _quota(tenant), None, Disruption.NONE,
                    "its ResourceQuotas are deleted; running pods keep running", "Restore the tenant's spec.",
                    path=("tenants",),
                )


_MODE = {"clusterpolicy": "ClusterPolicy", "nvidiadriver": "NVIDIADriver resources"}


def _pin(cluster: Cluster) -> str:
    op = cluster.operator
    return f"pinned {op.version}" if op.version else f"channel {op.channel}"


def _mirror_name(name: str | None) -> str:
    return f"mirror {name}" if name else "online (no mirror)"


def _sharing(pool: Pool) -> str:
    mode = pool.sharing.mode.value
    return mode if mode == "none" else f"{mode} x{pool.sharing.replicas}"


def _os(pool: Pool) -> str:
    return f"{pool.os.distribution} {pool.os.version}" + (f" ({pool.os.kernel})" if pool.os.kernel else "")


def _size(pool: Pool) -> str:
    return f"{pool.nodes} x {pool.gpu.count} {pool.gpu.product}"


def _quota(tenant: Tenant) -> str:
    parts = []
    if tenant.gpu_quota is not None:
        parts.append(f"{tenant.gpu_quota} GPUs")
    parts.extend(f"{n} {r}" for r, n in sorted(tenant.mig_quota.items()))
    return (", ".join(parts) or "no quota") + f"; pools {', '.join(tenant.pools)}"


def _cluster_added(cluster: Cluster) -> Change:
    return Change(
        ChangeKind.CLUSTER_ADDED, cluster.name, None,
        f"cluster {cluster.name} added ({len(cluster.pools)} pools, operator {_pin(cluster)})",
        None, cluster.name, Disruption.NONE, "the GPU Operator is installed by the new GitOps application",
        "Remove the cluster's spec; with pruning on, the operator is uninstalled.", cluster.rollout.wave,
        file=cluster.source_file,
    )


def _cluster_removed(cluster: Cluster, head: Fleet) -> Change:
    return Change(
        ChangeKind.CLUSTER_REMOVED, cluster.name, None, f"cluster {cluster.name} removed", cluster.name, None,
        Disruption.DRIVER_RELOAD if managed_pools(cluster) else Disruption.NONE,
        "its rendered/ output and GitOps application are deleted; with Argo CD / Flux pruning on, the GPU Operator "
        "and its drivers are uninstalled from the cluster's GPU nodes",
        "Restore the cluster's spec file; the operator is installed again.", cluster.rollout.wave,
        file=head.settings_file,
    )


def _unused_mirror_changes(base: Fleet, head: Fleet) -> Iterator[Change]:
    """Mirror definitions that changed, were added or were removed in fleet.yaml and that no head cluster uses."""
    used = {c.mirror for c in head.clusters if c.mirror}
    names = [m.name for m in head.settings.mirrors] + [
        m.name for m in base.settings.mirrors if head.mirror(m.name) is None
    ]
    for name in names:
        if name in used:
            continue
        old, new = base.mirror(name), head.mirror(name)
        if _dump(old) == _dump(new):
            continue
        what = "added" if old is None else "removed" if new is None else "changed: " + ", ".join(changed_keys(old, new))
        index = next((i for i, m in enumerate(head.settings.mirrors) if m.name == name), None)
        yield Change(
            ChangeKind.FLEET_MIRROR, None, None, f"mirror {name} {what} (used by no cluster)", None, None,
            Disruption.NONE, "no cluster uses this mirror", "Revert fleet.yaml.", 0, file=head.settings_file,
            path=("mirrors", index) if index is not None else ("mirrors",),
        )


def diff_fleets(base: Fleet, head: Fleet) -> list[Change]:
    """Every change from ``base`` to ``head``, with impact, rollout wave and rollback note, in rollout order."""
    # (The pod templates' machinery is imported by the commands that compare fleets, not by every render.)
    from gpuspec.rollout.operand_rolls import template_changes

    changes: list[Change] = list(_unused_mirror_changes(base, head))
    for cluster in head.clusters:
        old = base.cluster(cluster.name)
        if old is None:
            own = [_cluster_added(cluster)]
        else:
            own = [*_Differ(base, head, old, cluster).run(), *deviation_changes(base, old, head, cluster)]
            if own or _dump(old) != _dump(cluster):  # an unchanged cluster renders the same pod templates
                own.extend(template_changes(base, old, head, cluster, own))
        changes.extend(own)
    for cluster in base.clusters:
        if head.cluster(cluster.name) is None:
            changes.append(_cluster_removed(cluster, head))
    return sorted(changes, key=Change.sort_key)
