"""Change-set rules about what the Kubernetes API server refuses on update (GS810, GS811).

The base and head revision of every cluster the change touches are compiled in memory and their objects
compared (:mod:`gpuspec.rollout.apiserver`); an update that changes an immutable field fails the sync.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from gpuspec.catalogue import changeset_apiserver as cat
from gpuspec.findings import DocPath
from gpuspec.model.cluster import Cluster
from gpuspec.model.resolve import pool_path
from gpuspec.rollout.apiserver import CHART_DEFAULT_NVIDIADRIVER, RefusedChange, clusters_to_compare, refused_changes
from gpuspec.rules.base import Problem, Rule
from gpuspec.rules.changeset import ChangeSetContext, ChangeSetRule


def _where(old: Cluster, cluster: Cluster, change: RefusedChange) -> DocPath:
    """The head spec path that makes the refused object: its pool, priority class or tenant, else the cluster."""
    _, kind, namespace, name = change.new.key
    file = change.new.file.rsplit("/", 1)[-1]
    for pool in cluster.pools:
        if file == f"nvidiadriver-{pool.name}.yaml":
            return pool_path(cluster, pool, "driver")
    if kind == "NVIDIADriver" and name == CHART_DEFAULT_NVIDIADRIVER:
        for pool in cluster.pools:  # the chart's default serves the pools without their own: one whose driver moved
            before = old.pool(pool.name)
            if before is not None and before.driver.source is not pool.driver.source:
                return pool_path(cluster, pool, "driver")
        return ("pools",)
    for index, pc in enumerate(cluster.priority_classes):
        if kind == "PriorityClass" and pc.name == name:
            field = str(change.refusal.path[0]) if change.refusal.path else ""
            return ("priorityClasses", index, field) if field in ("value", "preemptionPolicy") else (
                "priorityClasses", index)
    for index, tenant in enumerate(cluster.tenants):
        if file == f"tenant-{tenant.name}.yaml" or namespace in tenant.namespaces:
            return ("tenants", index)
    return ()


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, (dict, list)) else f"<{type(value).__name__} changed>"
    return text if len(text) <= 60 else text[:59] + "…"


def _problems(ctx: ChangeSetContext, verified: bool) -> Iterator[Problem]:
    base = ctx.base
    if base is None:
        return
    for name in clusters_to_compare(base, ctx.fleet):
        old, new = base.cluster(name), ctx.fleet.cluster(name)
        if old is None or new is None:
            continue
        for change in refused_changes(base, old, ctx.fleet, new):
            refusal = change.refusal
            if refusal.verified is not verified:
                continue
            field = ".".join(str(p) for p in refusal.path)
            origin = (f"the chart's templates/nvidiadriver.yaml with {change.new.file}"
                      if change.new.key[1:] == ("NVIDIADriver", "", CHART_DEFAULT_NVIDIADRIVER) else change.new.file)
            what = (f"cluster {name!r}: {change.new.ref()} ({origin}) {field}: "
                    f"{_shown(refusal.before)} -> {_shown(refusal.after)}")
            if verified:
                message = f"{what}: the API server refuses the update ({refusal.message}) [{refusal.source}]"
                hint = refusal.instead
                if change.new.key[1:] == ("NVIDIADriver", "", CHART_DEFAULT_NVIDIADRIVER):
                    hint = ("the chart's default NVIDIADriver keeps its name: cordon and drain the nodes it serves, "
                            "delete it (kubectl delete nvidiadriver default) right before the sync so helm creates "
                            "it anew, or give the pools that switch a driver of their own in an earlier change")
                yield Problem(message, new.source_file, _where(old, new, change), hint=hint)
            else:
                yield Problem(f"{what}: {refusal.message} [{refusal.source}]", new.source_file,
                              _where(old, new, change))


class UpdateRefused(ChangeSetRule):
    """No rendered object's update changes a field the API server keeps immutable."""

    entry = cat.UPDATE_REFUSED

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per refused update of an object of a changed cluster."""
        yield from _problems(ctx, verified=True)


class UpdateNotVerified(ChangeSetRule):
    """Transition rules gpuspec could not evaluate on a changed object are named, never passed silently."""

    entry = cat.UPDATE_NOT_VERIFIED

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per transition rule that could not be evaluated on an update."""
        yield from _problems(ctx, verified=False)


#: This module's change-set rules, in id order.
CHANGESET_RULES: list[Rule] = [UpdateRefused(), UpdateNotVerified()]
