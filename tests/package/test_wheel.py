"""What a user gets from `pipx install gpuspec`: packs, license, lean dependencies, working commands."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from .conftest import REPO, Installed

pytestmark = pytest.mark.slow


@pytest.fixture
def fleet_repo(tmp_path: Path) -> Path:
    """A fleet repository with the example fleet and its policies/ (no strict.yaml: that pack is built in)."""
    repo = tmp_path / "fleet-repo"
    shutil.copytree(REPO / "fleet", repo / "fleet")
    shutil.copytree(REPO / "policies", repo / "policies")
    assert not (repo / "policies" / "strict.yaml").exists()
    return repo


def test_wheel_carries_packs_license_and_data(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert "gpuspec/policy/packs/strict.yaml" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert any(n.startswith("gpuspec/matrix/data/") for n in names)
    metadata = zipfile.ZipFile(installed.wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    text = metadata.decode()
    assert "Provides-Extra: verify" in text
    assert "Requires-Dist: kubernetes-validate>=1.30; extra == \"verify\"" in text


def test_lean_install_has_no_kubernetes_validate(installed: Installed) -> None:
    site = next(iter((installed.venv / "lib").glob("python3*/site-packages")))
    assert not list(site.glob("kubernetes_validate*"))


def test_lint_with_the_builtin_strict_pack(installed: Installed, fleet_repo: Path) -> None:
    proc = installed.run("lint", "--pack", "strict", cwd=fleet_repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error GS502" in proc.stdout and "policy packs: default, strict" in proc.stdout


def test_render_and_check(installed: Installed, fleet_repo: Path) -> None:
    proc = installed.run("render", cwd=fleet_repo)
    assert proc.returncode == 0, proc.stderr
    assert (fleet_repo / "rendered" / "generator.yaml").is_file()
    assert installed.run("render", "--check", cwd=fleet_repo).returncode == 0
    # The output does not depend on the installation: the wheel renders the committed bytes.
    committed = {p.relative_to(REPO / "rendered"): p.read_bytes() for p in (REPO / "rendered").rglob("*")
                 if p.is_file()}
    ours = {p.relative_to(fleet_repo / "rendered"): p.read_bytes() for p in (fleet_repo / "rendered").rglob("*")
            if p.is_file()}
    assert ours == committed
    assert not (fleet_repo / ".gpuspec-cache").exists()


def test_verify_help_and_hints(installed: Installed, fleet_repo: Path) -> None:
    proc = installed.run("verify", "--help", cwd=fleet_repo)
    assert proc.returncode == 0 and "--crds" in proc.stdout
    assert installed.run("render", cwd=fleet_repo).returncode == 0
    missing = installed.run("verify", cwd=fleet_repo)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "python -m pip install 'kubernetes-validate>=1.30'" in missing.stderr
    assert "'gpuspec[verify]'" not in missing.stderr, "never a bare name a package index resolves to anyone's"


def test_tools_installer_hint(installed: Installed, fleet_repo: Path) -> None:
    proc = installed.run("tools", "install", "--help", cwd=fleet_repo)
    assert proc.returncode == 0 and "sha256" in proc.stdout
    code = ("from gpuspec.tools.discover import find_helm\n"
            "from gpuspec.errors import ToolMissingError\n"
            "try:\n    find_helm()\nexcept ToolMissingError as e:\n    print(e.hint)\n")
    python = installed.venv / "bin" / "python"
    hint = subprocess.run([str(python), "-c", code], cwd=fleet_repo, capture_output=True, text=True,
                          env={"PATH": "/nonexistent", "GPUSPEC_CACHE_DIR": str(fleet_repo.parent / "c")})
    assert "gpuspec tools install" in hint.stdout, hint.stderr
