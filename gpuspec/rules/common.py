"""Small helpers shared by the rule modules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from gpuspec.rules.base import Rule, RuleContext
from gpuspec.spec.models import Cluster, Fleet, Mirror

#: Public registries and chart hosts: a mirror that points at one of them is no mirror.
PUBLIC_HOSTS: tuple[str, ...] = (
    "nvcr.io",
    "helm.ngc.nvidia.com",
    "registry.k8s.io",
    "k8s.gcr.io",
    "gcr.io",
    "docker.io",
    "registry-1.docker.io",
    "index.docker.io",
    "ghcr.io",
    "quay.io",
    "public.ecr.aws",
    "kubernetes-sigs.github.io",
)


def param(rule: Rule, ctx: RuleContext, name: str) -> Any:
    """The value of parameter ``name`` for ``rule``: the policy's, else the rule's default."""
    if name in ctx.params:
        return ctx.params[name]
    return type(rule).defaults()[name]


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
