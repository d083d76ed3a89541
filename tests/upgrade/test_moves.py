"""The facts the candidate moves are built from: release hops, Kubernetes hops, the driver version a pin names."""

from __future__ import annotations

from gpuspec.pipeline.upgrade.model import Target
from gpuspec.pipeline.upgrade.moves import driver_version, kubernetes_hops, next_operator, operator_hops


def test_operator_hops_follow_the_release_lines() -> None:
    assert next_operator("v26.3.3", "v26.7.0") == "v26.7.0"  # the next line: one upgrade
    assert next_operator("v25.10.1", "v26.7.0") == "v26.3.3"  # the newest patch of the line between
    assert next_operator("v26.7.0", "v26.3.3") is None  # a downgrade is no upgrade
    assert operator_hops("v25.10.1", "v26.7.0") == 2
    assert operator_hops("v26.7.0", "v26.7.0") == 0


def test_kubernetes_moves_one_minor_at_a_time() -> None:
    assert kubernetes_hops("1.33", "1.36") == 3
    assert kubernetes_hops("1.34", None) == 0


def test_a_pin_names_a_version_both_releases_list() -> None:
    # v26.3.3 lists 595.91.07, 595.71.05 and 595.58.03; v26.7.0 lists 595.91.07 (its default)
    assert driver_version("v26.3.3", "595", "v26.7.0") == "595.91.07"
    assert driver_version("v26.7.0", "595", None) == "595.91.07"
    assert driver_version("v26.7.0", "470", None) is None  # not a branch of the release


def test_target_words_and_options() -> None:
    target = Target("v26.7.0", "595", "1.35", ("l40s",))
    assert target.words() == "operator v26.7.0, driver branch 595 (pools l40s), Kubernetes 1.35"
    assert target.options() == "--operator v26.7.0 --driver-branch 595 --kubernetes 1.35 --pool l40s"
