"""A change-set context between two fleets held in memory (no git): what ``gpuspec upgrade`` checks a step with."""

from __future__ import annotations

from collections.abc import Sequence

from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.policy.load import LocatedException
from gpuspec.rollout.diff import diff_fleets
from gpuspec.rules.changeset import ChangeSetContext


def memory_changeset_context(
    base: Fleet,
    head: Fleet,
    *,
    exceptions: Sequence[LocatedException] = (),
    changed_files: Sequence[str] = (),
    base_rev: str = "the previous step",
    context: Sequence[Cluster] = (),
) -> ChangeSetContext:
    """The context the GS8xx rules judge the change from ``base`` to ``head`` in: as ``lint --base`` builds it,
    with the changed files given (spec files only: nothing under rendered/ changes in a planned step).  ``context``:
    the clusters of the fleet outside ``base`` and ``head``, which the step leaves as they are."""
    return ChangeSetContext(
        fleet=head,
        params={},
        base=base,
        base_rev=base_rev,
        changes=tuple(diff_fleets(base, head)),
        changed_files=tuple(changed_files),
        exceptions=tuple(exceptions),
        context=tuple(context),
    )
