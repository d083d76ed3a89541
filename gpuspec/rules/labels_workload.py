"""Label rules about a node's GPU workload (GS707)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import labels_workload as cat
from gpuspec.model.resolve import pool_path
from gpuspec.rules.base import Problem, Rule, RuleContext


class SandboxPoolRunsContainers(Rule):
    """A pool that declares ``devices.sandbox`` is in a cluster with sandbox workloads on."""

    entry = cat.SANDBOX_POOL_RUNS_CONTAINERS
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per sandbox pool of a cluster whose sandbox workloads are off."""
        for cluster in ctx.fleet.clusters:
            if cluster.operator.operands.sandbox_workloads:
                continue
            for pool in cluster.pools:
                if pool.devices.sandbox:
                    yield Problem(
                        f"pool {pool.name!r} is for VMs (devices.sandbox), but sandbox workloads are off: the "
                        "operator gives its nodes the container stack whatever nvidia.com/gpu.workload.config says",
                        cluster.source_file, pool_path(cluster, pool, "devices", "sandbox"),
                        hint="set operator.operands.sandboxWorkloads: true (gpuspec render then labels the pool "
                             "vm-passthrough in node-labels.yaml)",
                    )


RULES: list[Rule] = [SandboxPoolRunsContainers()]
