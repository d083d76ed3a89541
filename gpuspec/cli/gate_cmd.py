"""`gpuspec gate`: promote only on live evidence that the cluster (or one pool) runs the spec of this revision."""

from __future__ import annotations

from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import (
    DEFAULT_RENDERED,
    emit_report,
    fleet_argument,
    format_option,
    output_option,
    outside_git,
    write_report,
)
from gpuspec.errors import GpuspecError


@click.command("gate")
@click.option("--cluster", "cluster_name", required=True, help="Cluster of the spec the exports come from.")
@click.option("--pool", "pool_name", default=None, help="Gate one pool (the canary) instead of the whole cluster.")
@click.option("--nodes", "nodes_source", required=True, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get nodes -o json` (- for standard input).")
@click.option("--clusterpolicies", "policies_source", default=None, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get clusterpolicies,nvidiadrivers -o json`.")
@click.option("--nvidiadrivers", "drivers_source", default=None, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get nvidiadrivers -o json`, if exported separately.")
@click.option("--jobs", "jobs_source", default=None, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get jobs,pods -n gpuspec-acceptance -o json`.")
@click.option("--rendered", "rendered_dir", default=str(DEFAULT_RENDERED), show_default=True,
              type=click.Path(path_type=Path, file_okay=False), callback=outside_git,
              help="Rendered output folder of this revision.")
@format_option(["text", "json", "markdown"])
@output_option
@fleet_argument
def gate_command(cluster_name: str, pool_name: str | None, nodes_source: str, policies_source: str | None,
                 drivers_source: str | None, jobs_source: str | None, rendered_dir: Path, output_format: str,
                 output_file: Path | None, fleet_dir: Path) -> None:
    """Promote only on live evidence: exit 0 when the exported cluster (or pool) really runs the spec.

    Every node of the pool (or of every pool) must be Ready and schedulable, report the driver the spec
    pins and no driver upgrade in progress or failed, and advertise exactly the GPU resources the spec
    makes (full, shared and MIG names); MIG pools must show their layout applied; the ClusterPolicy and the
    pool's NVIDIADrivers must be ready; and every acceptance Job of the rendered revision must have passed.
    Evidence not given (no --clusterpolicies, no --jobs where checks are rendered) fails the gate. Exit 0
    when every criterion holds, 1 when one does not, 2 on bad input.
    """
    from gpuspec.acceptance.expected import read_rendered
    from gpuspec.acceptance.exports import parse_export
    from gpuspec.acceptance.report import acceptance_report
    from gpuspec.audit.facts import node_facts
    from gpuspec.audit.inventory import OperatorResource, parse_nodes, parse_operator_resources, read_input
    from gpuspec.gate.evidence import gate
    from gpuspec.gate.output import render
    from gpuspec.gate.rendered import rendered_drivers
    from gpuspec.loader.fleetload import load_fleet

    sources = [s for s in (nodes_source, policies_source, drivers_source, jobs_source) if s is not None]
    if sources.count("-") > 1:
        raise GpuspecError("only one input can be read from standard input (-)")
    load = load_fleet(fleet_dir)
    if load.fleet is None:
        emit_report(load.findings, "text", "gate", raw=load.raw, err=True, successful=False)
        click.echo("gpuspec: error: the fleet spec does not load; fix it first (gpuspec validate)", err=True)
        raise SystemExit(exitcodes.INPUT_ERROR)
    fleet = load.fleet
    cluster = fleet.cluster(cluster_name)
    if cluster is None:
        known = ", ".join(c.name for c in fleet.clusters) or "none"
        raise GpuspecError(f"cluster {cluster_name!r} is not in {fleet_dir}", hint=f"clusters in the fleet: {known}")
    pools = list(cluster.pools)
    if pool_name is not None:
        pools = [p for p in cluster.pools if p.name == pool_name]
        if not pools:
            known = ", ".join(p.name for p in cluster.pools) or "none"
            raise GpuspecError(f"cluster {cluster_name!r} has no pool {pool_name!r}", hint=f"its pools: {known}")
        if not pools[0].managed:
            raise GpuspecError(f"pool {pool_name!r} of cluster {cluster_name!r} is not managed by the operator "
                               "(managed: false): its nodes are not the rollout's to promote")
    rendered = read_rendered(rendered_dir, cluster_name)
    drivers = rendered_drivers(rendered_dir, cluster_name)
    nodes = [node_facts(n) for n in parse_nodes(*read_input(nodes_source))]
    resources: dict[tuple[str, str], OperatorResource] | None = None
    for source in dict.fromkeys(s for s in (policies_source, drivers_source) if s is not None):
        resources = resources if resources is not None else {}
        for resource in parse_operator_resources(*read_input(source)):
            resources[(resource.kind, resource.metadata.name)] = resource
    report = None
    if jobs_source is not None:
        report = acceptance_report(rendered, parse_export(*read_input(jobs_source)))
    result = gate(fleet, cluster, pools, nodes, None if resources is None else list(resources.values()), drivers,
                  rendered, report, pool_name, policies_exported=policies_source is not None)
    write_report(render(result, output_format), output_file)
    raise SystemExit(exitcodes.OK if result.passed else exitcodes.FINDINGS)
