"""gpuspec upgrade: every planned step, applied and committed in a real git repository, passes `lint --base` of
the step before and renders; blocked targets name the rule; --apply edits in place."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuspec.errors import GpuspecError
from gpuspec.pipeline.upgrade.edits import KeyEdit, apply_edit, lookup
from tests.audit.audit_cli import REPO, CliResult, run_gpuspec

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@gpuspec.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@gpuspec.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    """A git repository holding a copy of the example fleet and its policies."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {**os.environ, **GIT_ENV, "HOME": str(root.parent)}

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=True
        ).stdout.strip()

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def cluster(self, name: str) -> Path:
        return self.root / "fleet" / "clusters" / f"{name}.yaml"

    def sub(self, name: str, *pairs: tuple[str, str]) -> None:
        path = self.cluster(name)
        text = path.read_text()
        for old, new in pairs:
            assert old in text, old
            text = text.replace(old, new)
        path.write_text(text)

    def run(self, *args: str) -> CliResult:
        return run_gpuspec(*args, cwd=self.root)


def own_nvidiadrivers(repo: Repo) -> None:
    """infer-north with an NVIDIADriver per pool: pool-by-pool driver moves roll each pool's own DaemonSet (with the
    chart's default NVIDIADriver, pools that converge on one driver leave their own NVIDIADriver: GS814)."""
    pinned = "operator:\n  version: v26.7.0\n"
    repo.sub("infer-north", (pinned, pinned + "  defaultNVIDIADriver: false\n"))


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Repo]:
    def make(change: Callable[[Repo], None] | None = None, *, own: bool = True) -> Repo:
        root = tmp_path / "repo"
        shutil.copytree(REPO / "fleet", root / "fleet")
        shutil.copytree(REPO / "policies", root / "policies")
        repo = Repo(root)
        repo.git("init", "-q", "-b", "main")
        if own:
            own_nvidiadrivers(repo)
        if change is not None:
            change(repo)
        assert repo.run("lint").code == 0
        repo.commit("start")
        return repo

    return make


def on_26_3_3(repo: Repo) -> None:
    """infer-north on v26.3.3 with per-pool drivers; train-east (wave 2) gone."""
    repo.sub("infer-north", ("  version: v26.7.0", "  version: v26.3.3"))
    repo.cluster("train-east").unlink()


def on_570(repo: Repo) -> None:
    """As on_26_3_3, the L40S pools on branch 570, which v26.7.0 no longer lists."""
    on_26_3_3(repo)
    text = repo.cluster("infer-north").read_text().replace('branch: "580"', 'branch: "570"')
    repo.cluster("infer-north").write_text(text.replace("version: 580.173.02", "version: 570.211.01"))


def walk(repo: Repo, *args: str) -> list[dict[str, object]]:
    """Plan, then apply, commit, lint --base and render every step; the steps as JSON."""
    start = repo.git("rev-parse", "HEAD")
    planned = repo.run("upgrade", *args, "--format", "json")
    assert planned.code == 0, planned.out + planned.err
    steps: list[dict[str, object]] = planned.json()["steps"]
    assert steps
    for step in steps:
        applied = repo.run("upgrade", *args, "--from", start, "--apply", str(step["step"]))
        assert applied.code == 0, applied.err
        previous = repo.git("rev-parse", "HEAD")
        repo.commit(f"step {step['step']}")
        assert repo.git("diff", "--name-only", previous, "HEAD").splitlines() == [f"fleet/{f}" for f in step["files"]]  # type: ignore
        lint = repo.run("lint", "--base", previous)
        assert lint.code == 0, f"step {step['step']} {step['title']}: {lint.out}"
        render = repo.run("render")
        assert render.code == 0, render.err
        repo.git("add", "-A")
        repo.git("commit", "-q", "--allow-empty", "-m", f"render step {step['step']}")
    again = repo.run("upgrade", *args, "--format", "json")
    assert again.code == 0 and again.json()["steps"] == [], again.out
    return steps


def _drains(steps: list[dict[str, object]]) -> dict[tuple[str, str], list[int]]:
    """(cluster, pool) -> the steps that drain its nodes (a driver reload, a MIG repartition, a driver lost)."""
    out: dict[tuple[str, str], list[int]] = {}
    for step in steps:
        for change in step["changes"]:  # type: ignore[attr-defined]
            if change["disruption"] in ("driver-reload", "mig-repartition", "driver-lost") and change["pool"]:
                key = (change["cluster"], change["pool"])
                if int(step["step"]) not in out.setdefault(key, []):  # type: ignore[call-overload]
                    out[key].append(int(step["step"]))  # type: ignore[call-overload]
    return out


def test_the_default_nvidiadriver_path_drains_each_pool_once_and_acknowledges_the_loss(
    make_repo: Callable[..., Repo],
) -> None:
    """The example fleet as it is: the chart's default NVIDIADriver serves the L40S pools and t4-batch needs its own
    (driverOverrides), so every path to 595 takes a pool's driver pods away at once somewhere (GS814).  The planner
    takes the way out the rule names (drain the pool first, acknowledged in the spec) and, of the plans as short,
    the one that drains the fewest nodes at once and then the fewest in all: each pool once (the first plan found
    drained l40s-canary three times and l40s twice)."""
    repo = make_repo(own=False)
    steps = walk(repo, "--cluster", "infer-north", "--driver-branch", "595")
    assert len(steps) == 3
    drains = _drains(steps)
    assert drains == {("infer-north", "l40s-canary"): [1], ("infer-north", "l40s"): [2],
                      ("infer-north", "t4-batch"): [3]}, drains
    second = steps[1]
    assert any("cordon and drain the 12 node(s) of pool l40s in infer-north" in b
               for b in second["before"])  # type: ignore[attr-defined]
    assert "driver-lost" not in {c["disruption"] for c in second["changes"]}  # type: ignore[attr-defined]
    text = repo.cluster("infer-north").read_text()
    assert text.count("# gpuspec: ignore GS814 -- the pool's nodes are cordoned and drained") == 1


def test_the_gs814_way_out_does_not_send_a_pool_from_one_loss_into_another(make_repo: Callable[..., Repo]) -> None:
    """Turning the chart's default NVIDIADriver off while pools run on it takes their driver pods too: the finding
    says so instead of recommending it."""
    repo = make_repo(own=False)
    repo.sub("infer-north", ("  version: v26.7.0\n", "  version: v26.7.0\n  driverManagement: nvidiadriver\n"
                                                      "  defaultNVIDIADriver: false\n"))
    lint = repo.run("lint", "--base", "HEAD")
    assert lint.code == 1
    assert "GS814" in lint.out and "keep the chart's default NVIDIADriver (operator.defaultNVIDIADriver) while a " \
        "pool runs on it" in lint.out
    assert "in a change of its own" not in lint.out


def test_example_fleet_wave_1_to_595(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    steps = walk(repo, "--wave", "1", "--operator", "v26.7.0", "--driver-branch", "595")
    titles = [str(s["title"]) for s in steps]
    assert "canary pool l40s-canary" in titles[0]
    assert "pool wave 2: l40s" in titles[1] and "pool wave 3: t4-batch" in titles[2]
    assert len(steps) == 3


def test_channel_cluster_switches_management_alone_first(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    steps = walk(repo, "--cluster", "train-east", "--driver-branch", "595")
    assert steps[0]["kind"] == "driver-management"
    assert "canary pool h100-canary" in str(steps[1]["title"])
    assert "gpuspec gate --cluster train-east --nodes nodes.json --clusterpolicies cp.json --jobs jobs.json" in str(
        steps[1]["before"]
    )


def test_26_3_3_per_pool_drivers_to_26_7_0_and_595(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo(on_26_3_3, own=False)
    steps = walk(repo, "--cluster", "infer-north", "--operator", "v26.7.0", "--driver-branch", "595")
    kinds = [s["kind"] for s in steps]
    assert kinds == ["operator", "driver", "driver", "driver"]
    assert "defaultNVIDIADriver: false" in str(steps[0]["title"])  # GS813: every pool keeps its NVIDIADriver


def test_driver_first_when_the_new_line_drops_the_running_branch(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo(on_570)
    steps = walk(repo, "--cluster", "infer-north", "--operator", "v26.7.0", "--driver-branch", "595")
    kinds = [s["kind"] for s in steps]
    assert kinds.index("operator") > kinds.index("driver")  # 570 is not in v26.7.0: the L40S pools move first
    assert kinds[:2] == ["driver", "driver"]


def test_no_path_names_the_blocking_rule(make_repo: Callable[..., Repo]) -> None:
    def behind(repo: Repo) -> None:
        repo.sub("infer-north", ("  version: v26.7.0", "  version: v26.3.3"))
        repo.sub("train-east", ("  channel: stable", "  version: v26.3.3"))

    repo = make_repo(behind)
    result = repo.run("upgrade", "--cluster", "train-east", "--operator", "v26.7.0")
    assert result.code == 1, result.out
    assert "no path" in result.out
    assert re.search(r"GS821 .*infer-north", result.out), result.out
    markdown = repo.run("upgrade", "--cluster", "train-east", "--operator", "v26.7.0", "--format", "markdown")
    assert markdown.code == 1 and "**No path**" in markdown.out


def test_downgrade_target_is_no_path(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    result = repo.run("upgrade", "--cluster", "infer-north", "--operator", "v26.3.3")
    assert result.code == 1 and "GS803" in result.out


def test_usage_errors_exit_2(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    assert repo.run("upgrade", "--operator", "v26.7.0").code == 2
    unknown = repo.run("upgrade", "--cluster", "nope", "--operator", "v26.7.0")
    assert unknown.code == 2 and "no such cluster" in unknown.err
    bad = repo.run("upgrade", "--wave", "1", "--operator", "v99.1.0")
    assert bad.code == 2 and "support matrix" in bad.err
    assert repo.run("upgrade", "--wave", "1", "--driver-branch", "595", "--apply", "9").code == 2


def test_apply_refuses_a_dirty_file_and_a_wrong_state(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    path = repo.cluster("infer-north")
    path.write_text(path.read_text() + "# local note\n")
    args = ("upgrade", "--wave", "1", "--driver-branch", "595")
    dirty = repo.run(*args, "--apply", "1")
    assert dirty.code == 2 and "uncommitted changes" in dirty.err
    assert repo.run(*args, "--apply", "1", "--force").code == 0
    assert path.read_text().endswith("# local note\n")  # the rest of the file is kept
    repo.git("checkout", "--", ".")
    wrong = repo.run(*args, "--apply", "2")
    assert wrong.code == 2 and "not at the state before step 2" in wrong.err


def test_apply_keeps_comments_and_formatting(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    before = repo.cluster("train-east").read_text()
    assert repo.run("upgrade", "--cluster", "train-east", "--driver-branch", "595", "--apply", "1").code == 0
    diff = repo.git("diff", "-U0", "--", "fleet/clusters/train-east.yaml")
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert added == ["+  driverManagement: nvidiadriver", "+  defaultNVIDIADriver: false"] and removed == []
    assert before.splitlines()[0] == repo.cluster("train-east").read_text().splitlines()[0]


def test_in_place_edits() -> None:
    text = (
        "# head\nkind: Cluster  # kind\npools:\n  - name: a  # first\n    wave: 1\n    driver:\n"
        "      branch: '580'  # pinned\n"
    )
    edited = apply_edit(text, KeyEdit("c.yaml", ("pools", 0, "driver", "branch"), "595", "580", "b"))
    assert "      branch: '595'  # pinned\n" in edited  # the quoting and the comment stay
    added = apply_edit(text, KeyEdit("c.yaml", ("pools", 0, "mig", "strategy"), "none", None, "m"))
    assert "    wave: 1\n    mig:\n      strategy: none\n" in added
    removed = apply_edit(text, KeyEdit("c.yaml", ("kind",), None, "Cluster", "k"))
    assert "kind" not in removed and removed.startswith("# head\npools:")
    adopted = "operator:\n  version: v24.9.2  # from the cluster: helm release gpu-operator\n  namespace: x\n"
    moved = apply_edit(adopted, KeyEdit("c.yaml", ("operator", "version"), "v25.3.4", "v24.9.2", "o"))
    assert moved == "operator:\n  version: v25.3.4\n  namespace: x\n"  # import's provenance is no longer true


def test_a_comment_edit_goes_above_the_line_the_finding_is_located_on() -> None:
    """An acknowledgement is an inline suppression on a line of its own above where the finding is located: the
    first key of a block mapping, the line of a flow mapping or of a pool without the key, and only once."""
    from gpuspec.policy.suppress import parse_suppressions

    text = "pools:\n  - name: a\n    driver:\n      branch: '580'\n  - name: b\n    driver: {branch: '580'}\n" \
        "  - name: c\n    nodes: 1\n"
    comment = "gpuspec: ignore GS814 -- drained"
    block = apply_edit(text, KeyEdit("c.yaml", ("pools", 0, "driver"), None, None, "d", comment=comment))
    assert "    driver:\n      # gpuspec: ignore GS814 -- drained\n      branch: '580'\n" in block
    flow = apply_edit(text, KeyEdit("c.yaml", ("pools", 1, "driver"), None, None, "d", comment=comment))
    assert "    # gpuspec: ignore GS814 -- drained\n    driver: {branch: '580'}\n" in flow
    missing = apply_edit(text, KeyEdit("c.yaml", ("pools", 2, "driver"), None, None, "d", comment=comment))
    assert "  # gpuspec: ignore GS814 -- drained\n  - name: c\n" in missing
    again = apply_edit(block, KeyEdit("c.yaml", ("pools", 0, "driver"), None, None, "d", comment=comment))
    assert again == block
    (directive,) = parse_suppressions("c.yaml", block)
    assert directive.target == 5 and directive.rules == ("GS814",) and directive.reason == "drained"


def test_edits_and_lookups_of_one_text_share_its_parse_without_changing_it() -> None:
    """The search looks up keys of the same spec text thousands of times; the parse it shares stays as read."""
    text = "kind: Cluster\npools:\n  - name: a\n    driver:\n      branch: '580'\n"
    path = ("pools", 0, "driver", "branch")
    first = apply_edit(text, KeyEdit("c.yaml", path, "595", "580", "b"))
    added = apply_edit(text, KeyEdit("c.yaml", ("pools", 0, "wave"), 2, None, "w"))
    assert lookup(text, "c.yaml", path) == "580" and lookup(first, "c.yaml", path) == "595"
    assert apply_edit(text, KeyEdit("c.yaml", path, "595", "580", "b")) == first
    assert lookup(added, "c.yaml", ("pools", 0, "wave")) == 2 and lookup(text, "c.yaml", ("pools", 0, "wave")) is None
    for _ in range(2):  # a text that is not YAML is refused every time, not remembered as parsed
        with pytest.raises(GpuspecError, match=r"c\.yaml: cannot edit: not YAML"):
            lookup("a: [b\n", "c.yaml", ("a",))


def test_colliding_rules_name_the_planners_first_step(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo(on_26_3_3)
    repo.sub(
        "infer-north",
        ("  version: v26.3.3", "  version: v26.7.0"),
        ('      branch: "580"\n      version: 580.173.02', '      branch: "595"\n      version: 595.91.07'),
    )
    result = repo.run("lint", "--base", "HEAD", "--format", "json")
    assert result.code == 1
    findings = result.json()["findings"]
    colliding = [f for f in findings if f["ruleId"] in ("GS801", "GS804", "GS813")]
    assert len({f["ruleId"] for f in colliding}) >= 2
    for finding in colliding:
        assert "the first: infer-north: GPU Operator v26.3.3 -> v26.7.0" in finding["hint"], finding
        assert (
            "gpuspec upgrade --cluster infer-north --operator v26.7.0 --driver-branch 595 --pool l40s-canary "
            "--pool l40s --from HEAD"
        ) in finding["hint"]


def test_one_rule_alone_gets_no_plan_hint(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    repo.sub(
        "infer-north",
        (
            '      branch: "580"\n      version: 580.173.02\n    sharing',
            '      branch: "595"\n      version: 595.91.07\n    sharing',
        ),
    )
    result = repo.run("lint", "--base", "HEAD", "--format", "json")
    findings = [f for f in result.json()["findings"] if f["ruleId"].startswith("GS8")]
    assert findings and all("gpuspec upgrade" not in (f.get("hint") or "") for f in findings)


EXCEPTION = """exceptions:
  - rules: [GS202, GS214]
    cluster: infer-north
    owner: gpu-platform@acme.example
    reason: on v25.10 until the upgrade runs
    expires: 2099-12-31"""


def on_25_10(repo: Repo) -> None:
    """infer-north on v25.10.1 (end of support, NVIDIADriver a preview there) under an exception, Kubernetes 1.33."""
    on_26_3_3(repo)
    repo.sub("infer-north", ("  version: v26.3.3", "  version: v25.10.1"))
    pack = repo.root / "policies" / "default.yaml"
    pack.write_text(pack.read_text().replace("exceptions: []", EXCEPTION))


def test_two_release_lines_and_kubernetes(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo(on_25_10)
    steps = walk(
        repo, "--cluster", "infer-north", "--operator", "v26.7.0", "--driver-branch", "595", "--kubernetes", "1.35"
    )
    titles = [str(s["title"]) for s in steps]
    assert titles[0] == "infer-north: GPU Operator v25.10.1 -> v26.3.3"  # no line skipped (GS802)
    assert [s["kind"] for s in steps].count("kubernetes") == 2  # 1.33 -> 1.34 -> 1.35
    assert len(steps) == 7
    kube = next(s for s in steps if s["kind"] == "kubernetes")
    assert "outside gpuspec" in str(kube["after"])


def test_a_start_that_does_not_lint_is_an_input_error(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo(on_25_10)
    pack = repo.root / "policies" / "default.yaml"
    pack.write_text(pack.read_text().replace(EXCEPTION, "exceptions: []"))
    result = repo.run("upgrade", "--cluster", "infer-north", "--operator", "v26.7.0")
    assert result.code == 2 and "GS202" in result.err and "policy exception" in result.err


def test_channel_names_the_target_last(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    steps = walk(repo, "--channel", "stable", "--driver-branch", "595")
    assert steps[-1]["kind"] == "channel" and steps[-1]["disruption"] == "no disruption"
    fleet = (repo.root / "fleet" / "fleet.yaml").read_text()
    assert 'branch: "595"' in fleet.split("name: stable", 1)[1].split("- name:", 1)[0]


def test_clusters_of_one_fleet_wave_move_together(make_repo: Callable[..., Repo]) -> None:
    def same_wave(repo: Repo) -> None:
        repo.sub("train-east", ("  wave: 2\n  canaryPool", "  wave: 1\n  canaryPool"))

    repo = make_repo(same_wave)
    steps = walk(repo, "--wave", "1", "--driver-branch", "595")
    assert len(steps) == 3  # each step moves both clusters (GS801 and GS808 count per cluster)
    assert all(set(s["clusters"]) == {"infer-north", "train-east"} for s in steps)  # type: ignore[arg-type]


def test_a_left_over_rollback_flag_goes_with_the_first_step(make_repo: Callable[..., Repo]) -> None:
    def flagged(repo: Repo) -> None:
        repo.sub(
            "infer-north", ("  namespace: gpu-operator\nmirror", "  namespace: gpu-operator\n  rollback: true\nmirror")
        )

    repo = make_repo(flagged)
    steps = walk(repo, "--wave", "1", "--driver-branch", "595")
    assert len(steps) == 3 and "operator.rollback removed" in str(steps[0]["title"])
    assert "rollback" not in repo.cluster("infer-north").read_text()


def test_a_channel_of_two_fleet_waves(make_repo: Callable[..., Repo]) -> None:
    def shared_channel(repo: Repo) -> None:
        repo.sub("infer-north", ("  version: v26.7.0", "  channel: stable"))
        settings = repo.root / "fleet" / "fleet.yaml"
        settings.write_text(settings.read_text().replace("operator: v26.7.0", "operator: v26.3.3", 1))

    repo = make_repo(shared_channel)
    steps = walk(repo, "--channel", "stable", "--operator", "v26.7.0")
    titles = [str(s["title"]) for s in steps]
    assert titles[0] == "infer-north: pin channel stable's release in the cluster file, to move alone"
    assert steps[0]["disruption"] == "no disruption"
    assert "train-east: GPU Operator v26.3.3 -> v26.7.0" in titles[2]  # the channel moves with its last user
    assert steps[2]["files"] == ["fleet.yaml"]
    assert "follow channel stable again" in titles[-1]
    assert "channel: stable" in repo.cluster("infer-north").read_text()


def test_the_step_after_kubernetes_waits_for_the_node_upgrade(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    result = repo.run("upgrade", "--cluster", "train-east", "--kubernetes", "1.36", "--format", "json")
    assert result.code == 0
    steps = result.json()["steps"]
    assert [s["kind"] for s in steps] == ["kubernetes", "kubernetes"]  # one minor at a time
    assert any("run Kubernetes 1.35" in b for b in steps[1]["before"])
    assert "durationSeconds" not in steps[0]  # printed only once an estimate is known


def test_apply_refuses_a_symlinked_spec_file(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    real = repo.root / "infer-north.yaml"
    repo.cluster("infer-north").rename(real)
    repo.cluster("infer-north").symlink_to(Path("../../infer-north.yaml"))
    repo.commit("link")
    result = repo.run("upgrade", "--wave", "1", "--driver-branch", "595", "--apply", "1")
    assert result.code == 2 and "symbolic link" in result.err
    assert "595" not in real.read_text()


def test_v26_3_on_clusterpolicy_upgrades_the_operator_before_the_switch(make_repo: Callable[..., Repo]) -> None:
    """The issue's case: one driver for the cluster on v26.3.3 cannot switch to NVIDIADriver management (GS808)."""

    def on_clusterpolicy(repo: Repo) -> None:
        repo.sub("train-east", ("  channel: stable", "  version: v26.3.3"))

    repo = make_repo(on_clusterpolicy)
    steps = walk(repo, "--cluster", "train-east", "--operator", "v26.7.0", "--driver-branch", "595")
    kinds = [s["kind"] for s in steps]
    assert kinds == ["pin", "pin", "operator", "driver-management", "driver", "driver"]
    assert steps[0]["disruption"] == steps[1]["disruption"] == "no disruption"  # the pins render the same
    assert steps[1]["before"] == ["step 1 merged (nothing rolls out)"]


def on_kubernetes_1_32(repo: Repo) -> None:
    """As on_26_3_3 on Kubernetes 1.32, which v26.3 supports on RKE2 and v26.7 no longer does."""
    on_26_3_3(repo)
    repo.sub("infer-north", ('  version: "1.33"', '  version: "1.32"'))


def test_kubernetes_first_when_the_new_line_drops_the_running_minor(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo(on_kubernetes_1_32)
    blocked = repo.run("upgrade", "--cluster", "infer-north", "--operator", "v26.7.0")
    assert blocked.code == 1 and "GS204 Kubernetes 1.32 on rke2" in blocked.out
    steps = walk(repo, "--cluster", "infer-north", "--operator", "v26.7.0", "--kubernetes", "1.33")
    assert [s["kind"] for s in steps] == ["kubernetes", "operator"]


def test_markdown_plan_for_an_issue(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    result = repo.run("upgrade", "--wave", "1", "--driver-branch", "595", "--format", "markdown")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == "## Upgrade plan: infer-north to driver branch 595"
    assert "| step | change | disruption | nodes | duration |" in lines
    assert sum(line.startswith("### Step ") for line in lines) == 3
    assert "- edit `clusters/infer-north.yaml`: `pools[l40s-canary].driver.branch` `580` → `595`" in lines


def test_steps_carry_their_worst_case_duration_against_the_window(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    result = repo.run("upgrade", "--wave", "1", "--driver-branch", "595", "--format", "json")
    steps = result.json()["steps"]
    canary = steps[0]
    assert canary["duration"].startswith("≤ ") and canary["durationSeconds"] > 0
    assert canary["windows"] and canary["windows"][0].startswith("infer-north: window ")
    text = repo.run("upgrade", "--wave", "1", "--driver-branch", "595").out
    assert "   duration:   ≤ " in text and "   window:     infer-north: window " in text


def test_a_step_that_restarts_nothing_has_no_duration(make_repo: Callable[..., Repo]) -> None:
    def on_clusterpolicy(repo: Repo) -> None:
        repo.sub("train-east", ("  channel: stable", "  version: v26.3.3"))

    repo = make_repo(on_clusterpolicy)
    result = repo.run("upgrade", "--cluster", "train-east", "--operator", "v26.7.0", "--format", "json")
    steps = result.json()["steps"]
    assert steps[0]["kind"] == "pin" and "duration" not in steps[0]
    assert "duration" in steps[-1]
