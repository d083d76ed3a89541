"""The README's install lines work verbatim: each `python -m pip install` line of its install block, run as written
in a checkout of this repository, with the oldest pip the README allows (slow: scripts/test-package runs it)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO, fresh_venv
from .test_fleet_repo import snapshot

pytestmark = pytest.mark.slow
README = (REPO / "README.md").read_text(encoding="utf-8")


def _install_block() -> list[str]:
    section = README.split("## Installing gpuspec in a fleet repository", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the install section has a shell block"
    return [line for line in block.group(1).splitlines() if line.startswith("python -m pip install")]


def test_the_readme_names_a_pip_floor_and_no_package_index_name() -> None:
    assert re.search(r"pip ≥ \d+\.\d+", README)
    for line in _install_block():
        assert "gpuspec==" not in line and "'gpuspec" not in line, "the name on PyPI is not this project's"


def test_the_readme_install_lines_work_verbatim_with_the_oldest_pip_it_allows(tmp_path: Path) -> None:
    floor = re.search(r"pip ≥ (\d+\.\d+)", README)
    assert floor
    env_dir = fresh_venv(tmp_path / "venv", f"pip=={floor.group(1)}")
    pip = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert pip.startswith(f"pip {floor.group(1)}"), pip
    checkout = snapshot(tmp_path / "gpuspec")
    env = {**os.environ, "PATH": f"{env_dir / 'bin'}:/usr/bin:/bin", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "HOME": str(tmp_path), "GPUSPEC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("VIRTUAL_ENV", None)
    lines = _install_block()
    assert len(lines) == 2, lines
    for line in lines:
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", line], cwd=checkout, env=env,
                              capture_output=True, text=True, timeout=900, check=False)
        assert proc.returncode == 0, (line, proc.stdout[-2000:], proc.stderr[-4000:])
    version = subprocess.run([str(env_dir / "bin" / "gpuspec"), "--version"], capture_output=True, text=True,
                             env=env, check=True).stdout
    assert version.startswith("gpuspec, version ")
    subprocess.run([str(env_dir / "bin" / "python"), "-c", "import kubernetes_validate"], env=env, check=True)
