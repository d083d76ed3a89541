"""The shortest sequence of steps to the target: iterative deepening (IDA*) over the candidate moves, each
step checked by the lint engine against the step before, so no printed step is one lint would reject.

The lower bound is :func:`gpuspec.pipeline.upgrade.moves.remaining` (hops still to go per fleet wave); enabling
moves cost a step and move no bound, so they appear only where no productive move passes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from gpuspec.pipeline.upgrade.check import Checker, Verdict, digest
from gpuspec.pipeline.upgrade.edits import apply_edits
from gpuspec.pipeline.upgrade.model import Blocker, Selection, Target
from gpuspec.pipeline.upgrade.moves import (
    Move,
    State,
    channel_done,
    channel_moves,
    cluster_moves,
    front,
    remaining,
)

#: Steps beyond the lower bound the search tries before it says no path exists.
MAX_DETOURS = 6
#: Combinations of the same-wave clusters' candidates tried as one step.
MAX_COMBINATIONS = 16
#: Candidate steps the search lints at most.
MAX_CHECKS = 800


@dataclass
class Found:
    """A path: the moves, and the state after each (with the lint warnings of that step)."""

    moves: list[Move]
    states: list[State]
    verdicts: list[Verdict]


def _together(variants: list[list[Move]]) -> Iterator[Move]:
    """One move per cluster, merged into one step: the combinations of the clusters' candidates, those made of
    their first choices first (at most :data:`MAX_COMBINATIONS`)."""
    lists = [v for v in variants if v]
    if len(lists) < 2:
        return
    combos = sorted(itertools.product(*(range(len(v)) for v in lists)), key=lambda c: (sum(c), c))
    for combo in combos[:MAX_COMBINATIONS]:
        chosen = [lists[i][j] for i, j in enumerate(combo)]
        kinds = list(dict.fromkeys(m.kind for m in chosen))
        yield Move(
            kinds[0] if len(kinds) == 1 else "+".join(kinds),
            "; ".join(m.title for m in chosen),
            tuple(n for m in chosen for n in m.clusters),
            tuple(e for m in chosen for e in m.edits),
            any(m.productive for m in chosen),
        )


@dataclass
class _Search:
    checker: Checker
    selection: Selection
    target: Target
    best_depth: int = -1
    best_rejects: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    best_titles: list[str] = field(default_factory=list)
    exceeded: int | None = None
    dead: dict[str, int] = field(default_factory=dict)
    #: gpuspec's preferences may yield where NVIDIA's constraints leave no other way (the second search).
    relax: bool = False

    def goal(self, state: State) -> bool:
        return not front(state, self.selection, self.target) and channel_done(state, self.selection, self.target)

    def moves(self, state: State) -> Iterator[Move]:
        clusters = front(state, self.selection, self.target)
        movers = {c.name for c in clusters}
        per_cluster = [list(cluster_moves(state, c, self.target, self.selection, movers, self.relax))
                       for c in clusters]
        if len(per_cluster) > 1:  # clusters of one fleet wave may take their steps together (GS801: per cluster)
            yield from _together(per_cluster)
        for ms in per_cluster:
            yield from ms
        if not clusters:
            yield from channel_moves(state, self.selection, self.target)

    def dfs(
        self, state: State, path: list[tuple[Move, State, Verdict]], bound: int, seen: set[str]
    ) -> list[tuple[Move, State, Verdict]] | None:
        if self.goal(state):
            return path
        g = len(path)
        f = g + remaining(state, self.selection, self.target, self.relax)
        if f > bound:
            self.exceeded = f if self.exceeded is None else min(self.exceeded, f)
            return None
        key = digest(state.texts)
        if self.dead.get(key, -1) >= bound - g:
            return None
        rejects: list[tuple[str, tuple[str, ...]]] = []
        tried = False
        for move in self.moves(state):
            tried = True
            if self.checker.checked >= MAX_CHECKS:
                break
            try:
                texts = apply_edits(state.texts, move.edits)
            except Exception as exc:  # an edit the text cannot take is a candidate that fails
                rejects.append((move.title, (str(exc),)))
                continue
            child_key = digest(texts)
            if child_key == key or child_key in seen:
                continue
            verdict = self.checker.step(state, texts, move.clusters)
            if not verdict.ok or verdict.state is None or (verdict.yielded and not self.relax):
                rejects.append((move.title, verdict.errors or verdict.yielded))
                continue
            seen.add(child_key)
            found = self.dfs(verdict.state, [*path, (move, verdict.state, verdict)], bound, seen)
            seen.discard(child_key)
            if found is not None:
                return found
        if not rejects and not tried:
            rejects = [
                ("(no candidate step)", ("no edit of the spec moves a selected cluster toward the target from here",))
            ]
        if rejects and g >= self.best_depth:
            self.best_depth, self.best_rejects = g, rejects
            self.best_titles = [m.title for m, _, _ in path]
        self.dead[key] = max(self.dead.get(key, -1), bound - g)
        return None


def search(checker: Checker, start: State, selection: Selection, target: Target) -> Found | Blocker:
    """The shortest path from ``start`` to the target among the candidate moves, or what blocks every path.

    Paths that keep every preference of gpuspec's (canary first, pool waves) come first; only when none exists is
    the search run again with moves where a preference yields to an NVIDIA constraint (a cluster-wide driver step
    under ClusterPolicy management), whose steps then carry the yielding findings as warnings."""
    strict = _search(checker, start, selection, target, relax=False)
    if isinstance(strict, Found):
        return strict
    relaxed = _search(checker, start, selection, target, relax=True)
    return relaxed if isinstance(relaxed, Found) else strict


def _search(checker: Checker, start: State, selection: Selection, target: Target, *, relax: bool) -> Found | Blocker:
    run = _Search(checker, selection, target, relax=relax)
    lower = remaining(start, selection, target, relax)
    bound = lower
    while bound <= lower + MAX_DETOURS and checker.checked < MAX_CHECKS:
        run.exceeded = None
        found = run.dfs(start, [], bound, {digest(start.texts)})
        if found is not None:
            return Found([m for m, _, _ in found], [s for _, s, _ in found], [v for _, _, v in found])
        if run.exceeded is None:
            break  # every path dead-ends before the bound: a longer bound finds nothing more
        bound = max(bound + 1, run.exceeded)
    reached = ("after " + "; then ".join(run.best_titles)) if run.best_titles else "from the spec as it is"
    if checker.checked >= MAX_CHECKS:
        reached += f" (the search stopped after {MAX_CHECKS} candidate steps)"
    moves = tuple((title, errors[:4]) for title, errors in run.best_rejects)
    if not moves:
        moves = (("(no candidate step)", ("no edit of the spec moves a selected cluster toward the target",)),)
    return Blocker(reached, moves)
