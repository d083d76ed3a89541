"""`gpuspec handover`: the operations documents of each cluster (the same ones `render` writes to rendered/handover)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import fleet_argument, outside_git, policies_option, today_option
from gpuspec.cli.render_cmd import prepared_or_exit


@click.command("handover")
@fleet_argument
@policies_option
@click.option("--cluster", "clusters", multiple=True, metavar="NAME",
              help="Only this cluster (repeatable); default every cluster plus the fleet index.")
@click.option("--output", "output_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              callback=outside_git,
              help="Write <cluster>.md (and README.md, the fleet index) into this folder instead of printing.")
@today_option
def handover_command(fleet_dir: Path, policies_dir: Path, clusters: tuple[str, ...], output_dir: Path | None,
                     today: date | None) -> None:
    """Write the handover documents of the fleet's clusters (Markdown).

    Per cluster: placement scheme with a Mermaid diagram, how a pod reaches a
    GPU, pinned versions and image sources, deliberate deviations, roles,
    update policy and the rules that enforce it, rollback plan, alerts,
    typical failures with kubectl commands, acceptance checklist. Every fact
    comes from the spec, the support matrix and the rendered objects.
    Templates in fleet/templates/handover/ override the shipped ones.
    `gpuspec render` writes the same documents to rendered/handover/.
    """
    from gpuspec.handover.documents import HANDOVER_DIR, INDEX_FILE, document_path

    # The pages need each cluster's compiled objects, not their YAML: nothing else is serialized.
    prepared = prepared_or_exit(fleet_dir, policies_dir, "handover", only=clusters or None, today=today,
                                pages_only=True, out_dir=output_dir)
    assert prepared.rendered is not None
    files = prepared.rendered.files
    wanted = [document_path(name) for name in prepared.rendered.clusters]
    if not clusters:
        wanted.append(INDEX_FILE)
    if output_dir is None:
        click.echo("\n".join(files[path].decode("utf-8") for path in wanted), nl=False)
        raise SystemExit(exitcodes.OK)
    from gpuspec.render.writer import write_output

    documents = {path.removeprefix(HANDOVER_DIR + "/"): files[path] for path in wanted}
    result = write_output(output_dir, documents)
    click.echo(f"wrote {len(documents)} document(s) into {output_dir}: {len(result.written)} written, "
               f"{len(result.unchanged)} unchanged, {len(result.deleted)} deleted")
    raise SystemExit(exitcodes.OK)
