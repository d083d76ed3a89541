"""`gpuspec verify` end to end: per cluster (in parallel) helm template, kustomize build and checks; then GitOps."""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from gpuspec.catalogue import verify as ids
from gpuspec.errors import GpuspecError, ToolMissingError
from gpuspec.findings import Finding
from gpuspec.loader.fleetload import display_path, load_fleet
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.resolve import chart_repository, operator_version
from gpuspec.tools.discover import KustomizeCommand, find_helm, find_kustomize
from gpuspec.tools.versions import kubectl_version
from gpuspec.verify import checks
from gpuspec.verify.cache import VerifyCache, fingerprint, stays_inside, tree_digest
from gpuspec.verify.chart import ChartInfo, crd_set
from gpuspec.verify.checks import Origin
from gpuspec.verify.custom_resource import check_custom_resources
from gpuspec.verify.gitops_apply import Located, SyncInputs, check_sync
from gpuspec.verify.helm import DEFAULT_CACHE_DIR, HelmTemplateResult, helm_template, normalize_kube_version
from gpuspec.verify.intent import check_intent
from gpuspec.verify.kustomize import KustomizeResult, kustomize_build, refused_build, special_entries
from gpuspec.verify.kustomize_many import NO_RESTRICTIONS, build_together
from gpuspec.verify.manifests import Manifest
from gpuspec.verify.platform_crds import platform_crds
from gpuspec.verify.pull import chart_version, is_chart_reference, pull_chart
from gpuspec.verify.rendered import (
    KUSTOMIZATION_FILES,
    RenderedFile,
    read_cluster_output,
    read_gitops_files,
)
from gpuspec.verify.schemas import CrdSet, SchemaError, load_crd_documents, validate_object
from gpuspec.verify.shard import Shard

#: Helm release name verify templates the chart with (the name the rendered GitOps objects use).
RELEASE_NAME = "gpu-operator"


@dataclass(frozen=True)
class VerifyOptions:
    """Inputs of a verify run (paths as the user gave them)."""

    fleet_dir: Path
    rendered_dir: Path
    charts: Sequence[Path | str]
    clusters: Sequence[str] = ()
    crd_paths: Sequence[Path] = ()
    helm: Path | None = None
    jobs: int = 0
    cache_dir: Path | None = DEFAULT_CACHE_DIR
    #: Verify only the clusters of this shard (``--shard K/N``); shard 1 also checks fleet-wide objects.
    shard: Shard | None = None


@dataclass
class Toolbox:
    """What every cluster's verification shares: tools, caches and the rendered folder."""

    helm: Path
    kustomize: KustomizeCommand
    helm_cache: Path | None
    cache: VerifyCache
    rendered_dir: Path
    rendered_display: str
    rendered_digest: str
    kustomize_version: str

    @cached_property
    def special_in_tree(self) -> list[str]:
        """Entries anywhere below the rendered folder that are, or link to, a FIFO, socket or device."""
        return special_entries(self.rendered_dir) if self.rendered_dir.is_dir() else []

    def build_many(self, directories: Sequence[Path], extra_args: Sequence[str]) -> dict[Path, KustomizeResult]:
        """``kustomize build`` of each directory: cached ones from the cache, the others together in one
        kubectl run when :func:`build_together` can build them jointly, else one by one."""
        results: dict[Path, KustomizeResult] = {}
        todo: list[Path] = []
        keys: dict[Path, list[str]] = {}
        for directory in directories:
            if not stays_inside(directory, self.rendered_dir):
                todo.append(directory)
                continue
            rel = directory.resolve().relative_to(self.rendered_dir.resolve()).as_posix()
            keys[directory] = [self.rendered_digest, rel, *self.kustomize.argv[1:], *extra_args,
                               self.kustomize_version]
            found = self.cache.kustomize_lookup(keys[directory]) if self.cache.directory is not None else None
            if found is not None:
                results[directory] = found
            else:
                todo.append(directory)
        for directory in list(todo):
            # A kustomization also reads files outside its folder (../ paths, the cluster's values from its
            # GitOps folder), so one FIFO or device anywhere in the rendered tree refuses every build in it.
            inside = directory.resolve().is_relative_to(self.rendered_dir.resolve())
            special = self.special_in_tree if inside else special_entries(directory)
            if special:
                results[directory] = refused_build(directory, special)
                todo.remove(directory)
        joint = build_together(todo, self.kustomize, extra_args)
        for directory in todo:
            if joint is None:
                results[directory] = kustomize_build(directory, kustomize=self.kustomize, extra_args=extra_args)
            else:
                results[directory] = joint[directory]
            if directory in keys:
                self.cache.kustomize_store(keys[directory], results[directory])
        return results

    def validator(self, crds: CrdSet, crds_fingerprint: str) -> Callable[[Mapping[str, Any], str],
                                                                          list[SchemaError]]:
        """Schema validation against ``crds`` and the built-in schemas, memoised by object content."""
        def validate(obj: Mapping[str, Any], kube: str) -> list[SchemaError]:
            return self.cache.schema_errors(obj, kube, crds_fingerprint,
                                            lambda: validate_object(obj, crds=crds, kube_version=kube))
        return validate


@dataclass
class ClusterReport:
    """What verify did for one cluster."""

    name: str
    findings: list[Finding] = field(default_factory=list)
    chart: str | None = None
    helm_cached: bool | None = None
    objects: int = 0
    duration: float = 0.0
    #: Rendered folder (``clusters/<name>``, ``…/acceptance``) → its built objects, for the apply checks.
    folders: dict[str, Located] = field(default_factory=dict)
    #: The objects of ``helm template`` of the cluster's chart, for the apply checks.
    helm_objects: Located = field(default_factory=list)
    #: True when helm template of the cluster's chart ran and succeeded.
    helm_ok: bool = False


@dataclass
class VerifyResult:
    """Every finding of a verify run, the per-cluster reports, and whether the fleet was usable at all."""

    findings: list[Finding]
    clusters: list[ClusterReport]
    usable: bool
    duration: float = 0.0

    def summary(self) -> str:
        """One line: clusters verified, helm runs vs cache hits, objects checked, time."""
        if not self.usable:
            return "verify: the fleet could not be loaded; nothing was verified"
        cached = sum(1 for c in self.clusters if c.helm_cached)
        ran = sum(1 for c in self.clusters if c.helm_cached is False)
        objects = sum(c.objects for c in self.clusters)
        return (f"verified {len(self.clusters)} cluster(s), {objects} objects; helm template: {ran} run, "
                f"{cached} cached; {self.duration:.2f}s")


def verify_fleet(options: VerifyOptions) -> VerifyResult:
    """Verify the rendered output of every selected cluster of the fleet; see :mod:`gpuspec.verify`.

    Charts come from ``options.charts`` (local paths, or chart references that are pulled) or, when it
    is empty, from each cluster's chart source (its mirror's chart repository, else NGC).  Raises
    GpuspecError (ToolMissingError for helm/kubectl) for unusable input: a local chart that is not a
    chart, an unknown cluster name, a missing rendered/ folder, unreadable CRD paths.
    """
    started = time.monotonic()
    load = load_fleet(options.fleet_dir)
    if load.fleet is None:
        return VerifyResult(list(load.findings), [], usable=False, duration=time.monotonic() - started)
    fleet = load.fleet
    clusters = _select(fleet, options.clusters)
    if options.shard is not None:
        clusters = options.shard.select(clusters)
    if not options.rendered_dir.is_dir():
        raise GpuspecError(f"rendered output not found: {options.rendered_dir}",
                           hint="run `gpuspec render` first, or name the folder with --rendered")
    _require_schema_package()
    helm = find_helm(options.helm)
    kustomize = find_kustomize()
    local_charts = [ChartInfo.load(Path(c)) for c in options.charts if not is_chart_reference(str(c))]
    references = [str(c) for c in options.charts if is_chart_reference(str(c))]
    given_crds = load_crd_documents(options.crd_paths)
    platform_dirs, platform_findings = platform_crds(
        fleet, {str(c.get("metadata", {}).get("name")) for c in given_crds if isinstance(c.get("metadata"), dict)})
    if options.shard is not None and not options.shard.first:
        platform_findings = []  # the first shard reports them
    extra_crds = [*given_crds, *load_crd_documents(platform_dirs)]
    cache = VerifyCache(options.cache_dir.parent / "verify" if options.cache_dir is not None else None)
    tools = Toolbox(
        helm=helm, kustomize=kustomize, helm_cache=options.cache_dir, cache=cache,
        rendered_dir=options.rendered_dir, rendered_display=display_path(options.rendered_dir),
        rendered_digest=tree_digest(options.rendered_dir) if options.cache_dir is not None else "",
        kustomize_version=_tool_version(kustomize),
    )
    with _chart_folder(options.cache_dir) as chart_folder:
        pulls = (_pull_charts(fleet, clusters, local_charts, references, helm, chart_folder)
                 if references or not options.charts else ChartPulls())
        charts = [*local_charts, *pulls.charts]
        crd_sets = {id(chart): (crd_set(chart, extra_crds), fingerprint([*extra_crds, *chart.crds]))
                    for chart in charts}
        fallback_crds = (crd_set(None, extra_crds), fingerprint(extra_crds))

        def one(cluster: Cluster) -> ClusterReport:
            error = pulls.errors.get(cluster.name)
            chart = None if error else (pulls.by_cluster.get(cluster.name)
                                        or _chart_for(local_charts, operator_version(fleet, cluster)))
            crds, crds_fp = crd_sets[id(chart)] if chart is not None else fallback_crds
            return verify_cluster(fleet, cluster, chart, charts, crds, tools, tools.validator(crds, crds_fp),
                                  pull_error=error)

        # Each worker thread mostly waits for helm or kubectl; two per CPU keep every core busy while
        # another thread does its Python checks.
        jobs = options.jobs if options.jobs > 0 else min(8, 2 * (os.cpu_count() or 1))
        gitops_crds, gitops_fp = crd_sets[id(charts[0])] if charts else fallback_crds

        sync = SyncInputs(git_path=fleet.settings.git.path, crd_scopes=gitops_crds.scopes())

        def gitops() -> list[Finding]:
            return verify_gitops(fleet, clusters, gitops_crds, tools, tools.validator(gitops_crds, gitops_fp),
                                 all_clusters=not options.clusters and (options.shard is None or options.shard.first),
                                 sync=sync)

        if jobs == 1 or len(clusters) == 1:
            reports = [one(c) for c in clusters]
            gitops_findings = gitops()
        else:
            # The GitOps folders (one joint kubectl run and their checks) go first, beside the clusters,
            # so no core waits for them at the end; findings keep their order.
            with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="verify") as pool:
                gitops_future = pool.submit(gitops)
                reports = list(pool.map(one, clusters))
                gitops_findings = gitops_future.result()
        for report in reports:
            sync.folders.update(report.folders)
            if report.helm_ok:
                sync.helm[report.name] = report.helm_objects
        findings = [f for report in reports for f in report.findings] + gitops_findings + check_sync(sync) \
            + platform_findings
    cache.save()
    return VerifyResult(findings, reports, usable=True, duration=time.monotonic() - started)


@dataclass
class ChartPulls:
    """Charts pulled for a run: every pulled chart, the one of each cluster, and why a cluster has none."""

    charts: list[ChartInfo] = field(default_factory=list)
    by_cluster: dict[str, ChartInfo] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def _pull_charts(fleet: Fleet, clusters: Sequence[Cluster], local: Sequence[ChartInfo], references: Sequence[str],
                 helm: Path, folder: Path) -> ChartPulls:
    """Pull the chart of each cluster whose release no local chart has.

    Sources: ``references`` (tried in order, the first that has the version wins), else the cluster's
    own chart source.  Each source and version is pulled once per run.
    """
    out = ChartPulls()
    pulled: dict[tuple[str, str], ChartInfo | str] = {}
    for cluster in clusters:
        release = operator_version(fleet, cluster)
        if release is None or _chart_for(local, release) is not None:
            continue
        version = chart_version(release)
        failures: list[str] = []
        for source in references or [chart_repository(fleet.mirror(cluster.mirror))]:
            key = (source.rstrip("/"), version)
            got = pulled.get(key)
            if got is None:
                got = pulled[key] = _pull_one(key[0], version, helm, folder)
                if isinstance(got, ChartInfo):
                    out.charts.append(got)
            if isinstance(got, ChartInfo):
                if got.matches(release):
                    out.by_cluster[cluster.name] = got
                break
            failures.append(f"{key[0]}: {got}" if len(references) > 1 else got)
        else:
            out.errors[cluster.name] = "\n".join(failures)
    return out


def _pull_one(source: str, version: str, helm: Path, folder: Path) -> ChartInfo | str:
    """The pulled chart, or why it could not be pulled or read."""
    result = pull_chart(source, version, helm=helm, cache_dir=folder)
    if result.path is None:
        return result.error
    try:
        return ChartInfo.load(result.path)
    except GpuspecError as exc:
        return str(exc)


@contextmanager
def _chart_folder(cache_dir: Path | None) -> Iterator[Path]:
    """Where pulled charts go: ``charts/`` beside the helm cache (user cache), else a folder removed afterwards."""
    if cache_dir is not None:
        yield cache_dir.parent / "charts"
        return
    with tempfile.TemporaryDirectory(prefix="gpuspec-charts-") as tmp:
        yield Path(tmp)


def verify_cluster(
    fleet: Fleet,
    cluster: Cluster,
    chart: ChartInfo | None,
    charts: Sequence[ChartInfo],
    crds: CrdSet,
    tools: Toolbox,
    validate: Callable[[Mapping[str, Any], str], list[SchemaError]] | None = None,
    *,
    pull_error: str | None = None,
) -> ClusterReport:
    """Every GS9xx check of one cluster; ``chart`` is the chart of its release (None when none was given).

    ``validate`` replaces plain schema validation against ``crds`` (e.g. :meth:`Toolbox.validator`).
    ``pull_error`` says why the cluster's chart could not be pulled (reported as GS914 instead of GS902).
    """
    started = time.monotonic()
    report = ClusterReport(cluster.name)
    findings = report.findings
    release = operator_version(fleet, cluster)
    kube = normalize_kube_version(cluster.kubernetes.version)
    output = read_cluster_output(tools.rendered_dir, tools.rendered_display, cluster.name)
    for problem in output.problems:
        findings.append(checks.spec_finding(ids.RENDERED_MISSING, f"cluster {cluster.name}: {problem}", cluster,
                                            hint="run `gpuspec render` and commit rendered/"))
    values = output.values_data()
    values_origin = Origin(output.values_display, output.values)
    findings += checks.check_node_labels(cluster)

    # helm template
    helm_result: HelmTemplateResult | None = None
    if release is None:
        pass  # the loader's reference checks report an unresolvable channel
    elif chart is None and pull_error is not None:
        findings.append(checks.spec_finding(
            ids.CHART_PULL_FAILED,
            f"cluster {cluster.name}: the GPU Operator {release} chart could not be pulled; helm checks skipped: "
            f"{checks.first_lines(pull_error)}", cluster, checks.operator_path(cluster),
            hint="check the chart source (--chart, or fleet.yaml mirrors[].chart.repository), that it has this "
                 "version, and helm's login to it; or pass --chart with a local chart"))
    elif chart is None:
        have = ", ".join(f"{c.path} ({c.version})" for c in charts)
        findings.append(checks.spec_finding(
            ids.CHART_VERSION_MISMATCH,
            f"cluster {cluster.name} pins GPU Operator {release}, but no chart of that version was given "
            f"(--chart: {have}); helm checks skipped", cluster, checks.operator_path(cluster),
            hint=f"pass --chart with the {release} chart (--chart may be repeated)"))
    elif output.values is not None:
        report.chart = f"{chart.name} {chart.version}"
        helm_result = helm_template(chart.path, [output.values.path], kube_version=kube, release=RELEASE_NAME,
                                    namespace=cluster.operator.namespace, helm=tools.helm,
                                    cache_dir=tools.helm_cache)
        report.helm_cached = helm_result.cached
        if not helm_result.ok:
            findings.append(checks.make_finding(
                ids.HELM_TEMPLATE_FAILED,
                f"helm template of {chart.path} ({chart.version}) with these values and --kube-version {kube} "
                f"failed: {checks.first_lines(_strip_prefix(helm_result.error))}", values_origin))
    if chart is not None and output.values is not None:
        findings += checks.check_values_keys(values, chart.values, values_origin, f"{chart.name} {chart.version}")
    templated: tuple[Manifest, ...] = helm_result.manifests if helm_result is not None and helm_result.ok else ()
    if chart is not None and release is not None and templated:
        findings += check_intent(values, chart.values.defaults, templated, crds, chart_version(release),
                                 values_origin, subcharts=chart.values.open_roots)
    report.helm_ok = helm_result is not None and helm_result.ok
    for manifest in templated:
        note = f" (helm output, {manifest.source})" if manifest.source else " (helm output)"
        report.helm_objects.append(
            (manifest.obj, Origin(output.values_display, output.values, values_map=True, note=note)))

    # kustomize build
    overlay_objects: list[tuple[dict[str, Any], Origin]] = []
    # The overlay and the acceptance folder in one kubectl run when that provably builds the same objects.
    folders = [output.directory] if output.kustomization is not None else []
    extra = [f for f in (output.acceptance, output.prerequisites, output.monitoring, output.olm) if f is not None]
    folders += [f.path.parent for f in extra]
    builds = tools.build_many(folders, ())
    if output.kustomization is not None:
        built = builds[output.directory]
        kustomization_origin = Origin(output.kustomization.display, output.kustomization)
        if built.ok:
            overlay_objects = _locate_built(built.manifests, output.resources, kustomization_origin)
            report.folders[_relative(output.directory, tools.rendered_dir)] = list(overlay_objects)
        else:
            findings.append(checks.make_finding(
                ids.KUSTOMIZE_FAILED, f"kustomize build failed: {checks.first_lines(_tool_message(built.error))}",
                kustomization_origin))
            overlay_objects = _raw_objects(output.resources)
    for sub in extra:  # the acceptance, prerequisites, monitoring and OLM folders
        built = builds[sub.path.parent]
        sub_origin = Origin(sub.display, sub)
        if built.ok:
            located = _locate_built(built.manifests, output.resources, sub_origin)
            report.folders[_relative(sub.path.parent, tools.rendered_dir)] = located
            overlay_objects += located
        else:
            findings.append(checks.make_finding(
                ids.KUSTOMIZE_FAILED, f"kustomize build failed: {checks.first_lines(_tool_message(built.error))}",
                sub_origin))

    # custom resources the overlay writes instead of the chart (OpenShift) say what the chart says
    if chart is not None:
        findings += check_custom_resources(templated, overlay_objects, crds, f"{chart.name} {chart.version}")

    # images
    expectations = checks.image_expectations(fleet, cluster, release)
    images = checks.helm_images(templated, expectations, output.values, output.values_display, values)
    images += checks.overlay_images(overlay_objects)
    mirror = fleet.mirror(cluster.mirror)
    if mirror is not None:
        findings += checks.check_mirror(images, mirror)
        findings += checks.check_pull_secrets(images, mirror)
    if release is not None and not expectations.release_known:
        findings.append(checks.spec_finding(
            ids.RELEASE_UNKNOWN, f"GPU Operator {release} is not in gpuspec's support matrix; operand image "
            "versions were not checked", cluster, checks.operator_path(cluster)))
    elif release is not None:
        findings += checks.check_versions(images, expectations, release)
    if output.images is not None:
        findings += checks.check_images_listed(images, output.images, Origin(output.images_display))

    # configs
    if output.values is not None:
        maps = checks.configmaps((obj for obj, _ in overlay_objects), "overlay")
        maps += checks.configmaps((m.obj for m in templated), "chart")
        findings += checks.check_configs(values, chart.values if chart else None, maps,
                                         cluster.operator.namespace, values_origin)

    # schemas
    for manifest in templated:
        note = f" (helm output, {manifest.source})" if manifest.source else " (helm output)"
        origin = Origin(output.values_display, output.values, values_map=True, note=note)
        findings += checks.check_schema(manifest.obj, origin, crds, kube, values, validate)
        findings += checks.check_apiserver(manifest.obj, origin, crds)
    for obj, origin in overlay_objects:
        findings += checks.check_schema(obj, origin, crds, kube, None, validate)
        findings += checks.check_apiserver(obj, origin, crds)
    report.objects = len(templated) + len(overlay_objects)
    report.duration = time.monotonic() - started
    return report


def verify_gitops(fleet: Fleet, clusters: Sequence[Cluster], crds: CrdSet, tools: Toolbox,
                  validate: Callable[[Mapping[str, Any], str], list[SchemaError]] | None = None, *,
                  all_clusters: bool, sync: SyncInputs | None = None) -> list[Finding]:
    """GS907–GS911 on the Argo CD / Flux objects under ``<rendered>/gitops``.

    Every folder with a kustomization is built (with ``--load-restrictor LoadRestrictionsNone``, as Flux
    builds) and its output validated; files outside such folders are validated as they are.  A file
    whose path names a cluster is checked with that cluster's Kubernetes version (and skipped when
    that cluster is not selected); other files with the newest version in the fleet, and only when
    every cluster is selected.  ``sync`` collects the built folders and the GitOps objects for the apply checks.
    """
    rendered_dir = tools.rendered_dir
    files, problems = read_gitops_files(rendered_dir, tools.rendered_display)
    findings = [Finding(ids.RENDERED_MISSING.id, ids.RENDERED_MISSING.severity, problem,
                        hint="run `gpuspec render` and commit rendered/") for problem in problems]
    selected = {c.name for c in clusters}
    names = {c.name: c for c in fleet.clusters}
    newest = max((normalize_kube_version(c.kubernetes.version) for c in fleet.clusters),
                 key=lambda v: tuple(int(p) for p in v.split(".")))

    def owner_of(path: Path) -> Cluster | None:
        parts = path.relative_to(rendered_dir).with_suffix("").parts
        return next((names[p] for p in parts if p in names), None)

    def wanted(path: Path) -> bool:
        owner = owner_of(path)
        return (owner is None and all_clusters) or (owner is not None and owner.name in selected)

    def kube_of(path: Path) -> str:
        owner = owner_of(path)
        return normalize_kube_version(owner.kubernetes.version) if owner else newest

    roots = sorted({f.path.parent for f in files if f.path.name in KUSTOMIZATION_FILES})
    covered: set[Path] = set()
    builds = tools.build_many([r for r in roots if wanted(r / "x")], NO_RESTRICTIONS)
    under: dict[Path, list[RenderedFile]] = {root: [] for root in roots}
    for file in files:  # each file belongs to every root above it
        for parent in file.path.parents:
            if parent in under:
                under[parent].append(file)
            if parent == rendered_dir:
                break
    for root in roots:
        root_files = under[root]
        covered.update(f.path for f in root_files)
        if not wanted(root / "x"):
            continue
        kustomization = next(f for f in root_files if f.path.parent == root and f.path.name in KUSTOMIZATION_FILES)
        origin = Origin(kustomization.display, kustomization)
        built = builds[root]
        if not built.ok:
            findings.append(checks.make_finding(
                ids.KUSTOMIZE_FAILED, f"kustomize build failed: {checks.first_lines(_tool_message(built.error))}",
                origin))
            continue
        located = _locate_built(built.manifests, root_files, origin)
        if sync is not None:
            sync.folders[_relative(root, rendered_dir)] = located
            owner = owner_of(root / "x")
            sync.gitops += [(obj, where, owner.name if owner else None) for obj, where in located]
        for obj, where in located:
            findings += checks.check_schema(obj, where, crds, kube_of(root / "x"), None, validate)
            findings += checks.check_apiserver(obj, where, crds)
    for file in files:
        if file.path in covered or not wanted(file.path):
            continue
        for index, doc in enumerate(file.documents):
            if isinstance(doc, dict):
                if sync is not None:
                    owner = owner_of(file.path)
                    sync.gitops.append((doc, Origin(file.display, file, index), owner.name if owner else None))
                findings += checks.check_schema(doc, Origin(file.display, file, index), crds, kube_of(file.path),
                                                None, validate)
                findings += checks.check_apiserver(doc, Origin(file.display, file, index), crds)
    return findings


def _select(fleet: Fleet, names: Sequence[str]) -> list[Cluster]:
    if not names:
        return list(fleet.clusters)
    selected = []
    for name in dict.fromkeys(names):
        cluster = fleet.cluster(name)
        if cluster is None:
            known = ", ".join(c.name for c in fleet.clusters) or "none"
            raise GpuspecError(f"no cluster named {name!r} in the fleet (clusters: {known})")
        selected.append(cluster)
    return sorted(selected, key=lambda c: fleet.clusters.index(c))


def _chart_for(charts: Sequence[ChartInfo], release: str | None) -> ChartInfo | None:
    if release is None:
        return None
    return next((c for c in charts if c.matches(release)), None)


def _locate_built(manifests: Sequence[Manifest], resources: Sequence[RenderedFile],
                  fallback: Origin) -> list[tuple[dict[str, Any], Origin]]:
    """Pair each built object with the rendered document it came from (by kind and name)."""
    index: dict[tuple[str, str], Origin] = {}
    for file in resources:
        for number, doc in enumerate(file.documents):
            if isinstance(doc, dict):
                key = (str(doc.get("kind", "")), _name(doc))
                index.setdefault(key, Origin(file.display, file, number))
    return [(m.obj, index.get((m.kind, m.name), fallback)) for m in manifests]


def _relative(directory: Path, rendered_dir: Path) -> str:
    """``directory`` as a folder of the rendered tree (``clusters/a``), as GitOps source paths name it."""
    try:
        return directory.resolve().relative_to(rendered_dir.resolve()).as_posix()
    except ValueError:
        return directory.as_posix()


def _raw_objects(resources: Sequence[RenderedFile]) -> list[tuple[dict[str, Any], Origin]]:
    """The rendered resource documents themselves (used when kustomize cannot build the overlay)."""
    return [(doc, Origin(file.display, file, number)) for file in resources
            for number, doc in enumerate(file.documents)
            if isinstance(doc, dict) and "kind" in doc
            and not str(doc.get("apiVersion", "")).startswith("kustomize.config.k8s.io/")]


def _name(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("name", "")) if isinstance(metadata, dict) else ""


def _strip_prefix(error: str) -> str:
    return error.removeprefix("helm template failed: ")


def _tool_message(error: str) -> str:
    # "kustomize build of <dir> failed: kubectl exited with code 1: error: …" → the tool's own words
    _, _, rest = error.partition(" failed: ")
    return rest or error


def _tool_version(kustomize: KustomizeCommand) -> str:
    if kustomize.via == "kubectl":
        return kubectl_version(kustomize.argv[0])
    stat = Path(kustomize.argv[0]).stat()
    return f"{kustomize.argv[0]}:{stat.st_size}:{stat.st_mtime_ns}"


def _require_schema_package() -> None:
    if importlib.util.find_spec("kubernetes_validate") is None:
        raise ToolMissingError(
            "gpuspec verify needs the Python package kubernetes-validate (the Kubernetes JSON schemas), which "
            "is not installed",
            hint="install it into gpuspec's environment: python -m pip install 'kubernetes-validate>=1.30' "
            "(pipx: pipx inject gpuspec kubernetes-validate), or install gpuspec with its verify extra "
            "from the source you installed it from")
