"""GS814 and the plan read one model of driver ownership (gpuspec/rollout/drivers.py): the last pull request of a
canary rollout in NVIDIADriver mode, which prunes the canary's own NVIDIADriver, fails `lint --base` with the way
out, and the plan names the same pool and nodes."""

from __future__ import annotations

from pathlib import Path

from gpuspec.loader.fleetload import load_fleet
from gpuspec.rollout.drivers import driver_losses
from gpuspec.rollout.records import Disruption
from gpuspec.rules.registry import changeset_findings

from .helpers import FleetRepo, pool


def _loaded(repo: FleetRepo):  # type: ignore[no-untyped-def]
    fleet = load_fleet(repo.fleet).fleet
    assert fleet is not None
    return fleet


def _canary_on_595(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        pool(data, "l40s-canary")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    repo.commit("canary on 595")


def test_the_last_step_of_a_canary_rollout_that_prunes_the_canarys_nvidiadriver(repo: FleetRepo) -> None:
    _canary_on_595(repo)
    with repo.cluster("infer-north") as data:
        pool(data, "l40s")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    lint = [f for f in changeset_findings(repo.root, "HEAD", Path("fleet")) if f.rule_id == "GS814"]
    assert [f.path for f in lint] == [("pools", 0, "driver")]
    assert "pool 'l40s-canary' of cluster 'infer-north' (1 node(s))" in lint[0].message
    assert "cordon and drain the pool's 1 node(s)" in (lint[0].hint or "")
    lost = [c for c in repo.changes() if c.disruption is Disruption.DRIVER_LOST]
    assert [(c.cluster, c.pool) for c in lost] == [("infer-north", "l40s-canary")]
    assert lint[0].message in lost[0].impact


def test_every_pool_on_its_own_nvidiadriver_loses_nothing(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["operator"]["defaultNVIDIADriver"] = False
    repo.commit("every pool on its own NVIDIADriver")
    _canary_on_595(repo)
    with repo.cluster("infer-north") as data:
        pool(data, "l40s")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    assert [f for f in changeset_findings(repo.root, "HEAD", Path("fleet")) if f.rule_id == "GS814"] == []
    assert not [c for c in repo.changes() if c.disruption is Disruption.DRIVER_LOST]


def test_a_selector_that_stops_matching_and_a_switch_back_to_the_clusterpolicy(repo: FleetRepo) -> None:
    base = _loaded(repo)
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["nodeSelector"] = {"acme.example/gpu-pool": "t4-batch-new"}
    losses = driver_losses(base, _loaded(repo))
    assert [(loss.pool, "no longer selects" in loss.why) for loss in losses] == [("t4-batch", True)]
    with repo.cluster("infer-north") as data:
        pool(data, "t4-batch")["nodeSelector"] = {"acme.example/gpu-pool": "t4-batch"}
        pool(data, "t4-batch")["driver"] = {"source": "operator", "branch": "580", "version": "580.173.02"}
    back = driver_losses(base, _loaded(repo))
    assert {loss.pool for loss in back} == {"l40s-canary", "l40s", "t4-batch"}
    assert all("back from NVIDIADriver resources to the ClusterPolicy" in loss.why for loss in back)


def test_a_reload_without_drain_is_not_called_a_drain(repo: FleetRepo) -> None:
    """Issue 44: a step said both 'drain' (its class) and 'drain disabled' (its procedure)."""
    with repo.cluster("infer-north") as data:
        data["rollout"]["drain"] = {"enable": False}
    repo.commit("no drain")
    with repo.cluster("infer-north") as data:
        pool(data, "l40s-canary")["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    [reload] = [c for c in repo.changes() if c.pool == "l40s-canary" and c.disruption is Disruption.DRIVER_RELOAD]
    assert "no drain (drain disabled)" in reload.impact
    assert "drain)" not in reload.disruption.label and "as rollout.drain says" in reload.disruption.label
