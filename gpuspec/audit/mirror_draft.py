"""A fleet mirror drafted from what a running cluster pulls, for a fleet that does not declare it yet.

The registries and pull secrets are read off the cluster (its operand image repositories against the chart's
defaults, its ClusterPolicy's pull secrets); where the chart itself is mirrored is in no export, so the chart
repository stays a placeholder that validate refuses until a person fills it in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from gpuspec.audit.adopt import TODO

#: Mirror fields that carry a driver setting -> the ClusterPolicy field it renders.
MIRROR_SETTINGS = {"packageRepoConfigMap": "driver.repoConfig.configMapName", "caConfigMap": "driver.certConfig.name"}
#: The mirror name's longest form (a DNS label, like every spec name).
_NAME_LIMIT = 40


def mirror_name(prefixes: Mapping[str, str], taken: Iterable[str]) -> str:
    """A name for the mirror that rewrites registries as ``prefixes`` do: its host as a DNS label, made unique."""
    host = sorted(prefixes.values())[0].split("/", 1)[0] if prefixes else "mirror"
    base = re.sub(r"[^a-z0-9-]+", "-", host.lower()).strip("-")[:_NAME_LIMIT].strip("-") or "mirror"
    used = set(taken)
    name, number = base, 2
    while name in used:
        suffix = f"-{number}"
        name, number = base[: _NAME_LIMIT - len(suffix)].rstrip("-") + suffix, number + 1
    return name


def draft_mirror(cluster: str, prefixes: Mapping[str, str], pull_secrets: Sequence[str],
                 taken: Iterable[str], settings: Mapping[str, str | None] | None = None) -> CommentedMap:
    """The fleet.yaml ``mirrors`` entry for a cluster whose images come through ``prefixes``, commented;
    ``settings`` are the mirror's ``packageRepoConfigMap`` and ``caConfigMap`` as the cluster's driver runs them."""
    mirror = CommentedMap()
    mirror["name"] = mirror_name(prefixes, taken)
    registries = CommentedMap()
    for host, prefix in sorted(prefixes.items()):
        registries[host] = prefix
    mirror["registries"] = registries
    mirror.yaml_add_eol_comment(f"from cluster {cluster}: its operand images come from these prefixes",
                                "registries")
    chart = CommentedMap()
    chart["repository"] = TODO
    chart.yaml_add_eol_comment("where the GPU Operator chart is mirrored (oci://... or https://...): no export "
                               "shows it", "repository")
    mirror["chart"] = chart
    if pull_secrets:
        mirror["pullSecrets"] = CommentedSeq(sorted(set(pull_secrets)))
        mirror.yaml_add_eol_comment(f"from cluster {cluster}: its ClusterPolicy's imagePullSecrets", "pullSecrets")
    for key, value in sorted((settings or {}).items()):
        if value:
            mirror[key] = value
            mirror.yaml_add_eol_comment(f"from cluster {cluster}: {MIRROR_SETTINGS[key]} of its driver", key)
    return mirror
