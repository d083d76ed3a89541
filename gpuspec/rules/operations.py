"""Operations rules (GS240-GS249): autoscaled pools wait for the operator and their autoscaler knows what they
advertise; government-ready clusters stay in set."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpuspec.catalogue import operations as cat
from gpuspec.errors import GpuspecError
from gpuspec.matrix import autoscaling as asdata
from gpuspec.matrix.govready import government_ready
from gpuspec.matrix.query import line_of
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import AutoscalerKind, AutoscalingSpec
from gpuspec.model.resolve import pool_path
from gpuspec.render.autoscaling import gpu_label_on_nodes, unknown_to_instance_types, why_no_gpu_resource
from gpuspec.render.context import ClusterContext, cluster_context
from gpuspec.render.deviations import apply_overrides
from gpuspec.render.operand_images import component_enabled
from gpuspec.render.values import helm_values
from gpuspec.rules.base import Problem, Rule, RuleContext


def _autoscaled(fleet: Fleet) -> Iterator[tuple[Cluster, Pool, AutoscalingSpec]]:
    for cluster in fleet.clusters:
        for pool in cluster.pools:
            if pool.autoscaling is not None:
                yield cluster, pool, pool.autoscaling


def _is_startup_key(key: str) -> bool:
    return key.startswith(asdata.startup_taint_prefixes())


class AutoscalingBounds(Rule):
    """``min <= nodes <= max`` for every autoscaled pool."""

    entry = cat.AUTOSCALING_BOUNDS
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per autoscaled pool whose bounds are inverted or leave out its planned size."""
        for cluster, pool, auto in _autoscaled(ctx.fleet):
            where = pool_path(cluster, pool, "autoscaling")
            if auto.min > auto.max:
                yield Problem(f"pool {pool.name}: autoscaling min {auto.min} is above max {auto.max}",
                              cluster.source_file, (*where, "min"), hint="set min <= max")
            elif not auto.min <= pool.nodes <= auto.max:
                yield Problem(f"pool {pool.name}: nodes {pool.nodes} is outside autoscaling [{auto.min}, {auto.max}]",
                              cluster.source_file, pool_path(cluster, pool, "nodes"),
                              hint="plan for a size the autoscaler can reach: min <= nodes <= max")


class ReadinessGate(Rule):
    """A cluster-autoscaler pool has its cloud's GPU label or a startup taint a named controller removes."""

    entry = cat.NO_READINESS_GATE
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster-autoscaler pool without a readiness gate."""
        for cluster, pool, auto in _autoscaled(ctx.fleet):
            if auto.autoscaler is not AutoscalerKind.CLUSTER_AUTOSCALER or gpu_label_on_nodes(cluster, pool, auto):
                continue
            if any(t.removed_by for t in auto.startup_taints):
                continue
            why = why_no_gpu_resource(cluster, pool)
            if asdata.gpu_label(auto.cloud, cluster.kubernetes.version) and why:
                reason = (f"its nodes must not carry cluster-autoscaler's GPU label ({why}, never nvidia.com/gpu, "
                          "so gpuspec leaves the label out of the node group)")
                hint = "add a startup taint with removedBy (a controller that removes it once the GPUs are ready)"
            else:
                reason = f"cluster-autoscaler on cloud {auto.cloud} has no GPU label"
                hint = "set autoscaling.cloud (aws, gce, azure), or a startup taint with removedBy"
            yield Problem(
                f"pool {pool.name}: {reason}, and no startup taint gates the node: it counts a new node as GPU "
                "capacity before the operator advertises its GPUs", cluster.source_file,
                pool_path(cluster, pool, "autoscaling", "cloud"), hint=hint)


class StartupTaintRemoved(Rule):
    """Every startup taint of an autoscaled pool names the controller that removes it."""

    entry = cat.STARTUP_TAINT_STRANDS
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per startup taint nothing removes."""
        for cluster, pool, auto in _autoscaled(ctx.fleet):
            for index, taint in enumerate(auto.startup_taints):
                if not taint.removed_by:
                    yield Problem(
                        f"pool {pool.name}: startup taint {taint.key} has no removedBy; the GPU Operator removes no "
                        "taint, so new nodes stay tainted", cluster.source_file,
                        pool_path(cluster, pool, "autoscaling", "startupTaints", index),
                        hint="name the controller that removes it (removedBy), or drop the startup taint")
            if auto.autoscaler is AutoscalerKind.CLUSTER_AUTOSCALER:
                for index, permanent in enumerate(pool.taints):
                    if _is_startup_key(permanent.key):
                        yield Problem(
                            f"pool {pool.name}: taint {permanent.key} is a cluster-autoscaler startup taint that "
                            "nothing removes (the GPU Operator removes none)", cluster.source_file,
                            pool_path(cluster, pool, "taints", index, "key"),
                            hint="move it to autoscaling.startupTaints with removedBy, or drop it")


class TaintBothWays(Rule):
    """No key is both a permanent pool taint and a startup taint."""

    entry = cat.TAINT_BOTH_WAYS
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per startup taint whose key is also a permanent taint of the pool."""
        for cluster, pool, auto in _autoscaled(ctx.fleet):
            permanent = {t.key for t in pool.taints}
            for index, taint in enumerate(auto.startup_taints):
                if taint.key in permanent:
                    yield Problem(
                        f"pool {pool.name}: {taint.key} is both a pool taint and a startup taint",
                        cluster.source_file, pool_path(cluster, pool, "autoscaling", "startupTaints", index, "key"),
                        hint="keep it in taints (permanent) or in startupTaints (removed once ready), not both")


class MigScaleFromZero(Rule):
    """A cluster-autoscaler pool with ``min: 0`` that advertises more than ``nvidia.com/gpu`` runs where gpuspec
    can make the node-group template list it."""

    entry = cat.MIG_SCALE_FROM_ZERO
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per pool cluster-autoscaler scales from zero without its resources in the template."""
        for cluster, pool, auto in _autoscaled(ctx.fleet):
            if (auto.autoscaler is not AutoscalerKind.CLUSTER_AUTOSCALER or auto.min != 0
                    or auto.cloud in asdata.template_resources_clouds()):
                continue
            unknown = unknown_to_instance_types(cluster, pool)
            if unknown:
                yield Problem(
                    f"pool {pool.name}: cluster-autoscaler scales this pool from zero on cloud {auto.cloud}, whose "
                    f"node-group template has only the instance type's nvidia.com/gpu and gpuspec cannot make it "
                    f"list {', '.join(unknown)}: pods requesting them never trigger a scale-up from zero",
                    cluster.source_file, pool_path(cluster, pool, "autoscaling", "min"),
                    hint="keep at least one node (min: 1), advertise nvidia.com/gpu (mig.strategy: single, "
                         "sharing.renameByDefault: false), or describe the resources in the node-group template")


class UnreadyForGood(Rule):
    """cluster-autoscaler's GPU label on a pool that never advertises ``nvidia.com/gpu``."""

    entry = cat.UNREADY_FOR_GOOD
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per cluster-autoscaler pool whose nodes carry the GPU label and advertise no GPU."""
        for cluster, pool, auto in _autoscaled(ctx.fleet):
            if auto.autoscaler is not AutoscalerKind.CLUSTER_AUTOSCALER:
                continue
            label = gpu_label_on_nodes(cluster, pool, auto)
            why = why_no_gpu_resource(cluster, pool)
            if label and why:
                ok, percent = asdata.unready_limits()
                yield Problem(
                    f"pool {pool.name}: the platform of cloud {auto.cloud} sets {label} on its nodes and {why}, "
                    f"never {asdata.ready_gpu_resource()}: cluster-autoscaler {cluster.kubernetes.version} counts "
                    f"every node of the pool as unready for good, and halts scale-up for the whole cluster once more "
                    f"than {ok} nodes, and more than {percent}% of the cluster's nodes, are unready (its defaults)",
                    cluster.source_file,
                    pool_path(cluster, pool, "autoscaling", "cloud"),
                    hint="advertise nvidia.com/gpu (mig.strategy: single; sharing.renameByDefault: false), or scale "
                         "this pool with an autoscaler that keys on what it advertises (Karpenter with nodeOverlay)")


class KarpenterCannotLaunch(Rule):
    """A Karpenter pool advertising what no instance type offers has a NodeOverlay."""

    entry = cat.KARPENTER_CANNOT_LAUNCH
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per Karpenter pool whose pods request resources Karpenter cannot know."""
        for cluster, pool, auto in _autoscaled(ctx.fleet):
            if auto.autoscaler is not AutoscalerKind.KARPENTER or auto.node_overlay:
                continue
            unknown = unknown_to_instance_types(cluster, pool)
            if unknown:
                overlay = asdata.node_overlay()
                yield Problem(
                    f"pool {pool.name}: its pods request {', '.join(unknown)}, which no instance type offers "
                    f"(only {asdata.karpenter_instance_gpu_resource()}): Karpenter never launches a node for them",
                    cluster.source_file, pool_path(cluster, pool, "autoscaling", "autoscaler"),
                    hint=f"apply the NodeOverlay of autoscaling.yaml (Karpenter {overlay['since']}+, feature gate "
                         f"{overlay['feature_gate']}) and set autoscaling.nodeOverlay: true, or advertise "
                         "nvidia.com/gpu (mig.strategy: single; sharing.renameByDefault: false)")


# ---------------------------------------------------------------------------------------------- government-ready


def _gov_clusters(fleet: Fleet) -> Iterator[tuple[Cluster, ClusterContext]]:
    for cluster in fleet.clusters:
        if cluster.compliance != "government-ready":
            continue
        try:
            yield cluster, cluster_context(fleet, cluster)
        except GpuspecError:  # unknown release or driver: the support-matrix rules report it
            continue


def _enabled(ctx: ClusterContext) -> list[str]:
    return sorted(p for p in ctx.facts.images if component_enabled(ctx, p))


class GovReadyOutsideSet(Rule):
    """A government-ready cluster enables only operands in its release's documented government-ready set."""

    entry = cat.GOV_READY_OUTSIDE_SET
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per enabled operand outside the set (or one per cluster on a release with none)."""
        for cluster, cctx in _gov_clusters(ctx.fleet):
            line = line_of(cctx.facts.version) or ""
            gov = government_ready(line) if line else None
            if gov is None or gov.status == "cannot-verify":
                continue  # GS246
            if gov.status == "none":
                yield Problem(f"GPU Operator {cctx.facts.tag} has no government-ready components: {gov.gap}",
                              cluster.source_file, ("compliance",), hint="pin a release from 25.10 on")
                continue
            outside = [p for p in _enabled(cctx) if not gov.covers(p)]
            if outside:
                yield Problem(
                    f"compliance government-ready: {', '.join(outside)} of {cctx.facts.tag} "
                    f"{'is' if len(outside) == 1 else 'are'} not in NVIDIA's government-ready set for {line} "
                    f"({gov.source})", cluster.source_file, ("compliance",),
                    hint="turn the operand off (operator.operands) or install it separately from a compliant source")


class GovReadyCannotVerify(Rule):
    """Say where NVIDIA's sources give no government-ready list, or no image variant, for the cluster."""

    entry = cat.GOV_READY_CANNOT_VERIFY
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield one problem per government-ready cluster the sources cannot vouch for, naming the gap."""
        for cluster, cctx in _gov_clusters(ctx.fleet):
            line = line_of(cctx.facts.version) or cctx.facts.version
            gov = government_ready(line)
            if gov.status == "cannot-verify":
                yield Problem(f"cannot verify government-ready for {cctx.facts.tag}: {gov.gap}",
                              cluster.source_file, ("compliance",))
                continue
            if gov.status != "documented":
                continue
            unnamed = [p for p in _enabled(cctx) if gov.covers(p) and gov.image(p) is None]
            if unnamed:
                yield Problem(
                    f"cannot verify the government-ready images of {', '.join(unnamed)} for {cctx.facts.tag}: "
                    f"{gov.images_gap}", cluster.source_file, ("compliance",),
                    hint="check the image references against NVIDIA's NGC government-ready catalog")


def _values(cctx: ClusterContext) -> dict[str, Any]:
    return apply_overrides(helm_values(cctx), cctx.cluster.overrides)


class GovReadyImage(Rule):
    """Where NVIDIA documents a government-ready image variant, the rendered values name it."""

    entry = cat.GOV_READY_IMAGE
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per enabled operand whose rendered image is not the documented variant."""
        for cluster, cctx in _gov_clusters(ctx.fleet):
            line = line_of(cctx.facts.version) or ""
            gov = government_ready(line) if line else None
            if gov is None or gov.status != "documented" or not gov.images:
                continue
            values = _values(cctx)
            for path in _enabled(cctx):
                want = gov.images.get(path)
                if not want:
                    continue
                node: Any = values
                for part in path.split("."):
                    node = node.get(part, {}) if isinstance(node, dict) else {}
                got = {k: str(node.get(k, "")) for k in ("repository", "image", "version")} \
                    if isinstance(node, dict) else {}
                if got != {k: want[k] for k in ("repository", "image", "version")}:
                    sets = ", ".join(f"{path}.{k}={want[k]}" for k in ("repository", "image", "version"))
                    yield Problem(
                        f"compliance government-ready: {path} is not the documented government-ready image "
                        f"{gov.image(path)}", cluster.source_file, ("compliance",),
                        hint=f"add overrides {sets} (with the pull secret the NGC catalog needs)")


#: This area's rules, in id order.
RULES: list[Rule] = [
    AutoscalingBounds(), ReadinessGate(), StartupTaintRemoved(), TaintBothWays(), MigScaleFromZero(),
    GovReadyOutsideSet(), GovReadyCannotVerify(), GovReadyImage(), UnreadyForGood(), KarpenterCannotLaunch(),
]
