"""The no-shell tool runner and the pinned installer."""

from __future__ import annotations

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
    with pytest.raises(ToolMissingError, match="install-tools"):
        run_tool([tmp_path / "no-such-tool", "version"])


def test_installer_is_idempotent(tools_bin: Path) -> None:
    proc = subprocess.run(
        [str(REPO_ROOT / "scripts" / "install-tools")], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "nothing to do" in proc.stdout


@pytest.mark.parametrize("pin", ["HELM", "KUBECTL"])
def test_installer_fails_loudly_on_hash_mismatch(tmp_path: Path, pin: str) -> None:
    # A copy of the installer with one wrong pinned hash must refuse to install anything.
    text = (REPO_ROOT / "scripts" / "install-tools").read_text()
    lines = [
        f'{pin}_SHA256="' + "0" * 64 + '"' if line.startswith(f"{pin}_SHA256=") else line
        for line in text.splitlines()
    ]
    script = tmp_path / "scripts" / "install-tools"
    script.parent.mkdir()
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o755)
    proc = subprocess.run([str(script)], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 1
    assert f"{pin.lower()} sha256 mismatch" in proc.stderr
    assert list((tmp_path / ".tools" / "bin").iterdir()) == []
