"""Every file gpuspec writes or reads by a name the user or the repository gives goes through one guard
(:mod:`gpuspec.loader.safefile`): a committed symbolic link (into ``.git``, out of the repository, to a device),
a FIFO or a folder linked away at that name ends the command with exit 2 and a message naming the file, leaves
every file as it was, and puts the checkout's token nowhere.  Each case runs under an alarm, so a FIFO that
would block fails the test instead of hanging it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

from gpuspec.errors import GpuspecError
from gpuspec.loader.safefile import UnsafeFile, check_link, check_write, safe_read, safe_write, write_file
from hostile.hostile_cli import AUDIT_NODES, REPO, Run, gpuspec

TOKEN_B64 = "c2VjcmV0dG9rZW4="  # base64 of "secrettoken"
EXTRAHEADER = f"AUTHORIZATION: basic {TOKEN_B64}"
OUTSIDE_SECRET = "outside-secret-5b1e"
#: Seconds one command may take before the test counts it as hung (real runs take about one).
HANG_GUARD_S = 120

#: What is put at the path gpuspec writes or reads.
ATTACKS = ["git-config-link", "outside-link", "fifo", "dev-zero-link"]
#: A link to a regular file inside the repository: fine to read, never written through.
INNER_LINK = "inner-link"


class Hung(BaseException):
    """A command ran past the hang guard (a BaseException, so the CLI's error handling does not swallow it)."""


@pytest.fixture(autouse=True)
def _hang_guard() -> Iterator[None]:
    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise Hung(f"gpuspec ran for more than {HANG_GUARD_S} s (blocked on a FIFO?)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(HANG_GUARD_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def memory_cap(extra: int = 1 << 30) -> Iterator[None]:
    """Cap this process's address space at its current size plus ``extra`` bytes (Linux), so a command that reads
    /dev/zero whole fails with MemoryError instead of taking the machine's memory."""
    try:
        import resource

        size = int(next(line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
                        if line.startswith("VmSize:"))) * 1024
    except (ImportError, OSError, StopIteration, ValueError):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                   cwd=root, check=True, capture_output=True)


def checked_out_repo(tmp_path: Path) -> Path:
    """The example fleet, policies and rendered output committed in a real git repository whose .git/config
    holds a checkout token (as actions/checkout persists it), and a secret file outside the repository."""
    root = tmp_path / "repo"
    for folder in ("fleet", "policies", "rendered"):
        shutil.copytree(REPO / folder, root / folder, symlinks=True)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    _git(root, "config", "--local", "http.https://github.com/.extraheader", EXTRAHEADER)
    assert TOKEN_B64 in (root / ".git" / "config").read_text()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(f"{OUTSIDE_SECRET}\n")
    return root


def plant(root: Path, rel: str, attack: str) -> None:
    """Put ``attack`` at ``root/rel`` (replacing what is there)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    if attack == "git-config-link":
        path.symlink_to(os.path.relpath(root / ".git" / "config", path.parent))
    elif attack == "outside-link":
        path.symlink_to(os.path.relpath(root.parent / "outside" / "secret.txt", path.parent))
    elif attack == "fifo":
        os.mkfifo(path)
    elif attack == "dev-zero-link":
        path.symlink_to("/dev/zero")
    elif attack == INNER_LINK:
        real = root / "inner-target.txt"
        real.write_text("a regular file inside the repository\n")
        path.symlink_to(os.path.relpath(real, path.parent))
    else:  # pragma: no cover - a typo in a parameter
        raise AssertionError(attack)


Entry = tuple[str, object]


def snapshot(top: Path) -> dict[str, Entry]:
    """Every entry below ``top`` (links not followed): a file's bytes, a link's target, a folder, a FIFO."""
    out: dict[str, Entry] = {}
    for folder, dirs, files in os.walk(top):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            info = os.lstat(path)
            rel = path.relative_to(top).as_posix()
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                out[rel] = ("file", path.read_bytes())
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = ("dir", None)
            else:
                out[rel] = ("special", stat.S_IFMT(info.st_mode))
    return out


def assert_no_leak(top: Path, result: Run) -> None:
    """The token and the outside secret are in no output and in no file outside .git."""
    for secret in (TOKEN_B64, "secrettoken", OUTSIDE_SECRET):
        assert secret not in result.text, result.text
    for rel, (kind, data) in snapshot(top).items():
        if kind != "file" or ".git" in rel.split("/") or rel == "outside/secret.txt":
            continue
        assert isinstance(data, bytes)
        assert TOKEN_B64.encode() not in data and OUTSIDE_SECRET.encode() not in data, rel


@dataclass(frozen=True)
class Case:
    """One command path: what it runs, the file it writes or reads there, what a regular run exits with."""

    name: str
    args: list[str]
    target: str
    ok_code: int = 0
    writes: bool = True
    prepare: Callable[[Path], None] | None = None
    regular: str | None = None  # the content of a regular file at ``target`` in the passing case

    def setup(self, root: Path) -> None:
        """Prepare the repository for this command (before the attack is planted)."""
        if self.prepare is not None:
            self.prepare(root)


def _broken_spec(root: Path) -> None:
    """verify reports a spec error before it needs helm (so the test needs no helm)."""
    (root / "fleet" / "clusters" / "train-east.yaml").write_text("kind: Nope\n")


def _jobs_export(root: Path) -> None:
    (root.parent / "jobs.json").write_text('{"apiVersion": "v1", "kind": "List", "items": []}\n')


NODES = str(AUDIT_NODES)
REPORT = "reports/out.txt"
OLD_REPORT = "an older report\n"

CASES = [
    Case("codeowners-write", ["codeowners", "--write"], ".github/CODEOWNERS"),
    Case("codeowners-check", ["codeowners", "--check"], ".github/CODEOWNERS", ok_code=1, writes=False,
         regular="* @someone\n"),
    Case("init-force", ["init", "--force", "."], "README.md", regular="# old\n"),
    Case("init-force-nested", ["init", "--force", ".", "--source",
                               "git+https://github.com/acme/gpuspec@0123456789abcdef0123456789abcdef01234567"],
         ".github/workflows/gpuspec.yaml"),
    Case("upgrade-apply", ["upgrade", "--cluster", "train-east", "--driver-branch", "595", "--apply", "1"],
         "fleet/clusters/train-east.yaml", regular=None),
    Case("import-out", ["import", "--nodes", NODES, "--name", "lab", "--out", "fleet/clusters/lab.yaml", "--force"],
         "fleet/clusters/lab.yaml"),
    Case("import-output-cluster", ["import", "--nodes", NODES, "--name", "lab", "--output", ".", "--force"],
         "fleet/clusters/lab.yaml"),
    Case("import-output-pack", ["import", "--nodes", NODES, "--name", "lab", "--output", ".", "--force"],
         "policies/adopted-lab.yaml"),
    Case("import-output-fleet", ["import", "--nodes", NODES, "--name", "lab", "--output", ".", "--force"],
         "fleet/fleet.yaml", regular=None),
    Case("lint-output", ["lint", "--output", REPORT], REPORT, regular=OLD_REPORT),
    Case("validate-output", ["validate", "--output", REPORT], REPORT, regular=OLD_REPORT),
    Case("plan-output", ["plan", "--base", "HEAD", "--output", REPORT], REPORT, regular=OLD_REPORT),
    Case("audit-output", ["audit", "--cluster", "train-east", "--nodes", NODES, "--output", REPORT], REPORT,
         ok_code=1, regular=OLD_REPORT),
    Case("verify-output", ["verify", "--helm", "/nonexistent/helm", "--output", REPORT], REPORT, ok_code=2,
         prepare=_broken_spec, regular=OLD_REPORT),
    Case("gate-output", ["gate", "--cluster", "train-east", "--nodes", NODES, "--output", REPORT], REPORT,
         ok_code=1, regular=OLD_REPORT),
    Case("acceptance-output", ["acceptance", "report", "--cluster", "train-east", "--jobs", "../jobs.json",
                               "--output", REPORT], REPORT, ok_code=1, prepare=_jobs_export,
         regular=OLD_REPORT),
    Case("migrate-output", ["migrate", "--cluster", "train-east", "--nodes", NODES, "--output", REPORT], REPORT,
         regular=OLD_REPORT),
    Case("upgrade-output", ["upgrade", "--cluster", "train-east", "--driver-branch", "595", "--output", REPORT],
         REPORT, regular=OLD_REPORT),
]
BY_NAME = {case.name: case for case in CASES}


def _attacks(case: Case) -> list[str]:
    return [*ATTACKS, INNER_LINK] if case.writes else ATTACKS


@pytest.mark.parametrize(("name", "attack"), [(c.name, a) for c in CASES for a in _attacks(c)])
def test_refused_and_nothing_changes(name: str, attack: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    case = BY_NAME[name]
    root = checked_out_repo(tmp_path)
    case.setup(root)
    plant(root, case.target, attack)
    before = snapshot(tmp_path)
    with memory_cap() if attack == "dev-zero-link" else contextlib.nullcontext():
        result = gpuspec(case.args, monkeypatch, capsys, cwd=root)
    assert result.code == 2, (case.args, result.text)
    assert Path(case.target).name in result.err, result.err
    assert snapshot(tmp_path) == before
    assert_no_leak(tmp_path, result)


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_a_regular_file_works_as_before(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    case = BY_NAME[name]
    root = checked_out_repo(tmp_path)
    case.setup(root)
    target = root / case.target
    if case.regular is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(case.regular)
    old = target.read_bytes() if target.exists() else None
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    result = gpuspec(case.args, monkeypatch, capsys, cwd=root)
    assert result.code == case.ok_code, (case.args, result.text)
    assert target.is_file() and not target.is_symlink()
    if case.writes:
        assert target.read_bytes() != old and target.stat().st_size > 0
        if mode is not None:
            assert stat.S_IMODE(target.stat().st_mode) == mode  # a replaced file keeps its mode
    else:
        assert target.read_bytes() == old and "has no gpuspec section" in result.err
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".gpuspec-tmp")]
    assert_no_leak(tmp_path, result)


@pytest.mark.parametrize("how", ["into-git", "out-of-repo"])
@pytest.mark.parametrize("name", ["codeowners-write", "lint-output", "init-force-nested", "import-out"])
def test_a_folder_linked_away_is_refused(name: str, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The file's folder is a committed link into .git or out of the repository: nothing is written there."""
    case = BY_NAME[name]
    root = checked_out_repo(tmp_path)
    case.setup(root)
    folder = root / Path(case.target).parent
    if folder.exists():
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    away = root / ".git" if how == "into-git" else tmp_path / "outside"
    folder.symlink_to(os.path.relpath(away, folder.parent))
    before = snapshot(tmp_path)
    result = gpuspec(case.args, monkeypatch, capsys, cwd=root)
    assert result.code == 2, (case.args, result.text)
    assert Path(case.target).name in result.err, result.err
    assert ".git folder" in result.err if how == "into-git" else "outside the repository" in result.err
    assert snapshot(tmp_path) == before
    assert_no_leak(tmp_path, result)


def test_the_issue_case_names_the_file_and_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`.github/CODEOWNERS -> ../.git/config` and a link inside the repository, as the issue reports them."""
    root = checked_out_repo(tmp_path)
    plant(root, ".github/CODEOWNERS", "git-config-link")
    result = gpuspec(["codeowners", "--write"], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "CODEOWNERS is inside a .git folder" in result.err, result.err
    plant(root, ".github/CODEOWNERS", INNER_LINK)
    result = gpuspec(["codeowners", "--write"], monkeypatch, capsys, cwd=root)
    assert result.code == 2, result.err
    assert "CODEOWNERS is a symbolic link; gpuspec does not write through links" in result.err
    plant(root, ".github/CODEOWNERS", "dev-zero-link")
    with memory_cap():
        result = gpuspec(["codeowners", "--check"], monkeypatch, capsys, cwd=root)
    assert result.code == 2 and "MemoryError" not in result.text, result.text


# --- the helper itself --------------------------------------------------------------------------------------


def test_write_file_replaces_a_regular_file_atomically_and_keeps_its_mode(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    target = tmp_path / "report.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    write_file(target, b"new\n")
    assert target.read_bytes() == b"new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    write_file(target, b"newer\n", mode=0o644)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    write_file(tmp_path / "a" / "b" / "c.txt", b"x", parents=True)
    assert (tmp_path / "a" / "b" / "c.txt").read_bytes() == b"x"
    with pytest.raises(FileExistsError):
        write_file(target, b"again\n", exclusive=True)
    write_file(tmp_path / "fresh.txt", b"fresh\n", exclusive=True)
    assert (tmp_path / "fresh.txt").read_bytes() == b"fresh\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "a", "fresh.txt", "report.txt"]


@pytest.mark.parametrize("attack", [*ATTACKS, INNER_LINK, "folder", "git-path"])
def test_check_write_refuses(attack: str, tmp_path: Path) -> None:
    root = checked_out_repo(tmp_path)
    if attack == "folder":
        (root / "out").mkdir()
    elif attack == "git-path":
        target = root / ".git" / "hooks" / "pre-commit"
        with pytest.raises(UnsafeFile, match=r"\.git folder"):
            check_write(target)
        with pytest.raises(GpuspecError, match=r"pre-commit is inside a \.git folder"):
            safe_write(target, "#!/bin/sh\n")
        assert not target.exists()
        return
    else:
        plant(root, "out", attack)
    before = snapshot(tmp_path)
    with pytest.raises(UnsafeFile):
        check_write(root / "out")
    with pytest.raises(GpuspecError, match=r"out (is|is not) "):
        safe_write(root / "out", "x", exclusive=attack == INNER_LINK)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("attack", ATTACKS)
def test_safe_read_refuses_without_blocking(attack: str, tmp_path: Path) -> None:
    root = checked_out_repo(tmp_path)
    plant(root, "in.txt", attack)
    with pytest.raises(GpuspecError, match=r"in\.txt (is|is not) "):
        safe_read(root / "in.txt", 1024)


def test_safe_read_bounds_and_missing(tmp_path: Path) -> None:
    root = checked_out_repo(tmp_path)
    (root / "big.txt").write_bytes(b"x" * 2048)
    with pytest.raises(GpuspecError, match="larger than the 1024-byte limit"):
        safe_read(root / "big.txt", 1024)
    assert safe_read(root / "missing.txt", 1024, missing_ok=True) is None
    with pytest.raises(GpuspecError, match=r"missing\.txt does not exist"):
        safe_read(root / "missing.txt", 1024)
    (root / "dir").mkdir()
    with pytest.raises(GpuspecError, match="dir is a directory, expected a CODEOWNERS file"):
        safe_read(root / "dir", 1024, expected="a CODEOWNERS file")


def _outcome(path: Path, folders: dict[str, str] | None) -> str:
    try:
        return check_link(path, folders)
    except UnsafeFile as refused:
        return f"refused: {refused.message}"


def test_resolving_each_folder_once_changes_no_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check_link with a shared folder memo (what a batch of reads uses) answers as the plain check for regular
    files, links inside the repository, links out of it or into .git, folders linked away and missing files."""
    repo = tmp_path / "repo"
    clusters = repo / "fleet" / "clusters"
    clusters.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("[http]\n")
    (repo / "shared.yaml").write_text("name: shared\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text("name: x\n")
    (clusters / "plain.yaml").write_text("name: plain\n")
    (clusters / "inside.yaml").symlink_to("../../shared.yaml")
    (clusters / "away.yaml").symlink_to(outside / "x.yaml")
    (clusters / "git.yaml").symlink_to("../../.git/config")
    (repo / "fleet" / "linked").symlink_to(outside)
    monkeypatch.chdir(repo)
    paths = [clusters / name for name in ("plain.yaml", "inside.yaml", "away.yaml", "git.yaml", "missing.yaml")]
    paths += [repo / "fleet" / "linked" / "x.yaml", repo / ".git" / "config"]
    folders: dict[str, str] = {}
    expected = [_outcome(path, None) for path in paths]
    assert [_outcome(path, folders) for path in paths] == expected
    assert expected[0] == os.path.realpath(paths[0]) and expected[1] == os.path.realpath(repo / "shared.yaml")
    assert [e.startswith("refused") for e in expected] == [False, False, True, True, False, True, True]
