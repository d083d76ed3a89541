"""The CRDs of the platform releases fleet.yaml declares: pinned downloads into the user cache (`gpuspec tools
install`), loaded by verify; a declared release without its CRDs is one GS916 finding instead of many GS910."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpuspec import usercache
from gpuspec.cli.main import run as run_cli
from gpuspec.pipeline.verify import VerifyOptions, verify_fleet
from gpuspec.tools import crd_pins
from gpuspec.tools.crd_pins import CRD_RELEASES, CrdFile, CrdInstallError, install_release, release_dir

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "tests" / "verify" / "fixtures" / "mini"
MINI_CHART = REPO / "tests" / "fixtures" / "charts" / "gpu-operator-mini"
ARGO_FILES = ("application-crd.yaml", "applicationset-crd.yaml", "appproject-crd.yaml")


def test_pins_name_a_tag_a_sha256_and_a_size_for_every_kind_gpuspec_renders() -> None:
    wanted = {
        "argocd": {"application-crd.yaml", "applicationset-crd.yaml", "appproject-crd.yaml"},
        "flux": {"helm.toolkit.fluxcd.io_helmreleases.yaml", "source.toolkit.fluxcd.io_gitrepositories.yaml",
                 "source.toolkit.fluxcd.io_helmcharts.yaml", "source.toolkit.fluxcd.io_helmrepositories.yaml",
                 "source.toolkit.fluxcd.io_ocirepositories.yaml", "kustomize.toolkit.fluxcd.io_kustomizations.yaml"},
        "prometheusOperator": {"monitoring.coreos.com_podmonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml",
                               "monitoring.coreos.com_servicemonitors.yaml"},
    }
    url = re.compile(r"https://raw\.githubusercontent\.com/[\w-]+/[\w-]+/v[0-9]+\.[0-9]+\.[0-9]+/[\w./-]+\.yaml\Z")
    for project, releases in CRD_RELEASES.items():
        assert releases, project
        for version, files in releases.items():
            assert re.fullmatch(r"v[0-9]+\.[0-9]+\.[0-9]+", version)
            assert {f.name for f in files} == wanted[project], (project, version)
            for crd in files:
                assert url.match(crd.url), crd.url
                assert re.fullmatch(r"[0-9a-f]{64}", crd.sha256) and 0 < crd.size <= crd_pins.MAX_CRD_BYTES
            if project == "argocd":
                assert all(f"/{version}/" in f.url for f in files), "Argo CD CRDs at the release tag itself"


@pytest.fixture
def fake_release(monkeypatch: pytest.MonkeyPatch, shared_dir: Path) -> dict[str, bytes]:
    """An Argo CD release 'v9.9.9' pinned to the upstream CRD files in ../shared (their bytes and hashes)."""
    contents = {name: (shared_dir / "upstream" / "argocd" / name).read_bytes() for name in ARGO_FILES}
    files = tuple(CrdFile(f"https://example.invalid/argo-cd/v9.9.9/{name}", hashlib.sha256(data).hexdigest(),
                          len(data)) for name, data in contents.items())
    monkeypatch.setattr(crd_pins, "CRD_RELEASES", {**CRD_RELEASES, "argocd": {"v9.9.9": files}})
    return contents


def _opener(contents: dict[str, bytes], url: str) -> io.BytesIO:
    return io.BytesIO(contents[url.rsplit("/", 1)[1]])


def test_install_checks_every_file_and_is_idempotent(tmp_path: Path, fake_release: dict[str, bytes]) -> None:
    assert install_release(tmp_path, "argocd", "v9.9.9", partial(_opener, fake_release)) is True
    folder = release_dir(tmp_path, "argocd", "v9.9.9")
    assert sorted(p.name for p in folder.iterdir()) == sorted(ARGO_FILES)
    assert install_release(tmp_path, "argocd", "v9.9.9", partial(_opener, fake_release)) is False
    tampered = {**fake_release, "appproject-crd.yaml": fake_release["appproject-crd.yaml"] + b"# changed\n"}
    (folder / "appproject-crd.yaml").write_bytes(b"stale")
    with pytest.raises(CrdInstallError, match="does not match its pinned sha256"):
        install_release(tmp_path, "argocd", "v9.9.9", partial(_opener, tampered))
    assert (folder / "appproject-crd.yaml").read_bytes() == b"stale", "a failed install changes nothing"
    with pytest.raises(CrdInstallError, match=re.escape("pins no CRDs of Argo CD v1.0.0; pinned releases: v9.9.9")):
        install_release(tmp_path, "argocd", "v1.0.0", partial(_opener, fake_release))


@pytest.fixture
def served(tmp_path: Path, fake_release: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The fake release's files over HTTP on loopback, with the pins pointing there."""
    root = tmp_path / "www"
    root.mkdir()
    for name, data in fake_release.items():
        (root / name).write_bytes(data)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(root)))
    server.RequestHandlerClass.log_message = lambda *_a: None  # type: ignore[method-assign]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    files = tuple(CrdFile(f"{base}/{f.name}", f.sha256, f.size) for f in crd_pins.CRD_RELEASES["argocd"]["v9.9.9"])
    monkeypatch.setattr(crd_pins, "CRD_RELEASES", {**CRD_RELEASES, "argocd": {"v9.9.9": files}})
    yield base
    server.shutdown()
    server.server_close()


def _mini(tmp_path: Path, platform: str | None) -> Path:
    lab = tmp_path / "lab"
    shutil.copytree(MINI, lab)
    if platform is not None:
        settings = lab / "fleet" / "fleet.yaml"
        settings.write_text(settings.read_text() + platform)
    return lab


def _verify(lab: Path, tools_bin: Path) -> list[tuple[str, str]]:
    result = verify_fleet(VerifyOptions(fleet_dir=lab / "fleet", rendered_dir=lab / "rendered", charts=[MINI_CHART],
                                        helm=tools_bin / "helm", cache_dir=lab / "verify-cache"))
    return [(f.rule_id, f.message) for f in result.findings]


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["gpuspec", *args])
    code = run_cli()
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out + err


def test_tools_install_fetches_the_declared_release_and_verify_uses_it(
    tmp_path: Path, served: str, tools_bin: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lab = _mini(tmp_path, "platform:\n  argocd: v9.9.9\n")
    before = _verify(lab, tools_bin)
    [missing] = [m for rule, m in before if rule == "GS916"]
    assert "CRDs of Argo CD v9.9.9 are not installed" in missing
    assert any(rule == "GS910" and "argoproj.io" in m for rule, m in before)

    code, out = _cli(monkeypatch, capsys, "tools", "install", "--no-binaries", "--fleet", str(lab / "fleet"))
    assert code == 0 and "installed: CRDs of Argo CD v9.9.9" in out, out
    cache = usercache.cache_dir()
    assert cache is not None and (release_dir(cache, "argocd", "v9.9.9") / "application-crd.yaml").is_file()
    code, out = _cli(monkeypatch, capsys, "tools", "install", "--no-binaries", "--fleet", str(lab / "fleet"))
    assert code == 0 and "already installed: CRDs of Argo CD v9.9.9" in out

    after = _verify(lab, tools_bin)
    assert not any(rule == "GS916" for rule, _ in after)
    assert not any(rule == "GS910" and "argoproj.io" in m for rule, m in after), after


def test_tools_install_refuses_a_release_gpuspec_does_not_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tools_bin: Path,
) -> None:
    lab = _mini(tmp_path, "platform:\n  flux: v0.0.1\n")
    code, out = _cli(monkeypatch, capsys, "tools", "install", "--no-binaries", "--fleet", str(lab / "fleet"))
    assert code == 2 and "pins no CRDs of Flux v0.0.1" in out
    [finding] = [m for rule, m in _verify(lab, tools_bin) if rule == "GS916"]
    assert "pins no CRDs of Flux v0.0.1" in finding


def test_project_crds_name_every_pinned_file(shared_dir: Path) -> None:
    """PROJECT_CRDS, which decides when --crds covers a release, names the CRDs the pinned files hold."""
    upstream = {"argocd": "argocd", "flux": "flux", "prometheusOperator": "prometheus-operator"}
    from gpuspec.verify.schemas import load_crd_documents

    for project, folder in upstream.items():
        names = {d["metadata"]["name"] for d in load_crd_documents([shared_dir / "upstream" / folder])}
        assert crd_pins.PROJECT_CRDS[project] <= names, project


def test_vendored_crds_that_cover_a_release_stand_in_for_it(
    tmp_path: Path, tools_bin: Path, shared_dir: Path,
) -> None:
    lab = _mini(tmp_path, "platform:\n  argocd: v3.5.1\n")
    result = verify_fleet(VerifyOptions(fleet_dir=lab / "fleet", rendered_dir=lab / "rendered", charts=[MINI_CHART],
                                        crd_paths=[shared_dir / "upstream" / "argocd"], helm=tools_bin / "helm",
                                        cache_dir=lab / "verify-cache"))
    assert not any(f.rule_id == "GS916" for f in result.findings)
