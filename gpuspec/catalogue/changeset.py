"""Change-set findings (GS8xx): they judge the change from a base revision and need `--base`."""

from __future__ import annotations

from gpuspec.catalogue import changeset_apiserver, changeset_steps
from gpuspec.catalogue.entry import Entry, Param
from gpuspec.findings import Severity

ONE_LAYER_PER_CHANGE = Entry(
    id="GS801",
    title="One platform layer per change and cluster",
    severity=Severity.ERROR,
    rationale="Several layers changed at once cannot be attributed or rolled back one by one.",
    doc="""
At most `max_dimensions` of {Kubernetes, OS or kernel, driver, operator} change per cluster in one change.

Changing several layers of the GPU stack at once makes a failure impossible to attribute and a
rollback ambiguous: which layer broke the nodes?  Upgrade Kubernetes, the node OS or kernel, the
driver and the GPU Operator in separate pull requests, each after the previous one has rolled out.

A driver that moves because it follows the operator release (a pool without a driver version pin
gets the new release's default driver) is a driver change too: every GPU node reloads it, so an
operator bump that moves the default driver touches two layers.  Pin the driver to what runs now,
bump the operator, then move the driver.  Kubernetes counts version, distribution and runtime; OS
counts version and kernel of any pool; driver counts source, branch, version and module type of any
pool (including through a channel or the release default); operator counts the effective release.

Failing: one pull request bumps `kubernetes.version` and a pool's `driver.branch`.
Passing: the same two changes in two pull requests.
""",
    params=(Param("max_dimensions", int, 1, "Most layers (kubernetes, os, driver, operator) one change may touch."),),
    tags=("change-set",),
)

OPERATOR_UPGRADE_PATH = Entry(
    id="GS802",
    title="Operator upgrade skips no release line",
    severity=Severity.ERROR,
    rationale="Upgrades are supported only within a release line or to the next one.",
    doc="""
A GPU Operator upgrade stays within its release line or goes to the next line only.

NVIDIA supports upgrades within a release line (YY.MM) or to the next line; skipping a line
(25.3 -> 25.10 -> 26.3: going from 25.3 straight to 26.3) is not supported and may leave CRDs and
operands in a state no release was tested with.  Upgrade one line at a time.  The answer comes from
the support matrix's `upgrade_supported`; a release the matrix does not know cannot be verified and
is reported too.

Failing: `v25.3.4 -> v26.3.0`.  Passing: `v25.3.4 -> v25.10.1`.
""",
    tags=("change-set",),
)

DOWNGRADE_ACKNOWLEDGED = Entry(
    id="GS803",
    title="Downgrade acknowledged with operator.rollback",
    severity=Severity.ERROR,
    rationale="An unintended downgrade reloads drivers and leaves newer CRDs behind.",
    doc="""
An operator or driver downgrade carries `operator.rollback: true` in the head spec of its cluster.

Downgrades are rollbacks: Helm does not downgrade CRDs, and a driver downgrade reloads every
node again.  They must be deliberate, so the cluster spec acknowledges them with
`operator.rollback: true` (remove it in the next change).

Failing: `operator.version: v26.3.1` after `v26.7.0` without `rollback: true`.
Passing: the same with `operator: {version: v26.3.1, rollback: true}`.
""",
    tags=("change-set",),
)

CANARY_FIRST = Entry(
    id="GS804",
    title="Canary first for driver and operator changes",
    severity=Severity.ERROR,
    rationale="A bad driver or operator must hit the canary before it hits production capacity.",
    doc="""
Driver and operator changes reach non-canary targets only after the canary runs the target in the base.

Pools: a driver change on a pool that is not the cluster's `rollout.canaryPool` needs the canary
pool to run exactly that driver (source, branch, version, module type) in the base already: change
the canary in one pull request, the other pools in a later one.  Clusters without a canary pool are
not checked here (GS501 asks for one).

A release-default driver that moves with an operator change counts as a driver change of every pool
that does not pin one: the canary must run the new default in the base already.

Waves: pool `wave` orders the rollout inside a cluster.  Written driver changes of one change reach pools
of one wave only (the lowest of the changed pools); a pool of a later wave changes in a later pull request.

Clusters: the operator runs once per cluster, so its canary is a cluster.  An operator change on a
cluster outside the fleet's first rollout wave needs a cluster of an earlier wave to run the target
release in the base already.

Canary first and pool waves are gpuspec's preferences, not NVIDIA's constraints.  Where NVIDIA leaves no way to
keep them, they yield: a cluster whose drivers the ClusterPolicy manages (one driver for every pool) on a release
before v26.7.0, which cannot move a running cluster to per-pool NVIDIADriver resources, can only change every
pool's driver at once; the upgrade controller then rolls it node by node under `maxParallelUpgrades` and
`maxUnavailable`.  Such a change is reported at warning severity with that reason, and `gpuspec upgrade` plans
it only when no path keeps the preferences.

Failing: one change moves `h100-canary` and `h100` to branch 595.  Passing: the canary moved in
the base; this change moves `h100`.
""",
    tags=("change-set",),
)

REMOVED_POOL_UNREFERENCED = Entry(
    id="GS805",
    title="Removed pool still referenced",
    severity=Severity.ERROR,
    rationale="Tenants and exceptions that name a removed pool break or linger unnoticed.",
    doc="""
A removed pool (or cluster) is no longer referenced by tenants or policy exceptions.

A tenant whose `pools` still list a removed pool loses its capacity without anyone deciding it;
a policy exception that names a removed pool is dead weight that will silently cover a future pool
of the same name.  Move the tenant and drop the exception in the same change.

Failing: pool `t4-batch` removed while tenant `batch` lists it.  Passing: tenant `batch` moved to
another pool in the same change.
""",
    tags=("change-set",),
)

RENDERED_NOT_HAND_EDITED = Entry(
    id="GS806",
    title="rendered/ is not edited by hand",
    severity=Severity.ERROR,
    rationale="Hand edits to generated output are applied by GitOps and lost on the next render.",
    doc="""
`rendered/` changes only together with `fleet/` or `policies/`.

`rendered/` is generated by `gpuspec render`; a change there without a change to its sources
is a hand edit that the next render silently overwrites (and that Argo CD / Flux applies
meanwhile).  A newer gpuspec whose output differs re-renders without source changes too: that
regeneration passes, because `gpuspec render` records the newer version in the generator stamp
`rendered/generator.yaml` together with the changed files (`gpuspec plan` lists it as a
`regenerated` change, and `render --check` proves the files are exactly that version's output).

Failing: only `rendered/clusters/train-east/gpu-operator.values.yaml` changed.
Passing: `fleet/clusters/train-east.yaml` and the rendered files changed together, or the rendered
files changed with the generator stamp naming a newer gpuspec.
""",
    tags=("change-set",),
)

MIG_NEEDS_NODE_LABEL = Entry(
    id="GS807",
    title="MIG layout change reaches the nodes only through their node label",
    severity=Severity.WARNING,
    rationale="Argo CD and Flux apply no node labels: nothing repartitions at merge unless provisioning relabels.",
    doc="""
mig-manager repartitions a node when its `nvidia.com/mig.config` label names a layout.  A change of a pool's
layout (named or custom, or MIG on/off) changes the label value its nodes must carry, which only
`rendered/clusters/<c>/node-labels.yaml` lists: GitOps does not apply node labels.  The finding names the
provisioning step (label the pool's nodes) and `gpuspec audit` reports nodes whose label differs (GS782).
A custom layout whose geometry changes under the same name is applied when the label is set again.

Before relabelling, cordon and drain the nodes: mig-manager stops the operator's GPU pods but does not evict
user workloads, and needs the GPUs free.

Failing: `mig.layout: all-1g.10gb -> all-2g.20gb` on a pool.  Passing: a change without MIG layout changes.
""",
    tags=("change-set", "mig"),
    source="cloud-native-docs gpu-operator/gpu-operator-mig.rst (MIG Manager: nvidia.com/mig.config label, "
    "nvidia.com/mig.config.state, GPUs must be free)",
)

DRIVER_MANAGEMENT_ALONE = Entry(
    id="GS808",
    title="Driver management switch is a change of its own, on a release that supports it",
    severity=Severity.ERROR,
    rationale="Switching between ClusterPolicy and NVIDIADriver management replaces the driver pod of every GPU node.",
    doc="""
A cluster moves between ClusterPolicy and NVIDIADriver driver management (`operator.driverManagement`, or with
`auto` because pools start or stop using different drivers).  Every GPU node's driver pod is replaced, so:

- the switch is the only change of the cluster in its pull request: set `driverManagement: nvidiadriver`
  with every pool's driver unchanged (the chart's default NVIDIADriver takes over all nodes), and pin a
  pool's different driver in a later change;
- the release must support the controlled migration (v26.7.0+); earlier releases terminate and redeploy the
  driver pods (not supported for an existing cluster), and NVIDIA warns not to upgrade the operator and
  enable NVIDIADriver management in the same Helm operation.

Failing: pinning `driver.version` on the canary pool only (auto switches to NVIDIADriver in the same change).
Passing: `operator.driverManagement: nvidiadriver` alone on `v26.7.0`, the canary pin in the next change.
""",
    tags=("change-set", "driver"),
    source="cloud-native-docs gpu-operator/gpu-driver-configuration.rst (migration from ClusterPolicy driver "
    "management, v26.7.0; 26.3: switching an existing cluster is not supported)",
)

NVIDIADRIVER_UPGRADE_ALONE = Entry(
    id="GS813",
    title="Operator upgrade that also changes which NVIDIADriver resources exist",
    severity=Severity.ERROR,
    rationale="With per-pool NVIDIADrivers, the upgrade to a release with a default NVIDIADriver would also turn "
    "the chart's default NVIDIADriver on and delete the NVIDIADriver of the pools it takes over; GitOps pruning "
    "then deletes that NVIDIADriver, the driver DaemonSet it owns is garbage-collected, and the driver pods on "
    "those nodes go at once, outside the upgrade policy.",
    doc="""
A cluster whose drivers are managed by NVIDIADriver resources changes its GPU Operator release in the same change
that turns the chart's default NVIDIADriver on (`driver.nvidiaDriverCRD.deployDefaultCR`) or removes the
NVIDIADriver of a pool that stays.  This is what moving a cluster with per-pool NVIDIADrivers from v26.3 to
v26.7.0 does by itself: from v26.7.0 gpuspec lets the chart's default NVIDIADriver serve the pools with the most
common driver, so those pools' own NVIDIADrivers leave the overlay.  NVIDIA says not to upgrade and change driver
ownership in one Helm operation: the old controller can remove the driver pods before the new one takes over.

The sequence:

1. upgrade the operator alone with `operator.defaultNVIDIADriver: false`: every pool keeps its NVIDIADriver and
   the chart deploys no default one;
2. later, if wanted, drop `defaultNVIDIADriver: false` in a change of its own, after cordoning and draining the
   nodes of the pools whose NVIDIADriver goes (`gpuspec plan` names them): deleting an NVIDIADriver removes its
   driver DaemonSet and its pods at once.

Failing: `operator.version` v26.3.3 -> v26.7.0 on a cluster with per-pool NVIDIADrivers.
Passing: the same upgrade with `operator.defaultNVIDIADriver: false`.
""",
    tags=("change-set", "driver"),
    source="cloud-native-docs gpu-operator/gpu-driver-configuration.rst (Migrating from Cluster Policy Driver "
    "Management: two Helm upgrades, \"Do not upgrade from an earlier release and enable NVIDIA driver custom "
    "resource management in the same Helm operation\"; About the Default NVIDIA Driver Custom Resource); "
    "gpu-operator deployments/gpu-operator/templates/nvidiadriver.yaml at v26.7.0 (l. 1-2: the default "
    "NVIDIADriver exists only with nvidiaDriverCRD.enabled and deployDefaultCR)",
)

DRIVER_TAKEN_AWAY = Entry(
    id="GS814",
    title="Change takes nodes' driver away outside the upgrade policy",
    severity=Severity.ERROR,
    rationale="The upgrade controller moves a node to a new driver pod only under the upgrade policy (one node at "
    "a time, drained first) while the same DaemonSet serves it; a change that deletes the DaemonSet's owner, or "
    "stops it selecting the nodes, takes every driver pod of those nodes away at once and GPU pods on them fail.",
    doc="""
For every operator-managed pool of a cluster in both revisions, gpuspec reads from the rendered objects which
object runs the pool's driver pods: an NVIDIADriver of the overlay whose node selector the nodes' labels match,
the chart's default NVIDIADriver (v26.7.0+), or the ClusterPolicy.  The change is refused when that owner
changes in a way the upgrade controller does not roll:

- the pool's NVIDIADriver is no longer rendered: GitOps prunes it and garbage collection deletes its DaemonSet and
  every driver pod (e.g. the last pull request of a canary rollout, which moves the other pools to the canary's
  driver, so the chart's default NVIDIADriver takes the canary over and its own NVIDIADriver goes);
- the pool's NVIDIADriver stays but no longer selects the nodes by the labels they carry now;
- driver management goes back from NVIDIADriver resources to the ClusterPolicy;
- nothing serves the nodes any more while the operator is to install their driver.

Whatever else the change does.  `gpuspec plan` lists the same pools under "Nodes that lose their driver".  The
way out: keep the owner in this change (`operator.defaultNVIDIADriver: false`, `operator.driverManagement:
nvidiadriver`), or cordon and drain the named nodes first and accept the finding in that change with an inline
`# gpuspec: ignore GS814 -- <reason>`.  NVIDIA's controlled migration from ClusterPolicy to NVIDIADriver
management (v26.7.0+) is GS808's.

Failing: the canary `l40s-canary` on its own NVIDIADriver (595) and `l40s` moves to 595 with the default
NVIDIADriver on: the canary's NVIDIADriver is pruned.  Passing: the same with `operator.defaultNVIDIADriver: false`.
""",
    tags=("change-set", "driver"),
    source="gpu-operator v26.7.0 internal/state/driver.go l. 152 and 435 (the NVIDIADriver owns its driver "
    "DaemonSets); Kubernetes garbage collection (ownerReferences, background deletion); k8s-operator-libs "
    "pkg/upgrade (the upgrade state machine acts on pods of the DaemonSet it watches)",
)

OVERRIDE_STALE_AFTER_UPGRADE = Entry(
    id="GS820",
    title="Deliberate deviation left behind by an operator upgrade",
    severity=Severity.ERROR,
    rationale=(
        "An override was written against the old chart: after the upgrade its path may be gone (Helm then "
        "ignores it silently) or the chart's own default under it may have changed, so the reason may no "
        "longer hold."
    ),
    doc="""
For every cluster whose GPU Operator release changes, each of its `overrides` is looked up in the chart
values of the old and the new release (gpuspec's packaged values index). The rule reports an override
whose path the new chart no longer has, and one whose chart default differs between the two releases.
`gpuspec plan` shows the same as `deviation` lines. Validation (GS130) independently refuses a path the
new chart does not know.

Failing: `operator.initContainer.repository` overridden while upgrading v25.10.1 -> v26.3.3 (the key is
gone in v26.3).  Passing: the override removed in the same change, or a path both charts have with the
same default.
""",
    source="GPU Operator Helm chart values.yaml of both releases (gpuspec/matrix/data/chart-values/)",
    tags=("change-set", "deviations"),
)

FLEET_WAVES_IN_ORDER = Entry(
    id="GS821",
    title="Fleet waves in order",
    severity=Severity.ERROR,
    rationale=(
        "Clusters of one fleet wave sync together when the change merges; a wave is only a wave when a later "
        "one takes an operator or driver change after every earlier one runs it."
    ),
    doc="""
An operator or driver change reaches clusters of one fleet wave (`rollout.wave` of the cluster) per change, and a
cluster of wave N takes it only when every cluster of an earlier wave already runs it at the base revision.

- One change may not move clusters of two fleet waves: GitOps applies both at merge, whatever the waves say.
- Operator: every cluster of an earlier wave runs the target release, or a later one, in the base: an earlier
  wave proves a release once it runs that release or one after it (it passed the gate there), so a wave that
  went on to v26.7.0 does not hold a later wave's stepping stone v25.3.4 back.  (A rollback, a downgrade,
  needs an earlier wave on exactly that release.)
- Driver: every cluster of an earlier wave with pools of the same GPU product runs the target driver, or a later
  one of the same source and module type, on one of them in the base (clusters without that hardware do not
  hold the wave back).

A cluster that deliberately stays behind takes a policy exception for GS821 on the later clusters.

Failing: one change moves the canary pools of `infer-north` (wave 1) and `train-east` (wave 2) to driver 595.
Passing: `infer-north` moves now, `train-east` in a later change.
""",
    tags=("change-set", "rollout"),
)

ROLLBACK_FLAG_LIFECYCLE = Entry(
    id="GS822",
    title="operator.rollback only in the change that downgrades",
    severity=Severity.ERROR,
    rationale=(
        "`operator.rollback: true` acknowledges one downgrade; left in the spec, it silently acknowledges the "
        "next one too (GS803 would not fire)."
    ),
    doc="""
`operator.rollback: true` is accepted only in a change that downgrades the cluster's operator or a pool's driver.
In any other change, a cluster that carries it is reported: remove it in the change after the rollback.
A change that downgrades again while the flag is still there from the base is GS831; a downgrade without the flag
is GS803.

Failing: `operator.rollback: true` still set in a change that only resizes a pool.  Passing: the change that
downgrades `v26.7.0 -> v26.3.3` sets it; the next change removes it.
""",
    tags=("change-set", "rollout"),
)

#: This area's entries, in id order.
ENTRIES: tuple[Entry, ...] = (
    ONE_LAYER_PER_CHANGE,
    OPERATOR_UPGRADE_PATH,
    DOWNGRADE_ACKNOWLEDGED,
    CANARY_FIRST,
    REMOVED_POOL_UNREFERENCED,
    RENDERED_NOT_HAND_EDITED,
    MIG_NEEDS_NODE_LABEL,
    DRIVER_MANAGEMENT_ALONE,
    *changeset_apiserver.ENTRIES,  # GS810-GS811, declared in their own module
    NVIDIADRIVER_UPGRADE_ALONE,
    DRIVER_TAKEN_AWAY,
    OVERRIDE_STALE_AFTER_UPGRADE,
    FLEET_WAVES_IN_ORDER,
    ROLLBACK_FLAG_LIFECYCLE,
    *changeset_steps.ENTRIES,  # GS830-GS831, declared in their own module
)
