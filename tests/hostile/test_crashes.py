"""Inputs that used to end in "internal error": each is now a clear finding or an exit-2 message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuspec.report.text import MAX_FRAME_WIDTH, code_frame
from hostile.hostile_cli import AUDIT_NODES, gpuspec, make_repo


def test_integer_past_pythons_digit_limit_in_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    path = root / "fleet" / "clusters" / "train-east.yaml"
    path.write_text(path.read_text().replace("      count: 8\n", "      count: " + "9" * 5000 + "\n", 1))
    for fmt in ("text", "json"):
        result = gpuspec(["validate", "--format", fmt], monkeypatch, capsys, cwd=root)
        assert result.code == 2 and "GS104" in result.out
        assert len(result.out) < 20_000  # the value is cut in the message and in the code frame


@pytest.mark.parametrize("command", ["audit", "import"])
def test_integer_past_pythons_digit_limit_in_node_json(command: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    nodes = AUDIT_NODES.read_text().replace('"items"', '"extra": ' + "7" * 5000 + ', "items"', 1)
    (tmp_path / "nodes.json").write_text(nodes)
    args = (["audit", "--cluster", "train-east"] if command == "audit" else ["import", "--name", "x"])
    result = gpuspec([*args, "--nodes", str(tmp_path / "nodes.json")], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "a number with 5000 digits" in result.err


@pytest.mark.parametrize("text", ["x: &a {<<: *a}\n", "x: &a {b: {c: *a}}\n", "x: &a {<<: [*a]}\n"])
def test_mapping_that_contains_itself(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    (root / "fleet" / "clusters" / "self.yaml").write_text(text)
    result = gpuspec(["lint"], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "GS100 a mapping contains itself" in result.out


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_symlink_loop_in_every_format(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    (root / "fleet" / "clusters" / "loop.yaml").symlink_to("loop.yaml")
    (root / "fleet" / "clusters" / "a.yaml").symlink_to("b.yaml")
    (root / "fleet" / "clusters" / "b.yaml").symlink_to("a.yaml")
    result = gpuspec(["lint", "--format", fmt], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "loop.yaml" in result.out


@pytest.mark.parametrize(("chart_yaml", "values", "words"), [
    (b"name: gpu-operator\nversion: [unclosed\n", b"", "Chart.yaml:3:1: invalid YAML"),
    (b"\xff\xfe not utf-8", b"", "Chart.yaml is not UTF-8 text"),
    (b"- a list\n", b"", "Chart.yaml is not a mapping"),
    (b"name: gpu-operator\nversion: v25.10.1\n", b"a: [\n", "values.yaml:2:1: invalid YAML"),
    (b"name: gpu-operator\nversion: v25.10.1\n", b"\xc3\x28", "values.yaml is not UTF-8 text"),
])
def test_verify_chart_with_a_broken_chart_yaml(chart_yaml: bytes, values: bytes, words: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    assert gpuspec(["render"], monkeypatch, capsys, cwd=root).code == 0
    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "Chart.yaml").write_bytes(chart_yaml)
    (chart / "values.yaml").write_bytes(values)
    result = gpuspec(["verify", "--chart", str(chart)], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and words in result.err


def test_code_frame_of_a_long_line_is_a_window(tmp_path: Path) -> None:
    spec = tmp_path / "long.yaml"
    spec.write_text("a: " + "x" * 100_000 + "\n")
    for column in (1, 50_000, 100_003):
        source, caret = code_frame(str(spec), 1, column)
        assert len(source) < MAX_FRAME_WIDTH + 20 and caret.endswith("^")


def test_node_json_with_many_nodes_and_a_duplicate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    nodes = json.loads(AUDIT_NODES.read_text())
    first = nodes["items"][0]
    nodes["items"] = [json.loads(json.dumps(first).replace(first["metadata"]["name"], f"n{i}"))
                      for i in range(2_000)] + [first, first]
    (tmp_path / "nodes.json").write_text(json.dumps(nodes))
    result = gpuspec(["audit", "--cluster", "train-east", "--nodes", str(tmp_path / "nodes.json")],
                     monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "appears more than once" in result.err


def test_a_symlink_loop_pathlib_reports_as_runtimeerror_is_an_input_error(monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """pathlib's resolve() raises RuntimeError on a link loop before Python 3.13: wherever it escapes, the user gets
    exit 2 naming the path, not an internal error; any other RuntimeError is still reported as gpuspec's bug."""
    from gpuspec.cli import main as cli_main

    def loop(**_kwargs: object) -> None:
        raise RuntimeError("Symlink loop from '/repo/rendered/clusters/a/x.yaml'")

    monkeypatch.setattr(cli_main.cli, "main", loop)
    assert cli_main.run() == 2
    err = capsys.readouterr().err
    assert "/repo/rendered/clusters/a/x.yaml" in err and "symbolic link loop" in err and "internal error" not in err

    def other(**_kwargs: object) -> None:
        raise RuntimeError("something else")

    monkeypatch.setattr(cli_main.cli, "main", other)
    assert cli_main.run() == 2
    assert "internal error: RuntimeError: something else" in capsys.readouterr().err


def test_integers_past_pythons_digit_limit_are_bad_input_in_every_yaml_reader(tmp_path: Path) -> None:
    """A 5,000-digit integer (Python refuses int() past 4,300 digits) in a rendered file, a helm export or helm's
    output is reported as bad YAML naming the place, never an internal error (found by the fuzz job in verify)."""
    from gpuspec.acceptance.expected import load_documents
    from gpuspec.audit.running import _load_any
    from gpuspec.errors import GpuspecError
    from gpuspec.verify.manifests import ManifestParseError, parse_manifests

    huge = "replicas: " + "9" * 5000 + "\n"
    with pytest.raises(ManifestParseError, match="integer of 5000 characters is too long"):
        parse_manifests("apiVersion: v1\nkind: ConfigMap\n" + huge)
    with pytest.raises(GpuspecError, match=r"values\.yaml: invalid YAML/JSON"):
        _load_any(huge, "values.yaml")
    with pytest.raises(GpuspecError, match=r"month must be in 1\.\.12"):  # a YAML timestamp that is no date
        _load_any("since: 2026-13-45\n", "values.yaml")
    path = tmp_path / "acceptance.yaml"
    path.write_text(huge)
    with pytest.raises(GpuspecError, match="unusable YAML"):
        load_documents(path, "rendered/clusters/a/acceptance/acceptance.yaml")


@pytest.mark.parametrize("command", [["lint", "{fleet}"], ["render", "{fleet}", "--out", "{out}"], ["rules"]])
def test_a_working_folder_that_no_longer_exists_is_an_input_error(command: list[str], tmp_path: Path) -> None:
    """A shell left in a deleted folder (a CI step after `rm -rf` of a checkout): exit 2 with what to do, not an
    internal error from the first relative path."""
    import subprocess
    import sys

    root = make_repo(tmp_path)
    gone = tmp_path / "gone"
    gone.mkdir()
    args = [a.format(fleet=root / "fleet", out=tmp_path / "out") for a in command]
    script = ("import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); sys.argv = ['gpuspec', *sys.argv[2:]]; "
              "from gpuspec.cli.main import main; main()")
    proc = subprocess.run([sys.executable, "-c", script, str(gone), *args], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "the working folder no longer exists" in proc.stderr and "internal error" not in proc.stderr
