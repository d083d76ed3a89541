"""Which of the fleet's air-gap mirrors a running cluster pulls from, read off its operand image repositories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuspec.matrix.chartvalues import chart_index
from gpuspec.matrix.component_query import component_images

#: The values path of NFD's image (the node-feature-discovery subchart's ``image.repository``).
NFD = "node-feature-discovery"


def nfd_default_repository(release: str | None) -> str | None:
    """The repository NFD's image comes from at ``release`` (``registry.k8s.io/nfd/node-feature-discovery``)."""
    images = component_images(release, include_nfd=True) if release else None
    image = images.get(NFD) if images else None
    if image is None or not image.repository or not image.image:
        return None
    return f"{image.repository.rstrip('/')}/{image.image}"


def registry_prefixes(repositories: Mapping[str, str], release: str | None) -> dict[str, str]:
    """Upstream registry host -> mirror prefix, as the cluster's repositories rewrite the chart's defaults.

    ``repositories`` maps an operand (``driver``, ``dcgm`` ...; ``node-feature-discovery`` for NFD's image
    repository) to the repository the cluster runs it from; the chart's default repository of that operand at
    ``release`` says which upstream path it mirrors: ``harbor.example/nvcr/nvidia/cloud-native`` for
    ``nvcr.io/nvidia/cloud-native`` is ``nvcr.io -> harbor.example/nvcr``, and
    ``harbor.example/k8s/nfd/node-feature-discovery`` for NFD is ``registry.k8s.io -> harbor.example/k8s``.
    Operands whose repository does not end in the default's path are left out.
    """
    index = chart_index(release) if release else None
    if index is None:
        return {}
    found: dict[str, str] = {}
    for operand, repo in sorted(repositories.items()):
        default = nfd_default_repository(release) if operand == NFD else index.keys.get(f"{operand}.repository")
        if not isinstance(default, str) or "/" not in default or repo == default:
            continue
        host, path = default.split("/", 1)
        if repo.endswith("/" + path) and len(repo) > len(path) + 1:
            found.setdefault(host, repo[: -(len(path) + 1)])
    return found


def matching_mirror(prefixes: Mapping[str, str], mirrors: Sequence[Any],
                    settings: Mapping[str, str | None] | None = None) -> str | None:
    """The name of the first fleet mirror whose registries rewrite every host of ``prefixes`` the same way and whose
    ``settings`` (``packageRepoConfigMap``, ``caConfigMap``: what the cluster's driver runs with, None for none) are
    the cluster's."""
    if not prefixes:
        return None
    for mirror in mirrors:
        if not isinstance(mirror, Mapping) or not isinstance(mirror.get("registries"), Mapping):
            continue
        if any((mirror.get(key) or None) != (value or None) for key, value in (settings or {}).items()):
            continue
        registries = mirror["registries"]
        if all(str(registries.get(host, "")).rstrip("/") == prefix.rstrip("/") for host, prefix in prefixes.items()):
            name = mirror.get("name")
            return str(name) if name else None
    return None
