"""The rules that judge one cluster at a time (``Rule.per_cluster``), run cluster by cluster and remembered per
cluster.

Such a rule's problems in a fleet are the problems it finds in each cluster alone (a fleet of fleet.yaml's
settings and that one cluster, with the raw data of those two files only), in fleet order: lint runs them so,
which makes that true by construction rather than by a promise of the rule.  Each cluster's problems are kept
in the per-user cache, keyed by the contents of its file and of fleet.yaml, by the rules and their parameters,
and by the date lifecycle checks judge at (gpuspec's code and data are part of every entry's name, see
:class:`gpuspec.usercache.Memo`).  After an edit only the edited clusters are judged again; a fleet loaded
without the parse cache (no content keys) is judged in full, cluster by cluster, and nothing is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from gpuspec.loader.files import shard_name
from gpuspec.model.cluster import Cluster
from gpuspec.model.fleet import Fleet
from gpuspec.rules.base import Problem, Rule, RuleContext
from gpuspec.usercache import ShardedMemo

#: Bumped when what an entry holds changes.
FORMAT = 1


@dataclass(frozen=True, slots=True)
class ClusterRule:
    """One enabled per-cluster rule of a lint run, with the policy's parameters."""

    rule_id: str
    rule: Rule
    params: Mapping[str, Any]


#: Rule id → the rule's problems in fleet order, or the exception it raised on some cluster.
Outcomes = dict[str, list[Problem] | Exception]


def cluster_problems(fleet: Fleet, rules: Sequence[ClusterRule], as_of: date,
                     raw: Mapping[str, Any]) -> Outcomes:
    """Every problem of each rule in ``rules`` (all ``per_cluster``) in ``fleet``, judged one cluster at a time;
    a rule that raised on any cluster maps to its exception instead."""
    memo = _memo(fleet)
    keys = fleet.content_keys
    rules_key = _rules_key(rules, as_of)
    per_rule: dict[str, list[Problem]] = {r.rule_id: [] for r in rules}
    crashed: dict[str, Exception] = {}
    for cluster in fleet.clusters:
        key = (rules_key, fleet.settings_file, keys.get(fleet.settings_file), cluster.source_file,
               keys.get(cluster.source_file))
        stored = _recall(memo, cluster, key, per_rule.keys())
        if stored is None:
            stored, failed = _judge(fleet, cluster, rules, as_of, raw)
            crashed.update((rule_id, exc) for rule_id, exc in failed.items() if rule_id not in crashed)
            if memo is not None and not failed:
                memo.put(shard_name(cluster.source_file), key, {rule_id: [_plain(p) for p in found]
                                                                for rule_id, found in stored.items() if found})
        for rule_id, found in stored.items():
            per_rule[rule_id].extend(found)
    if memo is not None:
        memo.save()
    return {r.rule_id: crashed.get(r.rule_id) or per_rule[r.rule_id] for r in rules}


def _memo(fleet: Fleet) -> ShardedMemo | None:
    """The per-cluster memo of this fleet's folder, or None when its files' contents are not known."""
    keys = fleet.content_keys
    if fleet.settings_file not in keys:
        return None
    return ShardedMemo("cluster-rules", str(FORMAT), os.path.abspath(fleet.root))


def _rules_key(rules: Sequence[ClusterRule], as_of: date) -> str:
    """What the problems depend on besides the two files: the rules, their parameters and the date."""
    spec = [as_of.isoformat(), *([r.rule_id, dict(r.params)] for r in rules)]
    return hashlib.sha256(json.dumps(spec, sort_keys=True, default=repr).encode()).hexdigest()


def _recall(memo: ShardedMemo | None, cluster: Cluster, key: tuple[Any, ...],
            rule_ids: Collection[str]) -> dict[str, list[Problem]] | None:
    """The problems stored for ``cluster`` under ``key`` (rule id → problems, of the rules ``rule_ids``), or None."""
    if memo is None or key[2] is None or key[4] is None:
        return None
    hit, value = memo.get(shard_name(cluster.source_file), key)
    if not hit or not isinstance(value, dict) or not set(value) <= set(rule_ids):
        return None
    try:
        return {rule_id: [_problem(item) for item in items] for rule_id, items in value.items()}
    except (TypeError, ValueError):
        return None


def _judge(fleet: Fleet, cluster: Cluster, rules: Sequence[ClusterRule], as_of: date,
           raw: Mapping[str, Any]) -> tuple[dict[str, list[Problem]], dict[str, Exception]]:
    """Each rule's problems in ``cluster`` alone, and the exceptions of the rules that raised."""
    alone = Fleet.model_construct(settings=fleet.settings, clusters=[cluster], settings_file=fleet.settings_file,
                                  root=fleet.root)
    own_raw = {name: raw[name] for name in (fleet.settings_file, cluster.source_file) if name in raw}
    shared: dict[Any, Any] = {}  # facts the rules share, for this cluster
    found: dict[str, list[Problem]] = {}
    failed: dict[str, Exception] = {}
    for r in rules:
        try:
            found[r.rule_id] = list(r.rule.check(RuleContext(fleet=alone, params=r.params, as_of=as_of, raw=own_raw,
                                                             shared=shared)))
        except Exception as exc:  # reported by the caller as that rule's crash; the other rules go on
            failed[r.rule_id] = exc
            found[r.rule_id] = []
    return found, failed


def _plain(problem: Problem) -> tuple[Any, ...]:
    """A problem as plain data for the cache."""
    return (problem.message, problem.file, list(problem.path), problem.hint, problem.at_key, problem.yields)


def _problem(item: Any) -> Problem:
    """The problem of :func:`_plain`'s data; TypeError or ValueError when it is not such data."""
    message, file, path, hint, at_key, yields = item
    if not (isinstance(message, str) and isinstance(file, str) and isinstance(path, list)
            and all(isinstance(part, str | int) for part in path)
            and isinstance(hint, str | None) and isinstance(yields, str | None)):
        raise ValueError("not a stored problem")
    return Problem(message, file, tuple(path), hint, bool(at_key), yields)
