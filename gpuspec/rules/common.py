"""Small helpers shared by the rule modules."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlparse

from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.model.settings import Mirror


def host_of(reference: str) -> str | None:
    """The host of a registry prefix, image repository or chart URL (``oci://h/p``, ``https://h/p``, ``h/p``)."""
    text = reference.strip()
    if "://" in text:
        host = urlparse(text).hostname
        return host.lower() if host else None
    first = text.split("/", 1)[0]
    return first.split(":", 1)[0].lower() or None


def is_public_host(host: str | None, public: tuple[str, ...] | list[str]) -> bool:
    """True when ``host`` is one of ``public`` or a subdomain of one."""
    if not host:
        return False
    return any(host == p or host.endswith("." + p) for p in public)


def air_gapped(fleet: Fleet) -> Iterator[tuple[Cluster, Mirror]]:
    """Every air-gapped cluster whose mirror resolves, with that mirror."""
    for cluster in fleet.clusters:
        mirror = fleet.mirror(cluster.mirror)
        if mirror is not None:
            yield cluster, mirror


def mirror_index(fleet: Fleet, mirror: Mirror) -> int:
    """The index of ``mirror`` in fleet.yaml's ``mirrors`` list."""
    return fleet.settings.mirrors.index(mirror)
