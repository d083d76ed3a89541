"""Ownership findings (GS610–GS619): every production cluster has owners who can be reached, and ownership names
declared teams."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry, Param
from gpuspec.findings import Severity

PRODUCTION_HAS_OWNERS = Entry(
    id="GS610",
    title="Production clusters name their owners",
    severity=Severity.WARNING,
    rationale="An alert, a pull request or an incident on a cluster nobody owns reaches nobody.",
    doc="""
A cluster whose labels mark it as production (`production_labels`) has an owner team for each role in
`roles`, set in its `ownership` or inherited from `fleet.yaml`'s.

The owners are named in the handover documents' contacts, on every rendered alert (`team` label, which
Alertmanager routes on), in `gpuspec plan` output and in the CODEOWNERS of the fleet repository
(`gpuspec codeowners`); the platform and hardware teams' groups are bound to the operations role. Without an
owner, the alerts of that role carry no `team` and route only by severity, and nobody reviews the cluster's
spec.

Failing: a cluster labelled `env: prod` with no `ownership` and no fleet-level `ownership`.  Passing:
`fleet.yaml` sets `ownership: {platform: gpu-platform, hardware: gpu-hardware}` and declares both teams.
""",
    params=(
        Param(
            "production_labels",
            dict,
            {"env": "prod"},
            "Cluster labels that mark a production cluster (all must match); empty = every cluster.",
        ),
        Param(
            "roles",
            list,
            ("platform", "hardware"),
            "Ownership roles a production cluster must have (platform, hardware, observability).",
        ),
    ),
    tags=("ownership",),
)

OWNER_TEAM_DECLARED = Entry(
    id="GS611",
    title="Ownership names a declared team",
    severity=Severity.ERROR,
    rationale="A typo in a team name silently drops the team's contacts, role bindings and alert routing.",
    doc="""
Every team named in `ownership` (fleet, cluster, pool) and in `tenants[].team` is declared in `fleet.yaml`'s
`teams`.

The rendered roles bind the team's `groups`, the alerts route to its `receiver`, the handover shows its contact,
on-call rotation and escalation, and CODEOWNERS lists its `codeOwners`: an undeclared name gives none of these.

Failing: `ownership: {platform: gpu-platfrom}` with a team `gpu-platform`.  Passing: the name matches.
""",
    tags=("ownership",),
)

OWNERS_REACHABLE = Entry(
    id="GS612",
    title="Owners of production clusters can be paged and bound",
    severity=Severity.WARNING,
    rationale="The contacts section and the break-glass role are only as good as the team's on-call and groups.",
    doc="""
The platform and hardware owner teams of a production cluster (`production_labels`, as GS610) have an `onCall`
rotation (who answers a page at night) and at least one `groups` entry (who gets the break-glass operations role).

Without `onCall` the handover lists no one to page; without `groups` the operations RoleBinding is not rendered,
so in an incident nobody may cordon a node or restart an operand.

Failing: a team owning a production cluster with neither.  Passing: `onCall: PagerDuty schedule gpu-primary` and
`groups: ["acme:gpu-platform"]`.
""",
    params=(
        Param(
            "production_labels",
            dict,
            {"env": "prod"},
            "Cluster labels that mark a production cluster (all must match); empty = every cluster.",
        ),
    ),
    tags=("ownership",),
)

ENTRIES: tuple[Entry, ...] = (PRODUCTION_HAS_OWNERS, OWNER_TEAM_DECLARED, OWNERS_REACHABLE)
