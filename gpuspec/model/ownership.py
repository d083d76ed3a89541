"""Who owns what: teams (contacts, on-call, escalation, groups, code owners, alert receiver) and the ownership
roles of a fleet, a cluster and a pool, with their resolution (cluster overrides fleet, pool overrides cluster).

Three roles own a GPU cluster's parts:

* ``platform``: the team that owns the GPU Operator stack (operator namespace, ClusterPolicy, the cluster's
  spec file): reviews ``fleet/`` changes, holds the break-glass operations role, receives the operator alerts;
* ``hardware``: the accelerator/hardware team that owns the GPU nodes (their drivers, firmware, ECC and XID
  faults): holds the operations role too and receives the hardware alerts of its pools;
* ``observability``: the team that reads metrics and alert rules (observability role).

Tenants name their team with ``tenants[].team``; its groups get the tenant role.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

#: Same pattern as ``gpuspec.model.types.Name`` (a DNS-1123 label); repeated because the models import this module.
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")]
#: A group name as the cluster's authentication presents it (OIDC claim, LDAP group): printable, no spaces at ends.
GroupName = Annotated[str, StringConstraints(pattern=r"^[^\s\x00-\x1f](?:[^\x00-\x1f]{0,251}[^\s\x00-\x1f])?$")]
#: A CODEOWNERS owner: ``@user``, ``@org/team`` or an e-mail address.
CodeOwner = Annotated[
    str,
    StringConstraints(
        pattern=r"^(@[A-Za-z0-9][A-Za-z0-9-]{0,38}(/[A-Za-z0-9][A-Za-z0-9._-]{0,99})?|"
        r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63})$"
    ),
]
#: One line of free text (a contact, a rotation, an escalation step).
Line = Annotated[str, StringConstraints(pattern=r"^[^\n\r]*\S[^\n\r]*$", max_length=300)]

#: The ownership roles, in the order documents list them.
ROLES: tuple[str, ...] = ("platform", "hardware", "observability")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, frozen=False, defer_build=True)


class Team(_Model):
    """A team that owns part of the fleet or runs workloads on it: how to reach it and who its members are."""

    name: Name = Field(description="Team name; ownership and `tenants[].team` refer to it.")
    description: Line | None = Field(default=None, description="What the team does.")
    contact: Line | None = Field(
        default=None, description="How to reach the team in working hours (chat channel, mailing list)."
    )
    on_call: Line | None = Field(
        default=None,
        alias="onCall",
        description="The on-call rotation that answers pages (e.g. `PagerDuty schedule gpu-platform-primary`).",
    )
    escalation: list[Line] = Field(
        default_factory=list, description="Who to escalate to, in order, when the on-call does not resolve it."
    )
    groups: list[GroupName] = Field(
        default_factory=list,
        description="Kubernetes groups of the team's members (as the clusters' authentication presents them); "
        "the rendered RBAC binds the team's roles to them.",
    )
    code_owners: list[CodeOwner] = Field(
        default_factory=list,
        alias="codeOwners",
        description="Owners in CODEOWNERS syntax (`@org/team`, `@user`, e-mail) who review the files the team "
        "owns (`gpuspec codeowners`).",
    )
    receiver: Name | None = Field(
        default=None,
        description="Alertmanager receiver the team's alerts route to (alerts carry `team: <name>`); absent = "
        "routed on the `team` label by whatever route your Alertmanager has.",
    )


class Ownership(_Model):
    """Which team owns each role; every field falls back to the level above (fleet → cluster)."""

    platform: Name | None = Field(
        default=None,
        description="Team owning the GPU Operator stack: reviews the spec, holds the break-glass operations role, "
        "receives the operator alerts.",
    )
    hardware: Name | None = Field(
        default=None,
        description="Accelerator/hardware team owning the GPU nodes (drivers, firmware, ECC/XID faults): holds "
        "the operations role, receives the hardware alerts.",
    )
    observability: Name | None = Field(
        default=None, description="Team that reads GPU metrics, alert rules and GPU node state (observability role)."
    )

    def get_role(self, role: str) -> str | None:
        """The team this level names for ``role`` (one of :data:`ROLES`), if any."""
        return {"platform": self.platform, "hardware": self.hardware, "observability": self.observability}[role]


class PoolOwnership(_Model):
    """A pool's own hardware owner, where it differs from the cluster's."""

    hardware: Name | None = Field(
        default=None, description="Team owning this pool's nodes (e.g. a pool bought and run by another group)."
    )


@dataclass(frozen=True)
class Owners:
    """The resolved owner team names of one cluster (``None`` where no level names one)."""

    platform: str | None
    hardware: str | None
    observability: str | None

    def get(self, role: str) -> str | None:
        """The team of ``role`` (one of :data:`ROLES`)."""
        return {"platform": self.platform, "hardware": self.hardware, "observability": self.observability}[role]


def resolve(fleet_level: Ownership, cluster_level: Ownership | None) -> Owners:
    """The owners of a cluster: its own ownership, each role falling back to the fleet's."""
    local = cluster_level or Ownership()
    return Owners(
        platform=local.platform or fleet_level.platform,
        hardware=local.hardware or fleet_level.hardware,
        observability=local.observability or fleet_level.observability,
    )


def pool_hardware(cluster_owners: Owners, pool_level: PoolOwnership) -> str | None:
    """The hardware owner of a pool: its own, else the cluster's."""
    return pool_level.hardware or cluster_owners.hardware


def team_index(teams: list[Team]) -> Mapping[str, Team]:
    """Team name → team (the first of a name; duplicates are a validation error of fleet.yaml)."""
    out: dict[str, Team] = {}
    for team in teams:
        out.setdefault(team.name, team)
    return out
