"""`gpuspec migrate`: the node-by-node procedure that moves hand-configured GPU nodes onto the spec."""

from __future__ import annotations

from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.audit.check import matches
from gpuspec.audit.facts import node_facts
from gpuspec.audit.inventory import parse_nodes, read_input
from gpuspec.audit.migrate import format_plan, migration_plan
from gpuspec.audit.node_flags import pinned_driver
from gpuspec.cli.common import emit_report, fleet_argument, output_option, write_report
from gpuspec.errors import GpuspecError
from gpuspec.loader.fleetload import load_fleet
from gpuspec.matrix.acceptance import sample_image
from gpuspec.render.operand_images import rewrite


@click.command("migrate")
@click.option("--cluster", "cluster_name", required=True, help="Cluster of the spec the export comes from.")
@click.option("--nodes", "nodes_source", required=True, metavar="FILE",
              help="Output of `kubectl get nodes -o json` (- for standard input).")
@click.option("--format", "output_format", type=click.Choice(["text", "markdown"]), default="text",
              show_default=True, help="Output format.")
@fleet_argument
@output_option
def migrate_command(cluster_name: str, nodes_source: str, output_format: str, fleet_dir: Path,
                    output_file: Path | None) -> None:
    """Print the node-by-node procedure that moves hand-configured GPU nodes onto the spec (runs nothing).

    For nodes with a host-installed driver, hand-set labels or labels that
    switch an operand off, a device plugin outside the operator, a missing
    taint or another MIG config, and all nodes of managed: false pools: per
    node, pool by pool in batches within the pool's maxUnavailable (less its
    nodes already out of service, never the whole pool), the kubectl commands
    to cordon, drain, record and remove those labels, remove the host driver,
    apply the pool labels, wait for the validator, run a test pod and
    uncordon, and a one-step rollback that restores every label as it was.
    Every node audit flags that gets no steps is listed as left out, with
    why. Exit 0 printed, 1 no node of the export belongs to the cluster, 2
    input error.
    """
    load = load_fleet(fleet_dir)
    if load.fleet is None:
        emit_report(load.findings, "text", "migrate", None, raw=load.raw, successful=False)
        click.echo("gpuspec: error: the fleet spec does not load; fix it first (gpuspec validate)", err=True)
        raise SystemExit(exitcodes.INPUT_ERROR)
    fleet = load.fleet
    cluster = fleet.cluster(cluster_name)
    if cluster is None:
        known = ", ".join(c.name for c in fleet.clusters) or "none"
        raise GpuspecError(f"cluster {cluster_name!r} is not in {fleet_dir}", hint=f"clusters in the fleet: {known}")
    text, display = read_input(nodes_source)
    nodes = [node_facts(n) for n in parse_nodes(text, display)]
    members = {n.name: [p for p in cluster.pools if matches(p.node_selector, n.labels)] for n in nodes}
    if not any(members.values()):
        click.echo(f"gpuspec: error: none of the {len(nodes)} nodes in {display} matches a pool of cluster "
                   f"{cluster.name!r} (GS799): the export is of another cluster, or every nodeSelector is wrong",
                   err=True)
        raise SystemExit(exitcodes.FINDINGS)
    image = rewrite(sample_image(), fleet.mirror(cluster.mirror))
    plan = migration_plan(cluster, nodes, members, image, lambda pool: pinned_driver(fleet, cluster, pool))
    write_report(format_plan(plan, markdown=output_format == "markdown"), output_file)
    raise SystemExit(exitcodes.OK)
