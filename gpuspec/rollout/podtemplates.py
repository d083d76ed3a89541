"""Which operand DaemonSets a change rolls, derived from their pod-template inputs (pure, no I/O).

The operator builds every operand DaemonSet's pod template from the ClusterPolicy (itself the chart's rendering of
the Helm values) and each NVIDIADriver's spec.  ``data/operand_pod_templates.yaml`` says, with the operator and
chart code it was read from, which values feed which DaemonSet.  Comparing those inputs of the rendered values at
the base and the head tells which DaemonSets roll -- and where the driver reloads, because the upgrade controller
replaces a node's driver pod whenever its driver DaemonSet's pod template changes -- whatever spec field caused it.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from gpuspec.errors import GpuspecError
from gpuspec.matrix.chartintent import lookup
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.render.context import ClusterContext, cluster_context
from gpuspec.render.overlay import nvidia_driver
from gpuspec.render.values import helm_values

#: Where the facts of this module come from (first line of the data file's source list), for reports.
DATA_FILE = "gpuspec/plan/data/operand_pod_templates.yaml"


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand DaemonSet of the ClusterPolicy and the values its pod template is made of."""

    daemonset: str
    values: str
    enabled: str | None
    also: tuple[str, ...]
    driver: bool
    transform: str


@dataclass(frozen=True, slots=True)
class TemplateData:
    """The contents of the data file."""

    common: tuple[str, ...]
    ignore: tuple[str, ...]
    operands: tuple[Operand, ...]
    nvidiadriver_ignore: tuple[str, ...]
    default_cr_values: tuple[str, ...]
    sources: tuple[str, ...]


@functools.cache
def template_data() -> TemplateData:
    """The operand pod-template facts of ``data/operand_pod_templates.yaml``."""
    text = resources.files("gpuspec.rollout").joinpath("data/operand_pod_templates.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    return TemplateData(
        common=tuple(raw["common"]),
        ignore=tuple(raw["ignore"]),
        operands=tuple(
            Operand(o["daemonset"], o["values"], o.get("enabled"), tuple(o.get("also", ())), bool(o.get("driver")),
                    o["transform"])
            for o in raw["operands"]
        ),
        nvidiadriver_ignore=tuple(raw["nvidiadriver"]["ignore"]),
        default_cr_values=tuple(raw["nvidiadriver"]["default_cr_values"]),
        sources=tuple(raw["source"]["files"]),
    )


@dataclass(frozen=True, slots=True)
class DaemonSetInputs:
    """The pod-template inputs of one DaemonSet and, for a driver DaemonSet, the pools whose driver it runs."""

    name: str
    inputs: dict[str, Any]
    driver_pools: tuple[str, ...] = ()
    source: str = ""


def _without(tree: Any, prefix: str, ignore: tuple[str, ...]) -> Any:
    """``tree`` (the value at ``prefix``) without the ignored sub-paths."""
    if not isinstance(tree, dict):
        return tree
    out = copy.deepcopy(tree)
    for path in ignore:
        if not path.startswith(prefix + "."):
            continue
        *parents, leaf = path[len(prefix) + 1:].split(".")
        node: Any = out
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(leaf, None)
    return out


def _inputs(values: dict[str, Any], paths: tuple[str, ...], ignore: tuple[str, ...]) -> dict[str, Any]:
    return {p: _without(lookup(values, p), p, ignore) for p in paths if lookup(values, p) is not None}


def daemonset_inputs(ctx: ClusterContext) -> dict[str, DaemonSetInputs]:
    """Every operand DaemonSet the cluster's rendered values and NVIDIADrivers deploy, with its pod-template inputs."""
    data = template_data()
    values = helm_values(ctx)
    out: dict[str, DaemonSetInputs] = {}
    managed = tuple(d.pool.name for d in ctx.drivers)
    for operand in data.operands:
        if operand.enabled is not None and lookup(values, operand.enabled) is False:
            continue
        if operand.driver and ctx.driver_mode != "clusterpolicy":
            continue
        paths = (operand.values, *operand.also, *data.common)
        source = f"controllers/object_controls.go {operand.transform} + applyCommonDaemonsetConfig (v26.7.0)"
        out[operand.daemonset] = DaemonSetInputs(
            operand.daemonset, _inputs(values, paths, data.ignore), managed if operand.driver else (), source,
        )
    default = ctx.default_driver
    if ctx.driver_mode == "nvidiadriver" and default is not None:
        served = tuple(d.pool.name for d in ctx.drivers if d.key == default.key)
        name = "NVIDIADriver default (chart) driver DaemonSet"
        out[name] = DaemonSetInputs(
            name, _inputs(values, data.default_cr_values, data.ignore), served,
            "templates/nvidiadriver.yaml (v26.7.0) + manifests/state-driver/0500_daemonset.yaml",
        )
    for driver in ctx.pool_drivers:
        spec = nvidia_driver(ctx, driver)["spec"]
        name = f"NVIDIADriver {driver.pool.name} driver DaemonSet"
        out[name] = DaemonSetInputs(
            name, {k: v for k, v in spec.items() if k not in data.nvidiadriver_ignore}, (driver.pool.name,),
            "manifests/state-driver/0500_daemonset.yaml (v26.7.0)",
        )
    return out


def changed_paths(a: Any, b: Any, prefix: str) -> list[str]:
    """The dotted paths below ``prefix`` where ``a`` and ``b`` differ (mappings compared key by key)."""
    if a == b:
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b)):
            out.extend(changed_paths(a.get(key), b.get(key), f"{prefix}.{key}"))
        return out
    return [prefix]


@dataclass(frozen=True, slots=True)
class Roll:
    """A DaemonSet whose pod template differs between base and head (or that appears or goes)."""

    name: str
    changed: tuple[str, ...]
    source: str
    driver: bool
    #: Pools whose driver pod this roll replaces (the pools the DaemonSet runs the driver of, at the head).
    reload_pools: tuple[str, ...] = ()
    #: For a driver DaemonSet that goes: the pools it ran the driver of at the base.
    removed_pools: tuple[str, ...] = ()

    def text(self) -> str:
        """One phrase: the DaemonSet and the inputs that changed."""
        return f"{self.name}: {', '.join(self.changed)} ({self.source})"


def cluster_inputs(fleet: Fleet, cluster: Cluster) -> dict[str, DaemonSetInputs] | None:
    """The DaemonSet inputs of a cluster, or None when its release or drivers do not resolve."""
    try:
        return daemonset_inputs(cluster_context(fleet, cluster))
    except GpuspecError:
        return None


def rolls(before: dict[str, DaemonSetInputs], after: dict[str, DaemonSetInputs]) -> list[Roll]:
    """The DaemonSets whose pod template changes from ``before`` to ``after``, and where drivers reload.

    A pool's driver reloads when the DaemonSet that runs it changes its pod template, or when another DaemonSet takes
    the pool over (its driver pod is replaced)."""
    owner_before = {p: name for name, ds in before.items() for p in ds.driver_pools}
    out: list[Roll] = []
    for name, ds in after.items():
        old = before.get(name)
        if old is None:
            moved = tuple(p for p in ds.driver_pools if owner_before.get(p) != name)
            out.append(Roll(name, ("DaemonSet added",), ds.source, bool(ds.driver_pools),
                            tuple(p for p in moved if p in owner_before)))
            continue
        keys = sorted(set(old.inputs) | set(ds.inputs))
        changed = tuple(p for k in keys for p in changed_paths(old.inputs.get(k), ds.inputs.get(k), k))
        taken = tuple(p for p in ds.driver_pools if p in owner_before and owner_before[p] != name)
        if not changed and not taken:
            continue
        reload = ds.driver_pools if changed else taken
        words = changed + ((f"takes over pool(s) {', '.join(taken)}",) if taken else ())
        out.append(Roll(name, words, ds.source, bool(ds.driver_pools or old.driver_pools), reload))
    for name, ds in before.items():
        if name not in after:
            out.append(Roll(name, ("DaemonSet removed",), ds.source, bool(ds.driver_pools),
                            removed_pools=ds.driver_pools))
    return out
