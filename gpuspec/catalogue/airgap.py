"""Air-gap and image findings (GS4xx): an air-gapped cluster pulls everything from its mirror; no credentials in git."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry, Param
from gpuspec.findings import Severity

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

MIRROR_COVERS_REGISTRIES = Entry(
    id="GS401",
    title="Air-gap mirror covers every registry of the operator release",
    severity=Severity.ERROR,
    rationale="An air-gapped node cannot pull from a registry the mirror does not serve; the rollout stalls.",
    doc="""
Every registry the operator release pulls from is mapped by the cluster's mirror.

For an air-gapped cluster (`mirror:` set) gpuspec looks up, in the support
matrix, every image the cluster's GPU Operator release pins (operator,
validator, driver, toolkit, device plugin, DCGM, MIG manager, … and the
Node Feature Discovery subchart image when `operator.operands.nfd` is on)
and checks that the image's registry is a key of the mirror's
`registries` map in `fleet.yaml`; on OpenShift also `registry.redhat.io`, the registry of the OpenShift CLI
image gpuspec's InstallPlan approval Job runs (rendered through the mirror, with its pull secrets, and
listed in `images.txt`).  It also reports a mirror whose
target prefix is itself a public registry, since such a "mirror" still
reaches the internet.  Releases the matrix does not know are left to the
support-matrix checks.

Failing (fleet.yaml):

```yaml
mirrors:
  - name: dc-north
    registries:
      nvcr.io: harbor.dc-north.example/nvcr   # registry.k8s.io (NFD) missing
```

Passing:

```yaml
registries:
  nvcr.io: harbor.dc-north.example/nvcr
  registry.k8s.io: harbor.dc-north.example/k8s
```
""",
    params=(
        Param(
            "public_hosts",
            list,
            PUBLIC_HOSTS,
            "Hosts that are public registries, never mirrors.",
        ),
    ),
    tags=("air-gap", "images"),
)

CHART_FROM_MIRROR = Entry(
    id="GS402",
    title="Air-gapped cluster pulls the chart from its mirror",
    severity=Severity.ERROR,
    rationale="Argo CD / Flux in an air-gapped cluster cannot fetch a chart from the internet.",
    doc="""
The GPU Operator chart of an air-gapped cluster comes from its mirror, not a public repository.

The chart source is `mirrors[].chart.repository` in `fleet.yaml`; it must
not be a public host such as `helm.ngc.nvidia.com` or `nvcr.io`.

Failing:

```yaml
chart:
  repository: https://helm.ngc.nvidia.com/nvidia
```

Passing:

```yaml
chart:
  repository: oci://harbor.dc-north.example/charts/nvidia
```
""",
    params=(
        Param(
            "public_hosts",
            list,
            PUBLIC_HOSTS,
            "Hosts that are public chart repositories.",
        ),
    ),
    tags=("air-gap", "chart"),
)

PULL_SECRETS_BY_NAME = Entry(
    id="GS403",
    title="Pull secrets are Secret names, not credentials",
    severity=Severity.ERROR,
    rationale="A credential in a git-tracked spec is leaked to everyone who can read the repository.",
    doc="""
Pull secrets (and Flux kubeconfig secrets) are referenced by Secret name, never by value.

The schema already only accepts DNS-1123 names; this rule catches a token
pasted where a name belongs (a long run of letters and digits without
dashes, such as a hex or base32 token), which the name syntax cannot
refuse.

Failing:

```yaml
pullSecrets: [3f9a0c1e7b2d4a6f8e0c1b3d5f7a9c2e]
```

Passing:

```yaml
pullSecrets: [harbor-dc-north-pull]
```
""",
    tags=("air-gap", "secrets", "sensitive"),
)

PACKAGE_REPO_FOR_COMPILED_DRIVERS = Entry(
    id="GS404",
    title="Operator-compiled drivers in air-gap have a package-repo config",
    severity=Severity.ERROR,
    rationale="The driver container cannot build kernel modules without a reachable package repository.",
    doc="""
Pools whose driver the operator compiles on the node need a package-repository ConfigMap in air-gap.

With `driver.source: operator` the driver container installs kernel
headers from the OS package repositories.  An air-gapped node reaches
none, so the mirror must name `packageRepoConfigMap` (rendered as
`driver.repoConfig`).  Precompiled and host drivers need no packages.

Failing: an air-gapped cluster with a `source: operator` pool and a
mirror without `packageRepoConfigMap`.  Passing: the mirror sets
`packageRepoConfigMap: ubuntu-jammy-mirror` or the pool uses
`source: precompiled`.
""",
    tags=("air-gap", "driver"),
)

NO_CREDENTIALS_IN_SPEC = Entry(
    id="GS405",
    title="No credentials, tokens or private keys in the spec",
    severity=Severity.ERROR,
    rationale="Anything in git is readable by every clone and every CI log; credentials belong in Secrets.",
    doc="""
No credential is written anywhere in the spec.

Every string of every spec file is scanned: PEM private keys, values of
password/secret/token/API-key-like keys, bearer tokens, AWS, GitHub,
GitLab, Slack and NGC tokens, JSON Web Tokens, Docker `auths` configs and
URLs carrying `user:password@`.  The finding names the kind of secret,
never the secret.

Failing:

```yaml
git:
  repoURL: https://deploy:s3cr3t@git.example/fleet.git
```

Passing:

```yaml
git:
  repoURL: https://git.example/fleet.git
```
""",
    tags=("secrets", "sensitive"),
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    MIRROR_COVERS_REGISTRIES,
    CHART_FROM_MIRROR,
    PULL_SECRETS_BY_NAME,
    PACKAGE_REPO_FOR_COMPILED_DRIVERS,
    NO_CREDENTIALS_IN_SPEC,
)
