"""Worst-case step durations: the upgrade controller's arithmetic (k8s-operator-libs at gpu-operator v26.7.0),
the 0 / absent cases, the percentage base per upgrade policy, the maintenance window, and the plan's reports."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from gpuspec.model.cluster import Cluster
from gpuspec.model.cluster_specs import MaintenanceWindow, RolloutSpec
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource
from gpuspec.plan.markdown import render_markdown
from gpuspec.plan.output import render_json, render_text
from gpuspec.render.context import cluster_context
from gpuspec.rollout.durations import (
    CHART_TIMEOUT_SECONDS,
    DurationEstimate,
    context_scopes,
    driver_node_seconds,
    driver_scopes,
    estimate_driver_reload,
    estimate_duration,
    estimate_mig_repartition,
    estimate_operand_restart,
    estimate_targets,
    format_seconds,
    scaled_max_unavailable,
)
from gpuspec.rollout.records import Disruption
from gpuspec.rollout.step_durations import step_duration

from .helpers import FIXTURE_FLEET, FleetRepo, pool


def rollout(**settings: Any) -> RolloutSpec:
    """A rollout spec written as in a cluster file (camelCase keys)."""
    return RolloutSpec.model_validate(settings)


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    from gpuspec.loader.fleetload import load_fleet

    result = load_fleet(FIXTURE_FLEET)
    assert result.fleet is not None
    return result.fleet


def cluster(fleet: Fleet, name: str, **rollout_settings: Any) -> Cluster:
    """The fixture cluster ``name`` with its rollout settings replaced by ``rollout_settings`` (if any)."""
    found = fleet.cluster(name)
    assert found is not None
    if not rollout_settings:
        return found
    return found.model_copy(update={"rollout": rollout(**rollout_settings)})


# ------------------------------------------------------------------------------------------------ arithmetic


@pytest.mark.parametrize(
    ("value", "total", "expected"),
    [
        (3, 40, 3),  # an integer is a node count
        (0, 40, 0),
        ("25%", 13, 4),  # 3.25 rounds up
        ("10%", 40, 4),  # exact
        ("10%", 12, 2),  # 1.2 rounds up
        ("1%", 1, 1),  # any percentage of a node is a whole node
        ("0%", 50, 0),
        ("100%", 7, 7),
        ("33%", 3, 1),  # 0.99 rounds up
        ("50%", 0, 0),
    ],
)
def test_max_unavailable_percentage_rounds_up_as_the_controller_does(value: Any, total: int, expected: int) -> None:
    assert scaled_max_unavailable(value, total) == expected


def test_defaults_take_the_chart_pod_deletion_timeout_and_no_drain() -> None:
    seconds, words = driver_node_seconds(rollout())
    assert seconds == CHART_TIMEOUT_SECONDS + 600
    assert words == "pod deletion 300s + reload 600s"


def test_every_phase_of_a_node_adds_up() -> None:
    spec = rollout(
        waitForCompletion={"podSelector": "app=train", "timeoutSeconds": 1800},
        podDeletion={"timeoutSeconds": 120},
        drain={"enable": True, "timeoutSeconds": 900},
        perNodeSeconds={"driverReload": 420},
    )
    assert driver_node_seconds(spec) == (
        1800 + 120 + 900 + 420,
        "wait for jobs 1800s + pod deletion 120s + drain 900s + reload 420s",
    )


def test_a_drain_that_is_off_does_not_count_its_timeout() -> None:
    seconds, words = driver_node_seconds(rollout(drain={"enable": False, "timeoutSeconds": 900}))
    assert seconds == 900 and "drain" not in words


@pytest.mark.parametrize(
    "settings",
    [
        {"waitForCompletion": {"podSelector": "app=train", "timeoutSeconds": 0}},
        {"podDeletion": {"timeoutSeconds": 0}},
        {"drain": {"enable": True, "timeoutSeconds": 0}},
    ],
)
def test_a_timeout_of_zero_has_no_bound(settings: dict[str, Any]) -> None:
    estimate = estimate_driver_reload(rollout(**settings), 4, 4)
    assert estimate.seconds is None and not estimate.manual
    assert estimate.text == "unbounded" and "without timeout (0)" in estimate.explanation


def test_nodes_go_in_batches_of_the_smaller_limit() -> None:
    # 12 nodes, maxParallelUpgrades 4 but maxUnavailable 10% of 12 = 2: six batches of 900 s.
    estimate = estimate_driver_reload(rollout(maxParallelUpgrades=4, maxUnavailable="10%"), 12, 12)
    assert estimate.seconds == 6 * 900
    assert "2 at a time" in estimate.explanation and "10% of 12 node(s) = 2 rounded up" in estimate.explanation
    assert estimate.explanation.endswith("= 1h 30m")


def test_max_parallel_zero_means_every_node_up_to_max_unavailable() -> None:
    unlimited = estimate_driver_reload(rollout(maxParallelUpgrades=0, maxUnavailable="100%"), 10, 10)
    assert unlimited.seconds == 900 and "maxParallelUpgrades unlimited" in unlimited.explanation
    capped = estimate_driver_reload(rollout(maxParallelUpgrades=0, maxUnavailable=3), 10, 10)
    assert capped.seconds == 4 * 900  # ceil(10 / 3)


def test_max_unavailable_zero_never_starts_a_node() -> None:
    for value in (0, "0%"):
        estimate = estimate_driver_reload(rollout(maxUnavailable=value), 5, 5)
        assert estimate.seconds is None and not estimate.manual
        assert "never starts a node" in estimate.explanation


def test_the_percentage_base_is_every_node_of_the_policy_not_only_the_changing_ones() -> None:
    # 25% of the 40 nodes the policy manages is 10 slots, even for a 4-node pool: the pool goes in one batch.
    assert estimate_driver_reload(rollout(maxParallelUpgrades=0), 4, 40).seconds == 900
    # Alone (4 nodes), 25% is one node: four batches.
    assert estimate_driver_reload(rollout(maxParallelUpgrades=0), 4, 4).seconds == 4 * 900


def test_no_nodes_take_no_time_and_auto_upgrade_off_is_manual() -> None:
    assert estimate_driver_reload(rollout(), 0, 10) == DurationEstimate(0, "no nodes")
    manual = estimate_driver_reload(rollout(autoUpgrade=False), 3, 3)
    assert manual.seconds is None and manual.manual and manual.text == "manual"


def test_operand_restart_rolls_node_by_node_and_mig_takes_one_node() -> None:
    spec = rollout(perNodeSeconds={"operandRestart": 90, "migRepartition": 240})
    assert estimate_operand_restart(spec, 5).seconds == 450
    assert estimate_mig_repartition(spec, 5).seconds == 240
    assert estimate_operand_restart(spec, 0).seconds == 0 and estimate_mig_repartition(spec, 0).seconds == 0


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (45, "45s"),
        (60, "1m"),
        (61, "2m"),
        (3600, "1h"),
        (5400, "1h 30m"),
        (33600, "9h 20m"),
    ],
)
def test_format_seconds(seconds: int, text: str) -> None:
    assert format_seconds(seconds) == text


def test_per_node_seconds_must_be_positive() -> None:
    with pytest.raises(ValidationError):
        rollout(perNodeSeconds={"driverReload": 0})


# ------------------------------------------------------------------------------------------------ on clusters


def test_scopes_follow_the_driver_management(fleet: Fleet) -> None:
    # infer-north: NVIDIADriver resources, the L40S pools share the default one; train-east: the ClusterPolicy.
    assert driver_scopes(cluster(fleet, "infer-north"), fleet) == {
        "l40s-canary": "default",
        "l40s": "default",
        "t4-batch": "t4-batch",
    }
    assert set(driver_scopes(cluster(fleet, "train-east"), fleet).values()) == {"clusterpolicy"}
    # Without the fleet every operator-installed pool counts as the ClusterPolicy's.
    assert set(driver_scopes(cluster(fleet, "infer-north")).values()) == {"clusterpolicy"}


def test_pool_estimate_uses_its_nvidiadriver_as_percentage_base(fleet: Fleet) -> None:
    north = cluster(fleet, "infer-north", maxParallelUpgrades=0, maxUnavailable="25%")
    l40s = north.pool("l40s")
    assert l40s is not None
    estimate = estimate_duration(north, l40s, Disruption.DRIVER_RELOAD, fleet=fleet)
    # 25% of the 13 nodes of NVIDIADriver default = 4 (rounded up): 12 nodes in 3 batches of 900 s.
    assert estimate.seconds == 3 * 900
    assert "NVIDIADriver default: 12 node(s), 4 at a time" in estimate.explanation
    assert "25% of 13 node(s) = 4 rounded up" in estimate.explanation


def test_pools_under_one_policy_share_slots_and_different_nvidiadrivers_run_side_by_side(fleet: Fleet) -> None:
    north = cluster(fleet, "infer-north")  # one node at a time, 25 minutes each
    l40s, canary, t4 = (north.pool(n) for n in ("l40s", "l40s-canary", "t4-batch"))
    assert l40s is not None and canary is not None and t4 is not None
    shared = estimate_targets(north, [(l40s, Disruption.DRIVER_RELOAD), (canary, Disruption.DRIVER_RELOAD)], fleet)
    assert shared.seconds == 13 * 1500
    apart = estimate_targets(north, [(l40s, Disruption.DRIVER_RELOAD), (t4, Disruption.DRIVER_RELOAD)], fleet)
    assert apart.seconds == 12 * 1500 and apart.explanation.startswith("longest of, side by side")
    everything = estimate_duration(north, None, Disruption.DRIVER_RELOAD, fleet=fleet)
    assert everything.seconds == 13 * 1500


def test_scopes_from_the_render_context_give_the_fleet_lookup_s_estimates(fleet: Fleet) -> None:
    for name in ("infer-north", "train-east"):
        member = cluster(fleet, name, maxParallelUpgrades=0, maxUnavailable="25%")
        scopes = context_scopes(member, cluster_context(fleet, member))
        assert scopes == driver_scopes(member, fleet)
        for target in [*member.pools, None]:
            for kind in (Disruption.DRIVER_RELOAD, Disruption.MIG_REPARTITION):
                assert estimate_duration(member, target, kind, scopes=scopes) == estimate_duration(
                    member, target, kind, fleet=fleet)


def test_unmanaged_and_host_driver_pools(fleet: Fleet) -> None:
    east = cluster(fleet, "train-east")
    h100 = east.pool("h100")
    assert h100 is not None
    host = h100.model_copy(update={"driver": h100.driver.model_copy(update={"source": DriverSource.HOST})})
    hosted = east.model_copy(update={"pools": [host if p is h100 else p for p in east.pools]})
    estimate = estimate_duration(hosted, host, Disruption.DRIVER_RELOAD)
    assert estimate.manual and "host image" in estimate.explanation
    assert estimate_duration(hosted, host, Disruption.NONE).seconds == 0


# ------------------------------------------------------------------------------------------------ window


def window(**settings: Any) -> MaintenanceWindow:
    return MaintenanceWindow.model_validate({"days": ["sat"], "start": "02:00", "length": "4h", **settings})


def test_window_length_and_words() -> None:
    assert window(length="2h30m").seconds == 9000 and window(length="90m").seconds == 5400
    assert window(timeZone="Europe/Berlin").describe() == "sat 02:00 for 4h (Europe/Berlin)"


@pytest.mark.parametrize(
    "settings",
    [
        {"length": "0h"},
        {"length": "169h"},
        {"length": "4 hours"},
        {"start": "24:00"},
        {"days": []},
        {"days": ["sat", "sat"]},
        {"days": ["saturday"]},
        {"timeZone": "Europe/Berlin; rm"},
    ],
)
def test_window_refuses_nonsense(settings: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        window(**settings)


def test_step_fits_its_window_or_not(fleet: Fleet) -> None:
    from gpuspec.rollout.records import Change, ChangeKind

    north = cluster(fleet, "infer-north")
    change = Change(
        ChangeKind.DRIVER, "infer-north", "l40s", "driver", "a", "b", Disruption.DRIVER_RELOAD, "", "", 1, 2
    )
    for length, fits in (("4h", False), ("5h", True)):
        spec = north.rollout.model_copy(update={"window": window(length=length)})
        head = fleet.model_copy(
            update={
                "clusters": [north.model_copy(update={"rollout": spec}) if c is north else c for c in fleet.clusters]
            }
        )
        duration = step_duration(head, "infer-north", 4, "pool wave 2: l40s", [change])
        assert duration is not None and duration.total.seconds == 5 * 3600
        assert duration.fits is fits
        assert ("does NOT fit" in duration.window_text) is not fits


# ------------------------------------------------------------------------------------------------ plan reports


def test_plan_reports_the_duration_per_step_and_pool(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["rollout"]["window"] = {"days": ["sat", "sun"], "start": "01:00", "length": "4h"}
        for name in ("l40s-canary", "l40s"):
            pool(data, name)["driver"] = {"source": "operator", "branch": "595", "version": "595.91.07"}
    plan = repo.plan()
    text = render_text(plan)
    assert "    duration: ≤ 25m (worst case); window sat, sun 01:00 for 4h (UTC): fits" in text
    assert "    duration: ≤ 5h (worst case); window sat, sun 01:00 for 4h (UTC): does NOT fit in one window" in text
    assert (
        "      l40s: NVIDIADriver default: 12 node(s), 1 at a time (maxParallelUpgrades 1, maxUnavailable 1 of 13 "
        "node(s) = 1): 12 batch(es) x (pod deletion 300s + drain 600s + reload 600s) = 5h"
    ) in text
    markdown = render_markdown(plan)
    assert "### How long each step takes (worst case)" in markdown
    assert (
        "| `infer-north` | pool wave 2: l40s | whole step | ≤ 5h | ⚠️ window sat, sun 01:00 for 4h (UTC): does "
        "NOT fit in one window |"
    ) in markdown
    steps = json.loads(render_json(plan))["steps"]
    wave = next(s for s in steps if s["label"] == "pool wave 2: l40s")
    assert wave["duration"]["total"]["seconds"] == 5 * 3600
    assert wave["duration"]["pools"]["l40s"]["text"] == "≤ 5h"
    assert wave["duration"]["window"] == {
        "days": ["sat", "sun"],
        "start": "01:00",
        "length": "4h",
        "timeZone": "UTC",
        "seconds": 4 * 3600,
        "fits": False,
    }


def test_plan_without_disruption_has_no_duration(repo: FleetRepo) -> None:
    with repo.cluster("infer-north") as data:
        data["tenants"][0]["gpuQuota"] = 96
    plan = repo.plan()
    assert plan.durations == {} and "duration:" not in render_text(plan)
    assert all(s["duration"] is None for s in json.loads(render_json(plan))["steps"])
