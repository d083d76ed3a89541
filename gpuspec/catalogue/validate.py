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

_OVERRIDES_SOURCE = (
    "GPU Operator Helm chart values.yaml of the pinned release (key paths and defaults, "
    "gpuspec/matrix/data/chart-values/); NVIDIADriver spec fields from the support matrix (nvidiadriver.yaml)"
)

OVERRIDE_UNKNOWN_PATH = Entry(
    id="GS130",
    title="Override path unknown to the pinned chart",
    severity=Severity.ERROR,
    rationale=(
        "Helm ignores values keys its chart does not know, so a misspelt override would silently do nothing. "
        "Every override path must exist in the pinned release's chart values (or NVIDIADriver spec)."
    ),
    doc="""
Each `overrides[].path` of a cluster is looked up in the values of the GPU Operator chart the
cluster pins (every key path of that release's values.yaml, including the keys it documents in
comments); each `pools[].driverOverrides[].path` in the NVIDIADriver spec fields of that release.
Below free-form Kubernetes maps (`resources`, `env`, `nodeSelector`, `tolerations`, `annotations`,
`labels`, `affinity` …) and below subchart keys (`node-feature-discovery`) any key is accepted.
A path that goes into a list or below a plain value is refused too: override the whole list.
The hint names the closest known key.

Failing:

```yaml
overrides:
  - path: daemonsets.priorityClasName
    value: gpu-operands
    reason: operands must outrank tenant workloads
```

Passing: `path: daemonsets.priorityClassName`.
""",
    source=_OVERRIDES_SOURCE,
    tags=("deviations",),
)

OVERRIDE_MANAGED_PATH = Entry(
    id="GS131",
    title="Override of a value gpuspec manages",
    severity=Severity.ERROR,
    rationale=(
        "Values gpuspec renders from spec fields (versions, images, repositories, MIG strategy and "
        "layouts, sharing, drivers, upgrade policy, mirror settings, tolerations of pool taints) are "
        "checked against the support matrix and planned; an override would bypass all of that."
    ),
    doc="""
An override may not set, contain or reach into a path that gpuspec renders itself. The message names
the spec field to change instead.

Failing:

```yaml
overrides:
  - path: driver.version
    value: 580.95.05
    reason: pin the driver
```

Passing: set `pools[].driver.version` (or the channel's driver) instead.
""",
    source=_OVERRIDES_SOURCE,
    tags=("deviations",),
)

OVERRIDE_WRONG_TYPE = Entry(
    id="GS132",
    title="Override value has another type than the chart default",
    severity=Severity.ERROR,
    rationale=(
        "A value of the wrong type (a number where the chart expects a string, a string where it expects "
        "a map) renders templates the chart was never tested with, or fails only on the cluster."
    ),
    doc="""
The override's value must have the type of the chart's default at that path: string, integer
(a number default accepts an integer), boolean, list or map. Maps are checked key by key.
Paths whose default is empty (null) or free-form take any value.

Failing: `daemonsets.rollingUpdate.maxUnavailable: 2` (the chart default is the string `"1"`).
Passing: `value: "2"`.
""",
    source=_OVERRIDES_SOURCE,
    tags=("deviations",),
)

OVERRIDE_REPEATED_PATH = Entry(
    id="GS133",
    title="Override paths repeat or overlap",
    severity=Severity.ERROR,
    rationale="Two overrides of the same value, or of a map and a key inside it, leave it unclear which one wins.",
    doc="""
Within a cluster's `overrides` (and within a pool's `driverOverrides`) no path may equal another
or lie below another.

Failing: `operator.resources` and `operator.resources.limits.cpu` both overridden.
Passing: one override of `operator.resources` with the whole map.
""",
    tags=("deviations",),
)

OVERRIDE_UNVERIFIED = Entry(
    id="GS134",
    title="Override cannot be verified against the chart",
    severity=Severity.WARNING,
    rationale=(
        "gpuspec has no values index for the pinned release, so override paths and types cannot be "
        "checked; they are rendered as written."
    ),
    doc="""
gpuspec carries the chart values of the releases in `gpuspec/matrix/data/chart-values/`. For any
other release the overrides are reported once per cluster as not verifiable (never guessed from a
neighbouring release). Pin an indexed release, or check the paths with `gpuspec verify` against
the real chart.
""",
    source=_OVERRIDES_SOURCE,
    tags=("deviations",),
)

OVERRIDE_NO_NVIDIADRIVER = Entry(
    id="GS135",
    title="Driver override on a pool without an NVIDIADriver",
    severity=Severity.ERROR,
    rationale=(
        "`pools[].driverOverrides` set fields of the pool's own NVIDIADriver, which gpuspec renders only "
        "when the cluster's pools need different drivers; otherwise the overrides would go nowhere."
    ),
    doc="""
Failing: a cluster whose pools all run the same operator-managed driver, with `driverOverrides` on a pool.
Passing: the same setting as a cluster override of a `driver.*` chart value, or pools with different drivers.
""",
    tags=("deviations",),
)

CONSUMER_REFUSES = Entry(
    id="GS136",
    title="Value its consumer cannot parse",
    severity=Severity.ERROR,
    rationale=(
        "A string that validates in gpuspec's schema reaches a program that parses it: the driver upgrade "
        "controller's pod selectors (a label selector the API server parses for every pod list), the maintenance "
        "window's time zone, and each string an override writes into the chart's values or an NVIDIADriver "
        "(durations, quantities, selectors, image parts, names). gpuspec checks each as its consumer parses it "
        "(gpuspec/kube/data/rendered-fields.yaml names the consumer of every rendered field); a value the consumer "
        "refuses fails only at upgrade time (nodes left cordoned in upgrade-failed) or on every sync."
    ),
    doc="""
Consumers and their documented behaviour (each check's accepted and refused values are in
`gpuspec/kube/data/consumers.yaml`):

- label selectors: apimachinery `labels.Parse` (`app=training`, `env in (prod, staging),!canary`; refused:
  `app in prod`, `app=training tier=batch`, `count>three`);
- time zones: the IANA tz database (`Europe/Berlin`; refused: `Europe/Berln`, `CEST`);
- Prometheus durations (`dcgmExporter.serviceMonitor.interval`: `30s`, `1h30m`; refused: `1.5h`, `30`);
- quantities (`*.resources`: `500m`, `32Gi`; refused: `1GB`, `32gi`, `-1`).

Failing: `rollout.waitForCompletion.podSelector: app in training`, `rollout.window.timeZone: Europe/Berln`, an
override `dcgmExporter.serviceMonitor.interval: 1.5m`. Passing: `app in (training)`, `Europe/Berlin`, `90s`.
""",
    tags=("deviations", "upgrades"),
    source="apimachinery v0.35.2 pkg/labels/selector.go (Parse); NVIDIA k8s-operator-libs pkg/upgrade (drain and "
    "wait-for-completion pod lists); IANA tz database (zoneinfo); prometheus/common model/time.go (ParseDuration); "
    "apimachinery pkg/api/resource/quantity.go (ParseQuantity)",
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
    OVERRIDE_UNKNOWN_PATH,
    OVERRIDE_MANAGED_PATH,
    OVERRIDE_WRONG_TYPE,
    OVERRIDE_REPEATED_PATH,
    OVERRIDE_UNVERIFIED,
    OVERRIDE_NO_NVIDIADRIVER,
    CONSUMER_REFUSES,
)
