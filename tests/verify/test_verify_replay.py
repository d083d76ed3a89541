"""`gpuspec verify` replays its last report when nothing it depends on changed, and never when something did.

Each run is the real entry point in a fresh interpreter (a user's second run) with real helm and kubectl, its own
user cache and cache key; a replay is told apart from a full run by whether the verify pipeline was imported.
Every replayed or re-run report is compared byte for byte with a run that has every cache turned off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
MINI_CHART = REPO_ROOT / "tests" / "fixtures" / "charts" / "gpu-operator-mini"
ENTRY = "from gpuspec.cli.main import main; main()"


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    """A writable copy of the mini fleet, its rendered tree, the mini chart and the test CRDs, in a repository."""
    root = tmp_path / "lab"
    shutil.copytree(FIXTURES / "mini", root)
    shutil.copytree(MINI_CHART, root / "chart")
    shutil.copytree(FIXTURES / "crds", root / "crds")
    shutil.copytree(REPO_ROOT / "policies", root / "policies")
    (root / ".git").mkdir()
    return root


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPEC_", "HELM_"))}
    env.update(GPUSPEC_CACHE_DIR=str(tmp_path / "cache"), GPUSPEC_CACHE_KEY_FILE=str(tmp_path / "cache.key"),
               NO_COLOR="1", **extra)
    return env


def _verify(lab: Path, helm: Path, env: dict[str, str], *extra: str) -> tuple[int, str, bool]:
    """Exit code, the JSON report, and whether the run verified (imported the verify pipeline)."""
    report = lab / "report.json"
    report.unlink(missing_ok=True)
    args = ["verify", "fleet", "--policies", "policies", "--chart", "chart", "--crds", "crds", "--helm", str(helm),
            "--cache-dir", str(lab.parent / "verify-cache"), "--format", "json", "--output", str(report), *extra]
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", ENTRY, *args], cwd=lab, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    ran = any(line.rstrip().endswith("gpuspec.pipeline.verify") for line in proc.stderr.splitlines()
              if line.startswith("import time:"))
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, report.read_text() if report.exists() else "", ran


def _uncached(lab: Path, helm: Path, tmp_path: Path, *extra: str) -> tuple[int, str]:
    code, report, ran = _verify(lab, helm, _env(tmp_path, GPUSPEC_NO_CACHE="1"), *extra, "--no-cache")
    assert ran
    return code, report


def _edit_yaml(path: Path, change: Callable[[dict], None]) -> None:  # type: ignore[type-arg]
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_second_verify_of_unchanged_inputs_replays_the_report_byte_for_byte(lab: Path, helm_bin: Path,
                                                                              tmp_path: Path) -> None:
    # One finding, so the replay has something to carry: a device-plugin version that is not the release's.
    _edit_yaml(lab / "rendered/clusters/lab-online/gpu-operator.values.yaml",
               lambda d: d["devicePlugin"].update(version="v0.17.4"))
    env = _env(tmp_path)
    first = _verify(lab, helm_bin, env)
    second = _verify(lab, helm_bin, env)
    assert first[2] and not second[2], "the second run was not replayed"
    assert first[:2] == second[:2] == _uncached(lab, helm_bin, tmp_path)
    assert first[0] == 1 and "GS905" in first[1]


def _rendered_values(lab: Path) -> None:
    _edit_yaml(lab / "rendered/clusters/lab-online/gpu-operator.values.yaml",
               lambda d: d["devicePlugin"].update(version="v0.17.4"))


def _added_rendered_file(lab: Path) -> None:
    (lab / "rendered/clusters/lab-online/extra.yaml").write_text("a: [\n")


def _chart_template(lab: Path) -> None:
    template = next((lab / "chart" / "templates").glob("*.yaml"))
    template.write_text(template.read_text() + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
                        "  namespace: gpu-operator\n  labels: {a: [}\n")


def _crd(lab: Path) -> None:
    (lab / "crds" / "monitoring.coreos.com_prometheusrules.yaml").unlink()


def _fleet(lab: Path) -> None:
    _edit_yaml(lab / "fleet/clusters/lab-online.yaml", lambda d: d.update(name="lab-renamed"))


def _policy(lab: Path) -> None:
    pack = next((lab / "policies").rglob("*.yaml"))
    pack.write_text(pack.read_text() + "\n# changed\n")


@pytest.mark.parametrize("change", [_rendered_values, _added_rendered_file, _chart_template, _crd, _fleet, _policy],
                         ids=lambda f: f.__name__.strip("_"))
def test_any_change_to_an_input_verifies_again(lab: Path, helm_bin: Path, tmp_path: Path,
                                               change: Callable[[Path], None]) -> None:
    env = _env(tmp_path)
    _verify(lab, helm_bin, env)
    change(lab)
    code, report, ran = _verify(lab, helm_bin, env)
    assert ran, "a changed input was replayed"
    assert (code, report) == _uncached(lab, helm_bin, tmp_path)


def test_options_and_tool_settings_are_part_of_the_key(lab: Path, helm_bin: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    _verify(lab, helm_bin, env)
    assert _verify(lab, helm_bin, env, "--cluster", "lab-online")[2]
    assert _verify(lab, helm_bin, env, "--shard", "1/2")[2]
    assert _verify(lab, helm_bin, {**env, "HELM_DEBUG": "1"})[2]
    other = tmp_path / "helm-copy"
    shutil.copy2(helm_bin, other)
    assert _verify(lab, other, env)[2], "another helm binary was replayed"
    assert not _verify(lab, other, env)[2]  # the key is what it was: replayed


def test_no_cache_and_chart_references_never_replay(lab: Path, helm_bin: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    _verify(lab, helm_bin, env)
    assert _verify(lab, helm_bin, env, "--no-cache")[2]
    from gpuspec.cli.verify_replay import replay_entry

    assert replay_entry(lab / "fleet", lab / "policies", lab / "rendered", ["oci://example.invalid/gpu-operator"],
                        clusters=(), crd_paths=(), helm=helm_bin, shard=None, cache_dir=tmp_path, today=None) is None
