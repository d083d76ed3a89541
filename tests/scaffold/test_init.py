"""`gpuspec init`: a new fleet repository passes validate, lint and render as it is; a non-empty folder is refused;
`validate` without a fleet says what goes in one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from audit.audit_cli import run_gpuspec

from gpuspec import __version__

REPO = Path(__file__).resolve().parents[2]
EXPECTED = [
    ".github/workflows/gpuspec.yaml", ".gitignore", ".pre-commit-config.yaml", "README.md",
    "fleet/clusters/example.yaml", "fleet/fleet.yaml", "fleet/gpuspec.schema.json", "policies/site.yaml",
]


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_init_then_validate_lint_render_pass(tmp_path: Path) -> None:
    result = run_gpuspec("init", "gpu-fleet", "--repo-url", "https://git.acme.example/gpu-fleet.git", cwd=tmp_path)
    assert result.code == 0, result.err
    root = tmp_path / "gpu-fleet"
    assert _files(root) == EXPECTED
    fleet = yaml.safe_load((root / "fleet" / "fleet.yaml").read_text(encoding="utf-8"))
    assert fleet["metadata"]["name"] == "gpu-fleet"
    assert fleet["git"]["repoURL"] == "https://git.acme.example/gpu-fleet.git"
    assert fleet["policy"]["packs"] == ["site"]
    assert "# mirrors:" in (root / "fleet" / "fleet.yaml").read_text(encoding="utf-8")  # the optional mirror
    assert yaml.safe_load((root / "policies" / "site.yaml").read_text(encoding="utf-8"))["extends"] == "default"
    assert (root / "fleet" / "gpuspec.schema.json").read_text(encoding="utf-8") == \
        run_gpuspec("schema", cwd=tmp_path).out
    for args in (["validate"], ["lint", "--fail-on", "warning"], ["render"], ["render", "--check"]):
        run = run_gpuspec(*args, cwd=root)
        assert run.code == 0, (args, run.out, run.err)
    assert (root / "rendered" / "clusters" / "example" / "gpu-operator.values.yaml").is_file()
    assert (root / "rendered" / "handover" / "example.md").is_file()


def test_ci_files_use_this_repository_action_and_hooks(tmp_path: Path) -> None:
    assert run_gpuspec("init", "repo", cwd=tmp_path).code == 0
    root = tmp_path / "repo"
    workflow = yaml.safe_load((root / ".github" / "workflows" / "gpuspec.yaml").read_text(encoding="utf-8"))
    action_inputs = set(yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))["inputs"])
    checks = set()
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if step["uses"].startswith("gpuspec/gpuspec@"):
                assert step["uses"] == f"gpuspec/gpuspec@v{__version__}"
                assert set(step["with"]) <= action_inputs
                assert step["with"]["gpuspec"] == f"gpuspec=={__version__}"
                checks.add(step["with"]["check"])
    assert checks == {"lint", "render-check", "plan"}
    hooks = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    config = yaml.safe_load((root / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    used = {h["id"] for r in config["repos"] for h in r["hooks"]}
    assert used and used <= hooks
    assert ".rendered.gpuspec-tmp-*" in (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    actionlint = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    proc = subprocess.run([actionlint, str(root / ".github" / "workflows" / "gpuspec.yaml")], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_temporary_render_tree_is_ignored_by_git(tmp_path: Path) -> None:
    assert run_gpuspec("init", "repo", cwd=tmp_path).code == 0
    root = tmp_path / "repo"
    (root / ".rendered.gpuspec-tmp-1234").mkdir()
    (root / ".rendered.gpuspec-tmp-1234" / "x.yaml").write_text("a: 1\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    proc = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True,
                          text=True, check=True)
    assert "gpuspec-tmp" not in proc.stdout and ".gitignore" in proc.stdout


def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    target = tmp_path / "existing"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n", encoding="utf-8")
    result = run_gpuspec("init", str(target), cwd=tmp_path)
    assert result.code == 2
    assert "is not empty (notes.txt)" in result.err and "--force" in result.err
    assert _files(target) == ["notes.txt"]
    forced = run_gpuspec("init", str(target), "--force", cwd=tmp_path)
    assert forced.code == 0, forced.err
    assert _files(target) == sorted([*EXPECTED, "notes.txt"])
    assert (target / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_init_refuses_a_name_that_is_no_dns_label(tmp_path: Path) -> None:
    result = run_gpuspec("init", "x", "--name", "Not_A_Label", cwd=tmp_path)
    assert result.code == 2 and "is not a DNS label" in result.err
    assert not (tmp_path / "x").exists()


def test_init_in_the_current_folder_names_the_fleet_after_it(tmp_path: Path) -> None:
    root = tmp_path / "Acme GPU Fleet"
    root.mkdir()
    assert run_gpuspec("init", cwd=root).code == 0
    assert yaml.safe_load((root / "fleet" / "fleet.yaml").read_text(encoding="utf-8"))["metadata"]["name"] == \
        "acme-gpu-fleet"


def test_validate_without_a_fleet_says_what_goes_in_one(tmp_path: Path) -> None:
    result = run_gpuspec("validate", cwd=tmp_path)
    assert result.code == 2
    assert "fleet directory fleet does not exist" in result.err
    assert "fleet.yaml (fleet-wide settings" in result.err and "clusters/<name>.yaml (one file per cluster" \
        in result.err
    assert "gpuspec init" in result.err
    (tmp_path / "fleet").mkdir()
    result = run_gpuspec("validate", cwd=tmp_path)
    assert result.code == 2 and "fleet/fleet.yaml not found" in result.err and "gpuspec init" in result.err
