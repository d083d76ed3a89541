"""`gpuspec import`: draft a cluster spec from what a cluster runs (nodes, ClusterPolicy, Helm release)."""

from __future__ import annotations

import copy
import io
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpuspec import exitcodes
from gpuspec.audit.adopt import adopted_values, adoption_pack, needed_rules, pack_name
from gpuspec.audit.draft import draft_cluster, dump_yaml
from gpuspec.audit.facts import NodeFacts, node_facts
from gpuspec.audit.inventory import OperatorResource, parse_nodes, read_input
from gpuspec.audit.mirror_draft import draft_mirror
from gpuspec.audit.mirror_match import registry_prefixes
from gpuspec.audit.roundtrip import Carried
from gpuspec.audit.running import (
    Read,
    RunningState,
    read_cluster_policies,
    read_helm_release,
    read_helm_values,
    read_namespace,
    read_operator_objects,
    running_state,
)
from gpuspec.audit.settings_draft import add_overrides, mirror_settings
from gpuspec.cli.common import outside_git
from gpuspec.cli.operator_check import CHART_HELP
from gpuspec.errors import GpuspecError
from gpuspec.findings import Finding
from gpuspec.redaction import redact_text


def write_new_file(path: Path, text: str, force: bool) -> None:
    """Write ``text`` to ``path``; refuse to replace an existing file unless ``force`` (then replace atomically).

    Written as every file gpuspec names is (:func:`gpuspec.loader.safefile.safe_write`): never through a
    symbolic link, never into a FIFO, device or ``.git``; a refusal is a GpuspecError (exit 2).
    """
    from gpuspec.loader.safefile import safe_write

    safe_write(path, text, exclusive=not force)


def _check_target(path: Path) -> None:
    """Refuse (GpuspecError, exit 2) a file import would write that is a link, a FIFO, device or folder, lies in
    .git or in a folder linked out of the repository (:func:`gpuspec.loader.safefile.check_write`)."""
    from gpuspec.loader.safefile import UnsafeFile, check_write

    try:
        check_write(path)
    except UnsafeFile as refused:
        raise GpuspecError(f"{path} {refused.message}; nothing was written") from None


def _read_fleet_file(fleet_file: Path) -> str | None:
    """The text of fleet.yaml (None when absent), read as every file read by name is (bounded, regular file,
    never a link out of the repository or into .git): a refusal is a GpuspecError (exit 2)."""
    from gpuspec.loader.safefile import safe_read
    from gpuspec.loader.yamlread import MAX_FILE_BYTES

    data = safe_read(fleet_file, MAX_FILE_BYTES, expected="fleet.yaml", missing_ok=True)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise GpuspecError(f"{fleet_file}: not UTF-8 text") from None


def _select_pack(fleet_file: Path, name: str) -> str | None:
    """Add pack ``name`` to fleet.yaml's policy.packs (comments kept); the new text, or None when already there."""
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    text = _read_fleet_file(fleet_file)
    if text is None:
        raise GpuspecError(f"{fleet_file}: cannot read it to select pack {name}: it does not exist")
    try:
        doc = yaml.load(text)
    except YAMLError as exc:
        raise GpuspecError(f"{fleet_file}: cannot read it to select pack {name}: {exc}") from None
    policy = doc.setdefault("policy", {}) if isinstance(doc, dict) else None
    if not isinstance(policy, dict):
        raise GpuspecError(f"{fleet_file}: policy is not a mapping; add {name} to policy.packs by hand")
    packs = policy.setdefault("packs", ["default"])
    if name in packs:
        return None
    packs.append(name)
    stream = io.StringIO()
    yaml.dump(doc, stream)
    return stream.getvalue()


@click.command("import")
@click.option("--nodes", "nodes_source", required=True, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get nodes -o json` (- for standard input).")
@click.option("--clusterpolicies", "policies_source", default=None, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get clusterpolicies,nvidiadrivers -o json`.")
@click.option("--helm-values", "values_source", default=None, metavar="FILE", callback=outside_git,
              help="Output of `helm get values -a -o json` (or YAML) of the GPU Operator release.")
@click.option("--helm-release", "release_source", default=None, metavar="FILE", callback=outside_git,
              help="Output of `helm list -o json` (for the chart version).")
@click.option("--name", "cluster_name", required=True, help="Name of the cluster (its spec file name).")
@click.option("--pool-label", default=None, metavar="KEY",
              help="Node label that names each node's provisioning group [default: the EKS/GKE/AKS/Karpenter/"
                   "Cluster API node group labels].")
@click.option("--out", "out_file", type=click.Path(path_type=Path, dir_okay=False), default=None, callback=outside_git,
              help="Write the draft here (e.g. fleet/clusters/NAME.yaml) instead of standard output.")
@click.option("--output", "output_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              callback=outside_git,
              help="Fleet repository (made by `gpuspec init`): write fleet/clusters/NAME.yaml and the "
                   "exceptions pack policies/adopted-NAME.yaml, select it in fleet.yaml, report findings.")
@click.option("--force", is_flag=True, help="Replace files that exist.")
@click.option("--operator-version", default=None, metavar="VERSION",
              help="GPU Operator release to pin [default: the one the Helm release or ClusterPolicy runs].")
@click.option("--gitops", "gitops_tool", type=click.Choice(["argocd", "flux"]), default="argocd", show_default=True,
              help="GitOps tool to put in the draft.")
@click.option("--chart", "chart", type=click.Path(path_type=Path, exists=True), default=None, help=CHART_HELP)
def import_command(nodes_source: str, policies_source: str | None, values_source: str | None,
                   release_source: str | None, cluster_name: str, pool_label: str | None, out_file: Path | None,
                   output_dir: Path | None, force: bool, operator_version: str | None, gitops_tool: str,
                   chart: Path | None) -> None:
    """Draft a cluster spec from what a cluster runs.

    Pools follow the nodes' provisioning (node group labels, or --pool-label),
    then GPU product; the nodeSelector is that label. The draft pins the
    operator release, driver, MIG, sharing, operands, mirror and ConfigMaps
    the cluster runs, says in a comment where each value was read, and marks
    what it could not read `# TODO: review`. Nodes that differ from their
    pool's majority are reported as audit reports them. With
    --clusterpolicies the draft is rendered and the ClusterPolicy (and
    NVIDIADrivers) the chart writes from it are compared with the cluster's,
    field by field and image by image: each difference is an error at the
    draft line that causes it (GS785, GS786). With --output the exceptions the
    draft needs (release and support-matrix findings only) are written as a
    policy pack (owner and expiry TODO). Exit 0 when drafted, 1 when the draft
    would change what the operator runs, 2 on input errors or when a file
    exists (use --force).
    """
    if operator_version is not None and not re.match(r"^v[0-9]{2}\.[0-9]{1,2}\.[0-9]{1,2}$", operator_version):
        raise GpuspecError(f"--operator-version {operator_version!r} is not a GPU Operator release such as v26.7.0")
    if out_file is not None and output_dir is not None:
        raise GpuspecError("pass --out or --output, not both")
    sources = [s for s in (nodes_source, policies_source, values_source, release_source) if s is not None]
    if sources.count("-") > 1:
        raise GpuspecError("only one input can be read from standard input (-)")
    nodes = parse_nodes(*read_input(nodes_source))
    policies_text, policies_display = read_input(policies_source) if policies_source else (None, "")
    specs, resources = read_cluster_policies(policies_text, policies_display) if policies_text is not None else ([], [])
    objects = read_operator_objects(policies_text, policies_display) if policies_text is not None else []
    values = read_helm_values(*read_input(values_source)) if values_source else None
    release: Read | None = None
    release_text, release_display = read_input(release_source) if release_source else (None, "")
    if release_text is not None:
        release = read_helm_release(release_text, release_display)
    namespace = read_namespace(release_text, release_display, policies_text, policies_display)
    state = running_state(specs, values, release, namespace)
    facts = [node_facts(n) for n in nodes]
    mirrors = _fleet_mirrors(output_dir) if output_dir is not None else []
    doc, notes = draft_cluster(cluster_name, nodes, facts, operator_version, gitops_tool, state, pool_label, mirrors)
    new_mirror = _new_mirror(cluster_name, doc, state, mirrors)
    named = doc
    if new_mirror is not None:  # the draft names the mirror drafted into fleet.yaml beside it
        named, notes = draft_cluster(cluster_name, nodes, facts, operator_version, gitops_tool, state, pool_label,
                                     [*mirrors, new_mirror])
    running = _Running(objects, values, chart)
    settings = (_read_fleet_file(output_dir / "fleet" / "fleet.yaml") if output_dir is not None else None)
    carried = _carried(named, cluster_name, settings or _STANDALONE_FLEET, new_mirror, running)
    add_overrides(doc, carried)
    if named is not doc:
        add_overrides(named, carried)
    text = redact_text(dump_yaml(doc))  # a credential in a node label never reaches the draft
    final_text = redact_text(dump_yaml(named))
    if output_dir is None:
        if out_file is not None:
            _check_target(out_file)
        if out_file is not None and out_file.exists() and not force:
            raise GpuspecError(f"{out_file} already exists; not overwriting it", hint="pass --force to replace it")
        if out_file is None:
            click.echo(text, nl=False)
        else:
            write_new_file(out_file, text, force)
            click.echo(f"gpuspec: wrote {out_file} ({len(doc['pools'])} pools)", err=True)
        for note in notes:
            click.echo(f"gpuspec: note: {redact_text(note)}", err=True)
        differs = _report_standalone(final_text, new_mirror, cluster_name, nodes_source, facts, resources,
                                     policies_source is not None, out_file, running)
    else:
        with tempfile.TemporaryDirectory(prefix="gpuspec-import-") as scratch:
            fleet_dir = _write_repository(output_dir, cluster_name, text, force, final_text, new_mirror,
                                          Path(scratch))
            for note in notes:
                click.echo(f"gpuspec: note: {redact_text(note)}", err=True)
            differs = _report(fleet_dir, cluster_name, nodes_source, facts, resources, policies_source is not None,
                              running, rename=_shown_as(fleet_dir, output_dir / "fleet"))
    if differs:
        raise SystemExit(exitcodes.FINDINGS)


_STANDALONE_FLEET = """apiVersion: gpuspec.io/v1alpha1
kind: Fleet
metadata:
  name: import
git:
  repoURL: https://git.example.com/import.git
"""


@dataclass(frozen=True)
class _Running:
    """What the cluster's operator runs, for the round trip: its exported objects and Helm values, and the chart."""

    objects: Sequence[dict[str, Any]]
    values: dict[str, Any] | None
    chart: Path | None


def _shown_as(fleet_dir: Path, real: Path) -> Callable[[Finding], Finding] | None:
    """Findings of a trial copy of the fleet shown at the files of the fleet ``real`` (None: no copy)."""
    from dataclasses import replace

    if fleet_dir == real:
        return None
    trial = fleet_dir.resolve()

    def shown(finding: Finding) -> Finding:
        if not finding.file:
            return finding
        try:
            inside = Path(finding.file).resolve().relative_to(trial)
        except ValueError:
            return finding
        return replace(finding, file=str(real / inside))
    return shown


def _report_standalone(text: str, mirror: Any, name: str, nodes_source: str, facts: Sequence[NodeFacts],
                       resources: Sequence[OperatorResource], expect_policy: bool, out_file: Path | None,
                       running: _Running) -> bool:
    """Audit the export against a draft written to standard output or --out (in a scratch fleet of its own, with
    the mirror the cluster pulls through, its chart repository stood in for); True when the operator would change."""
    from dataclasses import replace

    with tempfile.TemporaryDirectory(prefix="gpuspec-import-") as scratch:
        root = Path(scratch)
        (root / "fleet" / "clusters").mkdir(parents=True)
        settings = _STANDALONE_FLEET
        if mirror is not None:
            settings = _with_mirror(settings, "fleet.yaml", _stand_in(mirror))
        (root / "fleet" / "fleet.yaml").write_text(settings, encoding="utf-8")
        (root / "fleet" / "clusters" / f"{name}.yaml").write_text(text, encoding="utf-8")
        shown = str(out_file) if out_file else "<draft>"
        return _report(root / "fleet", name, nodes_source, facts, resources, expect_policy, running,
                       rename=lambda f: replace(f, file=shown if f.file and f.file.endswith(f"{name}.yaml")
                                                else "<fleet.yaml>"))


def _carried(doc: Any, name: str, settings: str, mirror: Any, running: _Running) -> list[Carried]:
    """The running settings of the exported ClusterPolicy the draft ``doc`` does not render and only an
    ``overrides`` entry keeps (rendered in a scratch fleet with ``settings`` as fleet.yaml and ``mirror``)."""
    from gpuspec.cli.operator_check import carried_settings
    from gpuspec.loader.fleetload import load_fleet

    if not running.objects:
        return []
    with tempfile.TemporaryDirectory(prefix="gpuspec-import-") as scratch:
        fleet_dir = Path(scratch) / "fleet"
        (fleet_dir / "clusters").mkdir(parents=True)
        text = settings if mirror is None else _with_mirror(settings, "fleet.yaml", _stand_in(mirror))
        (fleet_dir / "fleet.yaml").write_text(text, encoding="utf-8")
        (fleet_dir / "clusters" / f"{name}.yaml").write_text(dump_yaml(doc), encoding="utf-8")
        load = load_fleet(fleet_dir)
        cluster = load.fleet.cluster(name) if load.fleet is not None else None
        if load.fleet is None or cluster is None:
            return []
        return carried_settings(load.fleet, cluster, running.objects, running.chart)


def _stand_in(mirror: Any) -> Any:
    """``mirror`` with its chart repository (no export shows it) stood in for, so the fleet loads."""
    stand_in = copy.deepcopy(mirror)
    stand_in["chart"]["repository"] = "oci://chart-repository.invalid/nvidia"
    return stand_in


def _fleet_mirrors(root: Path) -> list[Any]:
    """The ``mirrors`` of the fleet repository ``root`` (its fleet/fleet.yaml), [] when it has none or none yet."""
    import yaml as pyyaml

    text = _read_fleet_file(root / "fleet" / "fleet.yaml")  # a link out, a FIFO or a device: exit 2 here
    if text is None:
        return []  # _write_repository reports a missing fleet.yaml
    try:
        settings = pyyaml.safe_load(text)
    except pyyaml.YAMLError:
        return []  # _write_repository reports a broken fleet.yaml
    mirrors = settings.get("mirrors") if isinstance(settings, dict) else None
    return list(mirrors) if isinstance(mirrors, list) else []


def _new_mirror(name: str, doc: Mapping[str, Any], state: RunningState, mirrors: Sequence[Any]) -> Any:
    """The mirror to draft into fleet.yaml when the cluster pulls through one the fleet does not declare."""
    if "mirror" in doc:
        return None
    release = doc.get("operator", {}).get("version")
    prefixes = registry_prefixes(state.repositories, release if isinstance(release, str) else None)
    if not prefixes:
        return None
    taken = [str(m.get("name")) for m in mirrors if isinstance(m, Mapping)]
    return draft_mirror(name, prefixes, state.pull_secrets, taken, mirror_settings(state))


def _add_mirror(fleet_file: Path, mirror: Any) -> str:
    """fleet.yaml's text with ``mirror`` appended to its ``mirrors`` (comments kept)."""
    text = _read_fleet_file(fleet_file)
    if text is None:
        raise GpuspecError(f"{fleet_file}: cannot read it to add mirror {mirror['name']}: it does not exist")
    return _with_mirror(text, str(fleet_file), mirror)


def _with_mirror(text: str, display: str, mirror: Any) -> str:
    """The fleet.yaml ``text`` with ``mirror`` appended to its ``mirrors`` (comments kept)."""
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    try:
        doc = yaml.load(text)
    except YAMLError as exc:
        raise GpuspecError(f"{display}: cannot read it to add mirror {mirror['name']}: {exc}") from None
    mirrors = doc.get("mirrors") if isinstance(doc, dict) else None
    if mirrors is None and isinstance(doc, dict):
        mirrors = doc["mirrors"] = []
    if not isinstance(mirrors, list):
        raise GpuspecError(f"{display}: mirrors is not a list; add mirror {mirror['name']} by hand")
    mirrors.append(mirror)
    stream = io.StringIO()
    yaml.dump(doc, stream)
    return stream.getvalue()


def _write_repository(root: Path, name: str, text: str, force: bool, final_text: str | None = None,
                      mirror: Any = None, scratch: Path | None = None) -> Path:
    """Write the draft and its exceptions pack into the fleet repository ``root``; return the fleet folder that
    loads with the draft (``root/fleet``, or with a drafted ``mirror`` a trial copy in ``scratch`` whose fleet.yaml
    stands in for the mirror's chart repository).

    The exceptions are those ``text`` needs; ``final_text`` (default ``text``) is the draft written in the end,
    naming ``mirror``, which is then added to fleet.yaml with its chart repository still to be filled in.
    """
    from gpuspec.loader.safefile import safe_write

    fleet_file = root / "fleet" / "fleet.yaml"
    cluster_file = root / "fleet" / "clusters" / f"{name}.yaml"
    pack_file = root / "policies" / f"{pack_name(name)}.yaml"
    for path in (fleet_file, cluster_file, pack_file):  # all three before the first is written
        _check_target(path)
    if not fleet_file.is_file():
        raise GpuspecError(f"{root}: no fleet/fleet.yaml; make the repository with `gpuspec init {root}` first")
    for path in (cluster_file, pack_file):
        if path.exists() and not force:
            raise GpuspecError(f"{path} already exists; not overwriting it", hint="pass --force to replace it")
    cluster_file.parent.mkdir(parents=True, exist_ok=True)
    pack_file.parent.mkdir(parents=True, exist_ok=True)
    fleet_dir = root / "fleet"
    if mirror is None:
        write_new_file(cluster_file, text, force)
        findings = _fleet_findings(root / "fleet", root / "policies")
    else:  # the exceptions the draft needs with its mirror named, the chart repository stood in for
        write_new_file(cluster_file, final_text or text, force)
        fleet_dir = (scratch or Path(tempfile.mkdtemp(prefix="gpuspec-import-"))) / "fleet"
        shutil.copytree(root / "fleet", fleet_dir, symlinks=True)
        safe_write(fleet_dir / "fleet.yaml", _add_mirror(fleet_file, _stand_in(mirror)))
        findings = _fleet_findings(fleet_dir, root / "policies")
    rules = needed_rules(findings, f"clusters/{name}.yaml")
    write_new_file(pack_file, adoption_pack(name, rules, values=adopted_values(final_text or text)), True)
    selected = _select_pack(fleet_file, pack_name(name))
    if selected is not None:
        write_new_file(fleet_file, selected, True)
    if mirror is not None:
        write_new_file(fleet_file, _add_mirror(fleet_file, mirror), True)
    click.echo(f"gpuspec: wrote {cluster_file} and {pack_file}"
               + (f" (exceptions for {', '.join(rules)}; fill in owner, reason and expires)" if rules else ""),
               err=True)
    if mirror is not None:
        click.echo(f"gpuspec: added mirror {mirror['name']} to {fleet_file} (registries and pull secrets as the "
                   "cluster pulls; fill in its chart repository)", err=True)
    return fleet_dir


def _fleet_findings(fleet_dir: Path, policies_dir: Path) -> list[Finding]:
    """What validate and lint find in ``fleet_dir``."""
    from gpuspec.pipeline.lint import lint_fleet
    from gpuspec.pipeline.validate import validate_fleet

    return [*validate_fleet(fleet_dir, policies_dir).findings, *lint_fleet(fleet_dir, policies_dir).findings]


def _report(fleet_dir: Path, name: str, nodes_source: str, facts: Sequence[NodeFacts],
            resources: Sequence[OperatorResource], expect_policy: bool, running: _Running,
            rename: Callable[[Finding], Finding] | None = None) -> bool:
    """Audit the export against the draft just written: the nodes that differ from their pool, by name, and the
    round trip of the operator's settings; True when the draft would change what the operator runs."""
    from gpuspec.audit.check import audit_cluster
    from gpuspec.cli.common import emit_report
    from gpuspec.cli.operator_check import operator_findings
    from gpuspec.findings import Severity
    from gpuspec.loader.fleetload import load_fleet
    from gpuspec.loader.positions import locate_findings

    load = load_fleet(fleet_dir)
    if load.fleet is None or load.fleet.cluster(name) is None:
        click.echo("gpuspec: note: the draft does not load yet, so its nodes were not audited; run "
                   "`gpuspec audit` once it validates", err=True)
        return False
    cluster = load.fleet.cluster(name)
    assert cluster is not None
    result = audit_cluster(load.fleet, cluster, facts, resources, expect_policy=expect_policy)
    changes = operator_findings(load.fleet, cluster, running.objects, running.values, running.chart)
    findings = [*result.findings, *changes]
    if changes:
        click.echo(f"gpuspec: the draft would change what the operator runs ({len(changes)} difference(s) between "
                   "what it renders and the exported ClusterPolicy, NVIDIADrivers and images):", err=True)
    elif running.objects:
        click.echo("gpuspec: round trip: the draft renders the ClusterPolicy, NVIDIADrivers and images the "
                   "cluster runs", err=True)
    if findings:
        click.echo(f"gpuspec: {len(findings)} finding(s) in {nodes_source} against the draft "
                   "(the same as `gpuspec audit`):", err=True)
        if rename is None:
            emit_report(findings, "text", "audit", raw=load.raw, err=True)
        else:
            located = locate_findings(findings)
            emit_report([rename(f) for f in located], "text", "audit", raw=load.raw, err=True, located=True)
    return any(f.severity is Severity.ERROR for f in changes)
