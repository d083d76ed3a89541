"""Which of the fleet's air-gap mirrors a running cluster pulls from, read off its operand image repositories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuspec.matrix.chartvalues import chart_index


def registry_prefixes(repositories: Mapping[str, str], release: str | None) -> dict[str, str]:
    """Upstream registry host -> mirror prefix, as the cluster's repositories rewrite the chart's defaults.

    ``repositories`` maps an operand (``driver``, ``dcgm`` ...) to the repository the cluster runs it from; the
    chart's default repository of that operand at ``release`` says which upstream path it mirrors:
    ``harbor.example/nvcr/nvidia/cloud-native`` for ``nvcr.io/nvidia/cloud-native`` is ``nvcr.io ->
    harbor.example/nvcr``. Operands whose repository does not end in the default's path are left out.
    """
    index = chart_index(release) if release else None
    if index is None:
        return {}
    found: dict[str, str] = {}
    for operand, repo in sorted(repositories.items()):
        default = index.keys.get(f"{operand}.repository")
        if not isinstance(default, str) or "/" not in default or repo == default:
            continue
        host, path = default.split("/", 1)
        if repo.endswith("/" + path) and len(repo) > len(path) + 1:
            found.setdefault(host, repo[: -(len(path) + 1)])
    return found


def matching_mirror(prefixes: Mapping[str, str], mirrors: Sequence[Any]) -> str | None:
    """The name of the first fleet mirror whose registries rewrite every host of ``prefixes`` the same way."""
    if not prefixes:
        return None
    for mirror in mirrors:
        if not isinstance(mirror, Mapping) or not isinstance(mirror.get("registries"), Mapping):
            continue
        registries = mirror["registries"]
        if all(str(registries.get(host, "")).rstrip("/") == prefix.rstrip("/") for host, prefix in prefixes.items()):
            name = mirror.get("name")
            return str(name) if name else None
    return None
