"""`lint` and `validate` replay their last report when no input changed, and never when one did.

Every test runs the real entry point in a fresh interpreter (as a user's second run would) with its own
cache folder and cache key, and compares with a run that has the cache turned off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENTRY = "from gpuspec.cli.main import main; main()"
FORMATS = ("text", "json", "sarif", "github", "junit", "gitlab")


def _repo(tmp_path: Path) -> Path:
    """The example fleet with one error and one suppressed finding, in a repository folder."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "fleet", root / "fleet")
    shutil.copytree(REPO / "policies", root / "policies")
    (root / ".git").mkdir()
    north = root / "fleet" / "clusters" / "infer-north.yaml"
    text = north.read_text()
    assert '  version: "1.33"\n' in text
    north.write_text(text.replace('  version: "1.33"\n', '  version: "1.29"\n', 1))
    east = root / "fleet" / "clusters" / "train-east.yaml"
    text = east.read_text()
    assert "\n  namespace: gpu-operator\n" in text
    east.write_text(text.replace("\n  namespace: gpu-operator\n",
                                 "\n  namespace: default  # gpuspec: ignore GS601 -- lab cluster shares it\n", 1))
    return root


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSPEC_")}
    env.update(GPUSPEC_CACHE_DIR=str(tmp_path / "cache"), GPUSPEC_CACHE_KEY_FILE=str(tmp_path / "cache.key"),
               NO_COLOR="1", **extra)
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str, bool]:
    """Exit code, stdout, stderr and whether the run loaded the lint/validate pipeline (a cache miss)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", ENTRY, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    ran = any(line.rstrip().endswith(("gpuspec.pipeline.lint", "gpuspec.pipeline.validate"))
              for line in proc.stderr.splitlines() if line.startswith("import time:"))
    err = "".join(line + "\n" for line in proc.stderr.splitlines() if not line.startswith("import time:"))
    return proc.returncode, proc.stdout, err, ran


def _uncached(args: list[str], cwd: Path, tmp_path: Path) -> tuple[int, str, str]:
    code, out, err, ran = _run(args, cwd, _env(tmp_path, GPUSPEC_NO_CACHE="1"))
    assert ran
    return code, out, err


@pytest.mark.parametrize("output_format", FORMATS)
def test_a_second_lint_of_unchanged_inputs_replays_the_report_byte_for_byte(tmp_path: Path, output_format: str) -> None:
    """The replay prints exactly what the full run printed, in every format, with the same exit code, and
    loads none of the lint pipeline."""
    root = _repo(tmp_path)
    env = _env(tmp_path)
    args = ["lint", "--format", output_format]
    first = _run(args, root, env)
    second = _run(args, root, env)
    assert first[3] and not second[3], "the first run lints, the second replays"
    assert first[:3] == second[:3] == _uncached(args, root, tmp_path)
    assert first[0] == 1 and "GS204" in first[1]


def test_sarif_keeps_suppressed_results_and_omit_suppressed_drops_them_in_a_replay(tmp_path: Path) -> None:
    """What is stored is the report before the format's choices: --omit-suppressed still applies to a replay."""
    root = _repo(tmp_path)
    env = _env(tmp_path)
    full = _run(["lint", "--format", "sarif"], root, env)
    omitted = _run(["lint", "--format", "sarif", "--omit-suppressed"], root, env)
    assert not omitted[3] and '"suppressions"' in full[1] and '"suppressions"' not in omitted[1]
    assert omitted[:3] == _uncached(["lint", "--format", "sarif", "--omit-suppressed"], root, tmp_path)
    fail_on = _run(["lint", "--fail-on", "warning"], root, env)
    assert not fail_on[3] and fail_on[0] == 1


def _edit_cluster(root: Path) -> None:
    north = root / "fleet" / "clusters" / "infer-north.yaml"
    north.write_text(north.read_text().replace('  version: "1.29"\n', '  version: "1.33"\n', 1))


def _add_cluster(root: Path) -> None:
    shutil.copy(root / "fleet" / "clusters" / "infer-north.yaml", root / "fleet" / "clusters" / "copy.yaml")


def _edit_pack(root: Path) -> None:
    pack = root / "policies" / "default.yaml"
    pack.write_text(pack.read_text() + "\n# edited\n")


def _add_template(root: Path) -> None:
    (root / "fleet" / "templates" / "handover").mkdir(parents=True)
    (root / "fleet" / "templates" / "handover" / "cluster.md.j2").write_text("{{ cluster.name }\n")


def _linked_file(root: Path) -> None:
    """A cluster file that is a link into the repository: the key follows it to its bytes."""
    target = root / "shared" / "north.yaml"
    target.parent.mkdir()
    shutil.move(root / "fleet" / "clusters" / "infer-north.yaml", target)
    (root / "fleet" / "clusters" / "infer-north.yaml").symlink_to("../../shared/north.yaml")


@pytest.mark.parametrize("linked", [False, True])
@pytest.mark.parametrize("change", [_edit_cluster, _add_cluster, _edit_pack, _add_template])
def test_any_change_to_the_inputs_runs_lint_again(tmp_path: Path, change: object, linked: bool) -> None:
    """A changed or added input file (fleet, cluster, policy pack, template override), also behind a link into
    the repository, is a miss: the report is the full run's."""
    root = _repo(tmp_path)
    if linked:
        _linked_file(root)
    env = _env(tmp_path)
    _run(["lint"], root, env)
    assert not _run(["lint"], root, env)[3]
    assert callable(change)
    change(root)
    after = _run(["lint"], root, env)
    assert after[3], "a changed input must be linted again"
    assert after[:3] == _uncached(["lint"], root, tmp_path)


def test_the_day_settings_working_folder_and_packs_are_part_of_the_key(tmp_path: Path) -> None:
    """--today (exceptions expire), GPUSPEC_* settings, --pack and the working folder (reports name files
    relative to it) each make a separate entry."""
    root = _repo(tmp_path)
    env = _env(tmp_path)
    _run(["lint"], root, env)
    assert _run(["lint", "--today", "2030-01-01"], root, env)[3]
    assert _run(["lint"], root, {**env, "GPUSPEC_DEBUG": "1"})[3]
    assert _run(["lint", "--pack", "default"], root, env)[3]
    moved = _run(["lint", "repo/fleet", "--policies", "repo/policies"], tmp_path, env)
    assert moved[3] and "repo/fleet/clusters/infer-north.yaml" in moved[1]
    assert not _run(["lint", "repo/fleet", "--policies", "repo/policies"], tmp_path, env)[3]


def test_a_planted_or_damaged_entry_is_ignored(tmp_path: Path) -> None:
    """An entry sealed under another key (a shared or restored cache folder) or damaged is never replayed."""
    root = _repo(tmp_path)
    env = _env(tmp_path)
    _run(["lint"], root, env)
    entries = list((tmp_path / "cache" / "results").iterdir())
    assert len(entries) == 1
    foreign = _run(["lint"], root, {**env, "GPUSPEC_CACHE_KEY_FILE": str(tmp_path / "other.key")})
    assert foreign[3], "an entry sealed with another user's key is recomputed"
    data = bytearray(entries[0].read_bytes())
    data[-1] ^= 1
    entries[0].write_bytes(bytes(data))
    damaged = _run(["lint"], root, env)
    assert damaged[3] and damaged[:3] == _uncached(["lint"], root, tmp_path)


def test_custom_rule_findings_are_not_replayed(tmp_path: Path) -> None:
    """A report with an organisation's custom rule (its catalogue entry comes from the pack) is not stored."""
    root = _repo(tmp_path)
    env = _env(tmp_path)
    fleet = root / "fleet" / "fleet.yaml"
    assert "packs: [default]" in fleet.read_text()
    fleet.write_text(fleet.read_text().replace("packs: [default]", "packs: [acme]"))
    north = root / "fleet" / "clusters" / "infer-north.yaml"
    north.write_text(north.read_text().replace("acme.example/gpu-pool: l40s-canary", "acme.example/pool: l40s-canary"))
    first = _run(["lint"], root, env)
    second = _run(["lint"], root, env)
    assert "ORG002" in first[1] and second[3] and first[:3] == second[:3]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_among_the_inputs_is_never_hashed_or_cached(tmp_path: Path) -> None:
    """Inputs the key cannot stand for (here a FIFO) are left to the loader, which refuses them; nothing waits."""
    root = _repo(tmp_path)
    os.mkfifo(root / "fleet" / "clusters" / "pipe.yaml")
    env = _env(tmp_path)
    first = _run(["lint"], root, env)
    second = _run(["lint"], root, env)
    assert first[3] and second[3] and first[0] == second[0] == 2
    assert not (tmp_path / "cache" / "results").exists()


@pytest.mark.parametrize("target", ["../../.git/config", "/etc/hostname"])
def test_a_link_into_git_or_out_of_the_repository_is_never_opened_for_the_key(tmp_path: Path, target: str) -> None:
    """The key never reads what the loader refuses to read (git's own data, where CI keeps its token, or a
    file outside the repository): such a fleet runs in full, and nothing is stored."""
    root = _repo(tmp_path)
    (root / ".git" / "config").write_text("[http]\n\textraheader = AUTHORIZATION: basic Zq7canaryPW91\n")
    (root / "fleet" / "clusters" / "linked.yaml").symlink_to(target)
    env = _env(tmp_path)
    first = _run(["lint"], root, env)
    second = _run(["lint"], root, env)
    assert first[3] and second[3] and first[0] == 2 and "Zq7canaryPW91" not in first[1] + first[2]
    assert not (tmp_path / "cache" / "results").exists()


def test_validate_replays_too(tmp_path: Path) -> None:
    """`validate` has its own entry: replayed when unchanged, recomputed after an edit."""
    root = _repo(tmp_path)
    env = _env(tmp_path)
    first = _run(["validate"], root, env)
    second = _run(["validate"], root, env)
    assert first[3] and not second[3] and first[:3] == second[:3] and first[0] == 1
    _edit_cluster(root)
    third = _run(["validate"], root, env)
    assert third[3] and third[:3] == _uncached(["validate"], root, tmp_path) and third[0] == 0


def test_lint_reads_nothing_the_key_does_not_cover(tmp_path: Path) -> None:
    """Every file lint opens lies below the fleet folder, the policy folder, gpuspec's package or its own
    caches: so a key over those folders' bytes stands for every input a report depends on."""
    root = _repo(tmp_path)
    _add_template(root)
    (root / "fleet" / "templates" / "handover" / "cluster.md.j2").write_text("{{ cluster.name }}\n")
    probe = (
        "import os, sys\n"
        "opened = set()\n"
        "# the import system and importlib.metadata list the folders of sys.path: not inputs\n"
        "search = {os.path.abspath(p or '.') for p in sys.path}\n"
        "def hook(event, args):\n"
        "    if event in ('open', 'os.listdir', 'os.scandir') and isinstance(args[0], (str, bytes, os.PathLike)):\n"
        "        path = os.path.abspath(os.fsdecode(args[0]))\n"
        "        if event == 'open' or path not in search:\n"
        "            opened.add(path)\n"
        "sys.addaudithook(hook)\n"
        "real_exit = os._exit\n"
        "def report(code):\n"
        "    sys.stderr.write('\\n'.join('OPENED ' + p for p in sorted(opened)) + '\\n'); sys.stderr.flush()\n"
        "    real_exit(code)\n"
        "os._exit = report\n"
        + ENTRY
    )
    env = _env(tmp_path, GPUSPEC_NO_CACHE="1")
    proc = subprocess.run([sys.executable, "-c", probe, "lint"], cwd=root, env=env, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1, proc.stderr
    opened = [line[len("OPENED "):] for line in proc.stderr.splitlines() if line.startswith("OPENED ")]
    assert opened
    package = str(REPO / "gpuspec")
    allowed = (str(root / "fleet"), str(root / "policies"), package, sys.prefix, sys.base_prefix,
               os.path.dirname(os.__file__), str(tmp_path / "cache"), str(tmp_path / "cache.key"))
    import gpuspec

    allowed += (os.path.dirname(gpuspec.__file__),)
    outside = [p for p in opened if p not in (str(root), str(tmp_path))
               and not any(p == a or p.startswith(a.rstrip(os.sep) + os.sep) for a in allowed)
               and not p.endswith((".pth", ".egg-info", "entry_points.txt")) and "site-packages" not in p
               and "__editable__" not in os.path.basename(p)]
    assert not outside, outside


def _later() -> int:
    """A moment long after every file the test wrote: their digests count as settled (see render.digestmemo)."""
    import time

    from gpuspec.render.digestmemo import RACY_NS

    return time.time_ns() + 10 * RACY_NS


def test_the_key_reads_only_files_changed_since_they_were_hashed(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """With the memo of file digests, a second key reads no file; an edit that keeps the file's size and
    modification time is read again and changes the key to the one a key taken without the memo has."""
    import datetime as dt

    from gpuspec.cli import resultcache
    from gpuspec.loader import safefile
    from gpuspec.render.digestmemo import DigestMemo

    root = _repo(tmp_path)
    fleet, policies = root / "fleet", root / "policies"
    monkeypatch.chdir(root)
    reads: list[str] = []
    real_read = safefile.read_bounded

    def counting(path: Path, *args: object, **kwargs: object) -> bytes:
        reads.append(os.fspath(path))
        return real_read(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(safefile, "read_bounded", counting)
    day = dt.date(2026, 12, 5)

    def key(memo: DigestMemo | None) -> str | None:
        reads.clear()
        found = resultcache.input_key("lint", fleet, policies, (), day, memo=memo)
        if memo is not None:
            memo.save()
        return found

    files = sum(1 for p in [*fleet.rglob("*"), *policies.rglob("*")] if p.is_file())
    first = key(DigestMemo(fleet, policies, _later(), scope="results-lint"))
    assert first is not None and len(reads) == files
    assert key(DigestMemo(fleet, policies, _later(), scope="results-lint")) == first and reads == []

    north = fleet / "clusters" / "infer-north.yaml"
    before = north.stat()
    north.write_text(north.read_text().replace('"1.29"', '"1.30"', 1))
    os.utime(north, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert north.stat().st_size == before.st_size
    edited = key(DigestMemo(fleet, policies, _later(), scope="results-lint"))
    assert reads == [os.fspath(north)]
    assert edited != first and edited == key(None)


def test_a_file_written_just_now_is_never_taken_from_the_memo(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A file changed within the racy window of the memo's opening is hashed on every key (a write in the same
    clock tick could keep its whole state)."""
    import datetime as dt
    import time

    from gpuspec.cli import resultcache
    from gpuspec.render.digestmemo import DigestMemo

    root = _repo(tmp_path)
    fleet, policies = root / "fleet", root / "policies"
    monkeypatch.chdir(root)
    day = dt.date(2026, 12, 5)
    for _ in range(2):
        memo = DigestMemo(fleet, policies, time.time_ns(), scope="results-lint")
        resultcache.input_key("lint", fleet, policies, (), day, memo=memo)
        memo.save()
    assert memo.hits == 0 and memo.reads > 0
