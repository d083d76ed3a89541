"""The Go tools run without collection until a soft heap limit, unless the user tuned Go themselves."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gpuspec.tools.goenv import MEMORY_LIMIT, short_run_env


def test_collector_settings_and_user_settings_win() -> None:
    assert short_run_env({"PATH": "/bin"}) == {"PATH": "/bin", "GOGC": "off", "GOMEMLIMIT": MEMORY_LIMIT}
    assert short_run_env({"GOGC": "100"}) == {"GOGC": "100"}
    assert short_run_env({"GOMEMLIMIT": "1GiB"}) == {"GOMEMLIMIT": "1GiB"}


def test_helm_prints_the_same_with_the_settings(tools_bin: Path, tmp_path: Path) -> None:
    chart = Path(__file__).resolve().parents[1] / "fixtures" / "charts" / "gpu-operator-mini"
    argv = [str(tools_bin / "helm"), "template", "gpu-operator", str(chart), "--include-crds",
            "--kube-version", "1.31"]
    plain = subprocess.run(argv, capture_output=True, text=True, check=True, env=short_run_env({"GOGC": "100"}))
    tuned = subprocess.run(argv, capture_output=True, text=True, check=True, env=short_run_env({}))
    assert tuned.stdout == plain.stdout and len(plain.stdout) > 1000
