"""Air-gap and image rules (GS4xx): an air-gapped cluster pulls everything from its mirror; no credentials in git."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from gpuspec.catalogue import airgap as cat
from gpuspec.matrix.component_query import component_images
from gpuspec.model.pool_specs import DriverSource
from gpuspec.model.resolve import operator_version, pool_path
from gpuspec.render.openshift import CLI_IMAGE
from gpuspec.rules.base import Problem, Rule, RuleContext
from gpuspec.rules.common import air_gapped, host_of, is_public_host, mirror_index
from gpuspec.rules.secrets import scan_files


def _covered(repository: str, prefixes: list[str]) -> bool:
    """True when an image repository starts with one of the mirror's upstream registry keys."""
    repo = repository.strip("/")
    return any(repo == p.strip("/") or repo.startswith(p.strip("/") + "/") for p in prefixes)


class MirrorCoversRegistries(Rule):
    """Every registry the operator release pulls from is mapped by the cluster's mirror."""

    entry = cat.MIRROR_COVERS_REGISTRIES

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per unmapped registry of each air-gapped cluster, and per public mirror target."""
        public = list(self.param(ctx, "public_hosts"))
        reported: set[str] = set()
        for cluster, mirror in air_gapped(ctx.fleet):
            version = operator_version(ctx.fleet, cluster)
            images = component_images(version, include_nfd=cluster.operator.operands.nfd) if version else None
            missing: dict[str, list[str]] = {}
            for component, image in sorted((images or {}).items()):
                if not image.repository:
                    continue
                if not _covered(image.repository, list(mirror.registries)):
                    host = host_of(image.repository) or image.repository
                    missing.setdefault(host, []).append(component)
            openshift = cluster.kubernetes.distribution.value == "openshift"
            if openshift and not _covered(CLI_IMAGE, list(mirror.registries)):
                # gpuspec's InstallPlan approval Job runs Red Hat's OpenShift CLI image (render/openshift.py).
                missing.setdefault(host_of(CLI_IMAGE) or CLI_IMAGE, []).append("the InstallPlan approval Job (ose-cli)")
            for host, components in sorted(missing.items()):
                yield Problem(
                    f"operator {version} pulls {', '.join(components)} from {host}, "
                    f"which mirror {mirror.name!r} does not map",
                    cluster.source_file, ("mirror",),
                    hint=f"add '{host}: <mirror prefix>' to mirrors[{mirror.name}].registries in fleet.yaml",
                )
            if mirror.name in reported:
                continue
            reported.add(mirror.name)
            index = mirror_index(ctx.fleet, mirror)
            for upstream, target in mirror.registries.items():
                if is_public_host(host_of(target), public):
                    yield Problem(
                        f"mirror {mirror.name!r} maps {upstream} to the public registry {host_of(target)}",
                        ctx.fleet.settings_file, ("mirrors", index, "registries", upstream),
                        hint="point it at the internal registry that mirrors the images",
                    )


class ChartFromMirror(Rule):
    """The GPU Operator chart of an air-gapped cluster comes from its mirror, not a public repository."""

    entry = cat.CHART_FROM_MIRROR

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per mirror used by an air-gapped cluster whose chart repository is public."""
        public = list(self.param(ctx, "public_hosts"))
        seen: set[str] = set()
        for cluster, mirror in air_gapped(ctx.fleet):
            if mirror.name in seen:
                continue
            seen.add(mirror.name)
            host = host_of(mirror.chart.repository)
            if is_public_host(host, public):
                yield Problem(
                    f"mirror {mirror.name!r} (used by air-gapped cluster {cluster.name!r}) takes the chart "
                    f"from the public host {host}",
                    ctx.fleet.settings_file, ("mirrors", mirror_index(ctx.fleet, mirror), "chart", "repository"),
                    hint="mirror the gpu-operator chart into an internal Helm or OCI repository and point at it",
                )


_TOKEN_LIKE = re.compile(r"^[a-z0-9]{20,}$")


def looks_like_credential(name: str) -> bool:
    """True when a would-be Secret name looks like a token (long, no dashes, letters and digits mixed)."""
    return bool(_TOKEN_LIKE.match(name)) and any(c.isdigit() for c in name) and any(c.isalpha() for c in name)


class PullSecretsByName(Rule):
    """Pull secrets (and Flux kubeconfig secrets) are referenced by Secret name, never by value."""

    entry = cat.PULL_SECRETS_BY_NAME

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per secret reference that looks like a credential value."""
        for m_index, mirror in enumerate(ctx.fleet.settings.mirrors):
            for s_index, name in enumerate(mirror.pull_secrets):
                if looks_like_credential(name):
                    yield Problem(
                        f"pull secret of mirror {mirror.name!r} looks like a token, not a Secret name",
                        ctx.fleet.settings_file, ("mirrors", m_index, "pullSecrets", s_index),
                        hint="create the Secret out of band and list its name here; rotate the exposed credential",
                    )
        for cluster in ctx.fleet.clusters:
            secret = cluster.gitops.flux.kube_config_secret
            if secret and looks_like_credential(secret):
                yield Problem(
                    "flux.kubeConfigSecret looks like a token, not a Secret name",
                    cluster.source_file, ("gitops", "flux", "kubeConfigSecret"),
                    hint="create the Secret out of band and name it here; rotate the exposed credential",
                )


class PackageRepoForCompiledDrivers(Rule):
    """Pools whose driver the operator compiles on the node need a package-repository ConfigMap in air-gap."""

    entry = cat.PACKAGE_REPO_FOR_COMPILED_DRIVERS
    per_cluster = True

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per operator-compiled pool of an air-gapped cluster whose mirror lacks a repo config."""
        for cluster, mirror in air_gapped(ctx.fleet):
            if mirror.package_repo_config_map is not None:
                continue
            for pool in cluster.pools:
                if pool.driver.source is DriverSource.OPERATOR:
                    yield Problem(
                        f"pool {pool.name!r} compiles its driver on the node, but mirror {mirror.name!r} "
                        "has no packageRepoConfigMap",
                        cluster.source_file, pool_path(cluster, pool, "driver", "source"),
                        hint=f"set mirrors[{mirror.name}].packageRepoConfigMap, or use driver.source: precompiled",
                    )


class NoCredentialsInSpec(Rule):
    """No credential is written anywhere in the spec."""

    entry = cat.NO_CREDENTIALS_IN_SPEC

    def check(self, ctx: RuleContext) -> Iterator[Problem]:
        """Yield a problem per credential found in the raw data of each spec file."""
        keys, scope = ctx.fleet.content_keys, os.path.abspath(ctx.fleet.root)
        for file, hits in scan_files(ctx.raw, keys, scope).items():
            for hit in hits:
                yield Problem(
                    f"{hit.kind} is written in the spec",
                    file, hit.path, at_key=hit.at_key,
                    hint="remove it, rotate it, and reference a Kubernetes Secret by name instead",
                )


RULES: list[Rule] = [
    MirrorCoversRegistries(),
    ChartFromMirror(),
    PullSecretsByName(),
    PackageRepoForCompiledDrivers(),
    NoCredentialsInSpec(),
]
