"""`gpuspec init`: a new fleet repository passes validate, lint and render as it is; a non-empty folder is refused;
`validate` without a fleet says what goes in one."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from audit.audit_cli import run_gpuspec

from gpuspec import __version__

REPO = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"
SOURCE = f"git+https://github.com/acme/gpuspec@{SHA}"
EXPECTED = [
    ".github/workflows/gpuspec.yaml", ".gitignore", ".pre-commit-config.yaml", "README.md",
    "fleet/clusters/example.yaml", "fleet/fleet.yaml", "fleet/gpuspec.schema.json", "policies/site.yaml",
]


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_init_then_validate_lint_render_pass(tmp_path: Path) -> None:
    result = run_gpuspec("init", "gpu-fleet", "--repo-url", "https://git.acme.example/gpu-fleet.git",
                         "--source", SOURCE, cwd=tmp_path)
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


def test_ci_files_use_the_source_action_and_hooks_pinned_by_commit(tmp_path: Path) -> None:
    assert run_gpuspec("init", "repo", "--source", SOURCE, cwd=tmp_path).code == 0
    root = tmp_path / "repo"
    text = (root / ".github" / "workflows" / "gpuspec.yaml").read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    action_inputs = set(yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))["inputs"])
    checks = set()
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
            if step["uses"].startswith("acme/gpuspec@"):
                assert step["uses"] == f"acme/gpuspec@{SHA}"
                assert set(step["with"]) <= action_inputs
                assert step["with"]["gpuspec"] == f"gpuspec @ git+https://github.com/acme/gpuspec@{SHA}"
                checks.add(step["with"]["check"])
    assert checks == {"lint", "render-check", "plan"}
    assert text.count(f"- uses: acme/gpuspec@{SHA} # v{__version__}\n") == 3, "the version in a comment"
    hooks = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    config_text = (root / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(config_text)
    assert [(r["repo"], r["rev"]) for r in config["repos"]] == [("https://github.com/acme/gpuspec", SHA)]
    assert f"rev: {SHA}  # frozen: v{__version__}" in config_text
    used = {h["id"] for r in config["repos"] for h in r["hooks"]}
    assert used and used <= hooks
    assert "[gpuspec](https://github.com/acme/gpuspec)" in (root / "README.md").read_text(encoding="utf-8")
    assert ".rendered.gpuspec-tmp-*" in (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    actionlint = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    proc = subprocess.run([actionlint, str(root / ".github" / "workflows" / "gpuspec.yaml")], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    proc = subprocess.run([zizmor, "--offline", "--no-progress", str(root)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0 and "No findings to report" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.parametrize(("source", "workflow", "hooks", "install"), [
    ("gpuspec==0.1.0", False, False, None),
    ("https://files.acme.example/gpuspec-0.1.0-py3-none-any.whl", False, False, None),
    (f"gpuspec[verify] @ git+https://git.acme.example/tools/gpuspec@{SHA}", False, True, None),
    (f"gpuspec @ git+https://github.com/acme/gpuspec@{SHA}", True, True,
     f"gpuspec @ git+https://github.com/acme/gpuspec@{SHA}"),
])
def test_ci_files_are_written_only_where_the_source_pins_them(
    tmp_path: Path, source: str, workflow: bool, hooks: bool, install: str | None,
) -> None:
    result = run_gpuspec("init", "repo", "--source", source, cwd=tmp_path)
    assert result.code == 0, result.err
    root = tmp_path / "repo"
    assert (root / ".github" / "workflows" / "gpuspec.yaml").exists() is workflow
    assert (root / ".pre-commit-config.yaml").exists() is hooks
    assert ("not written: .github/workflows/gpuspec.yaml" in result.err) is not workflow
    if install:
        text = (root / ".github" / "workflows" / "gpuspec.yaml").read_text(encoding="utf-8")
        assert install in text


def test_a_development_build_without_a_source_writes_no_ci_file(tmp_path: Path) -> None:
    """This checkout's origin names no repository: a workflow it wrote could not install gpuspec."""
    result = run_gpuspec("init", "repo", cwd=tmp_path)
    assert result.code == 0, result.err
    assert _files(tmp_path / "repo") == [f for f in EXPECTED if f not in (".github/workflows/gpuspec.yaml",
                                                                          ".pre-commit-config.yaml")]
    assert "not written: .github/workflows/gpuspec.yaml" in result.err and "--source" in result.err
    assert "github.com" not in (tmp_path / "repo" / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("source", ["gpuspec", "git+https://github.com/acme/gpuspec@v0.1.0", "./dist"])
def test_a_source_that_pins_nothing_is_refused(tmp_path: Path, source: str) -> None:
    result = run_gpuspec("init", "repo", "--source", source, cwd=tmp_path)
    assert result.code == 2 and "--source" in result.err and "Traceback" not in result.err
    assert not (tmp_path / "repo").exists()


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
    forced = run_gpuspec("init", str(target), "--force", "--source", SOURCE, cwd=tmp_path)
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
