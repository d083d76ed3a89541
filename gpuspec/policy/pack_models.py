"""Pydantic models of a policy pack file (``policies/<name>.yaml``, ``kind: PolicyPack``).

Unknown keys are errors, so a misspelt setting in a pack is a finding with a
position, never a silently ignored line.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from gpuspec.findings import Severity
from gpuspec.model.patterns import DNS_LABEL_PATTERN

PackName = Annotated[str, StringConstraints(pattern=DNS_LABEL_PATTERN)]
#: A value still to be filled in by a person, as ``gpuspec import`` writes it: ``TODO`` or ``"TODO: review"``.
PLACEHOLDER_PATTERN = r"^\s*(?i:todo)\b"
Placeholder = Annotated[str, StringConstraints(pattern=PLACEHOLDER_PATTERN)]
#: A rule id as written in a pack: GS + three digits, or a custom id such as ORG001.
RuleId = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9]{1,9}[0-9]{3}$")]


class PolicyModel(BaseModel):
    """Base of every policy model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", populate_by_name=False)


class PackMeta(PolicyModel):
    """Name and description of a pack."""

    name: PackName = Field(description="Pack name; equals the file name without .yaml.")
    description: str | None = Field(default=None, description="What the pack is for.")


class RuleSetting(PolicyModel):
    """How a pack sets one rule: on or off, severity, parameters."""

    enabled: bool | None = Field(default=None, description="Run the rule (absent = inherit; default on).")
    severity: Severity | None = Field(default=None, description="error, warning or info (absent = inherit).")
    params: dict[str, Any] = Field(default_factory=dict, description="Parameter values (merged over inherited).")


class AcceptedValues(PolicyModel):
    """What the exception's cluster (or pool) runs while it accepts findings: the adopted state it was written
    for.  Another release, Kubernetes minor or driver branch is not accepted by it."""

    operator: str | None = Field(default=None, description="GPU Operator release the cluster runs (e.g. v24.9.2).")
    kubernetes: str | None = Field(default=None, description='Kubernetes minor the cluster runs (e.g. "1.31").')
    driver_branch: str | None = Field(
        default=None, alias="driverBranch",
        description="Driver branch the pool runs (with pool:), or every operator-managed pool of the cluster runs.",
    )


class PolicyException(PolicyModel):
    """A time-boxed, owned exception for some rules in one cluster (or pool)."""

    rules: list[str] = Field(min_length=1, description="Rule ids the exception covers.")
    cluster: str = Field(
        min_length=1, description='Cluster name, or "*" for every cluster and fleet.yaml.'
    )
    pool: PackName | None = Field(default=None, description="Only findings of this pool (absent = whole cluster).")
    owner: str = Field(min_length=1, description="Who answers for the exception (team or person).")
    reason: str = Field(min_length=1, description="Why the finding is accepted.")
    expires: date | Placeholder = Field(
        description='Last day the exception applies (YYYY-MM-DD); a "TODO..." placeholder accepts nothing.'
    )
    values: AcceptedValues | None = Field(
        default=None,
        description="Accept only while the cluster (pool) runs these values, the state it was adopted in "
        "(gpuspec import writes them); absent: whatever it runs.",
    )


class CustomRule(PolicyModel):
    """A declarative rule: select spec nodes by path pattern and assert a JSON Schema on each."""

    id: RuleId = Field(description="Rule id in your own namespace, e.g. ORG001 (GS ids are gpuspec's).")
    title: str = Field(min_length=1, description="One line saying what the rule wants.")
    severity: Severity = Field(default=Severity.WARNING, description="Default severity.")
    message: str = Field(min_length=1, description="Message of each finding.")
    select: str = Field(
        min_length=1, description="Path pattern of the nodes to check, e.g. clusters[*].pools[*] or fleet.mirrors[*]."
    )
    schema_: dict[str, Any] = Field(alias="schema", description="JSON Schema every selected node must satisfy.")
    rationale: str | None = Field(default=None, description="Why the rule exists (shown in reports).")
    hint: str | None = Field(default=None, description="How to fix a finding.")


class PolicyPack(PolicyModel):
    """Contents of one policy pack file."""

    api_version: Literal["gpuspec.io/v1alpha1"] = Field(alias="apiVersion", description="Format version.")
    kind: Literal["PolicyPack"] = Field(description="Always PolicyPack.")
    metadata: PackMeta = Field(description="Pack name and description.")
    extends: PackName | list[PackName] | None = Field(
        default=None, description="Pack(s) this one builds on; later settings override earlier ones."
    )
    as_of: date | None = Field(
        default=None, alias="asOf",
        description="Date life-cycle checks judge at (absent = the support-matrix data date).",
    )
    rules: dict[str, RuleSetting] = Field(default_factory=dict, description="Rule id → setting.")
    exceptions: list[PolicyException] = Field(default_factory=list, description="Time-boxed exceptions.")
    custom_rules: list[CustomRule] = Field(default_factory=list, alias="customRules", description="Custom rules.")

    def parents(self) -> list[str]:
        """The packs this one extends, in order."""
        if self.extends is None:
            return []
        return [self.extends] if isinstance(self.extends, str) else list(self.extends)
