"""Brownfield clusters walked by `gpuspec upgrade` to GPU Operator v26.7.0 on Kubernetes 1.33 (issue 44): a cluster
on v24.9.2 or v25.3.x with ClusterPolicy driver management, a canary pool and pool waves, on a driver branch the
target line drops.  NVIDIA's path exists (the driver moves cluster-wide under the upgrade policy while the
release still supports the running branch); every step applied with --apply and committed passes `lint --base` of
the step before and renders, and no step takes a pool's driver away outside the upgrade policy (GS814)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.upgrade.test_upgrade import Repo, walk
from tests.upgrade.test_upgrade import make_repo as make_repo  # the fixture

ADOPTED = """exceptions:
  - rules: [GS202, GS204]
    cluster: infer-north
    owner: gpu-platform@acme.example
    reason: adopted as it runs; the upgrade to v26.7 and Kubernetes 1.33 is planned
    expires: 2099-12-31"""


def brownfield(operator: str, kubernetes: str, branch: str, version: str) -> Callable[[Repo], None]:
    """infer-north as adopted: ``operator`` on Kubernetes ``kubernetes`` (upstream), every pool on one driver,
    ClusterPolicy management; train-east gone."""

    def change(repo: Repo) -> None:
        repo.cluster("train-east").unlink()
        text = repo.cluster("infer-north").read_text()
        rke2 = 'version: "1.33"\n  distribution: rke2'
        text = text.replace(rke2, f'version: "{kubernetes}"\n  distribution: upstream')
        text = text.replace("  version: v26.7.0", f"  version: {operator}")
        for old in ('branch: "580"\n      version: 580.173.02', 'branch: "535"\n      version: 535.309.01'):
            text = text.replace(old, f'branch: "{branch}"\n      version: {version}')
        start = text.index("    driverOverrides:")  # per-pool driver settings need NVIDIADriver management
        end = "        owner: sre-dc-north\n"
        text = text[:start] + text[text.index(end, start) + len(end):]
        start = text.index("  - path: toolkit.env")
        text = text[:start] + text[text.index("    ticket: OPS-2304\n") + len("    ticket: OPS-2304\n"):]
        repo.cluster("infer-north").write_text(text)
        pack = repo.root / "policies" / "default.yaml"
        pack.write_text(pack.read_text().replace("exceptions: []", ADOPTED))

    return change


@pytest.mark.parametrize(("operator", "kubernetes", "branch", "version", "wide"), [
    # 550 is dropped by v26.3: the drivers move cluster-wide on v25.10 (canary first and pool waves yield)
    ("v24.9.2", "1.31", "550", "550.163.01", True),
    # 535 runs on v26.7: the operator goes first, then NVIDIADriver management, canary, pool waves (nothing yields)
    ("v25.3.4", "1.32", "535", "535.288.01", False),
], ids=["v24.9.2-550", "v25.3.4-535"])
def test_a_brownfield_cluster_reaches_v26_7_0_and_580(make_repo: Callable[..., Repo], operator: str,
                                                      kubernetes: str, branch: str, version: str, wide: bool) -> None:
    repo = make_repo(brownfield(operator, kubernetes, branch, version), own=False)
    steps = walk(repo, "--cluster", "infer-north", "--operator", "v26.7.0", "--kubernetes", "1.33",
                 "--driver-branch", "580")
    drivers = [s for s in steps if s["kind"] == "driver"]
    yielded = [w for s in steps for w in s["warnings"] if "this preference yields" in w]  # type: ignore[attr-defined]
    if wide:
        assert len(drivers) == 1 and "every pool at once" in str(drivers[0]["title"]) and yielded
    else:
        assert "canary pool l40s-canary" in str(drivers[0]["title"]) and len(drivers) == 3 and not yielded
    assert any(str(s["title"]).endswith("-> v26.7.0") for s in steps)
    text = repo.cluster("infer-north").read_text()
    assert "version: v26.7.0" in text and 'version: "1.33"' in text and f'branch: "{branch}"' not in text
    for step in steps:
        assert step["disruption"] != "driver lost at once (no drain: GPU pods fail)", step["title"]


def anchored(change: Callable[[Repo], None]) -> Callable[[Repo], None]:
    """``change``, then the canary's driver block anchored and the l40s pool's an alias of it (one block, two
    pools), as hand-written specs do."""

    def both(repo: Repo) -> None:
        change(repo)
        text = repo.cluster("infer-north").read_text()
        first = text.index("    driver:\n      source: operator\n")
        block_end = text.index("    sharing:", first)
        block = text[first:block_end]
        text = text[:first] + block.replace("    driver:\n", "    driver: &l40s-driver\n", 1) + text[block_end:]
        second = text.index(block, first + len(block))
        text = text[:second] + "    driver: *l40s-driver\n" + text[second + len(block):]
        repo.cluster("infer-north").write_text(text)

    return both


def test_a_driver_block_shared_by_a_yaml_anchor_is_written_out_per_pool(make_repo: Callable[..., Repo]) -> None:
    """Issue 44: one anchored driver block for two pools got 'no path'; --apply writes it out where a step needs."""
    repo = make_repo(anchored(brownfield("v25.3.4", "1.32", "535", "535.288.01")), own=False)
    assert "*l40s-driver" in repo.cluster("infer-north").read_text()
    steps = walk(repo, "--cluster", "infer-north", "--operator", "v26.7.0", "--kubernetes", "1.33",
                 "--driver-branch", "580")
    assert "canary pool l40s-canary" in str(next(s for s in steps if s["kind"] == "driver")["title"])
    assert "l40s-driver" not in repo.cluster("infer-north").read_text()


def eks_host_drivers(repo: Repo) -> None:
    """infer-north as an EKS cluster on v24.9.2 whose node images (the NVIDIA AMI) bring driver branch 560."""
    brownfield("v24.9.2", "1.31", "550", "550.163.01")(repo)
    text = repo.cluster("infer-north").read_text().replace("distribution: upstream", "distribution: eks")
    text = text.replace('source: operator\n      branch: "550"\n      version: 550.163.01',
                        'source: host\n      branch: "560"')
    repo.cluster("infer-north").write_text(text)


def test_host_driver_pools_are_planned_as_node_image_steps(make_repo: Callable[..., Repo]) -> None:
    """Issue 44: never 'nothing to do' while a node image runs another branch; canary first, then pool waves."""
    repo = make_repo(eks_host_drivers, own=False)
    steps = walk(repo, "--cluster", "infer-north", "--driver-branch", "570")
    assert [s["kind"] for s in steps] == ["node-image"] * 3
    assert "pool(s) l40s-canary" in str(steps[0]["title"]) and "pool(s) t4-batch" in str(steps[2]["title"])
    assert any("roll the node group(s) of pool(s) l40s-canary" in a for a in steps[0]["after"])  # type: ignore[attr-defined]
    assert any("run a node image with driver branch 570" in b for b in steps[1]["before"])  # type: ignore[attr-defined]


def test_host_driver_pools_move_before_a_release_that_drops_their_branch(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo(eks_host_drivers, own=False)
    steps = walk(repo, "--cluster", "infer-north", "--operator", "v26.7.0", "--kubernetes", "1.33",
                 "--driver-branch", "580")
    kinds = [s["kind"] for s in steps]
    assert kinds.count("node-image") == 3 and kinds.index("operator") > max(
        i for i, k in enumerate(kinds) if k == "node-image")


def test_no_path_names_the_options_that_would_open_one(make_repo: Callable[..., Repo]) -> None:
    """Without --driver-branch, branch 550 blocks v26.3: the blocker says which option opens a path."""
    repo = make_repo(brownfield("v24.9.2", "1.31", "550", "550.163.01"), own=False)
    result = repo.run("upgrade", "--cluster", "infer-north", "--operator", "v26.7.0", "--kubernetes", "1.33")
    assert result.code == 1 and "GS207" in result.out
    assert "to open a path: --driver-branch with a branch GPU Operator v26.7.0 lists (610, 595, 580, 535)" in result.out
