"""`gpuspec import`: draft a cluster spec from a node inventory (`kubectl get nodes -o json`)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import click

from gpuspec.audit.draft import draft_cluster, dump_yaml
from gpuspec.audit.facts import node_facts
from gpuspec.audit.inventory import parse_nodes, read_input
from gpuspec.cli.common import outside_git
from gpuspec.errors import GpuspecError
from gpuspec.matrix.query import latest_release
from gpuspec.redaction import redact_text


def default_operator_version() -> str:
    """The newest GPU Operator release gpuspec's support matrix knows (the draft's default pin)."""
    release = latest_release()
    return release.tag if release else "v26.7.0"


def write_new_file(path: Path, text: str, force: bool) -> None:
    """Write ``text`` to ``path``; refuse to replace an existing file unless ``force`` (then replace atomically)."""
    try:
        if not force:
            with path.open("x", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path("."))
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except FileExistsError:
        raise GpuspecError(f"{path} already exists; not overwriting it", hint="pass --force to replace it") from None
    except FileNotFoundError:
        raise GpuspecError(f"{path}: the folder {path.parent} does not exist") from None
    except OSError as exc:
        raise GpuspecError(f"{path}: cannot write: {exc.strerror or exc}") from None


@click.command("import")
@click.option("--nodes", "nodes_source", required=True, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get nodes -o json` (- for standard input).")
@click.option("--name", "cluster_name", required=True, help="Name of the cluster (its spec file name).")
@click.option("--out", "out_file", type=click.Path(path_type=Path, dir_okay=False), default=None, callback=outside_git,
              help="Write the draft here (e.g. fleet/clusters/NAME.yaml) instead of standard output.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.option("--operator-version", default=None, metavar="VERSION",
              help="GPU Operator release to pin in the draft [default: newest in the support matrix].")
@click.option("--gitops", "gitops_tool", type=click.Choice(["argocd", "flux"]), default="argocd", show_default=True,
              help="GitOps tool to put in the draft.")
def import_command(nodes_source: str, cluster_name: str, out_file: Path | None, force: bool,
                   operator_version: str | None, gitops_tool: str) -> None:
    """Draft a cluster spec from a node inventory.

    Groups GPU nodes into pools by GPU product and count, OS, kernel, driver,
    MIG and sharing; proposes a nodeSelector per pool; writes commented YAML
    with `# TODO: review` on every guessed value. Exit 0 when drafted, 2 on
    input errors or when --out exists (use --force).
    """
    if operator_version is not None and not re.match(r"^v[0-9]{2}\.[0-9]{1,2}\.[0-9]{1,2}$", operator_version):
        raise GpuspecError(f"--operator-version {operator_version!r} is not a GPU Operator release such as v26.7.0")
    if out_file is not None and out_file.exists() and not force:
        raise GpuspecError(f"{out_file} already exists; not overwriting it", hint="pass --force to replace it")
    nodes = parse_nodes(*read_input(nodes_source))
    doc, notes = draft_cluster(cluster_name, nodes, [node_facts(n) for n in nodes],
                               operator_version or default_operator_version(), gitops_tool)
    text = redact_text(dump_yaml(doc))  # a credential in a node label never reaches the draft
    if out_file is None:
        click.echo(text, nl=False)
    else:
        write_new_file(out_file, text, force)
        click.echo(f"gpuspec: wrote {out_file} ({len(doc['pools'])} pools)", err=True)
    for note in notes:
        click.echo(f"gpuspec: note: {redact_text(note)}", err=True)
