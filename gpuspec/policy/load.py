"""Load policy packs (with ``extends``) from policies/ and merge them into the effective policy.

Every mistake in a pack becomes a GS001 (unreadable / schema) or GS002 (bad
reference or value) finding at its file:line:col; lint treats either as
unusable input (exit 2).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuspec.catalogue import CATALOGUE, policy_entries
from gpuspec.catalogue.engine import FIXED_IDS, POLICY_FILE_INVALID, POLICY_SETTING_INVALID
from gpuspec.catalogue.entry import Entry, Param
from gpuspec.errors import GpuspecError
from gpuspec.findings import DocPath, Finding, Severity
from gpuspec.loader.files import display_path
from gpuspec.loader.schema_errors import schema_findings
from gpuspec.loader.yamlread import YamlProblem, read_yaml
from gpuspec.policy.pack_models import CustomRule, PolicyException, PolicyPack
from gpuspec.policy.schema_check import SchemaChecks
from gpuspec.policy.selectors import SelectorError, parse_selector

#: The pack used when policies/ has no default.yaml: every rule at its defaults.
BUILTIN_DEFAULT = "default"
#: Packs that ship with gpuspec (``strict``); a pack of the same name in policies/ takes precedence.
BUILTIN_PACKS_DIR = Path(__file__).resolve().parent / "packs"


@dataclass(frozen=True)
class Place:
    """Where something was written: display file and document path."""

    file: str
    path: DocPath = ()


@dataclass(frozen=True)
class RuleConfig:
    """The effective setting of one rule."""

    enabled: bool
    severity: Severity
    params: dict[str, Any]


@dataclass(frozen=True)
class LocatedException:
    """A policy exception and where it is written."""

    exception: PolicyException
    place: Place


@dataclass(frozen=True)
class LocatedCustomRule:
    """A custom rule and where it is written."""

    rule: CustomRule
    place: Place


@dataclass
class Policy:
    """The merged policy: rule settings, as-of date, exceptions, custom rules, and problems found loading it."""

    packs: list[str] = field(default_factory=list)
    rules: dict[str, RuleConfig] = field(default_factory=dict)
    as_of: date | None = None
    exceptions: list[LocatedException] = field(default_factory=list)
    custom_rules: list[LocatedCustomRule] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """True when every pack loaded without problems."""
        return not self.findings

    def enabled(self, rule_id: str) -> bool:
        """True when ``rule_id`` runs under this policy (unknown ids: False)."""
        config = self.rules.get(rule_id)
        return config is not None and config.enabled


@dataclass(frozen=True)
class _Pack:
    name: str
    file: str
    pack: PolicyPack


def _finding(entry: Entry, message: str, place: Place, hint: str | None = None, at_key: bool = False) -> Finding:
    return entry.finding(message, place.file, place.path, hint, at_key=at_key)


_PACK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")


def is_pack_name(name: str) -> bool:
    """True when ``name`` can name a pack file directly in the policies folder (no path, no ``..``)."""
    return bool(_PACK_NAME.fullmatch(name)) and len(name) <= 100


def pack_file(policies_dir: Path, name: str) -> Path | None:
    """The file of pack ``name`` in ``policies_dir`` (``.yaml`` or ``.yml``), else the built-in pack, or None.

    None also for a non-name.
    """
    if not is_pack_name(name):
        return None
    for suffix in (".yaml", ".yml"):
        candidate = policies_dir / f"{name}{suffix}"
        # Anything at the name (a FIFO, a folder, a dangling link) is the pack: reading it reports the problem,
        # instead of falling back to the built-in pack of the same name without a word.
        if candidate.is_file() or os.path.lexists(candidate):
            return candidate
    for suffix in (".yaml", ".yml"):
        candidate = BUILTIN_PACKS_DIR / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def builtin_packs() -> list[str]:
    """Names of the packs that ship with gpuspec, the implicit default included."""
    names = {BUILTIN_DEFAULT}
    if BUILTIN_PACKS_DIR.is_dir():
        names.update(p.stem for p in BUILTIN_PACKS_DIR.iterdir() if p.suffix == ".yaml")
    return sorted(names)


def available_packs(policies_dir: Path) -> list[str]:
    """Names of the packs in ``policies_dir`` plus the ones built into gpuspec."""
    names = set(builtin_packs())
    if policies_dir.is_dir():
        names.update(p.stem for p in policies_dir.iterdir() if p.suffix in (".yaml", ".yml"))
    return sorted(names)


#: The largest magnitude of a number a rule parameter takes (the spec's bound, Kubernetes' int32): rules do
#: arithmetic on them with node counts and percentages.
MAX_PARAM_NUMBER = 2**31 - 1


def _out_of_range(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_PARAM_NUMBER


def param_type_ok(param: Param, value: Any) -> bool:
    """True when ``value`` (from YAML) fits the parameter's type."""
    if _out_of_range(value):
        return False
    if param.type is bool:
        return isinstance(value, bool)
    if param.type is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if param.type is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if param.type in (list, tuple):
        defaults = param.default if isinstance(param.default, list | tuple) else ()
        element = type(defaults[0]) if defaults else str
        return isinstance(value, list | tuple) and all(isinstance(v, element) for v in value)
    return isinstance(value, param.type)


class _Loader:
    """Reads packs once each, follows ``extends`` depth-first and records every problem."""

    def __init__(self, policies_dir: Path) -> None:
        self.dir = policies_dir
        self.loaded: dict[str, _Pack | None] = {}
        self.order: list[_Pack] = []
        self.findings: list[Finding] = []

    def read(self, name: str, referrer: Place | None, stack: tuple[str, ...]) -> None:
        if name in stack:
            cycle = " → ".join((*stack[stack.index(name):], name))
            place = referrer or Place(name)
            self.findings.append(_finding(POLICY_SETTING_INVALID, f"extends cycle: {cycle}", place))
            return
        if name in self.loaded:
            return
        if not is_pack_name(name):
            message = (f"{name!r} is not a policy pack name (letters, digits, '.', '_' and '-'; packs are files "
                       f"directly in {display_path(self.dir)})")
            if referrer is None:
                raise GpuspecError(message)
            self.loaded[name] = None
            self.findings.append(_finding(POLICY_SETTING_INVALID, message, referrer))
            return
        path = pack_file(self.dir, name)
        if path is None:
            self.loaded[name] = None
            if name == BUILTIN_DEFAULT:
                return
            message = f"policy pack {name!r} not found in {display_path(self.dir)}"
            close = difflib.get_close_matches(name, available_packs(self.dir), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"packs: {', '.join(available_packs(self.dir))}"
            if referrer is None:
                raise GpuspecError(message, hint=hint)
            self.findings.append(_finding(POLICY_SETTING_INVALID, message, referrer, hint))
            return
        display = display_path(path)
        self.loaded[name] = None
        try:
            data = read_yaml(path, display)
        except YamlProblem as problem:
            self.findings.append(POLICY_FILE_INVALID.finding(problem.message, display,
                                         line=problem.line, column=problem.column))
            return
        try:
            pack = PolicyPack.model_validate(data)
        except ValidationError as exc:
            for f in schema_findings(exc, data, PolicyPack, display):
                self.findings.append(POLICY_FILE_INVALID.finding(f.message, f.file, f.path, f.hint,
                                             at_key=f.at_key, line=f.line, column=f.column))
            return
        if pack.metadata.name != name:
            self.findings.append(_finding(
                POLICY_SETTING_INVALID, f"pack name {pack.metadata.name!r} differs from its file name {name!r}",
                Place(display, ("metadata", "name"))))
        for index, parent in enumerate(pack.parents()):
            where = ("extends", index) if isinstance(pack.extends, list) else ("extends",)
            self.read(parent, Place(display, where), (*stack, name))
        loaded = _Pack(name, display, pack)
        self.loaded[name] = loaded
        self.order.append(loaded)


def _check_params(rule: Entry, params: dict[str, Any], place: Place) -> list[Finding]:
    problems: list[Finding] = []
    known = {p.name: p for p in rule.params}
    for key, value in params.items():
        param = known.get(key)
        where = Place(place.file, (*place.path, "params", key))
        if param is None:
            close = difflib.get_close_matches(key, list(known), n=1)
            hint = f"did you mean {close[0]!r}?" if close else (
                f"parameters of {rule.id}: {', '.join(known)}" if known else f"{rule.id} has no parameters")
            problems.append(_finding(POLICY_SETTING_INVALID, f"{rule.id} has no parameter {key!r}", where, hint,
                                     at_key=True))
        elif not param_type_ok(param, value):
            got = "a number beyond ±2,147,483,647" if _out_of_range(value) else type(value).__name__
            problems.append(_finding(
                POLICY_SETTING_INVALID, f"parameter {key!r} of {rule.id} must be {param.type.__name__}, got {got}",
                where))
    return problems


def _unknown_id(rule_id: str, known: list[str], place: Place, at_key: bool = False) -> Finding:
    close = difflib.get_close_matches(rule_id.upper(), known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else "gpuspec rules lists every rule id"
    return _finding(POLICY_SETTING_INVALID, f"unknown rule id {rule_id!r}", place, hint, at_key=at_key)


def _custom_rules(loader: _Loader) -> dict[str, LocatedCustomRule]:
    custom: dict[str, LocatedCustomRule] = {}
    checks = SchemaChecks()
    for pack in loader.order:
        seen: set[str] = set()
        for index, rule in enumerate(pack.pack.custom_rules):
            place = Place(pack.file, ("customRules", index))
            id_place = Place(pack.file, ("customRules", index, "id"))
            if rule.id.startswith("GS"):
                loader.findings.append(_finding(POLICY_SETTING_INVALID,
                                                f"custom rule id {rule.id!r} uses gpuspec's GS namespace", id_place,
                                                "use your organisation's prefix, e.g. ORG001"))
                continue
            if rule.id in seen:
                loader.findings.append(_finding(POLICY_SETTING_INVALID,
                                                f"custom rule {rule.id!r} is defined twice in this pack", id_place))
                continue
            seen.add(rule.id)
            try:
                parse_selector(rule.select)
            except SelectorError as exc:
                loader.findings.append(_finding(POLICY_SETTING_INVALID, f"bad selector: {exc}",
                                                Place(pack.file, ("customRules", index, "select"))))
                continue
            schema_problem = checks.problem(rule.schema_)
            if schema_problem:
                at, problem = schema_problem
                loader.findings.append(_finding(POLICY_SETTING_INVALID, f"invalid JSON Schema: {problem}",
                                                Place(pack.file, ("customRules", index, "schema", *at))))
                continue
            outside = _outside_refs(rule.schema_)
            if outside:
                loader.findings.append(_finding(
                    POLICY_SETTING_INVALID,
                    f"the JSON Schema refers to {outside[0]!r}; only references inside the rule's own schema "
                    "(starting with '#') are allowed",
                    Place(pack.file, ("customRules", index, "schema")),
                    "copy the referenced definition into the schema's $defs and refer to it as #/$defs/<name>"))
                continue
            custom[rule.id] = LocatedCustomRule(rule, place)
    checks.save()
    return custom


_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")


def _outside_refs(schema: Any) -> list[str]:
    """References of ``schema`` that point outside it (a URL, a file, another document), in document order.

    gpuspec never fetches or reads them: a custom rule is checked with what its pack holds.
    """
    found: list[str] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _REF_KEYS and (not isinstance(value, str) or not value.startswith("#")):
                    found.append(str(value))
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return found


def load_policy(
    policies_dir: Path, packs: Sequence[str], referrers: Sequence[Place | None] | None = None
) -> Policy:
    """Load ``packs`` (and what they extend) from ``policies_dir`` and merge them, later settings winning.

    ``referrers`` says where each pack name was written (for findings); None
    for a pack named on the command line, which raises GpuspecError when missing.
    """
    loader = _Loader(policies_dir)
    places = list(referrers) if referrers is not None else [None] * len(packs)
    for name, referrer in zip(packs, places, strict=True):
        loader.read(name, referrer, ())
    custom = _custom_rules(loader)
    entries = policy_entries()
    known = sorted(set(entries) | set(custom))

    configs: dict[str, RuleConfig] = {
        rule_id: RuleConfig(True, entry.severity, entry.defaults()) for rule_id, entry in entries.items()
    }
    for rule_id, located in custom.items():
        configs[rule_id] = RuleConfig(True, located.rule.severity, {})
    as_of: date | None = None
    exceptions: list[LocatedException] = []
    for pack in loader.order:
        if pack.pack.as_of is not None:
            as_of = pack.pack.as_of
        for rule_id, setting in pack.pack.rules.items():
            place = Place(pack.file, ("rules", rule_id))
            if rule_id not in configs:
                loader.findings.append(_unknown_id(rule_id, known, place, at_key=True))
                continue
            entry = entries.get(rule_id)
            if entry is not None and entry.input_error:
                loader.findings.append(_finding(POLICY_SETTING_INVALID, f"{rule_id} cannot be configured", place,
                                                "policy and input errors always stop lint", at_key=True))
                continue
            if rule_id in FIXED_IDS:
                loader.findings.append(_finding(POLICY_SETTING_INVALID, f"{rule_id} cannot be configured", place,
                                                "problems of exceptions are errors in every command",
                                                at_key=True))
                continue
            if entry is not None:
                problems = _check_params(entry, setting.params, place)
                loader.findings.extend(problems)
                if problems:
                    continue
            elif setting.params:
                loader.findings.append(_finding(POLICY_SETTING_INVALID, f"custom rule {rule_id} takes no params",
                                                Place(pack.file, ("rules", rule_id, "params")), at_key=True))
                continue
            old = configs[rule_id]
            configs[rule_id] = RuleConfig(
                old.enabled if setting.enabled is None else setting.enabled,
                old.severity if setting.severity is None else setting.severity,
                {**old.params, **setting.params},
            )
        for index, exception in enumerate(pack.pack.exceptions):
            place = Place(pack.file, ("exceptions", index))
            # Ids of the catalogue that no pack configures (GS1xx, verify, audit) stay in the exception: the
            # acceptance step refuses them with GS008, in every command (see gpuspec.policy.acceptance).
            bad = [r for r in exception.rules if r not in configs and r not in CATALOGUE]
            for r_index, rule_id in enumerate(exception.rules):
                if rule_id in bad:
                    loader.findings.append(_unknown_id(rule_id, known, Place(pack.file,
                                                                             ("exceptions", index, "rules", r_index))))
            if not bad:
                exceptions.append(LocatedException(exception, place))
    return Policy(
        packs=[p.name for p in loader.order] or [BUILTIN_DEFAULT],
        rules=configs, as_of=as_of, exceptions=exceptions,
        custom_rules=list(custom.values()), findings=loader.findings,
    )
