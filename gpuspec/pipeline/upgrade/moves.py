"""Candidate moves of the upgrade search: the spec edits one pull request could make next, per cluster.

A move is productive (it brings a cluster one hop closer to the target: the next operator release line, the
next Kubernetes minor, the next driver stage -- canary pool, then pool waves) or enabling (it changes nothing
that runs but lets a productive move pass: the switch to NVIDIADriver management, pinning release-default
drivers before the operator moves, the operator default NVIDIADriver kept off, leaving and re-joining a
channel, removing a left-over rollback flag).  Moves never decide validity: the search checks every candidate
with the lint engine.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gpuspec.catalogue.changeset import DRIVER_TAKEN_AWAY
from gpuspec.matrix import component_query, query
from gpuspec.model.cluster import Cluster, Pool
from gpuspec.model.fleet import Fleet
from gpuspec.model.pool_specs import DriverSource
from gpuspec.model.resolve import effective_driver, operator_version
from gpuspec.pipeline.upgrade.edits import KeyEdit, Scalar, lookup
from gpuspec.pipeline.upgrade.model import Selection, Target
from gpuspec.render.context import driver_mode
from gpuspec.rollout.driver_facts import resolved_driver_version
from gpuspec.rollout.impact import manages_driver


@dataclass(frozen=True)
class Move:
    """One candidate step: its kind, a title, the clusters it touches, its key edits; ``productive`` moves bring
    the state closer to the target, enabling ones only make a productive move possible."""

    kind: str
    title: str
    clusters: tuple[str, ...]
    edits: tuple[KeyEdit, ...]
    productive: bool
    #: (cluster, pool) of each pool the step drains before it syncs, its driver loss acknowledged (GS814).
    drained_first: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class State:
    """A fleet state of the search: the spec texts (by file relative to the fleet folder) and the loaded fleet."""

    texts: Mapping[str, str]
    fleet: Fleet
    fleet_dir: Path
    #: The clusters of the fleet the search does not move (not in ``fleet``, unchanged by every step).
    context: tuple[Cluster, ...] = ()

    def file_of(self, cluster: Cluster) -> str:
        """The file of ``cluster`` relative to the fleet folder."""
        return Path(cluster.source_file).resolve().relative_to(self.fleet_dir.resolve()).as_posix()

    @property
    def settings_file(self) -> str:
        """fleet.yaml relative to the fleet folder."""
        return Path(self.fleet.settings_file).resolve().relative_to(self.fleet_dir.resolve()).as_posix()


def norm_operator(version: str) -> str:
    """``v26.7.0`` for ``26.7.0`` or ``v26.7.0``."""
    return version if version.startswith("v") else f"v{version}"


def next_operator(current: str, target: str) -> str | None:
    """The release one upgrade takes a cluster on ``current`` to on the way to ``target`` (None: no way up)."""
    ok, _ = query.upgrade_supported(current, target)
    if ok is True:
        return norm_operator(target)
    here, there = query.parse_version(current), query.parse_version(target)
    if here is None or there is None or there < here:
        return None
    lines = [line.line for line in query.release_lines()]
    own = query.line_of(current)
    if own is None or own not in lines or lines.index(own) + 1 >= len(lines):
        return None
    newest = query.latest_release(lines[lines.index(own) + 1])
    return norm_operator(newest.version) if newest else None


def operator_hops(current: str | None, target: str | None) -> int:
    """How many operator upgrades lie between ``current`` and ``target`` (0 when there or unknown)."""
    hops, here = 0, current
    while target and here and norm_operator(here) != norm_operator(target) and hops < 50:
        following = next_operator(here, target)
        if following is None:
            return hops + 1
        hops, here = hops + 1, following
    return hops


def _minor(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def kubernetes_hops(current: str, target: str | None) -> int:
    """Kubernetes minors between ``current`` and ``target`` (one minor per upgrade, as Kubernetes requires)."""
    if target is None or current == target:
        return 0
    a, b = _minor(current), _minor(target)
    if a is None or b is None or a[0] != b[0]:
        return 1
    return abs(b[1] - a[1])


def driver_version(release_version: str | None, branch: str, target_operator: str | None) -> str | None:
    """The driver version a pool of ``branch`` pins on ``release_version``: one the target release lists too,
    else the release's recommended, default or newest of that branch (None when the release lists none)."""
    rel = query.release(release_version) if release_version else None
    if rel is None:
        return None
    listed = [(d.version, d.recommended, d.default) for d in rel.drivers.versions if d.branch == branch]
    if rel.drivers.chart_default.split(".")[0] == branch and all(v != rel.drivers.chart_default for v, _, _ in listed):
        listed.append((rel.drivers.chart_default, False, True))
    if not listed:
        return None
    later = query.release(target_operator) if target_operator else None
    known = {d.version for d in later.drivers.versions} | {later.drivers.chart_default} if later else set()

    def rank(entry: tuple[str, bool, bool]) -> tuple[bool, bool, bool, tuple[int, ...]]:
        version, recommended, default = entry
        return version in known, recommended, default, tuple(int(p) for p in version.split(".") if p.isdigit())

    return max(listed, key=rank)[0]


def movable_pools(cluster: Cluster) -> list[Pool]:
    """The pools whose driver the operator installs (a host driver changes with the node image, outside gpuspec)."""
    return [p for p in cluster.pools if p.managed and manages_driver(p)]


def pool_at_branch(fleet: Fleet, cluster: Cluster, pool: Pool, branch: str) -> bool:
    """True when ``pool`` runs driver ``branch`` (its pin, its channel's, or the release default's branch)."""
    driver = effective_driver(fleet, cluster, pool)
    running = driver.branch or (resolved_driver_version(fleet, cluster, pool) or "").split(".", 1)[0]
    return running == branch


def driver_stages(fleet: Fleet, cluster: Cluster, branch: str | None, only: tuple[str, ...] = ()) -> list[list[Pool]]:
    """The pools still to move to ``branch``, in the order GS804 allows: the canary alone, then pool wave by wave.

    ``only``: move just these pools (and the canary, which goes first whatever moves after it)."""
    if branch is None:
        return []
    todo = [
        p
        for p in movable_pools(cluster)
        if not pool_at_branch(fleet, cluster, p, branch)
        and (not only or p.name in only or p.name == cluster.rollout.canary_pool)
    ]
    canary = [p for p in todo if p.name == cluster.rollout.canary_pool]
    rest = [p for p in todo if p.name != cluster.rollout.canary_pool]
    stages = [canary] if canary else []
    for wave in sorted({p.wave for p in rest}):
        stages.append([p for p in rest if p.wave == wave])
    return stages


def host_pools_behind(cluster: Cluster, branch: str | None, only: tuple[str, ...] = ()) -> list[Pool]:
    """The pools whose node image brings the driver (``driver.source: host``) and whose spec names another branch
    than ``branch`` (or none: what the image runs is then unknown to the spec); ``only``: just these pools."""
    if branch is None:
        return []
    return [p for p in cluster.pools if p.managed and p.driver.source is DriverSource.HOST
            and p.driver.branch != branch and (not only or p.name in only)]


def host_stages(cluster: Cluster, branch: str | None, only: tuple[str, ...] = ()) -> list[list[Pool]]:
    """The host-driver pools still to move to ``branch``, in the order GS804 asks: the canary, then pool wave by
    pool wave (each a node-image roll outside gpuspec)."""
    behind = host_pools_behind(cluster, branch, only)
    canary = [p for p in behind if p.name == cluster.rollout.canary_pool]
    rest = [p for p in behind if p.name != cluster.rollout.canary_pool]
    return ([canary] if canary else []) + [[p for p in rest if p.wave == w] for w in sorted({p.wave for p in rest})]


def cluster_wide_driver(fleet: Fleet, cluster: Cluster) -> bool:
    """True when the cluster's drivers can only move together: ClusterPolicy management (one driver for every pool)
    on a release that cannot move a running cluster to per-pool NVIDIADriver resources (before v26.7.0)."""
    current = operator_version(fleet, cluster)
    return (driver_mode(fleet, cluster) == "clusterpolicy" and current is not None
            and not component_query.nvidiadriver_crd_migration(current))


def driver_hops(fleet: Fleet, cluster: Cluster, target: Target, relax: bool) -> int:
    """Steps the driver move still takes at least: one per stage (canary, then pool waves), or one for every pool
    at once where the preferences may yield (``relax``) and the drivers can only move together."""
    stages = len(driver_stages(fleet, cluster, target.driver_branch, target.pools))
    return min(stages, 1) if relax and cluster_wide_driver(fleet, cluster) else stages


def _pool_edits(state: State, cluster: Cluster, pool: Pool, branch: str, version: str | None) -> list[KeyEdit]:
    file = state.file_of(cluster)
    index = cluster.pool_position(pool)
    base = ("pools", index, "driver")
    text = state.texts[file]

    def was(key: str) -> Scalar | None:
        value = lookup(text, file, (*base, key))
        return value if isinstance(value, (str, int, bool)) else None

    edits = [KeyEdit(file, (*base, "branch"), branch, was("branch"), f"pools[{pool.name}].driver.branch")]
    if pool.driver.source is DriverSource.OPERATOR and version is not None:
        edits.append(KeyEdit(file, (*base, "version"), version, was("version"), f"pools[{pool.name}].driver.version"))
    elif was("version") is not None:
        edits.append(KeyEdit(file, (*base, "version"), None, was("version"), f"pools[{pool.name}].driver.version"))
    return [e for e in edits if e.value != e.before]


def _set(state: State, file: str, path: tuple[str | int, ...], value: Scalar | None, shown: str) -> KeyEdit:
    before = lookup(state.texts[file], file, path)
    return KeyEdit(file, path, value, before if isinstance(before, (str, int, bool)) else None, shown)


def channel_index(fleet: Fleet, name: str) -> int:
    """The position of channel ``name`` in fleet.yaml."""
    return next(i for i, c in enumerate(fleet.settings.channels) if c.name == name)


def cluster_done(state: State, cluster: Cluster, target: Target) -> bool:
    """True when ``cluster`` runs the target (operator, Kubernetes, every operator-managed pool's driver branch)."""
    fleet = state.fleet
    current = operator_version(fleet, cluster)
    if target.operator and (current is None or norm_operator(current) != norm_operator(target.operator)):
        return False
    if target.kubernetes and cluster.kubernetes.version != target.kubernetes:
        return False
    return (not driver_stages(fleet, cluster, target.driver_branch, target.pools)
            and not host_pools_behind(cluster, target.driver_branch, target.pools) and not cluster.operator.rollback)


def channel_done(state: State, selection: Selection, target: Target) -> bool:
    """For a channel's upgrade: the channel itself names the target and every selected cluster follows it."""
    if selection.channel is None:
        return True
    channel = state.fleet.channel(selection.channel)
    if channel is None:
        return True
    if target.operator and norm_operator(channel.operator) != norm_operator(target.operator):
        return False
    if target.driver_branch and (channel.driver is None or channel.driver.branch != target.driver_branch):
        return False
    return all(
        (c := state.fleet.cluster(n)) is not None and c.operator.channel == selection.channel
        for n in selection.clusters
    )


def remaining(state: State, selection: Selection, target: Target, relax: bool = False) -> int:
    """A lower bound of the steps left: per fleet wave, the most hops one of its clusters still has to go
    (``relax``: gpuspec's preferences may yield where NVIDIA's constraints leave no other way)."""
    by_wave: dict[int, int] = {}
    for name in selection.clusters:
        cluster = state.fleet.cluster(name)
        if cluster is None:
            continue
        hops = operator_hops(operator_version(state.fleet, cluster), target.operator)
        hops += kubernetes_hops(cluster.kubernetes.version, target.kubernetes)
        hops += driver_hops(state.fleet, cluster, target, relax)
        hops += len(host_stages(cluster, target.driver_branch, target.pools))
        by_wave[cluster.rollout.wave] = max(by_wave.get(cluster.rollout.wave, 0), hops)
    channel = state.fleet.channel(selection.channel)
    extra = int(
        channel is not None
        and target.driver_branch is not None
        and (channel.driver is None or channel.driver.branch != target.driver_branch)
    )
    return sum(by_wave.values()) + extra


def front(state: State, selection: Selection, target: Target) -> list[Cluster]:
    """The selected clusters of the lowest fleet wave that has one not yet at the target."""
    todo = [
        c
        for n in selection.clusters
        if (c := state.fleet.cluster(n)) is not None and not cluster_done(state, c, target)
    ]
    if not todo:
        return []
    wave = min(c.rollout.wave for c in todo)
    return [c for c in todo if c.rollout.wave == wave]


def _channel_users(state: State, name: str) -> list[str]:
    """Every cluster that follows channel ``name``: in the searched fleet and in its context."""
    return [c.name for c in (*state.fleet.clusters, *state.context) if c.operator.channel == name]


def cluster_moves(
    state: State, cluster: Cluster, target: Target, selection: Selection, movers: set[str], relax: bool = False
) -> Iterator[Move]:
    """The candidate moves of one cluster, productive ones first (``movers``: the clusters that may move
    together with it in this step, for edits of a channel they share).

    A rollback flag left from the last downgrade goes with the next change (GS822): every move removes it, and
    removing it alone is the last candidate."""
    moves = list(_cluster_moves(state, cluster, target, selection, movers, relax))
    if not cluster.operator.rollback:
        yield from moves
        return
    drop = _set(state, state.file_of(cluster), ("operator", "rollback"), None, "operator.rollback")
    for move in moves:
        yield Move(
            move.kind,
            move.title + " (and operator.rollback removed)",
            move.clusters,
            (*move.edits, drop),
            move.productive,
        )
    yield Move(
        "rollback-flag",
        f"{cluster.name}: remove operator.rollback left from the last downgrade",
        (cluster.name,),
        (drop,),
        False,
    )


def _cluster_moves(
    state: State, cluster: Cluster, target: Target, selection: Selection, movers: set[str], relax: bool = False
) -> Iterator[Move]:
    fleet = state.fleet
    file = state.file_of(cluster)
    name = cluster.name
    current = operator_version(fleet, cluster)
    op_target = norm_operator(target.operator) if target.operator else None
    # operator: the next release on the way
    following = (
        next_operator(current, op_target) if current and op_target and norm_operator(current) != op_target else None
    )
    if following is not None:
        channel = cluster.operator.channel if not cluster.operator.version else None
        edit: KeyEdit | None = None
        if channel is None:
            edit = _set(state, file, ("operator", "version"), following, "operator.version")
        elif set(_channel_users(state, channel)) <= movers:
            index = channel_index(fleet, channel)
            edit = _set(
                state, state.settings_file, ("channels", index, "operator"), following, f"channels[{channel}].operator"
            )
        if edit is not None:
            title = f"{name}: GPU Operator {current} -> {following}"
            yield Move("operator", title, (name,), (edit,), True)
            if driver_mode(fleet, cluster) == "nvidiadriver" and cluster.operator.default_nvidia_driver:
                keep = _set(state, file, ("operator", "defaultNVIDIADriver"), False, "operator.defaultNVIDIADriver")
                yield Move(
                    "operator",
                    title + " (every pool keeps its own NVIDIADriver: defaultNVIDIADriver: false)",
                    (name,),
                    (edit, keep),
                    True,
                )
    # Kubernetes: one minor at a time
    k_target = target.kubernetes
    here = _minor(cluster.kubernetes.version)
    there = _minor(k_target) if k_target else None
    if here and there and here[0] == there[0] and here[1] < there[1]:
        nxt = f"{here[0]}.{here[1] + 1}"
        yield Move(
            "kubernetes",
            f"{name}: Kubernetes {cluster.kubernetes.version} -> {nxt}",
            (name,),
            (_set(state, file, ("kubernetes", "version"), nxt, "kubernetes.version"),),
            True,
        )
    # drivers: the next stage of pools
    branch = target.driver_branch
    stages = driver_stages(fleet, cluster, branch, target.pools)
    if branch and stages:
        pools = stages[0]
        version = driver_version(current, branch, op_target)
        edits = [e for p in pools for e in _pool_edits(state, cluster, p, branch, version)]
        which = (
            "canary pool " if pools[0].name == cluster.rollout.canary_pool else f"pool wave {pools[0].wave}: "
        ) + ", ".join(p.name for p in pools)
        if edits:
            title = f"{name}: driver {version or 'branch ' + branch} on {which}"
            yield Move("driver", title, (name,), tuple(edits), True)
            if driver_mode(fleet, cluster) == "nvidiadriver" and cluster.operator.driver_management == "auto":
                keep = _set(state, file, ("operator", "driverManagement"), "nvidiadriver", "operator.driverManagement")
                yield Move(
                    "driver",
                    title + " (NVIDIADriver management kept: driverManagement: nvidiadriver)",
                    (name,),
                    (*edits, keep),
                    True,
                )
                if cluster.operator.default_nvidia_driver:
                    own = _set(state, file, ("operator", "defaultNVIDIADriver"), False, "operator.defaultNVIDIADriver")
                    yield Move(
                        "driver",
                        title + " (every pool keeps its own NVIDIADriver: driverManagement: "
                        "nvidiadriver, defaultNVIDIADriver: false)",
                        (name,),
                        (*edits, keep, own),
                        True,
                    )
        if relax and len(stages) > 1 and cluster_wide_driver(fleet, cluster):
            every = [p for stage in stages for p in stage]
            wide = [e for p in every for e in _pool_edits(state, cluster, p, branch, version)]
            if wide:
                yield Move(
                    "driver",
                    f"{name}: driver {version or 'branch ' + branch} on every pool at once, rolled node by node by "
                    "the upgrade controller (ClusterPolicy management on " + (current or "this release")
                    + ": canary first and pool waves yield, GS804)",
                    (name,),
                    tuple(wide),
                    True,
                )
        if (
            driver_mode(fleet, cluster) == "clusterpolicy"
            and cluster.operator.driver_management != "nvidiadriver"
            and len(movable_pools(cluster)) > len(pools)
        ):
            switch = _set(state, file, ("operator", "driverManagement"), "nvidiadriver", "operator.driverManagement")
            title = f"{name}: driver management ClusterPolicy -> NVIDIADriver resources (no driver changes)"
            migration = current is not None and component_query.nvidiadriver_crd_migration(current)
            if cluster.operator.default_nvidia_driver and migration:
                # every pool gets its own NVIDIADriver now, while every driver pod is replaced anyway: later pool
                # moves then roll one NVIDIADriver each, instead of moving pools on and off the default one
                own = _set(state, file, ("operator", "defaultNVIDIADriver"), False, "operator.defaultNVIDIADriver")
                yield Move(
                    "driver-management",
                    title[: -len(" (no driver changes)")] + ", one per pool "
                    "(defaultNVIDIADriver: false; no driver changes)",
                    (name,),
                    (switch, own),
                    False,
                )
            yield Move("driver-management", title, (name,), (switch,), False)
    # node images that bring the driver: rolled outside gpuspec, the spec then names what they run
    images = host_stages(cluster, branch, target.pools)
    if branch and images:
        behind = images[0]
        image_edits = []
        for p in behind:
            index = cluster.pool_position(p)
            image_edits.append(_set(state, file, ("pools", index, "driver", "branch"), branch,
                                    f"pools[{p.name}].driver.branch"))
            if lookup(state.texts[file], file, ("pools", index, "driver", "version")) is not None:
                image_edits.append(_set(state, file, ("pools", index, "driver", "version"), None,
                                        f"pools[{p.name}].driver.version"))
        yield Move(
            "node-image",
            f"{name}: node image of pool(s) {', '.join(p.name for p in behind)} with driver branch {branch} "
            "(rolled outside gpuspec)",
            (name,),
            tuple(image_edits),
            True,
        )
    # pin release-default drivers before the operator moves them
    if following is not None:
        unpinned = [p for p in movable_pools(cluster) if effective_driver(fleet, cluster, p).version is None]
        if unpinned:
            by_stage = _pin_stages(cluster, unpinned)
            for pools in (unpinned, *by_stage) if len(by_stage) > 1 else (unpinned,):
                edits = []
                for p in pools:
                    running = resolved_driver_version(fleet, cluster, p)
                    if running:
                        edits += _pool_edits(state, cluster, p, running.split(".", 1)[0], running)
                if edits:
                    yield Move(
                        "pin",
                        f"{name}: pin the release-default driver of "
                        + ", ".join(p.name for p in pools)
                        + " to what runs now",
                        (name,),
                        tuple(edits),
                        False,
                    )
    # leave a channel other clusters follow, to move alone
    channel_name = cluster.operator.channel
    if (
        following is not None
        and channel_name
        and not cluster.operator.version
        and not set(_channel_users(state, channel_name)) <= movers
    ):
        yield _detach(state, cluster, file)
    # join the channel again once it names what the cluster runs (a channel's upgrade)
    if selection.channel and cluster.operator.version and current:
        followed = fleet.channel(selection.channel)
        if followed is not None and norm_operator(followed.operator) == norm_operator(current):
            yield Move(
                "channel",
                f"{name}: follow channel {selection.channel} again",
                (name,),
                (
                    _set(state, file, ("operator", "version"), None, "operator.version"),
                    _set(state, file, ("operator", "channel"), selection.channel, "operator.channel"),
                ),
                False,
            )


def _pin_stages(cluster: Cluster, pools: list[Pool]) -> list[list[Pool]]:
    canary = [p for p in pools if p.name == cluster.rollout.canary_pool]
    rest = [p for p in pools if p.name != cluster.rollout.canary_pool]
    return ([canary] if canary else []) + [[p for p in rest if p.wave == w] for w in sorted({p.wave for p in rest})]


def _detach(state: State, cluster: Cluster, file: str) -> Move:
    """Pin what the channel gives (operator release, driver of the pools without their own) in the cluster file."""
    fleet = state.fleet
    channel = fleet.channel(cluster.operator.channel)
    assert channel is not None
    edits = [
        _set(state, file, ("operator", "channel"), None, "operator.channel"),
        _set(state, file, ("operator", "version"), norm_operator(channel.operator), "operator.version"),
    ]
    if channel.driver is not None:
        for pool in movable_pools(cluster):
            if effective_driver(fleet, cluster, pool).from_channel:
                edits += _pool_edits(state, cluster, pool, channel.driver.branch, channel.driver.version)
    return Move(
        "channel",
        f"{cluster.name}: pin channel {channel.name}'s release in the cluster file, to move alone",
        (cluster.name,),
        tuple(edits),
        False,
    )


#: The reason written into an acknowledged GS814 finding (the step's "before" says to drain the pool first).
DRAINED_REASON = "the pool's nodes are cordoned and drained before this change syncs (gpuspec upgrade)"


def acknowledged(state: State, move: Move, losses: tuple[tuple[str, str, int], ...]) -> Move | None:
    """``move`` with every driver loss it causes acknowledged as GS814 asks (an inline suppression above the pool's
    driver, the step then drains the pool's nodes before it syncs); None when a lost pool is not in the state."""
    comments: list[KeyEdit] = []
    pools: list[str] = []
    drained: list[tuple[str, str]] = []
    for cluster_name, pool_name, nodes in losses:
        cluster = state.fleet.cluster(cluster_name)
        pool = cluster.pool(pool_name) if cluster is not None else None
        if cluster is None or pool is None:
            return None
        comments.append(KeyEdit(
            state.file_of(cluster), ("pools", cluster.pool_position(pool), "driver"), None, None,
            f"pools[{pool_name}].driver", comment=f"gpuspec: ignore {DRIVER_TAKEN_AWAY.id} -- {DRAINED_REASON}",
        ))
        pools.append(f"{pool_name} ({nodes} node(s))")
        drained.append((cluster_name, pool_name))
    return Move(
        move.kind,
        f"{move.title}; drain first: {', '.join(pools)} (their driver pods go at once, GS814 acknowledged)",
        move.clusters,
        (*move.edits, *comments),
        move.productive,
        (*move.drained_first, *drained),
    )


def channel_moves(state: State, selection: Selection, target: Target) -> Iterator[Move]:
    """For a channel's upgrade: write the target into the channel once no cluster follows it on the way."""
    if selection.channel is None or channel_done(state, selection, target):
        return
    fleet = state.fleet
    channel = fleet.channel(selection.channel)
    if channel is None:
        return
    index = channel_index(fleet, channel.name)
    settings = state.settings_file
    edits: list[KeyEdit] = []
    if (
        target.operator
        and norm_operator(channel.operator) != norm_operator(target.operator)
        and not _channel_users(state, channel.name)
    ):
        edits.append(
            _set(
                state,
                settings,
                ("channels", index, "operator"),
                norm_operator(target.operator),
                f"channels[{channel.name}].operator",
            )
        )
    if target.driver_branch and (channel.driver is None or channel.driver.branch != target.driver_branch):
        version = driver_version(target.operator or channel.operator, target.driver_branch, None)
        edits.append(
            _set(
                state,
                settings,
                ("channels", index, "driver", "branch"),
                target.driver_branch,
                f"channels[{channel.name}].driver.branch",
            )
        )
        if version:
            edits.append(
                _set(
                    state,
                    settings,
                    ("channels", index, "driver", "version"),
                    version,
                    f"channels[{channel.name}].driver.version",
                )
            )
    named = (
        norm_operator(target.operator)
        if target.operator and any(e.shown.endswith(".operator") for e in edits)
        else norm_operator(channel.operator)
    )
    rejoin: list[KeyEdit] = []
    rejoining: list[str] = []
    for name in selection.clusters:
        cluster = fleet.cluster(name)
        current = operator_version(fleet, cluster) if cluster is not None else None
        if cluster is None or cluster.operator.channel == channel.name or current is None:
            continue
        if norm_operator(current) == named:
            file = state.file_of(cluster)
            rejoin += [
                _set(state, file, ("operator", "version"), None, "operator.version"),
                _set(state, file, ("operator", "channel"), channel.name, "operator.channel"),
            ]
            rejoining.append(name)
    title = f"channel {channel.name}: name the target ({target.words()})"
    if edits and rejoin:
        yield Move(
            "channel",
            title + " and " + ", ".join(rejoining) + " follow it again",
            tuple(rejoining),
            (*edits, *rejoin),
            True,
        )
    if edits:
        yield Move("channel", title, (), tuple(edits), True)
    if rejoin:
        yield Move(
            "channel",
            ", ".join(rejoining) + f": follow channel {channel.name} again",
            tuple(rejoining),
            tuple(rejoin),
            False,
        )
