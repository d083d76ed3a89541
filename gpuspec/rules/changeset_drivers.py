"""Change-set rule of driver ownership: no change takes a node's driver pod away outside the upgrade policy (GS814).

What a change does to the owners of driver pods is read once, in :mod:`gpuspec.rollout.drivers`; ``gpuspec
plan`` shows the same records."""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import changeset as cat
from gpuspec.model.resolve import pool_path
from gpuspec.rollout.drivers import driver_losses
from gpuspec.rules.base import Problem, Rule
from gpuspec.rules.changeset import ChangeSetContext, ChangeSetRule


class DriverTakenAway(ChangeSetRule):
    """Refuse a change whose rendered objects take a pool's driver pods away at once."""

    entry = cat.DRIVER_TAKEN_AWAY

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per pool whose nodes lose their driver pod outside the upgrade policy."""
        if ctx.base is None:
            return
        for loss in driver_losses(ctx.base, ctx.fleet):
            cluster = ctx.fleet.cluster(loss.cluster)
            if cluster is None:
                continue
            pool = cluster.pool(loss.pool)
            path = pool_path(cluster, pool, "driver") if pool is not None else ("pools",)
            yield Problem(loss.describe(), cluster.source_file, path, hint=loss.way_out)


#: This module's rules.
DRIVER_RULES: list[Rule] = [DriverTakenAway()]
