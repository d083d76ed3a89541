"""`gpuspec verify` pulling the chart with the real helm from a Helm repository served on loopback.

The repository is the mini test chart packaged with `helm package` and indexed with `helm repo index`,
served by `http.server` in a thread bound to 127.0.0.1 on an ephemeral port; the handler counts requests,
so the tests can tell a pull from a cache hit.  OCI registries are not tested here (no registry); only
the `helm pull` command line for them is.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.bench_verify import mini_chart_as
from gpuspec.cli.verify_cmd import verify_command
from gpuspec.findings import Finding
from gpuspec.model.resolve import NGC_CHART_REPOSITORY, chart_repository
from gpuspec.pipeline.verify import VerifyOptions, VerifyResult, verify_fleet
from gpuspec.verify.pull import is_chart_reference, pull_argv

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini"
CRDS = FIXTURES / "crds"
PIN = "v25.10.1"  # the mini fleet's operator pin


class Repo:
    """A Helm repository folder served over HTTP on 127.0.0.1; ``requests`` lists the paths asked for."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        requests = self.requests

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                super().do_GET()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture(autouse=True)
def helm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep helm's own repository cache and config out of the user's home."""
    for name in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "helm-home" / name.lower()))


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    """A writable copy of the mini fleet + rendered tree."""
    shutil.copytree(MINI, tmp_path / "lab")
    return tmp_path / "lab"


@pytest.fixture
def serve(tmp_path: Path, helm_bin: Path, mini_chart: Path) -> Iterator[Callable[[str], Repo]]:
    """Serve a Helm repository holding the mini chart relabelled as the given version."""
    repos: list[Repo] = []

    def make(version: str) -> Repo:
        root = tmp_path / f"repo-{len(repos)}"
        chart = mini_chart_as(version, tmp_path / f"src-{len(repos)}")
        root.mkdir()
        for argv in ([helm_bin, "package", chart, "--destination", root], [helm_bin, "repo", "index", root]):
            subprocess.run([str(a) for a in argv], check=True, capture_output=True, timeout=60)
        repos.append(Repo(root))
        return repos[-1]

    yield make
    for repo in repos:
        repo.close()


def _run(lab: Path, helm: Path, charts: list[Path | str], cache: Path | None, **kwargs: Any) -> VerifyResult:
    return verify_fleet(VerifyOptions(fleet_dir=lab / "fleet", rendered_dir=lab / "rendered", charts=charts,
                                      crd_paths=[CRDS], helm=helm, cache_dir=cache, **kwargs))


def _gs914(result: VerifyResult) -> list[Finding]:
    return [f for f in result.findings if f.rule_id == "GS914"]


def test_pull_from_a_helm_repository_verifies_and_is_cached(lab: Path, helm_bin: Path, tmp_path: Path,
                                                           serve: Callable[[str], Repo]) -> None:
    repo = serve(PIN)
    cache = tmp_path / "cache" / "helm"
    cold = _run(lab, helm_bin, [repo.url], cache)
    assert cold.findings == []
    assert [c.chart for c in cold.clusters] == [f"gpu-operator {PIN}"] * 2
    assert "/index.yaml" in repo.requests and f"/gpu-operator-{PIN}.tgz" in repo.requests
    key = hashlib.sha256(f"{repo.url.rstrip('/')}\0{PIN}".encode()).hexdigest()
    assert [p.name for p in (tmp_path / "cache" / "charts").iterdir()] == [key]
    assert (tmp_path / "cache" / "charts" / key / f"gpu-operator-{PIN}.tgz").is_file()

    repo.requests.clear()
    warm = _run(lab, helm_bin, [repo.url], cache)
    assert warm.findings == []
    assert repo.requests == []  # the cached chart was used: helm never asked the repository


def test_no_cache_pulls_every_time_and_keeps_nothing(lab: Path, helm_bin: Path, tmp_path: Path,
                                                     serve: Callable[[str], Repo]) -> None:
    repo = serve(PIN)
    for _ in range(2):
        repo.requests.clear()
        assert _run(lab, helm_bin, [repo.url], None).findings == []
        assert f"/gpu-operator-{PIN}.tgz" in repo.requests
    assert not (tmp_path / "cache").exists()


def test_a_local_chart_of_the_version_wins_over_a_pull(lab: Path, helm_bin: Path, mini_chart: Path,
                                                       serve: Callable[[str], Repo]) -> None:
    repo = serve(PIN)
    assert _run(lab, helm_bin, [mini_chart, repo.url], None).findings == []
    assert repo.requests == []


def test_version_missing_from_the_repository(lab: Path, helm_bin: Path, tmp_path: Path,
                                             serve: Callable[[str], Repo]) -> None:
    repo = serve("v25.3.4")
    result = _run(lab, helm_bin, [repo.url], tmp_path / "cache" / "helm")
    findings = _gs914(result)
    assert {f.rule_id for f in result.findings} == {"GS914"}  # no GS902 / GS901 on top
    assert [Path(f.file or "").resolve() for f in findings] == [lab / "fleet" / "clusters" / f"{c}.yaml"
                                                               for c in ("lab-airgap", "lab-online")]
    assert all(f.path == ("operator", "version") for f in findings)
    assert f"the GPU Operator {PIN} chart could not be pulled" in findings[0].message
    assert f'chart "gpu-operator" version "{PIN}" not found' in findings[0].message
    assert all(c.helm_cached is None for c in result.clusters)
    assert list((tmp_path / "cache" / "charts").iterdir()) == []  # a failed pull leaves nothing behind


def test_repository_not_found(lab: Path, helm_bin: Path, serve: Callable[[str], Repo]) -> None:
    repo = serve(PIN)
    result = _run(lab, helm_bin, [repo.url + "nope/"], None, clusters=["lab-online"])
    [finding] = _gs914(result)
    assert "404" in finding.message and f"{repo.url}nope/index.yaml" in finding.message
    assert repo.requests == ["/nope/index.yaml"]


def test_mirror_chart_repository_is_the_default_source(lab: Path, helm_bin: Path, tmp_path: Path,
                                                        serve: Callable[[str], Repo]) -> None:
    repo = serve(PIN)
    fleet_file = lab / "fleet" / "fleet.yaml"
    fleet = yaml.safe_load(fleet_file.read_text())
    fleet["mirrors"][0]["chart"]["repository"] = repo.url
    fleet_file.write_text(yaml.safe_dump(fleet, sort_keys=False))
    # lab-airgap uses the mirror; lab-online would pull from NGC (not done here: no network in tests)
    result = _run(lab, helm_bin, [], tmp_path / "cache" / "helm", clusters=["lab-airgap"])
    assert result.findings == []
    assert result.clusters[0].chart == f"gpu-operator {PIN}"
    assert f"/gpu-operator-{PIN}.tgz" in repo.requests


def test_cli_pulls_into_the_user_cache_and_leaves_git_status_clean(
        lab: Path, helm_bin: Path, serve: Callable[[str], Repo], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    repo = serve(PIN)
    monkeypatch.chdir(lab)
    monkeypatch.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "user-cache"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "fleet"]):
        subprocess.run([*git, *argv], cwd=lab, check=True, capture_output=True)
    args = ["fleet", "--chart", repo.url, "--crds", str(CRDS), "--helm", str(helm_bin)]
    ok = CliRunner().invoke(verify_command, args)
    assert ok.exit_code == 0, ok.output
    assert len(list((tmp_path / "user-cache" / "verify" / "charts").glob("*/*.tgz"))) == 1
    status = subprocess.run([*git, "status", "--porcelain", "--ignored"], cwd=lab, capture_output=True, text=True)
    assert status.stdout == ""
    missing = CliRunner().invoke(verify_command, [*args[:2], repo.url + "nope", *args[3:]])
    assert missing.exit_code == 1, missing.output
    assert "error GS914" in missing.output and "Traceback" not in missing.output
    assert missing.exception is None or isinstance(missing.exception, SystemExit)


def test_pull_command_lines(tmp_path: Path) -> None:
    helm, dest = Path("/bin/helm"), tmp_path
    assert pull_argv(helm, "oci://mirror.example/charts/nvidia/", PIN, dest) == [
        "/bin/helm", "pull", "oci://mirror.example/charts/nvidia/gpu-operator", "--version", PIN,
        "--destination", str(dest)]
    assert pull_argv(helm, NGC_CHART_REPOSITORY, PIN, dest) == [
        "/bin/helm", "pull", "gpu-operator", "--repo", NGC_CHART_REPOSITORY, "--version", PIN,
        "--destination", str(dest)]
    assert [is_chart_reference(s) for s in ("oci://x/y", "HTTPS://x", "http://x", "charts/x", "x.tgz")] == [
        True, True, True, False, False]
    assert chart_repository(None) == NGC_CHART_REPOSITORY
