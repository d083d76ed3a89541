"""A pool's MIG settings as its nodes run them, for `gpuspec import`: a named layout, or a custom one derived from
the per-profile MIG device counts GPU Feature Discovery labels the nodes with."""

from __future__ import annotations

import itertools
import re

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from gpuspec.audit.draft_base import DraftPool, as_int, cmap, from_cluster, majority, todo
from gpuspec.audit.facts import MIG_RESOURCE_PREFIX, SHARED_SUFFIX, NodeFacts
from gpuspec.matrix.mig_query import check_mig_layout, mig_layout, mig_profiles

#: The per-profile MIG device counts GFD labels a node with under the mixed strategy.
_MIG_COUNT = re.compile(r"^nvidia\.com/mig-(?P<profile>[0-9]{1,2}g\.[0-9]{1,4}gb(?:\+[a-z.]+)?)\.count$")
#: A custom layout: (GPU indexes or "all", profile -> instances per GPU) per group of GPUs.
Layout = list[tuple[list[int] | str, dict[str, int]]]


def mig_totals(node: NodeFacts) -> dict[str, int]:
    """Profile -> MIG devices of a node: GFD's ``nvidia.com/mig-<profile>.count`` labels, else the allocatable
    ``nvidia.com/mig-<profile>`` resources."""
    totals = {match.group("profile"): as_int(value, 0) for key, value in node.labels.items()
              if (match := _MIG_COUNT.match(key))}
    if not totals:
        totals = {name[len(MIG_RESOURCE_PREFIX):]: count for name, count in node.allocatable.items()
                  if name.startswith(MIG_RESOURCE_PREFIX) and not name.endswith(SHARED_SUFFIX)}
    return {profile: count for profile, count in sorted(totals.items()) if count > 0}


def _fits(product: str, layout: dict[str, int]) -> bool:
    return bool(layout) and check_mig_layout(product, layout).ok is True


def _split_in_two(product: str, totals: dict[str, int], gpus: int, limits: dict[str, int]) -> Layout | None:
    """Two groups of GPUs, each with one per-GPU layout, whose devices add up to ``totals`` on ``gpus`` GPUs."""
    names = sorted(totals)
    ranges = [range(min(limits[n], totals[n]) + 1) for n in names]
    candidates = [layout for combo in itertools.product(*ranges)
                  if _fits(product, layout := {n: c for n, c in zip(names, combo, strict=True) if c})]
    for first in range(gpus - 1, 0, -1):
        for layout in candidates:
            rest = {n: totals[n] - first * layout.get(n, 0) for n in names}
            if any(v < 0 for v in rest.values()) or any(v % (gpus - first) for v in rest.values()):
                continue
            other = {n: v // (gpus - first) for n, v in rest.items() if v}
            if _fits(product, other):
                return [(list(range(first)), layout), (list(range(first, gpus)), other)]
    return None


def infer_custom_layout(pool: DraftPool) -> Layout | None:
    """A custom MIG layout that explains the MIG devices of a mixed-strategy pool, from GFD's per-profile counts.

    Node labels give only totals per profile, not which GPU holds what, so this takes the simplest layout that
    adds up on the GPUs that run MIG (the node's GPUs less those it advertises whole) and fits each GPU (the
    support matrix's profiles, per-GPU limits and slices), in this order: the same layout on every GPU; each
    profile on a group of GPUs as many times as it fits; two groups of GPUs with one layout each.  None when
    none adds up.
    """
    key = pool.key
    if key.mig_strategy != "mixed":
        return None
    counted = [n for n in pool.nodes if mig_totals(n)]
    if not counted:
        return None
    reference = majority([tuple(mig_totals(n).items()) for n in counted])
    node = next(n for n in counted if tuple(mig_totals(n).items()) == reference)
    totals = dict(reference)
    profiles = {p.name: p.max_instances for p in (mig_profiles(key.product) or [])}
    if any(p not in profiles for p in totals):
        return None
    gpus = key.count - node.allocatable.get("nvidia.com/gpu", 0)
    if gpus <= 0:
        return None
    if all(count % gpus == 0 for count in totals.values()):
        uniform = {p: count // gpus for p, count in totals.items()}
        if _fits(key.product, uniform):
            return [("all" if gpus == key.count else list(range(gpus)), uniform)]
    groups: Layout = []
    next_gpu = 0
    for profile, total in totals.items():
        per_gpu = profiles[profile]
        if total % per_gpu:
            groups = []
            break
        used = total // per_gpu
        groups.append((list(range(next_gpu, next_gpu + used)), {profile: per_gpu}))
        next_gpu += used
    if groups and next_gpu <= gpus:
        return groups
    return _split_in_two(key.product, totals, gpus, profiles)


def mig_map(pool: DraftPool) -> CommentedMap:
    """The ``mig`` map of a MIG pool's draft: its named layout, or the custom layout inferred from its nodes."""
    key = pool.key
    mig = cmap(("strategy", key.mig_strategy))
    if mig_layout(key.mig_config) is not None:
        mig["layout"] = key.mig_config
        todo(mig, "layout", "TODO: review: the nvidia.com/mig.config the nodes use")
        return mig
    groups = infer_custom_layout(pool)
    if groups is None:
        mig["layout"] = key.mig_config
        todo(mig, "layout", f"TODO: {key.mig_config!r} is not a named layout; write its custom: layout")
        return mig
    custom = CommentedSeq()
    for devices, profiles in groups:
        group = cmap(("devices", CommentedSeq(devices) if isinstance(devices, list) else devices),
                     ("profiles", cmap(*profiles.items())))
        if isinstance(devices, list):
            group["devices"].fa.set_flow_style()
        custom.append(group)
    mig["custom"] = custom
    if key.mig_config != f"custom-{pool.name}":
        mig["configName"] = key.mig_config
        from_cluster(mig, "configName", "node label nvidia.com/mig.config (kept: a new name would relabel the "
                                        "nodes and MIG Manager would repartition them)")
    todo(mig, "custom", f"TODO: review: inferred from GFD's per-profile MIG device counts of config "
                         f"{key.mig_config!r}; which GPU holds which profile is not in the node labels")
    return mig
