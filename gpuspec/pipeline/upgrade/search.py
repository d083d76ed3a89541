"""The shortest sequence of steps to the target: iterative deepening (IDA*) over the candidate moves, each
step checked by the lint engine against the step before, so no printed step is one lint would reject.

The lower bound is :func:`gpuspec.pipeline.upgrade.moves.remaining` (hops still to go per fleet wave); enabling
moves cost a step and move no bound, so they appear only where no productive move passes.  Among the plans of the
shortest length the search takes the one that drains the fewest GPU nodes (the rollout model counts them:
:mod:`gpuspec.rollout.node_cost`), the candidates' own order breaking ties.
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
    acknowledged,
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
#: Candidate steps the search lints after it found a shortest plan, looking for one as short that drains fewer nodes.
TIE_BREAK_CHECKS = 120


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


_Path = list[tuple[Move, State, Verdict]]


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
    #: (state, steps left) -> the cheapest way from there to the target within them (None: none), once complete.
    memo: dict[tuple[str, int], tuple[tuple[int, int], _Path] | None] = field(default_factory=dict)
    #: Candidate steps checked when the first plan of the shortest length was found.
    found_at: int | None = None
    #: gpuspec's preferences may yield where NVIDIA's constraints leave no other way (the second search).
    relax: bool = False

    def goal(self, state: State) -> bool:
        return not front(state, self.selection, self.target) and channel_done(state, self.selection, self.target)

    def budget_left(self) -> bool:
        """True while the search may check another candidate step."""
        if self.checker.checked >= MAX_CHECKS:
            return False
        return self.found_at is None or self.checker.checked < self.found_at + TIE_BREAK_CHECKS

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

    def step(self, state: State, move: Move) -> tuple[Move, Verdict, str] | tuple[str, tuple[str, ...]]:
        """Check ``move`` from ``state``: (move, verdict, key of the state after it) when it passes, (title,
        errors) when lint refuses it.  A move refused only because pools lose their
        driver at once (GS814) is tried again as the rule's way out: drain them first and acknowledge it."""
        try:
            texts = apply_edits(state.texts, move.edits)
        except Exception as exc:  # an edit the text cannot take is a candidate that fails
            return move.title, (str(exc),)
        verdict = self.checker.step(state, texts, move.clusters)
        if verdict.losses and not move.drained_first and self.budget_left():
            drained = acknowledged(state, move, verdict.losses)
            if drained is not None:
                try:
                    drained_texts = apply_edits(state.texts, drained.edits)
                except Exception:  # the plain move's refusal stands
                    drained_texts = None
                if drained_texts is not None:
                    second = self.checker.step(state, drained_texts, drained.clusters)
                    if second.ok:
                        move, texts, verdict = drained, drained_texts, second
        if not verdict.ok or verdict.state is None or (verdict.yielded and not self.relax):
            return move.title, verdict.errors or verdict.yielded
        return move, verdict, digest(texts)

    def dfs(
        self, state: State, titles: list[str], bound: int, seen: set[str]
    ) -> tuple[tuple[int, int], _Path] | None:
        """The cheapest way (nodes drained at once, then nodes drained, then the order the moves come in) from
        ``state`` to the target within
        ``bound`` steps of the start, ``titles`` being the steps taken so far; None when there is none."""
        if self.goal(state):
            if self.found_at is None:
                self.found_at = self.checker.checked
            return (0, 0), []
        g = len(titles)
        f = g + remaining(state, self.selection, self.target, self.relax)
        if f > bound:
            self.exceeded = f if self.exceeded is None else min(self.exceeded, f)
            return None
        key = digest(state.texts)
        if (key, bound - g) in self.memo:
            return self.memo[(key, bound - g)]
        if self.dead.get(key, -1) >= bound - g:
            return None
        rejects: list[tuple[str, tuple[str, ...]]] = []
        tried = False
        best: tuple[tuple[int, int], _Path] | None = None
        for move in self.moves(state):
            tried = True
            if not self.budget_left():
                break
            checked = self.step(state, move)
            if len(checked) == 2:
                rejects.append(checked)
                continue
            taken, verdict, child_key = checked
            if child_key == key or child_key in seen or verdict.state is None:
                continue
            seen.add(child_key)
            rest = self.dfs(verdict.state, [*titles, taken.title], bound, seen)
            seen.discard(child_key)
            if rest is not None:
                cost = (verdict.drained[0] + rest[0][0], verdict.drained[1] + rest[0][1])
                if best is None or cost < best[0]:
                    best = (cost, [(taken, verdict.state, verdict), *rest[1]])
        if best is None:
            if not rejects and not tried:
                rejects = [
                    ("(no candidate step)",
                     ("no edit of the spec moves a selected cluster toward the target from here",))
                ]
            if rejects and g >= self.best_depth:
                self.best_depth, self.best_rejects, self.best_titles = g, rejects, list(titles)
            self.dead[key] = max(self.dead.get(key, -1), bound - g)
        if self.budget_left():  # a search cut short by its budget may have missed a cheaper way: not remembered
            self.memo[(key, bound - g)] = best
        return best


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
        best = run.dfs(start, [], bound, {digest(start.texts)})
        if best is not None:
            found = best[1]
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
