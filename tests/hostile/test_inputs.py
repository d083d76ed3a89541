"""Options and policy packs from a careless or hostile user: a clear exit 2 (or a finding), never an internal
error, and nothing read or fetched from outside the policies folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gpuspec.findings import Severity
from gpuspec.pipeline.validate import validate_fleet
from gpuspec.policy.custom import custom_findings
from gpuspec.policy.load import load_policy
from hostile.hostile_cli import AUDIT_NODES, gpuspec, make_repo

REF_PACK = """\
apiVersion: gpuspec.io/v1alpha1
kind: PolicyPack
metadata:
  name: refs
customRules:
  - id: ORG900
    title: Remote reference
    severity: error
    message: "{name} is checked"
    select: clusters[*].metadata
    schema:
      $ref: REF
"""


@pytest.mark.parametrize("ref", ["http://127.0.0.1:9/schema.json", "file:///etc/passwd", "other.json#/x"])
def test_custom_rule_refs_outside_the_pack_are_refused(ref: str, tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    (root / "policies" / "refs.yaml").write_text(REF_PACK.replace("REF", ref))
    policy = load_policy(root / "policies", ["refs"])
    assert not policy.custom_rules
    [finding] = [f for f in policy.findings if "only references inside" in f.message]
    assert finding.rule_id == "GS002" and ref in finding.message


def test_custom_rule_local_refs_work_and_nothing_is_retrieved(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    pack = REF_PACK.replace("$ref: REF", "$ref: '#/$defs/named'\n      $defs:\n        named: {required: [nope]}")
    (root / "policies" / "refs.yaml").write_text(pack)
    policy = load_policy(root / "policies", ["refs"])
    [rule] = policy.custom_rules
    fleet = validate_fleet(root / "fleet").fleet
    assert fleet is not None
    assert len(list(custom_findings(fleet, rule, Severity.ERROR))) == 2


@pytest.mark.parametrize("pack", ["../fleet/fleet", "/etc/passwd", "sub/dir", ".."])
def test_pack_names_cannot_leave_the_policies_folder(pack: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    result = gpuspec(["lint", "--pack", pack], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "is not a policy pack name" in result.err


def test_missing_policies_folder_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    for command in ("lint", "validate", "render"):
        result = gpuspec([command, "--policies", "no-such-dir"], monkeypatch, capsys, cwd=root)
        assert result.code == 2 and "is not a folder of policy packs" in result.err, command


def _git_repo(root: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.mark.parametrize("command", [
    ["validate"], ["lint"], ["lint", "--format", "sarif"],
    ["audit", "--cluster", "train-east", "--nodes", str(AUDIT_NODES)],
    ["verify", "--helm", "/nonexistent/helm"],
    ["plan", "--base", "HEAD"],
])
def test_output_into_a_missing_folder_is_a_clear_error(command: list[str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    if command[0] == "plan":
        (root / ".git").rmdir()
        _git_repo(root)
    if command[0] == "verify":
        (root / "fleet" / "clusters" / "train-east.yaml").write_text("kind: Nope\n")  # report before helm
    target = tmp_path / "missing" / "report"
    result = gpuspec([*command, "--output", str(target)], monkeypatch, capsys, cwd=root)
    assert result.code == 2
    assert f"cannot write the report to {target}: the folder {target.parent} does not exist" in result.err


def test_oversized_and_special_files_in_rendered_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from gpuspec.render import writer

    root = make_repo(tmp_path)
    assert gpuspec(["render"], monkeypatch, capsys, cwd=root).code == 0
    values = next((root / "rendered" / "clusters").glob("*/gpu-operator.values.yaml"))
    with values.open("r+b") as handle:  # a sparse file far over the limit: never read whole
        handle.truncate(3 * 1024 ** 3)
    os.mkfifo(root / "rendered" / "clusters" / "pipe.yaml")
    assert writer.read_output(values) is None
    assert writer.read_output(root / "rendered" / "clusters" / "pipe.yaml") is None
    check = gpuspec(["render", "--check"], monkeypatch, capsys, cwd=root)
    assert check.code in (1, 2), check.text
    assert gpuspec(["render"], monkeypatch, capsys, cwd=root).code in (0, 2)  # bounded: no MemoryError, no hang


def test_huge_blob_at_the_base_revision_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    from gpuspec.history import gitread

    root = make_repo(tmp_path)
    (root / ".git").rmdir()
    (root / "fleet" / "clusters" / "huge.yaml").write_bytes(b"# " + b"x" * (3 * 1024 * 1024) + b"\n")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-qm", "b"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    (root / "fleet" / "clusters" / "huge.yaml").unlink()
    asked: list[str] = []
    real = gitread.read_blobs
    monkeypatch.setattr("gpuspec.history.revision.read_blobs",
                        lambda repo, ids: asked.extend(ids) or real(repo, ids))
    result = gpuspec(["plan", "--base", "HEAD"], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "larger than the" in result.text and "huge.yaml" in result.text
    huge = [e for e in gitread.list_tree(root, "HEAD", "fleet/clusters") if e.path.endswith("huge.yaml")]
    assert huge and huge[0].object_id not in asked


@pytest.mark.parametrize("kind", ["outside-link", "oversized", "fifo", "directory", "dangling-link"])
def test_unusable_policy_pack_is_a_clean_error_in_render_and_handover(kind: str, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    pack = root / "policies" / "default.yaml"
    pack.unlink()
    if kind == "outside-link":
        (tmp_path / "outside.yaml").write_text("x: 1\n")
        pack.symlink_to(tmp_path / "outside.yaml")
    elif kind == "fifo":  # the shadowed built-in pack of the same name must not be used instead
        os.mkfifo(pack)
    elif kind == "directory":
        pack.mkdir()
    elif kind == "dangling-link":
        pack.symlink_to(tmp_path / "missing.yaml")
    else:
        with pack.open("wb") as handle:
            handle.truncate(3 * 1024 ** 3)
    for args in (["render"], ["render", "--check"], ["handover"], ["lint"]):
        result = gpuspec(args, monkeypatch, capsys, cwd=root)
        assert result.code == 2, (args, result.text)
        assert "policies/default.yaml" in result.text


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "link-to-dev-zero"])
def test_special_files_in_rendered_do_not_block_the_kustomize_build(kind: str, tmp_path: Path) -> None:
    """A FIFO (or a link to one, or to a device) in an overlay would block `kubectl kustomize` until its timeout:
    the build is not run and says which entry it refused."""
    from gpuspec.verify.kustomize import kustomize_build

    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources: [pipe.yaml]\n")
    if kind == "fifo":
        os.mkfifo(overlay / "pipe.yaml")
    elif kind == "link-to-fifo":
        os.mkfifo(tmp_path / "elsewhere")
        (overlay / "pipe.yaml").symlink_to(tmp_path / "elsewhere")
    else:
        (overlay / "pipe.yaml").symlink_to("/dev/zero")
    result = kustomize_build(overlay)
    assert not result.ok and "pipe.yaml is not a regular file" in result.error and result.argv == ()
