"""The console entry point flushes its output and exits with the command's code, in a real process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def gpuspec(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuspec.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, check=False)


def test_clean_fleet_exits_0_with_flushed_output() -> None:
    result = gpuspec("validate", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("}")


def test_missing_fleet_exits_2_with_message(tmp_path: Path) -> None:
    result = gpuspec("validate", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert "does not exist" in result.stderr and "Traceback" not in result.stderr


def test_usage_error_exits_2() -> None:
    result = gpuspec("validate", "--format", "xml")
    assert result.returncode == 2 and "Invalid value" in result.stderr


def test_findings_exit_1(fleet_copy: Path) -> None:
    path = fleet_copy / "clusters" / "train-east.yaml"
    path.write_text(path.read_text().replace("canaryPool: h100-canary", "canaryPool: nowhere"))
    result = gpuspec("validate", str(fleet_copy), "--policies", str(fleet_copy.parent / "policies"))
    assert result.returncode == 1 and "GS112" in result.stdout


def test_render_into_an_impossible_folder_exits_2_without_traceback(fleet_copy: Path) -> None:
    root = fleet_copy.parent
    result = gpuspec("render", "fleet", "--out", "fleet/fleet.yaml/rendered", cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "cannot write the output folder" in result.stderr and "Traceback" not in result.stderr
    assert not (root / "rendered").exists()


def test_policies_option_must_be_a_folder(fleet_copy: Path) -> None:
    result = gpuspec("lint", "fleet", "--policies", "fleet/fleet.yaml", cwd=fleet_copy.parent)
    assert result.returncode == 2 and "is a file" in result.stderr


def test_schema_error_on_a_credential_line_does_not_echo_it(fleet_copy: Path) -> None:
    path = fleet_copy / "fleet.yaml"
    path.write_text(path.read_text().replace("    pullSecrets:", "    password: hunter22-secret\n    pullSecrets:"))
    for command in ("validate", "lint"):
        result = gpuspec(command, "fleet", cwd=fleet_copy.parent)
        assert result.returncode == 2, result.stdout
        assert "GS103" in result.stdout and "unknown key 'password'" in result.stdout
        assert "hunter22-secret" not in result.stdout + result.stderr


def test_help_summaries_equal_each_commands_own_help() -> None:
    """`gpuspec --help` lists commands from a table (no imports); it must say what each command says."""
    import inspect

    import click

    from gpuspec.cli.main import COMMANDS, SUMMARIES, cli

    ctx = click.Context(cli)
    assert set(SUMMARIES) == set(COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        first = inspect.cleandoc(command.help or "").split("\n\n")[0].replace("\n", " ")
        assert SUMMARIES[name] == first, name
