"""`gpuspec plan` names the owners of the clusters and pools a change touches."""

from __future__ import annotations

import json

from click.testing import CliRunner

from gpuspec.cli.plan_cmd import plan_command

from .helpers import FleetRepo, pool

TEAMS = [
    {"name": "gpu-platform", "onCall": "PagerDuty schedule gpu-platform-primary"},
    {"name": "gpu-hardware", "contact": "#gpu-hardware"},
    {"name": "dc-north-ops", "onCall": "Opsgenie dc-north"},
]


def _owned(repo: FleetRepo) -> None:
    with repo.edit("fleet/fleet.yaml") as data:
        data["teams"] = TEAMS
        data["ownership"] = {"platform": "gpu-platform", "hardware": "gpu-hardware"}
    with repo.cluster("infer-north") as data:
        pool(data, "l40s-canary")["ownership"] = {"hardware": "dc-north-ops"}
    repo.commit("owners")


def test_plan_names_cluster_and_pool_owners(repo: FleetRepo) -> None:
    _owned(repo)
    with repo.cluster("infer-north") as data:
        pool(data, "l40s-canary")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    text = CliRunner().invoke(plan_command, ["--base", "HEAD"])
    assert text.exit_code == 0, text.output
    assert (
        "owners: platform gpu-platform (on call: PagerDuty schedule gpu-platform-primary), hardware "
        "gpu-hardware; pool l40s-canary: dc-north-ops"
    ) in text.output
    data = json.loads(CliRunner().invoke(plan_command, ["--base", "HEAD", "--format", "json"]).output)
    owners = data["owners"]["infer-north"]
    assert owners["platform"]["team"] == "gpu-platform"
    assert owners["pools"] == {"l40s-canary": {"team": "dc-north-ops", "on_call": "Opsgenie dc-north", "contact": ""}}
    markdown = CliRunner().invoke(plan_command, ["--base", "HEAD", "--format", "markdown"]).output
    assert "| Owners |" in markdown and "pool l40s-canary: dc-north-ops |" in markdown


def test_unowned_clusters_say_so(repo: FleetRepo) -> None:
    with repo.cluster("train-east") as data:
        data["kubernetes"]["version"] = "1.35"
    text = CliRunner().invoke(plan_command, ["--base", "HEAD"]).output
    assert "owners: platform: no owner, hardware: no owner" in text
