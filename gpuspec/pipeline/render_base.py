"""``render --check --base REV``: check the output folder of a change against the output of a trusted base revision.

A pull request can write every file of the repository, ``rendered/`` included, so nothing it commits is taken on
trust: no digest, stamp or proof of its own.  What is trusted is the base revision (the pull request's target, a
protected branch whose output passed this gate when it merged), read from git objects.

Each cluster's output files are a function of gpuspec, the inputs every cluster shares (every file of the fleet
and policy folders that is not a cluster file: fleet.yaml, the policy packs, template overrides), the findings its
policy exceptions accept on the day, and its own cluster file.  So the check is exact when:

- gpuspec is the version that rendered the base (its generator stamp), no shared input changed and no policy
  exception has expired (then every exception that accepts a finding today accepted it on the base's day too):
  otherwise every cluster is rendered and compared (``Full``, with the reasons);
- every file of a cluster whose cluster file did not change is byte for byte the base's;
- every cluster whose file changed is validated and rendered now, and its files are compared with those bytes;
- the fleet-wide files (bootstrap objects, handover index, generator stamp) are the base's: what they take from
  each cluster (:func:`gpuspec.render.bootstrap.bootstrap_entry`, the handover summary) is compared for each
  changed cluster between the base and now; a cluster added or removed, or one whose entry or summary changed,
  makes the check ``Full``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gpuspec.catalogue.engine import EXCEPTION_EXPIRED
from gpuspec.findings import Severity
from gpuspec.handover.documents import HandoverSettings, cluster_document, summary, unpack_summary
from gpuspec.history.gitread import TreeEntry, list_tree, read_blobs, relative_to_repo, repo_root, resolve_commit
from gpuspec.history.revision import load_fleet_at
from gpuspec.loader.files import CLUSTERS_DIR, FLEET_FILE, YAML_SUFFIXES
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.model.fleet import Fleet
from gpuspec.pipeline.render import Rendered, handover_settings, render_fleet
from gpuspec.pipeline.validate import ValidationResult, validate_fleet
from gpuspec.render.bootstrap import bootstrap_entry
from gpuspec.render.compile import compile_cluster
from gpuspec.render.context import cluster_context
from gpuspec.render.generator import STAMP_PATH, current_version, stamp_bytes, stamp_version
from gpuspec.render.inputs import MAX_INPUT_BYTES, InputDigests
from gpuspec.render.layout import cluster_of, is_fleetwide
from gpuspec.render.writer import MAX_OUTPUT_FILE_BYTES, Drift, drift, read_output, scan_output

#: git's mode of a regular file (executable or not) in a tree.
_REGULAR_MODES = ("100644", "100755")


@dataclass(frozen=True)
class Full:
    """The base cannot vouch for the unchanged clusters: every cluster is to be rendered and compared."""

    reasons: list[str]


@dataclass
class Checked:
    """The outcome of a check against the base: the validation of the changed clusters, and (when it had no
    errors) the files that differ from what they must hold."""

    validation: ValidationResult
    drifts: list[Drift] = field(default_factory=list)
    #: The clusters validated and rendered now.
    rendered: list[str] = field(default_factory=list)
    #: How many output files were compared with the base's.
    compared: int = 0
    #: False when the validation found errors (nothing was compared).
    renderable: bool = True


@dataclass(frozen=True)
class _Input:
    """One input file now: its git blob id and sha256."""

    blob: str
    sha256: str


def blob_id(data: bytes) -> str:
    """The id git gives a blob of these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def base_commit(fleet_dir: Path, rev: str) -> str:
    """The commit ``rev`` names in the repository of ``fleet_dir``; a GpuspecError when it names none."""
    return resolve_commit(repo_root(fleet_dir.absolute()), rev)


def check_against_base(fleet_dir: Path, policies_dir: Path, out_dir: Path, rev: str,
                       today: dt.date) -> Full | Checked:
    """Check ``out_dir`` against the output of git revision ``rev`` (see the module docstring): ``Full`` when every
    cluster must be rendered, else what differs.  A GpuspecError when ``rev`` names no commit or the folders lie
    outside one git repository."""
    repo = repo_root(fleet_dir.absolute())
    rels = {name: relative_to_repo(repo, folder) for name, folder in
            (("fleet", fleet_dir), ("policies", policies_dir), ("out", out_dir))}
    commit = resolve_commit(repo, rev)
    base_inputs = {**_listing(repo, commit, rels["fleet"], "fleet/"),
                   **_listing(repo, commit, rels["policies"], "policies/")}
    base_out = _listing(repo, commit, rels["out"], "")
    head_inputs = {**_head_inputs(fleet_dir, "fleet/"), **_head_inputs(policies_dir, "policies/")}

    reasons = _shared_changes(base_inputs, head_inputs)
    if not base_out:
        reasons.append(f"the base revision has no rendered output in {rels['out'] or '.'}")
    else:
        reasons += _generator_change(repo, base_out)
    if reasons:
        return Full(reasons)

    changed, removed, added = _cluster_changes(base_inputs, head_inputs)
    files = {f"{name}{suffix}" for name in changed for suffix in YAML_SUFFIXES}
    validation = validate_fleet(fleet_dir, policies_dir, files, today)
    expired = [f for f in validation.findings if f.rule_id == EXCEPTION_EXPIRED.id]
    if expired:
        return Full([f"a policy exception has expired ({expired[0].message})"])
    fleet = validation.fleet
    if fleet is None or not validation.usable or any(f.severity.rank >= Severity.ERROR.rank
                                                      for f in validation.findings):
        return Checked(validation, renderable=False)
    if removed or added:
        return Full([f"cluster {name} was {'added' if name in added else 'removed'}, which changes the fleet-wide "
                     "files" for name in sorted({*added, *removed})][:3])
    handover = handover_settings(fleet_dir, policies_dir, fleet)
    rendered = _render_changed(fleet, validation, head_inputs, changed, handover)
    moved = _fleetwide_changes(repo, commit, rels["fleet"], fleet, changed, rendered, handover)
    if moved:
        return Full(moved)
    outcome = Checked(validation, rendered=sorted(changed))
    _compare(repo, out_dir, base_out, rendered, set(changed), outcome)
    return outcome


def _listing(repo: Path, commit: str, folder: str, prefix: str) -> dict[str, TreeEntry]:
    """The files below ``folder`` at ``commit``, by ``prefix`` + their path relative to it."""
    start = len(folder.strip("/")) + 1 if folder.strip("/") else 0
    return {prefix + e.path[start:]: e for e in list_tree(repo, commit, folder)}


#: The blob id given a file that cannot be read safely: it matches no blob, so the inputs count as changed and every
#: cluster is rendered (whose validation says what is wrong with the file, as a check without --base does).
_UNREADABLE = "unreadable"


def _head_inputs(folder: Path, prefix: str) -> dict[str, _Input]:
    """Every file below ``folder`` now (none when it does not exist), as :func:`_listing` names them; a file the
    loader would refuse (a link out of the repository or into .git, a FIFO or device, an oversized file) is not
    read and counts as changed."""
    found: dict[str, _Input] = {}
    if not folder.is_dir():
        return found
    base = os.fspath(folder)
    for root, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(names):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            try:
                data = read_bounded(Path(path), MAX_INPUT_BYTES)
            except (UnsafeFile, OSError):
                found[prefix + rel] = _Input(_UNREADABLE, _UNREADABLE)
                continue
            found[prefix + rel] = _Input(blob_id(data), hashlib.sha256(data).hexdigest())
    return found


def _cluster_name(key: str) -> str | None:
    """The cluster a ``fleet/clusters/<name>.yaml`` input key names; None for any other input (a shared one)."""
    path = PurePosixPath(key)
    if path.parent.as_posix() == f"fleet/{CLUSTERS_DIR}" and path.name.endswith(YAML_SUFFIXES) \
            and not path.name.startswith("."):
        return path.name.rsplit(".", 1)[0]
    return None


def _shared_changes(base: Mapping[str, TreeEntry], head: Mapping[str, _Input]) -> list[str]:
    """Why the shared inputs differ between the base and now (empty when they do not)."""
    reasons = []
    for key in sorted({*base, *head}):
        if _cluster_name(key) is not None:
            continue
        was, now = base.get(key), head.get(key)
        if was is None or now is None or was.object_id != now.blob or was.mode not in _REGULAR_MODES:
            what = "added" if was is None else "removed" if now is None else "changed"
            reasons.append(f"{key} {what} (an input every cluster shares)")
    return reasons[:3]


def _generator_change(repo: Path, base_out: Mapping[str, TreeEntry]) -> list[str]:
    """Why the base's output may not be what this gpuspec renders: its generator stamp names another version."""
    entry = base_out.get(STAMP_PATH)
    data = read_blobs(repo, [entry.object_id]).get(entry.object_id) if entry is not None and entry.size < 65536 \
        else None
    version = stamp_version(data)
    running = current_version()
    if version != running:
        return [f"the base's output was written by gpuspec {version or '(no generator stamp)'}; this is {running}"]
    return []


def _cluster_changes(base: Mapping[str, TreeEntry],
                     head: Mapping[str, _Input]) -> tuple[dict[str, str], set[str], set[str]]:
    """The clusters whose file changed (name → the input key of its file now), those removed and those added."""
    was = {name: entry for key, entry in base.items() if (name := _cluster_name(key)) is not None}
    now = {name: (key, value) for key, value in head.items() if (name := _cluster_name(key)) is not None}
    changed = {name: key for name, (key, value) in now.items()
               if name not in was or was[name].object_id != value.blob or was[name].mode not in _REGULAR_MODES}
    removed = set(was) - set(now)
    added = set(now) - set(was)
    return changed, removed, added


def _digests(head: Mapping[str, _Input]) -> InputDigests:
    """The input digests a render takes (named as :func:`gpuspec.render.inputs.read_input_digests` names them),
    from the hashes taken here."""
    shared = {key.removeprefix("fleet/"): value.sha256 for key, value in head.items() if key == f"fleet/{FLEET_FILE}"}
    shared.update({key: value.sha256 for key, value in head.items() if key.startswith("policies/")})
    clusters = {f"{CLUSTERS_DIR}/{PurePosixPath(key).name}": value.sha256 for key, value in head.items()
                if _cluster_name(key) is not None}
    return InputDigests(shared, clusters)


def _render_changed(fleet: Fleet, validation: ValidationResult, head: Mapping[str, _Input],
                    changed: Mapping[str, str], handover: HandoverSettings) -> Rendered:
    """The files of the changed clusters, rendered now (no fleet-wide file)."""
    accepted = {name: records for name in changed if (records := validation.accepted_records(fleet, name))}
    return render_fleet(fleet, _digests(head), sorted(changed), jobs=1, handover=handover, accepted=accepted)


def _fleetwide_changes(repo: Path, commit: str, fleet_rel: str, fleet: Fleet, changed: Mapping[str, str],
                       rendered: Rendered, handover: HandoverSettings) -> list[str]:
    """Why the fleet-wide files may differ from the base's: a changed cluster whose bootstrap entry or handover
    summary is not what it was at the base (each read from the base's cluster file, rendered as now)."""
    if not changed:
        return []
    names = [PurePosixPath(key).name for key in changed.values()]
    before = load_fleet_at(repo, commit, fleet_rel, names).fleet
    if before is None:
        return ["a changed cluster file does not load at the base revision"]
    for name in sorted(changed):
        cluster, was = fleet.cluster(name), before.cluster(name)
        if cluster is None or was is None:
            return [f"cluster {name} is not in its file at one of the revisions"]
        if bootstrap_entry(fleet, cluster) != bootstrap_entry(before, was):
            return [f"cluster {name} changes what the bootstrap objects take from it"]
        plan = compile_cluster(before, was, "", ())
        _, facts = cluster_document(cluster_context(before, was), plan, handover)
        if _plain(summary(facts)) != _plain(unpack_summary(rendered.summaries[name])):
            return [f"cluster {name} changes its line of the handover index"]
    return []


def _plain(data: object) -> str:
    """Plain data as one canonical text (enum values as the cache stores them)."""
    return json.dumps(json.loads(json.dumps(data, default=str)), sort_keys=True)


def _compare(repo: Path, out_dir: Path, base_out: Mapping[str, TreeEntry], rendered: Rendered,
             changed: set[str], outcome: Checked) -> None:
    """Compare every output file now with what it must hold: the rendered bytes for a changed cluster, the base's
    for every other cluster and for the fleet-wide files; a drift for each that differs."""
    head = scan_output(out_dir)
    label = out_dir.name or "rendered"
    differing: list[tuple[str, bytes | None]] = []  # (path, its bytes now) of files that differ from the base's
    for rel in sorted({*head, *base_out}):
        owner = cluster_of(rel)
        if owner in changed:
            continue
        if owner is None and not is_fleetwide(rel):
            if rel in head:  # no file of the layout (a render proof of an older gpuspec, a stray file)
                outcome.drifts.append(drift(rel, read_output(head[rel]), None, label))
            continue
        outcome.compared += 1
        have = read_output(head[rel]) if rel in head else None
        entry = base_out.get(rel)
        if have is not None and entry is not None and entry.mode in _REGULAR_MODES and blob_id(have) == entry.object_id:
            continue
        if rel == STAMP_PATH and have == stamp_bytes(current_version()):
            continue  # the stamp a render writes when other files change
        differing.append((rel, have))
    wanted = [base_out[rel].object_id for rel, _ in differing
              if rel in base_out and base_out[rel].size <= MAX_OUTPUT_FILE_BYTES]
    blobs = read_blobs(repo, wanted)
    for rel, have in differing:
        entry = base_out.get(rel)
        outcome.drifts.append(drift(rel, have, blobs.get(entry.object_id) if entry is not None else None, label))
    for rel, have_path, want in _changed_files(head, rendered, changed):
        outcome.compared += 1
        have = read_output(have_path) if have_path is not None else None
        if have != want:
            outcome.drifts.append(drift(rel, have, want, label))
    outcome.drifts.sort(key=lambda d: d.path)


def _changed_files(head: Mapping[str, str], rendered: Rendered,
                   changed: set[str]) -> Iterator[tuple[str, str | None, bytes | None]]:
    """Each output path of a changed cluster, now or as rendered: (path, its file now, the rendered bytes)."""
    expected = {rel for name in changed for rel in rendered.paths.get(name, ())}
    present = {rel for rel in head if cluster_of(rel) in changed}
    for rel in sorted(expected | present):
        yield rel, head.get(rel), rendered.files[rel] if rel in expected else None
