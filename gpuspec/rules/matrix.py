"""Support-matrix rules of a typed fleet: GS2xx (versions and platform) and GS3xx (MIG and sharing).

Every fact comes from :mod:`gpuspec.matrix.query`.  When the matrix cannot
answer (unknown release, a docs column that does not exist, a fact written as
``unknown``) the check reports GS200 / GS300 "cannot verify" as a warning; it
never passes silently and never guesses.

The checks share one evaluation per fleet (and date); each rule class picks
its own problems from it, so running all rules costs one pass over the fleet.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gpuspec.catalogue import matrix as cat
from gpuspec.catalogue.entry import Entry
from gpuspec.catalogue.matrix import (
    CANNOT_VERIFY_MIG,
    CANNOT_VERIFY_PLATFORM,
    DEPRECATED,
    DRIVER_BRANCH,
    DRIVER_VERSION_BRANCH,
    DRIVER_VERSION_UNLISTED,
    END_OF_SUPPORT,
    GPU_DRIVER_TOO_OLD,
    GPU_NOT_LISTED,
    GPU_UNKNOWN,
    KUBERNETES_RANGE,
    MIG_LAYOUT,
    MIG_LIMITS,
    MIG_NOT_CAPABLE,
    MIG_PROFILE,
    MIG_SINGLE_MIXED,
    OS_UNSUPPORTED,
    PER_POOL_DRIVERS,
    PRECOMPILED_UNAVAILABLE,
    RUNTIME_UNSUPPORTED,
    SHARING_WITH_MIG,
    UNKNOWN_RELEASE,
)
from gpuspec.catalogue.operations import ENTRIES as OPERATIONS_ENTRIES
from gpuspec.findings import DocPath, Finding
from gpuspec.loader.files import shard_name
from gpuspec.loader.parallel import map_split
from gpuspec.matrix import component_query as cq
from gpuspec.matrix import mig_query as mq
from gpuspec.matrix import query as q
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource, MigStrategy, SharingMode
from gpuspec.model.resolve import effective_driver, operator_version
from gpuspec.rules.base import Problem, Rule, RuleContext, run_rule
from gpuspec.rules.constraints import (
    cluster_constraints,
    driver_flavour,
    known_issues,
    managed_platform_driver,
    pool_platform_cell,
)
from gpuspec.rules.openshift import is_openshift, openshift_checks
from gpuspec.rules.runtime import runtime_settings
from gpuspec.usercache import ShardedMemo

#: spec `kubernetes.distribution` -> support-matrix distribution id.
_DISTRIBUTION = {"upstream": "kubernetes"}


# ---------------------------------------------------------------- evaluation


@dataclass
class _Result:
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    seen: set[tuple[str, str, DocPath, str]] = field(default_factory=set)
    #: When set, every add() is also appended here (to remember one cluster's evaluation).
    record: list[tuple[str, str, str, DocPath, str | None]] | None = None

    def add(self, entry: Entry, message: str, file: str, path: DocPath, hint: str | None = None) -> None:
        rule = entry.id
        if self.record is not None:
            self.record.append((rule, message, file, path, hint))
        key = (rule, file, path, message)
        if key not in self.seen:
            self.seen.add(key)
            self.problems.setdefault(rule, []).append(Problem(message, file, path, hint))


#: Fewest clusters to evaluate before half of them go to a child process (see gpuspec.loader.parallel).
PARALLEL_CLUSTERS = 64


def evaluate(fleet: Fleet, when: dt.date) -> _Result:
    """Judge ``fleet`` against the support matrix at ``when``: every GS2xx/GS3xx problem, keyed by rule id.

    One pass over clusters and pools serves all 22 rules: the checks depend on each other (an unknown
    release silences the checks that need it) and walking 10,000 pools once per rule would cost ~0.4 s.
    Each cluster's checks are recorded and replayed in cluster order, so clusters remembered from an
    earlier run or evaluated in a child process give exactly the problems of one pass here.
    """
    res = _Result()
    _channels(fleet, res)
    memo = _memo(fleet, when)
    keys = memo[1] if memo is not None else {}
    settings_key = keys.get(fleet.settings_file)
    calls_of: list[list[Any] | None] = []
    todo: list[int] = []
    for index, cluster in enumerate(fleet.clusters):
        key = (settings_key, fleet.settings_file, keys.get(cluster.source_file), cluster.source_file)
        hit, calls = memo[0].get(shard_name(cluster.source_file), key) \
            if memo is not None and key[2] is not None else (False, None)
        calls_of.append(calls if hit and isinstance(calls, list) else None)
        if calls_of[-1] is None:
            todo.append(index)

    def record(index: int) -> list[tuple[str, str, str, DocPath, str | None]]:
        sink = _Result(record=[])
        _cluster(fleet, fleet.clusters[index], when, sink)
        return sink.record or []

    for index, (calls, error) in zip(todo, map_split(todo, record, PARALLEL_CLUSTERS), strict=True):
        if error is not None:
            raise error
        calls_of[index] = calls
        cluster = fleet.clusters[index]
        key = (settings_key, fleet.settings_file, keys.get(cluster.source_file), cluster.source_file)
        if memo is not None and key[2] is not None:
            memo[0].put(shard_name(cluster.source_file), key, calls)
    for calls in calls_of:
        for rule, message, file, path, hint in calls or ():
            res.add(_ENTRIES[rule], message, file, tuple(path), hint)
    if memo is not None:
        memo[0].save()
    return res


#: Entry id → entry, to replay remembered evaluations.
_ENTRIES: dict[str, Entry] = {entry.id: entry for entry in cat.ENTRIES}


def _memo(fleet: Fleet, when: dt.date) -> tuple[ShardedMemo, dict[str, bytes]] | None:
    """The per-cluster memo of evaluations (one cluster's problems depend only on its file, fleet.yaml, the
    date and gpuspec's code and data), sharded like the parse cache, or None when the files' contents are not
    known (the fleet was loaded without the parse cache)."""
    keys = fleet.content_keys
    if fleet.settings_file not in keys:
        return None
    return ShardedMemo("matrix", os.path.abspath(fleet.root), when.isoformat()), keys


def _evaluation(ctx: RuleContext) -> _Result:
    """The evaluation of ``ctx.fleet``, computed once per lint run (memoised in ``ctx.shared``)."""
    when = ctx.as_of or q.data_date()
    key = ("gpuspec.rules.matrix", when)
    result = ctx.shared.get(key)
    if not isinstance(result, _Result):
        result = evaluate(ctx.fleet, when)
        ctx.shared[key] = result
    return result


def _pinned_at(fleet: Fleet, cluster: Cluster) -> tuple[str, DocPath]:
    """File and path where a cluster's operator release is written (its pin or its channel reference)."""
    if cluster.operator.version:
        return cluster.source_file, ("operator", "version")
    return cluster.source_file, ("operator", "channel")


def _channel_index(fleet: Fleet, name: str | None) -> int | None:
    for i, ch in enumerate(fleet.settings.channels):
        if ch.name == name:
            return i
    return None


def _unknown_release_hint(version: str) -> str:
    near = q.nearest_release(version)
    return f"nearest known release: {near.tag}" if near else "GPU Operator versions look like v25.10.1"


def _channels(fleet: Fleet, res: _Result) -> None:
    file = fleet.settings_file
    for i, ch in enumerate(fleet.settings.channels):
        if q.release(ch.operator) is None:
            res.add(
                UNKNOWN_RELEASE,
                f"channel {ch.name!r} pins GPU Operator {ch.operator}, which the support matrix does not know",
                file,
                ("channels", i, "operator"),
                _unknown_release_hint(ch.operator),
            )
            continue
        if ch.driver is not None:
            _driver_pin(ch.operator, ch.driver.branch, ch.driver.version, file, ("channels", i, "driver"), res)


def _driver_pin(release: str, branch: str | None, version: str | None, file: str, path: DocPath, res: _Result) -> None:
    """Branch / version checks of one driver pin (pool or channel)."""
    rel = q.release(release)
    assert rel is not None
    if branch is not None and q.driver_branch_supported(release, branch) is False:
        res.add(
            DRIVER_BRANCH,
            f"driver branch {branch} is not supported by GPU Operator {rel.tag}",
            file,
            (*path, "branch"),
            f"branches listed for {rel.tag}: {', '.join(rel.drivers.branches)}",
        )
    if version is None:
        return
    if branch is not None and version.split(".")[0] != branch:
        res.add(
            DRIVER_VERSION_BRANCH,
            f"driver version {version} is not in branch {branch}",
            file,
            (*path, "version"),
            f"use a {branch}.x version or branch {version.split('.')[0]}",
        )
        return
    if q.driver_version_known(release, version) is False:
        listed = [d.version for d in rel.drivers.versions if d.branch == version.split(".")[0]]
        res.add(
            DRIVER_VERSION_UNLISTED,
            f"driver {version} is not listed for GPU Operator {rel.tag}",
            file,
            (*path, "version"),
            f"listed in that branch: {', '.join(listed)}" if listed else None,
        )


def _cluster(fleet: Fleet, cluster: Cluster, when: dt.date, res: _Result) -> None:
    version = operator_version(fleet, cluster)
    rel = q.release(version) if version else None
    vfile, vpath = _pinned_at(fleet, cluster)
    if version and rel is None and cluster.operator.version:
        res.add(
            UNKNOWN_RELEASE,
            f"GPU Operator {version} is not in the support matrix",
            vfile,
            vpath,
            _unknown_release_hint(version),
        )
    if rel is not None:
        _lifecycle(rel.version, rel.tag, when, vfile, vpath, res)
        _platform(cluster, rel.version, rel.tag, res)
    for index, pool in enumerate(cluster.pools):
        _pool(fleet, cluster, index, pool, rel.version if rel else None, res)
    if rel is not None:
        _per_pool_drivers(fleet, cluster, rel.version, rel.tag, res)
        known_issues(fleet, cluster, rel.version, rel.tag, vfile, vpath, res)
        runtime_settings(fleet, cluster, rel.version, rel.tag, res)
    cluster_constraints(cluster, rel.version if rel else None, res)
    openshift_checks(fleet, cluster, res)


def _lifecycle(version: str, tag: str, when: dt.date, file: str, path: DocPath, res: _Result) -> None:
    status = q.line_status(version, when)
    line = q.line_of(version)
    day = when.isoformat()
    if status == "end-of-support":
        newest = q.latest_release()
        res.add(
            END_OF_SUPPORT,
            f"GPU Operator {tag}: release line {line} is end of support as of {day}",
            file,
            path,
            f"upgrade line by line (one line at a time) towards {newest.tag if newest else 'a supported line'}",
        )
    elif status == "deprecated":
        res.add(
            DEPRECATED,
            f"GPU Operator {tag}: release line {line} is deprecated as of {day} (only critical and CVE fixes)",
            file,
            path,
            "plan the upgrade to the next release line",
        )
    elif status == "unknown":
        res.add(
            CANNOT_VERIFY_PLATFORM,
            f"cannot verify the life-cycle status of line {line} on {day} "
            f"(support-matrix data is from {q.data_date().isoformat()})",
            file,
            path,
        )


def _platform(cluster: Cluster, version: str, tag: str, res: _Result) -> None:
    file = cluster.source_file
    k8s = cluster.kubernetes
    dist_spec = k8s.distribution.value
    dist = _DISTRIBUTION.get(dist_spec, dist_spec)
    if dist == "openshift":
        if k8s.openshift_version is None:
            res.add(
                CANNOT_VERIFY_PLATFORM,
                "cannot verify OpenShift support: the matrix lists OpenShift versions; set kubernetes.openshiftVersion",
                file,
                ("kubernetes", "distribution"),
            )
        else:
            verdict = q.kubernetes_supported(version, "openshift", k8s.openshift_version)
            _k8s_verdict(
                verdict,
                f"OpenShift {k8s.openshift_version}",
                version,
                tag,
                "openshift",
                file,
                ("kubernetes", "openshiftVersion"),
                res,
            )
    elif dist == "nkp":
        res.add(
            CANNOT_VERIFY_PLATFORM,
            f"cannot verify NKP support: the matrix lists NKP releases, the spec gives only Kubernetes {k8s.version}",
            file,
            ("kubernetes", "distribution"),
        )
    else:
        verdict = q.kubernetes_supported(version, dist, k8s.version)
        _k8s_verdict(
            verdict,
            f"Kubernetes {k8s.version} on {dist_spec}",
            version,
            tag,
            dist,
            file,
            ("kubernetes", "version"),
            res,
        )
    runtime = k8s.runtime.value
    rt_verdict = q.runtime_supported(version, runtime)
    if rt_verdict is False:
        res.add(
            RUNTIME_UNSUPPORTED,
            f"container runtime {runtime} is not supported by GPU Operator {tag}",
            file,
            ("kubernetes", "runtime"),
        )
    elif rt_verdict is None:
        res.add(
            CANNOT_VERIFY_PLATFORM,
            f"cannot verify container runtime {runtime} for GPU Operator {tag}",
            file,
            ("kubernetes", "runtime"),
        )


def _k8s_verdict(
    verdict: bool | None, what: str, version: str, tag: str, dist: str, file: str, path: DocPath, res: _Result
) -> None:
    ranges = q.kubernetes_ranges(version) or {}
    listed = "; ".join(ranges.get(dist, []))
    if verdict is False:
        res.add(
            KUBERNETES_RANGE,
            f"{what} is outside what GPU Operator {tag} supports",
            file,
            path,
            f"supported: {listed}" if listed else None,
        )
    elif verdict is None:
        upstream = "; ".join(ranges.get("kubernetes", []))
        res.add(
            CANNOT_VERIFY_PLATFORM,
            f"cannot verify {what}: the support matrix of {tag} has no {dist} column",
            file,
            path,
            f"upstream Kubernetes range: {upstream}" if upstream else None,
        )


def _pool(fleet: Fleet, cluster: Cluster, index: int, pool: Pool, version: str | None, res: _Result) -> None:
    file = cluster.source_file
    base: DocPath = ("pools", index)
    rel = q.release(version) if version else None
    product = q.gpu_product(pool.gpu.product)
    if product is None:
        close = difflib.get_close_matches(pool.gpu.product.upper(), [p.id for p in q.gpu_products()], n=3)
        res.add(
            GPU_UNKNOWN,
            f"GPU product {pool.gpu.product!r} is not in the support matrix",
            file,
            (*base, "gpu", "product"),
            f"did you mean {', '.join(close)}?" if close else "see `gpuspec matrix`",
        )
    drv = effective_driver(fleet, cluster, pool)
    ch_index = _channel_index(fleet, cluster.operator.channel)
    dpath: DocPath
    if drv.from_channel and ch_index is not None:
        dfile, dpath = fleet.settings_file, ("channels", ch_index, "driver")
    else:
        dfile, dpath = file, (*base, "driver")
    if rel is not None:
        tag = rel.tag
        os_id, os_ver = pool.os.distribution, pool.os.version
        ok = q.os_supported(rel.version, os_id, os_ver)
        if ok is False:
            oses = "; ".join(t for _, _, t in q.operating_systems(rel.version) or [])
            res.add(
                OS_UNSUPPORTED,
                f"{os_id} {os_ver} is not a supported OS of GPU Operator {tag}",
                file,
                (*base, "os", "version"),
                f"supported: {oses}",
            )
        elif ok is None:
            res.add(
                CANNOT_VERIFY_PLATFORM, f"cannot verify OS {os_id} {os_ver} for GPU Operator {tag}", file, (*base, "os")
            )
        runtime = cluster.kubernetes.runtime.value
        rt = q.runtime_supported(rel.version, runtime, os_id=os_id, os_version=os_ver)
        cluster_rt = q.runtime_supported(rel.version, runtime)
        if rt is False and cluster_rt is not False:
            res.add(
                RUNTIME_UNSUPPORTED,
                f"container runtime {runtime} is not supported on {os_id} {os_ver} by GPU Operator {tag}",
                file,
                (*base, "os"),
            )
        elif rt is None and cluster_rt is not None and ok is True:
            res.add(
                CANNOT_VERIFY_PLATFORM,
                f"cannot verify container runtime {runtime} on {os_id} {os_ver} for GPU Operator {tag}: the "
                "runtime table of platform-support.rst has no such row or leaves the cell empty",
                file,
                (*base, "os"),
            )
        if not drv.from_channel:
            _driver_pin(rel.version, drv.branch, drv.version, dfile, dpath, res)
        if product is not None:
            _gpu_support(product.id, rel.version, tag, drv.branch, drv.version, file, base, res)
            driver_flavour(cluster, pool, product.id, rel.version, tag, drv, (dfile, dpath), base, res)
        if drv.source is DriverSource.PRECOMPILED and not is_openshift(cluster):  # OpenShift: GS232
            _precompiled(pool, rel.version, tag, drv.branch, file, base, res)
        if ok is True:
            pool_platform_cell(cluster, pool, rel.version, tag, base, res)
        managed_platform_driver(cluster, pool, drv, base, res)
    if product is not None:
        _mig(pool, product.id, version, file, base, res)


def _gpu_support(
    product: str,
    version: str,
    tag: str,
    branch: str | None,
    dversion: str | None,
    file: str,
    base: DocPath,
    res: _Result,
) -> None:
    listed = [q.gpu_listed(version, product, arch) for arch in ("x86_64", "arm64")]
    if True not in listed:
        if None in listed:
            res.add(
                CANNOT_VERIFY_PLATFORM,
                f"cannot verify that GPU Operator {tag} supports {product}",
                file,
                (*base, "gpu", "product"),
            )
        else:
            res.add(
                GPU_NOT_LISTED,
                f"{product} is not in the supported-GPU list of GPU Operator {tag}",
                file,
                (*base, "gpu", "product"),
            )
    prod = q.gpu_product(product)
    need = prod.min_driver_version if prod else None
    if need is None:
        return
    effective = dversion or (q.default_driver(version) if branch is None else None)
    if effective is not None:
        verdict = q.gpu_driver_requirement(product, effective)
        if verdict is not None and verdict[0] is False:
            res.add(GPU_DRIVER_TOO_OLD, verdict[1], file, (*base, "driver"))
    elif branch is not None and int(branch) < int(need.split(".")[0]):
        res.add(
            GPU_DRIVER_TOO_OLD,
            f"{product} needs driver {need} or later (branch {branch} is older)",
            file,
            (*base, "driver", "branch"),
        )


def _precompiled(
    pool: Pool, version: str, tag: str, branch: str | None, file: str, base: DocPath, res: _Result
) -> None:
    b = branch or (q.default_driver(version) or "").split(".")[0]
    at: DocPath = (*base, "driver", "source")
    os_id, os_version, kernel = pool.os.distribution, pool.os.version, pool.os.kernel
    if cq.precompiled_available(version, os_id, os_version, "", b) is False:  # an OS the table does not list
        listed = ", ".join(cq.precompiled_oses(version)) or "the OSes of its table"
        res.add(
            PRECOMPILED_UNAVAILABLE,
            f"no precompiled driver images for {os_id} {os_version} with GPU Operator {tag}: NVIDIA supports "
            f"precompiled driver containers only on {listed} (precompiled-drivers.rst, Limitations and "
            "Restrictions; platform-support.rst, Supported Precompiled Drivers)",
            file, at, "use driver.source operator (the driver container compiles on the node)",
        )
        return
    if kernel is None:
        res.add(
            CANNOT_VERIFY_PLATFORM,
            "cannot verify precompiled driver availability: os.kernel is not set",
            file,
            (*base, "os"),
            "precompiled images exist per kernel; set os.kernel (e.g. 5.15.0-105-generic)",
        )
        return
    verdict = cq.precompiled_available(version, os_id, os_version, kernel, b)
    what = f"{os_id} {os_version}, kernel {kernel}, branch {b}"
    if verdict is False:
        res.add(
            PRECOMPILED_UNAVAILABLE,
            f"no precompiled driver images for {what} with GPU Operator {tag}",
            file, at, "use driver.source operator, or a supported OS / kernel flavour / branch",
        )
    elif verdict is None:
        res.add(
            CANNOT_VERIFY_PLATFORM,
            f"cannot verify precompiled driver availability for {what} with GPU Operator {tag}",
            file, at,
        )


def _per_pool_drivers(fleet: Fleet, cluster: Cluster, version: str, tag: str, res: _Result) -> None:
    managed = [(i, p) for i, p in enumerate(cluster.pools) if p.driver.source is not DriverSource.HOST]
    configs: dict[tuple[str, str | None, str | None], int] = {}
    for i, pool in managed:
        drv = effective_driver(fleet, cluster, pool)
        configs.setdefault((drv.source.value, drv.branch, drv.version), i)
    wanted = cluster.operator.driver_management
    if wanted == "clusterpolicy" and len(configs) > 1:
        first, second = sorted(configs.values())[:2]
        res.add(
            PER_POOL_DRIVERS,
            f"driverManagement clusterpolicy manages one driver per cluster, but pools "
            f"{cluster.pools[first].name!r} and {cluster.pools[second].name!r} use different drivers",
            cluster.source_file, ("operator", "driverManagement"),
            "use one driver for every operator-managed pool, or driverManagement nvidiadriver",
        )
        return
    if len(configs) < 2 and not (wanted == "nvidiadriver" and configs):
        return
    status = cq.nvidiadriver_crd_status(version)
    if status == "supported":
        return
    detail = "only a technology preview (not for production)" if status == "technology-preview" else "not available"
    if len(configs) < 2:
        if status is not None:
            res.add(
                PER_POOL_DRIVERS,
                f"driverManagement nvidiadriver needs NVIDIADriver resources; in GPU Operator {tag} they are {detail}",
                cluster.source_file, ("operator", "driverManagement"), "use GPU Operator v26.3.0 or later",
            )
        return
    first, second = sorted(configs.values())[:2]
    if status is None:
        res.add(
            CANNOT_VERIFY_PLATFORM,
            f"cannot verify NVIDIADriver support in GPU Operator {tag}",
            cluster.source_file,
            ("pools", second, "driver"),
        )
        return
    res.add(
        PER_POOL_DRIVERS,
        f"pools {cluster.pools[first].name!r} and {cluster.pools[second].name!r} use different "
        f"drivers, which needs NVIDIADriver resources; in GPU Operator {tag} they are {detail}",
        cluster.source_file,
        ("pools", second, "driver"),
        "use one driver for all operator-managed pools, or GPU Operator v26.3.0 or later",
    )


def _mig(pool: Pool, product: str, version: str | None, file: str, base: DocPath, res: _Result) -> None:
    mig = pool.mig
    if mig.strategy is MigStrategy.NONE:
        return
    prod = q.gpu_product(product)
    assert prod is not None
    if prod.mig_capable is False:
        res.add(MIG_NOT_CAPABLE, f"{product} does not support MIG", file, (*base, "mig", "strategy"))
        return
    if prod.mig_capable == "unknown":
        res.add(
            CANNOT_VERIFY_MIG,
            f"cannot verify MIG: the support matrix does not say whether {product} supports MIG",
            file,
            (*base, "mig", "strategy"),
            "no MIG profiles are recorded for this product",
        )
        return
    layouts: list[tuple[dict[str, int], DocPath]] = []
    if mig.layout is not None:
        check = mq.check_named_layout(mig.layout, product, version)
        if check.ok is False:
            res.add(
                MIG_LAYOUT,
                "; ".join(check.problems),
                file,
                (*base, "mig", "layout"),
                "named layouts for this product: " + ", ".join(_layouts_for(product, version)),
            )
        elif check.ok is None:
            res.add(
                CANNOT_VERIFY_MIG,
                f"cannot verify MIG layout {mig.layout}: " + "; ".join(check.problems),
                file,
                (*base, "mig", "layout"),
            )
        if check.devices:
            layouts.append((check.devices, (*base, "mig", "layout")))
    for g_index, group in enumerate(mig.custom or []):
        gpath: DocPath = (*base, "mig", "custom", g_index)
        profiles = mq.mig_profiles(product, version)
        if profiles is None:
            res.add(
                CANNOT_VERIFY_MIG,
                f"cannot verify the custom MIG layout: profiles of {product} are unknown",
                file,
                (*gpath, "profiles"),
            )
            continue
        valid = {p.name for p in profiles}
        bad = [name for name in group.profiles if name not in valid]
        for name in bad:
            res.add(
                MIG_PROFILE,
                f"MIG profile {name} is not valid on {product}",
                file,
                (*gpath, "profiles", name),
                f"valid profiles: {', '.join(sorted(valid))}",
            )
        check = mq.check_mig_layout(product, {k: v for k, v in group.profiles.items() if k not in bad}, version)
        for problem in check.problems:
            res.add(MIG_LIMITS, problem, file, (*gpath, "profiles"))
        layouts.append((dict(group.profiles), (*gpath, "profiles")))
    if mig.strategy is MigStrategy.SINGLE:
        names = {name for devices, _ in layouts for name in devices}
        if len(names) > 1:
            res.add(
                MIG_SINGLE_MIXED,
                f"strategy single needs one MIG profile per node; this layout has {', '.join(sorted(names))}",
                file,
                (*base, "mig", "strategy"),
                "use strategy mixed, or a layout with a single profile",
            )
    if pool.sharing.mode is not SharingMode.NONE:
        ok = mq.sharing_with_mig_supported(pool.sharing.mode.value)
        if ok is False:
            res.add(
                SHARING_WITH_MIG,
                f"{pool.sharing.mode.value} cannot be combined with MIG"
                + (f" ({why})" if (why := mq.sharing_with_mig_source(pool.sharing.mode.value)) else ""),
                file,
                (*base, "sharing", "mode"),
                "use time-slicing on MIG devices, or MPS on a pool without MIG",
            )
        elif ok is None:
            res.add(
                CANNOT_VERIFY_MIG,
                f"cannot verify {pool.sharing.mode.value} combined with MIG: the sources do not document it",
                file,
                (*base, "sharing", "mode"),
            )


def _layouts_for(product: str, version: str | None) -> list[str]:
    return [lay.name for lay in mq.mig_layouts(version) if mq.check_named_layout(lay.name, product, version).ok]


# ---------------------------------------------------------------- rules


class MatrixView(Rule):
    """A support-matrix rule: the problems of one entry, picked from the shared evaluation of the fleet."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield the problems of this rule's entry for ``ctx.fleet``, judged at ``ctx.as_of`` (default: data date)."""
        yield from _evaluation(ctx).problems.get(self.entry.id, [])


#: Every support-matrix rule, in id order.
MATRIX_RULES: list[Rule] = [MatrixView(entry) for entry in cat.ENTRIES if entry not in OPERATIONS_ENTRIES]


def matrix_findings(fleet: Fleet, as_of: dt.date | None = None) -> list[Finding]:
    """Return every GS2xx/GS3xx finding of ``fleet`` at default severities, judged at ``as_of`` (default: data date)."""
    ctx = RuleContext(fleet=fleet, as_of=as_of)
    findings: list[Finding] = []
    for rule in MATRIX_RULES:
        findings.extend(run_rule(rule, ctx))
    return findings
