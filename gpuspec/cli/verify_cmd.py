"""`gpuspec verify`: helm template + kustomize build + schema/CRD validation of the rendered output (GS9xx)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import click

from gpuspec import exitcodes
from gpuspec.cli.common import (
    DEFAULT_RENDERED,
    exit_code,
    fleet_argument,
    format_option,
    output_option,
    outside_git,
    policies_option,
    prepare_report,
    publish_report,
    today_option,
)
from gpuspec.cli.verify_replay import replay_entry
from gpuspec.verify.shard import parse_shard


def _helm_cache(cache_root: Path | None) -> Path | None:
    """The helm-template cache folder: ``<root>/helm`` (charts go beside it), None when caching is off."""
    if cache_root is not None:
        return cache_root / "helm"
    from gpuspec import usercache

    base = usercache.cache_dir()
    return base / "verify" / "helm" if base is not None else None


@click.command("verify")
@fleet_argument
@click.option("--rendered", "rendered_dir", default=str(DEFAULT_RENDERED), show_default=True,
              type=click.Path(path_type=Path, file_okay=False), callback=outside_git,
              help="Folder gpuspec render wrote.")
@click.option("--chart", "charts", multiple=True, metavar="PATH|URL",
              help="GPU Operator chart: a local chart directory or .tgz, or a chart source to pull from "
                   "(oci://registry/path or a Helm repository http(s):// URL). Repeat for clusters on other "
                   "releases; each cluster uses the chart whose version equals its operator pin. Default: each "
                   "cluster's mirror chart repository, else NGC.")
@click.option("--cluster", "clusters", multiple=True, metavar="NAME",
              help="Verify only this cluster (repeatable). Default: every cluster.")
@click.option("--crds", "crd_paths", multiple=True, type=click.Path(path_type=Path), callback=outside_git,
              help="Extra CRD file or directory (repeatable), e.g. Argo CD, Flux, Prometheus Operator CRDs. "
                   "The chart's own crds/ are always used.")
@click.option("--helm", "helm", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="helm binary (default: $GPUSPEC_HELM, the gpuspec checkout's .tools/bin/helm, PATH).")
@click.option("--jobs", "-j", "jobs", type=click.IntRange(min=0), default=0, show_default=True,
              help="Clusters verified in parallel (0 = two per CPU, at most 8).")
@click.option("--shard", "shard_text", metavar="K/N", default=None,
              help="Verify only shard K of N: each cluster always falls into the same shard (by a hash of its "
                   "name), so N CI jobs (a matrix of K = 1..N) together verify every cluster once; shard 1 also "
                   "checks the GitOps objects that belong to no single cluster.")
@click.option("--cache-dir", "cache_root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for verify's caches (helm template results, pulled charts). Default: verify/ in the "
                   "user cache ($GPUSPEC_CACHE_DIR, else $XDG_CACHE_HOME/gpuspec or ~/.cache/gpuspec); nothing is "
                   "written into the fleet repository.")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Do not read or write the caches; pulled charts go to a temporary folder.")
@policies_option
@today_option
@format_option()
@output_option
def verify_command(
    fleet_dir: Path,
    rendered_dir: Path,
    charts: tuple[str, ...],
    clusters: tuple[str, ...],
    crd_paths: tuple[Path, ...],
    helm: Path | None,
    jobs: int,
    shard_text: str | None,
    cache_root: Path | None,
    no_cache: bool,
    policies_dir: Path,
    today: date | None,
    output_format: str,
    output_file: Path | None,
) -> None:
    """Render each cluster's GPU Operator chart with helm and build its overlay with kustomize, then check the result.

    Per cluster: `helm template` of the chart at the pinned version (pulled with
    `helm pull` unless --chart names a local chart) with
    rendered/clusters/<cluster>/gpu-operator.values.yaml and --kube-version of the
    cluster; `kubectl kustomize` of the overlay; images under the mirror
    (air-gapped clusters) and at the release's pins; MIG / device-plugin config
    names backed by ConfigMaps; values keys the chart knows; every object valid
    against the Kubernetes schema of the cluster's version and against the CRDs.

    The policy's exceptions are checked as in every command: an expired or
    unfilled one, or one naming a finding that cannot be accepted, is an error.

    Exit 0 when clean, 1 when there are errors, 2 when the input is unusable or
    helm/kubectl are missing (run `gpuspec tools install`).
    """
    shard = parse_shard(shard_text) if shard_text is not None else None
    cache_dir = None if no_cache else _helm_cache(cache_root)
    # A report whose inputs are all unchanged since the last run is replayed (see verify_replay): the
    # verify pipeline is not even imported.
    cached = replay_entry(fleet_dir, policies_dir, rendered_dir, charts, clusters=clusters, crd_paths=crd_paths,
                          helm=helm, shard=shard, cache_dir=cache_dir, today=today)
    report = cached.load() if cached is not None else None
    if report is not None:
        assert cached is not None
        summary = (f"verified {cached.extra.get('clusters', 0)} cluster(s), {cached.extra.get('objects', 0)} objects; "
                   "no input changed since the last run: its report replayed")
    else:
        from gpuspec.pipeline.validate import exception_findings
        from gpuspec.pipeline.verify import VerifyOptions, verify_fleet

        options = VerifyOptions(fleet_dir=fleet_dir, rendered_dir=rendered_dir, charts=charts, clusters=clusters,
                                crd_paths=crd_paths, helm=helm, jobs=jobs, cache_dir=cache_dir, shard=shard)
        result = verify_fleet(options)
        if result.usable:
            result.findings.extend(exception_findings(fleet_dir, policies_dir, today))
        summary = result.summary()
        report = prepare_report(result.findings, successful=result.usable)
        if cached is not None and result.usable:
            cached.extra.update(clusters=len(result.clusters), objects=sum(c.objects for c in result.clusters))
            cached.store(report)
    publish_report(replace(report, summary=summary if output_format == "text" else None), output_format, "verify",
                   output_file)
    if not report.usable:
        raise SystemExit(exitcodes.INPUT_ERROR)
    raise SystemExit(exit_code(report.findings))
