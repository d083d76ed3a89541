"""The explicit rule registry: every area's rules, imported by name, mapped id → rule.

No rule registers itself; adding a rule means declaring its entry in the catalogue and adding the rule
to its area's list here.  The change-set rules (GS8xx) judge a change between two revisions and run only
under `lint --base`, so they and the plan's change records are imported only when asked for.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from gpuspec.findings import Finding, Severity
from gpuspec.model.fleet import Fleet
from gpuspec.policy.load import load_policy
from gpuspec.rules import airgap, observability, operations, rollout, security
from gpuspec.rules.base import Rule, run_rule
from gpuspec.rules.matrix import MATRIX_RULES

#: The areas whose rules judge one revision of the fleet: support matrix (GS2xx/GS3xx), air-gap,
#: rollout, security, observability.
AREAS: tuple[list[Rule], ...] = (
    MATRIX_RULES,
    airgap.RULES,
    rollout.RULES,
    security.RULES,
    observability.RULES,
    operations.RULES,
)


def _build(areas: Iterable[list[Rule]], taken: Iterable[str] = ()) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    seen = set(taken)
    for area in areas:
        for rule in area:
            if rule.entry.id in rules or rule.entry.id in seen:
                raise RuntimeError(f"rule id {rule.entry.id} has two implementations")
            rules[rule.entry.id] = rule
    return dict(sorted(rules.items()))


#: Rule id → rule of every rule that judges one revision, sorted by id.
RULES: dict[str, Rule] = _build(AREAS)


@functools.cache
def changeset_rules() -> dict[str, Rule]:
    """Rule id → rule of the change-set rules (GS8xx), sorted by id; imported on first use."""
    from gpuspec.rules.changeset import CHANGESET_RULES
    from gpuspec.rules.changeset_apiserver import CHANGESET_RULES as APISERVER_RULES
    from gpuspec.rules.changeset_drivers import DRIVER_RULES
    from gpuspec.rules.changeset_rollback import ROLLBACK_RULES
    from gpuspec.rules.changeset_waves import WAVE_RULES
    from gpuspec.rules.changeset_windows import WINDOW_RULES

    return _build((CHANGESET_RULES, APISERVER_RULES, DRIVER_RULES, WAVE_RULES, WINDOW_RULES, ROLLBACK_RULES),
                  taken=RULES)


def all_rules() -> dict[str, Rule]:
    """Every rule, sorted by id."""
    return dict(sorted({**RULES, **changeset_rules()}.items()))


def changeset_findings(
    repo_root: Path | None,
    base_rev: str,
    fleet_dir: Path,
    *,
    policies_dir: Path | None = None,
    rendered_dir: Path | None = None,
    head: Fleet | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    severities: Mapping[str, Severity] | None = None,
    enabled: Mapping[str, bool] | None = None,
    as_of: date | None = None,
) -> list[Finding]:
    """Run every GS8xx rule on the change from ``base_rev`` to the working tree and return their findings.

    A convenience for tests and scripts; ``gpuspec lint --base`` runs the same rules through the lint pipeline.

    ``params``, ``severities`` and ``enabled`` are keyed by rule id (the policy engine's settings); rules
    not named run with their defaults.  ``head`` is the already loaded working-tree fleet, if the caller
    has it.  Findings are not located (``gpuspec.loader.positions.locate_findings`` does that).
    """
    policies = policies_dir if policies_dir is not None else fleet_dir.parent / "policies"
    from gpuspec.rules.changeset import changeset_context  # the change-set machinery only when asked for

    ctx = changeset_context(
        repo_root, base_rev, fleet_dir, policies_dir=policies_dir, rendered_dir=rendered_dir, head=head, as_of=as_of,
    )
    ctx = replace(ctx, exceptions=tuple(load_policy(policies, ctx.fleet.settings.policy.packs).exceptions))
    findings: list[Finding] = []
    for rule in changeset_rules().values():
        rule_id = rule.entry.id
        if enabled is not None and enabled.get(rule_id, True) is False:
            continue
        rule_params = {**rule.entry.defaults(), **dict((params or {}).get(rule_id, {}))}
        findings.extend(run_rule(rule, replace(ctx, params=rule_params), (severities or {}).get(rule_id)))
    return findings
