"""Check a candidate step with the real lint engine: every rule under the fleet's policy, the change-set rules
against the step before, and the render compiler on the clusters the step touches."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from gpuspec.catalogue.changeset import DRIVER_TAKEN_AWAY
from gpuspec.errors import GpuspecError
from gpuspec.findings import YIELDS, Finding, Severity
from gpuspec.loader.files import cluster_files
from gpuspec.loader.fleetload import display_path, load_fleet
from gpuspec.loader.safefile import UnsafeFile, read_bounded
from gpuspec.loader.yamlread import MAX_FILE_BYTES
from gpuspec.model.cluster import Cluster
from gpuspec.pipeline.lint import lint_load
from gpuspec.pipeline.upgrade.edits import write_atomic
from gpuspec.pipeline.upgrade.moves import State
from gpuspec.redaction import redact_text
from gpuspec.render.compile import compile_cluster
from gpuspec.rollout.node_cost import drain_cost
from gpuspec.rollout.records import Change, Disruption


def digest(texts: Mapping[str, str]) -> str:
    """A key of a fleet state: the digest of its spec texts."""
    sha = hashlib.sha256()
    for name in sorted(texts):
        sha.update(name.encode() + b"\0" + texts[name].encode() + b"\0")
    return sha.hexdigest()


@dataclass(frozen=True)
class Verdict:
    """What lint says of one step: the head state (None when it does not load), its errors and warnings."""

    state: State | None
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    #: The warnings of preferences that yield to an NVIDIA constraint in this step (a strict search refuses them).
    yielded: tuple[str, ...] = ()
    #: GPU nodes the step drains: (whose driver goes at once, all): what the search minimises among equally short
    #: plans (:func:`gpuspec.rollout.node_cost.drain_cost`).
    drained: tuple[int, int] = (0, 0)
    #: When the step's only errors are pools losing their driver at once (GS814): those (cluster, pool, nodes),
    #: which a step that drains them first and acknowledges the finding may take.
    losses: tuple[tuple[str, str, int], ...] = ()

    @property
    def ok(self) -> bool:
        """True when lint finds no error and the touched clusters render."""
        return self.state is not None and not self.errors


#: The change-set rule of driver pods taken away at once, which a step may acknowledge by draining the nodes first.
LOSS_RULE = DRIVER_TAKEN_AWAY.id


def read_texts(fleet_dir: Path) -> dict[str, str]:
    """The spec texts of a fleet folder: fleet.yaml and every cluster file, by path relative to the folder.

    Read as every spec file is (:func:`gpuspec.loader.safefile.read_bounded`): a file gpuspec refuses to read,
    or one that is not UTF-8, is a GpuspecError (exit 2)."""
    out: dict[str, str] = {}
    for path in [fleet_dir / "fleet.yaml", *cluster_files(fleet_dir)]:
        try:
            out[path.relative_to(fleet_dir).as_posix()] = read_bounded(path, MAX_FILE_BYTES).decode("utf-8")
        except (UnsafeFile, OSError, UnicodeDecodeError) as exc:
            raise GpuspecError(f"{display_path(path)}: cannot read it: {exc}") from None
    return out


class Checker:
    """Loads fleet states in a scratch folder and lints each candidate step once (results are remembered)."""

    def __init__(self, workdir: Path, policies_dir: Path, today: date | None, shown_dir: str) -> None:
        """``workdir`` is an empty scratch folder; ``shown_dir`` is how reports name the real fleet folder."""
        self.fleet_dir = workdir / "fleet"
        (self.fleet_dir / "clusters").mkdir(parents=True, exist_ok=True)
        self.policies_dir = policies_dir
        self.today = today
        self.shown_dir = shown_dir
        self.checked = 0
        self._written: dict[str, str] = {}
        self._states: dict[str, State | None] = {}
        self._verdicts: dict[tuple[str, str], Verdict] = {}
        self._start_findings: list[Finding] = []
        #: The clusters the search does not move (set once the selection is known): candidate steps are linted on
        #: the selected clusters only, these stand for the rest of the fleet in the fleet-wide rules.
        self.context: tuple[Cluster, ...] = ()

    def _write(self, texts: Mapping[str, str]) -> None:
        for name in set(self._written) - set(texts):
            (self.fleet_dir / name).unlink(missing_ok=True)
            del self._written[name]
        for name, text in texts.items():
            if self._written.get(name) != text:
                path = self.fleet_dir / name
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, text)
                self._written[name] = text

    def _shown(self, text: str) -> str:
        return text.replace(str(self.fleet_dir.resolve()), self.shown_dir).replace(str(self.fleet_dir), self.shown_dir)

    def _describe(self, finding: Finding) -> str:
        """One line of a finding for a step or a blocker; an error keeps its hint (the way out)."""
        where = self._shown(finding.file or "")
        if finding.line:
            where += f":{finding.line}"
        text = f"{finding.rule_id} {self._shown(finding.message)}" + (f" ({where})" if where else "")
        if finding.hint and finding.severity is Severity.ERROR:
            text += f"; way out: {self._shown(finding.hint)}"
        return redact_text(text)

    def _lint(
        self, texts: Mapping[str, str], base: State | None
    ) -> tuple[State | None, list[Finding], tuple[Change, ...]]:
        self._write(texts)
        names = [n.split("/", 1)[1] for n in texts if n.startswith("clusters/")]
        load = load_fleet(self.fleet_dir, only=names)  # a partial load skips the per-user parse cache
        result = lint_load(
            load,
            self.fleet_dir,
            self.policies_dir,
            today=self.today,
            base_fleet=base.fleet if base is not None else None,
            context=self.context,
        )
        state = (State(dict(texts), load.fleet, self.fleet_dir, self.context)
                 if load.fleet is not None and result.usable else None)
        return state, result.findings, result.changes

    def start(self, texts: Mapping[str, str]) -> Verdict:
        """Lint the starting state on its own (no change-set rules): the plan starts only from a clean spec."""
        state, findings, _ = self._lint(texts, None)
        errors = tuple(self._describe(f) for f in findings if f.severity is Severity.ERROR)
        if state is not None:
            self._states[digest(texts)] = state
        return Verdict(state, errors, ())

    def narrow(self, start: State, clusters: tuple[str, ...]) -> State:
        """The state of ``start`` holding fleet.yaml and the cluster files of ``clusters`` only; the other clusters
        become the context every later step is judged with (they do not change)."""
        keep = {start.file_of(c) for c in start.fleet.clusters if c.name in clusters}
        texts = {name: text for name, text in start.texts.items() if not name.startswith("clusters/") or name in keep}
        self.context = tuple(c for c in start.fleet.clusters if c.name not in clusters)
        self._write(texts)
        names = [n.split("/", 1)[1] for n in texts if n.startswith("clusters/")]
        fleet = load_fleet(self.fleet_dir, only=names).fleet
        if fleet is None:
            raise GpuspecError("the selected clusters do not load on their own")
        return State(dict(texts), fleet, self.fleet_dir, self.context)

    def step(self, base: State, texts: Mapping[str, str], clusters: tuple[str, ...]) -> Verdict:
        """Lint the step from ``base`` to ``texts`` (remembered per pair of states) and render its clusters."""
        key = (digest(base.texts), digest(texts))
        if key in self._verdicts:
            return self._verdicts[key]
        self.checked += 1
        state, findings, changes = self._lint(texts, base)
        errors = [self._describe(f) for f in findings if f.severity is Severity.ERROR]
        losses: tuple[tuple[str, str, int], ...] = ()
        if errors and all(f.rule_id == LOSS_RULE for f in findings if f.severity is Severity.ERROR):
            losses = tuple(
                (c.cluster, c.pool, n)
                for c in changes
                if c.disruption is Disruption.DRIVER_LOST and c.cluster is not None and c.pool is not None
                for n in [self._nodes(base, state, c.cluster, c.pool)]
            )
        warnings = tuple(
            self._describe(f) for f in findings if f.severity is Severity.WARNING and f.rule_id.startswith("GS8")
        )
        if state is not None and not errors:
            for name in clusters:
                cluster = state.fleet.cluster(name)
                try:
                    if cluster is not None:
                        compile_cluster(state.fleet, cluster, "")
                except GpuspecError as exc:
                    errors.append(redact_text(f"render {name}: {self._shown(str(exc))}"))
        yielded = tuple(self._describe(f) for f in findings if YIELDS in f.tags)
        drained = drain_cost(state.fleet, base.fleet, changes) if state is not None else (0, 0)
        verdict = Verdict(state, tuple(errors), warnings, yielded, drained, losses)
        self._verdicts[key] = verdict
        return verdict

    @staticmethod
    def _nodes(base: State, head: State | None, cluster: str, pool: str) -> int:
        """The nodes of ``pool`` of ``cluster`` (read in the head, else the base)."""
        for fleet in ([head.fleet] if head is not None else []) + [base.fleet]:
            found = fleet.cluster(cluster)
            if found is not None and (p := found.pool(pool)) is not None:
                return p.nodes
        return 0
