"""Findings of `gpuspec validate` (GS1xx): unusable input (GS100-GS106, exit 2) and references (GS110-GS115)."""

from __future__ import annotations

from gpuspec.catalogue.entry import Entry
from gpuspec.findings import Severity

YAML_UNREADABLE = Entry(
    id="GS100",
    title="YAML cannot be read as fleet data",
    severity=Severity.ERROR,
    rationale=(
        "A YAML syntax error, a custom or language tag (!Ref, !!python/...), more than one document in a "
        "file, an anchor/alias expansion past 200,000 nodes, a mapping that contains itself (alias or merge "
        "key) or nesting deeper than 64 levels. The input is unusable (exit 2)."
    ),
    input_error=True,
)

FILE_UNUSABLE = Entry(
    id="GS101",
    title="File is unusable",
    severity=Severity.ERROR,
    rationale=(
        "The file is empty, larger than 1 MiB, not UTF-8, a directory, a broken link, a symbolic link that "
        "leads outside the repository, or not a regular file (a FIFO, socket or device), or the fleet has no "
        "cluster files. gpuspec reads none of these. The input is unusable (exit 2)."
    ),
    input_error=True,
)

DUPLICATE_KEY = Entry(
    id="GS102",
    title="Duplicate key",
    severity=Severity.ERROR,
    rationale=(
        "A mapping names the same key twice; YAML parsers disagree on which value wins, so gpuspec refuses it (exit 2)."
    ),
    input_error=True,
)

UNKNOWN_KEY = Entry(
    id="GS103",
    title="Unknown key",
    severity=Severity.ERROR,
    rationale=(
        "Every spec object forbids keys it does not define, so a typo is an error and never a silently "
        "ignored setting. The hint names the closest known key (exit 2)."
    ),
    input_error=True,
)

BAD_VALUE = Entry(
    id="GS104",
    title="Wrong type or value",
    severity=Severity.ERROR,
    rationale=(
        "A value has the wrong type or breaks a pattern, enumeration or range: names must be DNS-1123 labels, "
        'Kubernetes versions look like "1.31", operator releases like "v25.10.1" (exit 2).'
    ),
    doc="""
A value has the wrong type or breaks a pattern, enumeration or range (the input is unusable, exit 2).

Among the patterns: a mirror's `registries` map an upstream registry host to a mirror *prefix* -- a registry host
and path as image references take it (`harbor.example.internal/nvcr`), no scheme, no tag, no digest -- because
gpuspec replaces the upstream host with it in every image reference.

Failing: `registries: {nvcr.io: "https://harbor.example.internal/nvcr:latest"}`.
Passing: `registries: {nvcr.io: harbor.example.internal/nvcr}`.
""",
    input_error=True,
    source="cloud-native-docs gpu-operator/install-gpu-operator-air-gapped.rst (local image registry; "
    "repository values are <registry>/<path>)",
)

MISSING_KEY = Entry(
    id="GS105",
    title="Missing required key",
    severity=Severity.ERROR,
    rationale="A required key is absent (exit 2).",
    input_error=True,
)

BAD_API_VERSION = Entry(
    id="GS106",
    title="Unsupported apiVersion or kind",
    severity=Severity.ERROR,
    rationale="The file is not a gpuspec.io/v1alpha1 Fleet or Cluster (exit 2).",
    input_error=True,
)

FILE_NAME_MISMATCH = Entry(
    id="GS110",
    title="Cluster name differs from its file name",
    severity=Severity.ERROR,
    rationale="fleet/clusters/<name>.yaml must hold metadata.name <name>, so a cluster is found where its name says.",
)

DUPLICATE_NAME = Entry(
    id="GS111",
    title="Duplicate name",
    severity=Severity.ERROR,
    rationale=(
        "Pools, tenants, mirrors, channels, PriorityClasses and tenant namespaces must be unique: they become "
        "object and file names."
    ),
)

UNRESOLVED_REFERENCE = Entry(
    id="GS112",
    title="Unresolved reference",
    severity=Severity.ERROR,
    rationale=(
        "A mirror, channel, canary pool, tenant pool, PriorityClass or policy pack that is referenced does not exist."
    ),
)

VERSION_XOR_CHANNEL = Entry(
    id="GS113",
    title="Both or neither of operator.version and operator.channel",
    severity=Severity.ERROR,
    rationale="A cluster pins an operator release or follows a channel, exactly one of the two.",
)

MIG_LAYOUT_CHOICE = Entry(
    id="GS114",
    title="MIG strategy and layout disagree",
    severity=Severity.ERROR,
    rationale="A MIG layout needs strategy single or mixed, and a MIG strategy needs exactly one of layout/custom.",
)

SHARING_SETTINGS = Entry(
    id="GS115",
    title="Sharing mode and replicas disagree",
    severity=Severity.ERROR,
    rationale="time-slicing and MPS need replicas of 2 or more; replicas without a sharing mode mean nothing.",
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    YAML_UNREADABLE,
    FILE_UNUSABLE,
    DUPLICATE_KEY,
    UNKNOWN_KEY,
    BAD_VALUE,
    MISSING_KEY,
    BAD_API_VERSION,
    FILE_NAME_MISMATCH,
    DUPLICATE_NAME,
    UNRESOLVED_REFERENCE,
    VERSION_XOR_CHANNEL,
    MIG_LAYOUT_CHOICE,
    SHARING_SETTINGS,
)
