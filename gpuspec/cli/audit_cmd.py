"""`gpuspec audit`: exported node state and operator resources against one cluster of the spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gpuspec import exitcodes
from gpuspec.audit.check import audit_cluster, summary_table
from gpuspec.audit.facts import node_facts
from gpuspec.audit.inventory import OperatorResource, parse_nodes, parse_operator_resources, read_input
from gpuspec.audit.running import read_helm_values, read_operator_objects
from gpuspec.cli.common import emit_report, exit_code, fleet_argument, format_option, output_option, outside_git
from gpuspec.cli.operator_check import CHART_HELP, operator_findings
from gpuspec.errors import GpuspecError
from gpuspec.findings import Severity
from gpuspec.loader.fleetload import load_fleet


@click.command("audit")
@click.option("--cluster", "cluster_name", required=True, help="Cluster of the spec the export comes from.")
@click.option("--nodes", "nodes_source", required=True, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get nodes -o json` (- for standard input).")
@click.option("--clusterpolicies", "policies_source", default=None, metavar="FILE", callback=outside_git,
              help="Output of `kubectl get clusterpolicies,nvidiadrivers -o json` (- for standard input).")
@click.option("--drivers", "drivers_source", default=None, metavar="FILE",
              help="Output of `kubectl get nvidiadrivers -o json`, if exported separately (- for standard input).")
@click.option("--helm-values", "values_source", default=None, metavar="FILE", callback=outside_git,
              help="Output of `helm get values -a -o json` of the GPU Operator release (NFD's image).")
@click.option("--chart", "chart", type=click.Path(path_type=Path, exists=True), default=None, help=CHART_HELP)
@click.option("--fail-on", type=click.Choice([s.value for s in Severity]), default="error", show_default=True,
              help="Exit 1 when a finding has at least this severity.")
@fleet_argument
@format_option()
@output_option
def audit_command(cluster_name: str, nodes_source: str, policies_source: str | None, drivers_source: str | None,
                  values_source: str | None, chart: Path | None, fail_on: str, fleet_dir: Path, output_format: str,
                  output_file: Path | None) -> None:
    """Compare exported node state with the spec of one cluster (offline).

    Finds GPU nodes no pool selects, nodes in two pools, pools short of ready
    nodes, nodes that advertise no GPUs, wrong GPU product or count, driver
    drift, failed or pending MIG configuration, MIG and sharing config labels
    the spec would change, and operator resources that are not ready. With
    --clusterpolicies also the operator's settings: the ClusterPolicy (and
    NVIDIADrivers) the chart writes from the spec against the exported ones,
    field by field and image by image (GS785, GS786). Exit 0 clean, 1
    findings at or above --fail-on, 2 input error.
    """
    sources = [s for s in (nodes_source, policies_source, drivers_source, values_source) if s is not None]
    if sources.count("-") > 1:
        raise GpuspecError("only one input can be read from standard input (-)")
    load = load_fleet(fleet_dir)
    if load.fleet is None:
        emit_report(load.findings, output_format, "audit", output_file, raw=load.raw, successful=False)
        click.echo("gpuspec: error: the fleet spec does not load; fix it first (gpuspec validate)", err=True)
        raise SystemExit(exitcodes.INPUT_ERROR)
    fleet = load.fleet
    cluster = fleet.cluster(cluster_name)
    if cluster is None:
        known = ", ".join(c.name for c in fleet.clusters) or "none"
        raise GpuspecError(f"cluster {cluster_name!r} is not in {fleet_dir}", hint=f"clusters in the fleet: {known}")
    nodes = [node_facts(n) for n in parse_nodes(*read_input(nodes_source))]
    resources: dict[tuple[str, str], OperatorResource] = {}
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    for source in dict.fromkeys(s for s in (policies_source, drivers_source) if s is not None):
        text, display = read_input(source)
        for resource in parse_operator_resources(text, display):
            resources[(resource.kind, resource.metadata.name)] = resource
        for obj in read_operator_objects(text, display):
            name = obj.get("metadata", {}).get("name") if isinstance(obj.get("metadata"), dict) else None
            objects.setdefault((str(obj.get("kind")), str(name)), obj)
    values = read_helm_values(*read_input(values_source)) if values_source else None
    result = audit_cluster(fleet, cluster, nodes, list(resources.values()), expect_policy=policies_source is not None)
    findings = [*result.findings, *operator_findings(fleet, cluster, list(objects.values()), values, chart)]
    located = emit_report(findings, output_format, "audit", output_file,
                          summary=summary_table(cluster, result), raw=load.raw)
    raise SystemExit(exit_code(located, Severity(fail_on)))
