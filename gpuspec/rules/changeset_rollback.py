"""Change-set rule of the rollback flag: a downgrade is acknowledged by a flag this change sets (GS831).

GS803 asks for ``operator.rollback: true`` with a downgrade and GS822 for its removal in the next change; this rule
refuses a downgrade whose only acknowledgment is the flag an earlier change left behind.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuspec.catalogue import changeset_steps as cat
from gpuspec.rollout.records import ChangeKind
from gpuspec.rules.base import Problem, Rule
from gpuspec.rules.changeset import ChangeSetContext, ChangeSetRule


class RollbackAcknowledgedInThisChange(ChangeSetRule):
    """A downgrade's ``operator.rollback: true`` is set by the change itself, not kept from the base."""

    entry = cat.STALE_ROLLBACK_ACKNOWLEDGMENT

    def check_changes(self, ctx: ChangeSetContext) -> Iterator[Problem]:
        """Yield a problem per downgrade whose cluster already carried the rollback flag at the base revision."""
        base = ctx.base
        if base is None:
            return
        for change in ctx.changes:
            if not change.downgrade or change.derived or change.cluster is None:
                continue
            cluster = ctx.fleet.cluster(change.cluster)
            old = base.cluster(change.cluster)
            if cluster is None or old is None or not (cluster.operator.rollback and old.operator.rollback):
                continue
            what = "operator" if change.kind is ChangeKind.OPERATOR_DOWNGRADE else f"pool {change.pool!r} driver"
            yield Problem(
                f"cluster {change.cluster!r}: {what} downgrade {change.before} -> {change.after} is acknowledged only "
                f"by operator.rollback: true left from an earlier change ({ctx.base_rev or 'the base'} has it)",
                change.file or cluster.source_file,
                change.path,
                hint="remove operator.rollback in a change of its own first (GS822), then downgrade with the flag "
                "set again in the same change",
            )


#: This module's change-set rules.
ROLLBACK_RULES: list[Rule] = [RollbackAcknowledgedInThisChange()]
