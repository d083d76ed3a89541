"""Fuzz every gpuspec command in-process with mutated fleets, policy packs, node JSON and file-system oddities.

One *input* is one mutation of the example repository (a YAML or JSON document changed as data or as
text, or a spec file replaced by a link out of the repository, a FIFO, a device, a folder, an empty or
oversized file), of the exports audit and import read (nodes, ClusterPolicies, Helm values and releases), of
a file under a rendered output tree, of the base revision's history, of an entry of the user cache, or of the
stub chart verify renders, run through one command: validate, lint (every format, and ``--base``), render,
``render --check``, images, plan ``--base``, audit, import and verify.  A run *fails* when it

- ends in "internal error", a traceback or an exit code other than 0, 1 or 2, or a crashed rule (GS000);
- prints, or writes into the output folder, the canary credential planted in the fleet (as a
  credential-like key, URL userinfo or token, while that form is intact in the input: see :func:`planted`),
  a file outside the repository a link pointed at, the checkout token in ``.git/config`` or the secret
  planted in the environment;
- takes longer than :data:`SLOW_SECONDS`, or takes the process's resident memory over :data:`MEMORY_BOUND`
  while it runs (the peak is reset before each run where Linux allows it, so a run is judged by its own peak).

Each failing input is saved under ``--save`` (default ``tests/hostile/fuzz_regressions``) as
``<id>/case.json`` plus the mutated files, and ``tests/hostile/test_fuzz.py`` replays every saved case.

Usage::

    python -m benchmarks.fuzz --inputs 100000 --seed 1          # the long run (CI can schedule it)
    python -m benchmarks.fuzz --inputs 300 --seed 7 --no-save   # a quick look
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import io
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SAVE = REPO / "tests" / "hostile" / "fuzz_regressions"
MINI_CHART = REPO / "tests" / "fixtures" / "charts" / "gpu-operator-mini"
AUDIT_NODES = REPO / "tests" / "audit" / "fixtures" / "nodes" / "drift-count-mismatch.json"
BROWNFIELD = REPO / "tests" / "audit" / "fixtures" / "brownfield"
#: Address-space limit of the long run's process.
MEMORY_LIMIT = 3 * 1024**3
#: No run may take the process's resident memory over this while it runs (the issue's bound for one run).
MEMORY_BOUND = 1024**3
#: A run that takes more CPU than this fails (the issue's bound for one run).  CPU seconds of this process and its
#: children, not wall time: a long run beside other work (a loaded CI machine, `nice`) is not slower by its own doing.
SLOW_SECONDS = 5.0
#: The planted credential; it must never appear in any output.
CANARY = "Zq7canaryPW91"
#: Written to a file outside the repository that links point at; it must never appear either.
OUTSIDE_MARK = "OUTSIDE-FILE-91f3"
#: The base64 of the job token actions/checkout persists in .git/config; it must never appear anywhere.
GIT_MARK = "eC1hY2Nlc3MtdG9rZW46Z2hzX0dJVE1BUks3cTl3OGU3cjZ0NXk0"
#: Planted in the environment (as a CI job's token would be); it must never appear anywhere either.
ENV_MARK = "ghs_ENVCANARY4k2m9q7w1e5r8t3y6u0i"
ENV_SECRETS = ("GITHUB_TOKEN", "GPUSPEC_FUZZ_SECRET", "AWS_SECRET_ACCESS_KEY")
#: Template payloads past a budget or failing at run time (appended to a template override).
TEMPLATE_PAYLOADS = (
    "{{ 'a' * 10**10 }}", "{{ ([1] * 10**8) | length }}", "{{ 7 ** (10 ** 8) }}",
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{{ 'x' | center(10**9) }}", "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}", "{{ 1 / 0 }}",
    "{{ [1][5] }}", "{{ 42 | join(5) }}", "{% include 'leak.txt' %}", "{{ '{:>1000000000}'.format(1) }}",
)

FLEET_FILES = ("fleet/fleet.yaml", "fleet/clusters/train-east.yaml", "fleet/clusters/infer-north.yaml")
POLICY_FILES = ("policies/default.yaml", "policies/acme.yaml")
NODES_FILE = "nodes.json"
#: The brownfield exports (ClusterPolicies and NVIDIADrivers, Helm values, Helm releases) import and audit read.
EXPORT_FILES = ("clusterpolicies.json", "helm-values.json", "helm-list.json")
#: The acceptance namespace's Jobs and Pods (`kubectl get jobs,pods -o json`), made from the rendered Jobs.
JOBS_FILE = "jobs.json"
#: The stub chart verify renders (a copy in the workspace, mutated as text like any input).
CHART_DIR = "chart"
CHART_FILES = ("chart/Chart.yaml", "chart/values.yaml", "chart/templates/clusterpolicy.yaml",
               "chart/templates/_helpers.tpl")
#: A template override linked to .git/config, planted in the workspace (a gate case may take it away, to reach the
#: check of the changed clusters only).
LEAK = "fleet/templates/leak.txt"
#: The rendered tree committed at the base revision, which `render --check --base HEAD` trusts.
GATE_OUT = "out-gate"
#: Where reports and CODEOWNERS are written (replaced by special files).
REPORT_FILE = "report.out"
CODEOWNERS_FILE = ".github/CODEOWNERS"
#: An export of tens of megabytes, written per case from one node (or Job) repeated.
BIG_EXPORT = "big-export.json"
#: A fleet's override of the handover template (render and handover read it).
TEMPLATE_FILE = "fleet/templates/handover/cluster.md.j2"
SHIPPED_TEMPLATE = REPO / "gpuspec" / "templating" / "templates" / "handover" / "cluster.md.j2"

#: Command name → argument lists it is run with (one picked per input); paths are relative to the repository.
COMMANDS: dict[str, list[list[str]]] = {
    "validate": [["validate"], ["validate", "--format", "json"]],
    "lint": [["lint", "--format", f] for f in ("text", "json", "sarif", "github", "junit")]
    + [["lint", "--pack", "acme"], ["lint", "--pack", "strict", "--fail-on", "warning"]],
    "lint-base": [["lint", "--base", "HEAD"], ["lint", "--base", "HEAD", "--format", "sarif"]],
    "render": [["render", "--out", "out"]],
    "render-check": [["render", "--check", "--out", "out"]],
    "images": [["images"], ["images", "--format", "skopeo"]],
    "handover": [["handover"], ["handover", "--output", "out-handover"]],
    "codeowners": [["codeowners"], ["codeowners", "--check"], ["codeowners", "--write"]],
    "plan": [["plan", "--base", "HEAD", "--format", f] for f in ("text", "json", "markdown")],
    "audit": [["audit", "--cluster", "train-east", "--nodes", NODES_FILE, "--format", f]
              for f in ("text", "json", "sarif", "github", "junit")]
    + [["audit", "--cluster", "train-east", "--nodes", NODES_FILE, "--clusterpolicies", NODES_FILE],
       ["audit", "--cluster", "train-east", "--nodes", NODES_FILE, "--clusterpolicies", "clusterpolicies.json"]],
    "import": [["import", "--nodes", NODES_FILE, "--name", "drafted"],
               ["import", "--nodes", NODES_FILE, "--name", "drafted", "--clusterpolicies", "clusterpolicies.json",
                "--helm-values", "helm-values.json", "--helm-release", "helm-list.json"]],
    "verify": [["verify", "--rendered", "out-base", "--chart", CHART_DIR, "--format", f]
               for f in ("text", "json")],
    "gate": [["gate", "--cluster", "train-east", "--nodes", NODES_FILE, "--clusterpolicies", "clusterpolicies.json",
              "--jobs", JOBS_FILE, "--rendered", "out-base", "--format", f] for f in ("text", "json", "markdown")]
    + [["gate", "--cluster", "train-east", "--pool", "h100", "--nodes", NODES_FILE, "--rendered", "out-base"]],
    "acceptance": [["acceptance", "report", "--cluster", "train-east", "--jobs", JOBS_FILE, "--rendered", "out-base",
                    "--format", f] for f in ("text", "json", "markdown")],
    # A rendered tree changed by hand, or holding special files, read back by the commands that read it.
    "rendered": [["render", "--check", "--out", "out-base"], ["render", "--out", "out-base"],
                 ["verify", "--rendered", "out-base", "--chart", CHART_DIR]],
    # The same commands with the user cache on, after one of its entries was tampered with.
    "cache": [["validate"], ["lint"], ["lint", "--format", "json"], ["render", "--out", "out"], ["images"]],
    # The pull-request gate: a rendered tree committed at the base, changed by the "pull request" (hand edits,
    # special files) or left stale by a changed input; a hand edit of the bytes must never pass.
    "gate-base": [["render", "--check", "--out", GATE_OUT, "--base", "HEAD"]],
    # Every path gpuspec writes by name, replaced by a link (into .git, out of the repository), a FIFO, a device.
    "output": [["lint", "--format", "json", "--output", REPORT_FILE], ["validate", "--output", REPORT_FILE],
               ["plan", "--base", "HEAD", "--output", REPORT_FILE],
               ["audit", "--cluster", "train-east", "--nodes", NODES_FILE, "--output", REPORT_FILE],
               ["codeowners", "--write"], ["codeowners", "--check"]],
    # Exports of tens of megabytes (a kubectl list of many nodes), read within their memory budget.
    "big-export": [["audit", "--cluster", "train-east", "--nodes", BIG_EXPORT],
                   ["acceptance", "report", "--cluster", "train-east", "--jobs", BIG_EXPORT, "--rendered", "out-base"]],
}
#: How often each command is picked, relative to the others (verify runs helm: fewer of those).
WEIGHTS: dict[str, int] = {name: 10 for name in COMMANDS} | {"verify": 1, "plan": 5, "lint-base": 5, "rendered": 3,
                                                             "cache": 4, "gate": 5, "acceptance": 5, "gate-base": 6,
                                                             "output": 4, "big-export": 1}


@dataclass
class Case:
    """One fuzz input: the command line and the files it changes (path → text, bytes as latin-1, or a kind)."""

    args: list[str]
    files: dict[str, dict[str, str]] = field(default_factory=dict)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """The case as JSON-ready data (the saved regression fixture)."""
        return {"args": self.args, "files": self.files, "note": self.note}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Case:
        """A case read back from a saved fixture."""
        return cls(list(data["args"]), dict(data["files"]), str(data.get("note", "")))

    def ident(self) -> str:
        """A stable id of the case (its content hash)."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Outcome:
    """What one run did: exit code, seconds, and why it failed (empty when it did not)."""

    code: int
    seconds: float
    problems: list[str]


# --- hostile values -----------------------------------------------------------------------------------------

def _hostile_values() -> list[Any]:
    return [
        None, True, False, 0, -1, 2**63, 10**40, 1.5, float("inf"), "", " ", "0", "1.34", "v26.7.0", "580",
        "all", "none", "mixed", "H100-SXM5-80GB", "1g.10gb", "mig-1g.10gb", "NoSchedule", "../../..", "/etc/passwd",
        "a" * 300, "x" * 20_000, "line1\nline2: forged", "tab\there", "nul\x00byte", "\u2028sep", "ünïcødé ✓",
        "<img src=x onerror=alert(1)>", "@octocat", "<!-- gpuspec-plan -->", "![i](https://evil.example/i.png)",
        "`code` | pipe", "{{ .Values }}", "${HOME}", "*", "&", "!!python/object", "%", "- item",
        f"https://deploy:{CANARY}@git.example/fleet.git", f"http://proxy:{CANARY}@proxy.example:3128",
        f"ghp_{CANARY}{'A' * 30}", {"password": CANARY}, {"apiKey": CANARY}, {"token": f"x{CANARY}"},
        [], {}, [None], [[[]]], {"": ""}, {"name": "x"}, _deep(80), list(range(50)),
    ]


def _deep(depth: int) -> Any:
    node: Any = "leaf"
    for _ in range(depth):
        node = {"k": node}
    return node


_TEXT_SNIPPETS = [
    "&a ", "*a", "<<: *a\n", "x: &a {<<: *a}\n", "!!python/object:os.system ", "!Ref ", "---\n", "...\n", "%YAML 1.1\n",
    "\t", "{", "}", "[", "]", ": ", "- ", "? ", "|\n", ">\n", "'", '"', "#", "\n", "\r\n", "\x00", "\ufeff",
    "9" * 5000, "-0", "0x1F", "0o17", "1e309", ".inf", ".nan", "~", "null", "yes", "on", "=", "\\",
    f"password: {CANARY}\n", f"  apiKey: {CANARY}\n", f"url: https://u:{CANARY}@h.example/x\n",
]


#: Plain scalars written as text (what a YAML dumper would quote or cannot produce).
_SCALARS = ["9" * 5000, "-" + "1" * 4400, "0x" + "f" * 2000, "0o777", "1e400", ".nan", "*a", "&a x", "!!binary aGk=",
            "!!python/name:os.system", "<<", "~", "{a: [", "[*a]", "|", ">-", "@x", "`x`", f"https://u:{CANARY}@x.example",
            f"ghp_{CANARY}{'B' * 30}", "'unterminated", '"\\x00"', '"\\ud800"', "yes", "2026-13-45", "12:30:00"]


# --- mutations ----------------------------------------------------------------------------------------------

def tree_paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of ``node`` and of every mapping value and list item below it, parents first."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from tree_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from tree_paths(value, (*prefix, index))


def mutate_data(doc: Any, rng: random.Random) -> tuple[Any, str]:
    """A copy of ``doc`` with one to three random structural changes, and their description."""
    doc = copy.deepcopy(doc)
    notes = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        paths = list(tree_paths(doc))
        path = rng.choice(paths)
        action = rng.choice(("tweak",) * 6 + ("replace", "replace", "delete", "add", "duplicate", "wrap"))
        value = copy.deepcopy(rng.choice(_hostile_values()))
        if not path:
            if action in ("replace", "wrap"):
                doc = value if action == "replace" else [doc]
            notes.append(f"{action} root")
            continue
        parent: Any = doc
        for part in path[:-1]:
            parent = parent[part]
        last = path[-1]
        target = parent[last]
        if action == "tweak":
            parent[last] = _tweak(target, rng)
        elif action == "replace":
            parent[last] = value
        elif action == "delete":
            del parent[last]
        elif action == "add" and isinstance(target, dict):
            key = rng.choice(["password", "extra", "name", "", "nodeSelector", "apiKey", "x" * 100, "<b>"])
            target[key] = value
        elif action == "add" and isinstance(target, list):
            target.append(value if rng.random() < 0.5 else copy.deepcopy(rng.choice(target) if target else value))
        elif action == "duplicate" and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(target))
        elif action == "wrap":
            parent[last] = [target] if rng.random() < 0.5 else {"value": target}
        else:
            parent[last] = value
        notes.append(f"{action} {'.'.join(map(str, path))}")
    return doc, "; ".join(notes)


_PLAUSIBLE = ["operator", "precompiled", "host", "single", "mixed", "none", "time-slicing", "mps", "argocd",
              "flux", "ubuntu", "rhel", "rhcos", "22.04", "24.04", "9.4", "v25.10.1", "v26.3.0", "v24.9.2", "570",
              "580", "535", "580.95.05", "1.29", "1.31", "1.34", "NoSchedule", "NoExecute", "all-1g.10gb",
              "all-disabled", "A100-SXM4-80GB", "H100-SXM5-80GB", "L40S", "T4", "B200", "gpu-operator",
              "kube-system", "default", "stable", "canary", "dc-north", "strict", "acme", "open", "proprietary"]


def _tweak(value: Any, rng: random.Random) -> Any:
    """A plausible neighbour of a scalar (another count, another enum value), so deeper checks run."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([0, 1, 2, 3, 4, 7, 8, 16, 64, 100, -1, value + 1, value * 2, max(value - 1, 0)])
    if isinstance(value, str):
        return rng.choice([*_PLAUSIBLE, value + "-x", value.upper(), value[: len(value) // 2], value * 2])
    if isinstance(value, list) and value:
        return value[: rng.randrange(len(value))] if rng.random() < 0.5 else [*value, copy.deepcopy(value[0])]
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        return {k: v for k, v in value.items() if k != key}
    return value


def mutate_text(text: str, rng: random.Random) -> tuple[str, str]:
    """``text`` with one to four random textual changes, and their description."""
    notes = []
    for _ in range(rng.choice((1, 1, 2, 4))):
        action = rng.choice(("scalar", "scalar", "insert", "insert", "delete", "duplicate-line", "swap-lines",
                             "truncate", "indent"))
        position = rng.randrange(len(text) + 1)
        if action == "scalar":  # one "key: value" gets a hostile plain scalar
            lines = text.split("\n")
            candidates = [i for i, line in enumerate(lines) if ": " in line and not line.rstrip().endswith(":")]
            if candidates:
                i = rng.choice(candidates)
                key = lines[i].split(": ", 1)[0]
                lines[i] = f"{key}: {rng.choice(_SCALARS)}"
                text = "\n".join(lines)
        elif action == "insert":
            text = text[:position] + rng.choice(_TEXT_SNIPPETS) + text[position:]
        elif action == "delete":
            text = text[:position] + text[position + rng.randrange(1, 40):]
        elif action in ("duplicate-line", "swap-lines", "indent"):
            lines = text.split("\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if action == "duplicate-line":
                lines.insert(i, lines[j])
            elif action == "swap-lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines[i] = " " * rng.choice((1, 2, 3, 8)) + lines[i]
            text = "\n".join(lines)
        else:
            text = text[:position]
        notes.append(action)
    return text, "text: " + ", ".join(notes)


def _special(rng: random.Random) -> dict[str, str]:
    kind = rng.choice(("outside", "proc-environ", "dev-zero", "fifo", "directory", "loop", "empty", "oversized",
                       "latin1", "git-config"))
    return {"kind": kind}


def _dump(doc: Any, json_style: bool) -> str:
    if json_style:
        return json.dumps(doc, indent=1, default=str)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10_000)


def _original_matrix_loader() -> Any:
    from gpuspec.matrix import load as matrix_load

    return matrix_load._load_matrix


#: The matrix loader as gpuspec defines it (memoised), and the matrix it gave with caching off.
_MATRIX_LOADER = _original_matrix_loader()
_TRUSTED_MATRIX: dict[str, Any] = {}


def _acceptance_export(rendered: Path) -> dict[str, Any]:
    """The acceptance namespace as `kubectl get jobs,pods -o json` shows it after every rendered Job passed."""
    items: list[dict[str, Any]] = []
    done = "2026-12-01T10:01:00Z"
    for path in sorted(rendered.glob("clusters/*/acceptance/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or doc.get("kind") != "Job":
                continue
            job = copy.deepcopy(doc)
            job["status"] = {"startTime": "2026-12-01T10:00:00Z", "completionTime": done, "succeeded": 1,
                             "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": done}]}
            items.append(job)
            labels = {**doc["metadata"].get("labels", {}), "job-name": doc["metadata"]["name"]}
            items.append({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"{doc['metadata']['name']}-a1b2c", "namespace": "gpuspec-acceptance",
                                       "labels": labels},
                          "spec": {"nodeName": "gpu-node-1"},
                          "status": {"phase": "Succeeded", "conditions": [
                              {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-01T10:00:01Z"},
                              {"type": "Ready", "status": "False", "reason": "PodCompleted",
                               "lastTransitionTime": done}],
                              "containerStatuses": [{"name": "gpu", "state": {"terminated": {
                                  "exitCode": 0, "finishedAt": done, "message": '{"busbw_gbps": 180.5}'}}}]}})
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _pinned_release() -> str:
    """The GPU Operator release the example fleet's clusters pin (read from the fleet)."""
    from gpuspec.model.resolve import operator_version
    from gpuspec.pipeline.validate import validate_fleet

    fleet = validate_fleet(REPO / "fleet").fleet
    versions = sorted({v for c in fleet.clusters if (v := operator_version(fleet, c))}) if fleet else []
    return versions[0] if versions else "v26.7.0"


class Workspace:
    """The example repository (fleet, policies, node JSON, one git commit) in a temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        shutil.copytree(REPO / "fleet", root / "fleet")
        shutil.copytree(REPO / "policies", root / "policies")
        shutil.copyfile(AUDIT_NODES, root / NODES_FILE)
        for name in EXPORT_FILES:
            shutil.copyfile(BROWNFIELD / name, root / name)
        shutil.copytree(MINI_CHART, root / CHART_DIR)
        # The stub chart at the release the example fleet pins, so verify really runs helm on it.
        meta = root / CHART_DIR / "Chart.yaml"
        pinned = _pinned_release()
        meta.write_text(meta.read_text().replace("v25.10.1", pinned))
        self.outside = root.parent / "outside.yaml"
        self.outside.write_text(f"apiVersion: gpuspec.io/v1alpha1\nsecret: {OUTSIDE_MARK}\n")
        from gpuspec.cli.main import run as run_cli

        argv = sys.argv
        sys.argv = ["gpuspec", "render", "--out", str(root / GATE_OUT)]
        try:  # committed with the base: what the pull-request gate trusts
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                run_cli()
        finally:
            sys.argv = argv
        self.pristine_gate = root.parent / "gate-pristine"
        shutil.copytree(root / GATE_OUT, self.pristine_gate, symlinks=True)
        self.gate_files = sorted(p.relative_to(root).as_posix() for p in (root / GATE_OUT).rglob("*")
                                 if p.is_file())
        git = ["git", "-c", "user.name=fuzz", "-c", "user.email=fuzz@example.invalid", "-c", "commit.gpgsign=false"]
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
        self.git = git
        self.base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                                   text=True).stdout.strip()
        subprocess.run(["git", "config", "--local", "http.https://github.com/.extraheader",
                        f"AUTHORIZATION: basic {GIT_MARK}"], cwd=root, check=True)
        (root / "fleet" / "templates").mkdir(exist_ok=True)
        (root / LEAK).symlink_to(root / ".git" / "config")
        self.originals = {rel: (root / rel).read_bytes()
                          for rel in (*FLEET_FILES, *POLICY_FILES, NODES_FILE, *EXPORT_FILES, *CHART_FILES)}
        self.docs = {rel: (json.loads(data) if rel.endswith(".json") else yaml.safe_load(data))
                     for rel, data in self.originals.items() if not rel.startswith(f"{CHART_DIR}/templates/")}
        self.git_config = (root / ".git" / "config").read_bytes()
        sys.argv = ["gpuspec", "render", "--out", str(root / "out-base")]
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                run_cli()
        finally:
            sys.argv = argv
        (root / JOBS_FILE).write_text(json.dumps(_acceptance_export(root / "out-base"), indent=1))
        self.originals[JOBS_FILE] = (root / JOBS_FILE).read_bytes()
        self.docs[JOBS_FILE] = json.loads(self.originals[JOBS_FILE])
        self.pristine_out = root.parent / "out-pristine"
        shutil.copytree(root / "out-base", self.pristine_out, symlinks=True)
        self.rendered_files = sorted(p.relative_to(root).as_posix() for p in (root / "out-base").rglob("*")
                                     if p.is_file())
        # A user cache of the workspace's own, filled by the commands the cache cases run, then kept as it was.
        self.cache = root.parent / "cache"
        self.pristine_cache = root.parent / "cache-pristine"
        with self.cache_on():
            for args in (["validate"], ["lint"], ["render", "--out", str(root.parent / "warm")], ["images"]):
                sys.argv = ["gpuspec", *args]
                try:
                    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                        run_cli()
                finally:
                    sys.argv = argv
        shutil.copytree(self.cache, self.pristine_cache, symlinks=True)
        # The streams every run prints to, emptied before each run.  One pair for the whole fuzz run: click keeps a
        # text wrapper for each stream object it has written to, in a weak-keyed map whose value is the stream
        # itself, so a new StringIO per run would stay alive with everything printed to it (about 16 KiB a run).
        self.stdout, self.stderr = io.StringIO(), io.StringIO()
        self.cache_entries = sorted(p.relative_to(self.cache).as_posix() for p in self.cache.rglob("*")
                                    if p.is_file() and "locks" not in p.parts)

    @contextlib.contextmanager
    def cache_on(self) -> Iterator[None]:
        """The user cache on (in the workspace's folder, with a key of its own) for the duration."""
        from gpuspec.matrix import load as matrix_load

        trusted = _TRUSTED_MATRIX.setdefault("matrix", matrix_load.load_matrix())  # read with caching off
        saved = {k: os.environ.get(k) for k in ("GPUSPEC_NO_CACHE", "GPUSPEC_CACHE_DIR", "GPUSPEC_CACHE_KEY")}
        os.environ.pop("GPUSPEC_NO_CACHE", None)
        os.environ["GPUSPEC_CACHE_DIR"] = str(self.cache)
        os.environ["GPUSPEC_CACHE_KEY"] = "fuzz-workspace-cache-key-7f3a9c"
        # The run reads the matrix through the (tampered) cache, not from memory; afterwards the other runs get the
        # matrix read from the packaged files again, without paying for reading it once more.
        setattr(matrix_load, "_load_matrix", _MATRIX_LOADER)  # noqa: B010
        _MATRIX_LOADER.cache_clear()
        try:
            yield
        finally:
            _MATRIX_LOADER.cache_clear()
            setattr(matrix_load, "_load_matrix", lambda: trusted)  # noqa: B010
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def tamper_cache(self, spec: dict[str, str]) -> None:
        """Change one cache entry as an attacker sharing the cache folder could."""
        if not self.cache_entries:
            return
        path = self.cache / self.cache_entries[int(spec["entry"]) % len(self.cache_entries)]
        how = spec["how"]
        data = path.read_bytes()
        path.unlink()
        if how == "flip" and data:
            at = int(spec["at"]) % len(data)
            path.write_bytes(data[:at] + bytes([data[at] ^ 0x41]) + data[at + 1:])
        elif how == "truncate":
            path.write_bytes(data[: int(spec["at"]) % (len(data) + 1)])
        elif how == "pickle":  # what the pickle-based cache used to load: it must never run
            path.write_bytes(b"cos\nsystem\n(S'echo " + CANARY.encode() + b"'\ntR.")
        elif how == "json":  # well-formed but unsealed data claiming to be the entry
            path.write_bytes(json.dumps({"password": CANARY, "clusters": []}).encode())
        elif how == "link-git":
            path.symlink_to(self.root / ".git" / "config")
        elif how == "oversized":
            with path.open("wb") as handle:
                handle.truncate(2 * 1024**3)
        elif how == "fifo":
            os.mkfifo(path)
        elif how == "open-folder":  # a folder others may write: the cache must not be used
            path.write_bytes(data)
            path.parent.chmod(0o777)
        else:
            path.write_bytes(data)

    def commit_base(self, rel: str, spec: dict[str, str]) -> None:
        """Commit ``spec`` as ``rel`` on top of the base revision, keeping the work tree as it was."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if spec.get("kind") == "blob":
            path.write_bytes(b"a: " + b"x" * int(spec["size"]) + b"\n")
        else:
            path.write_text(spec["text"], encoding="utf-8", errors="surrogatepass")
        subprocess.run(["git", "add", "-A", "--", rel], cwd=self.root, check=True)
        subprocess.run([*self.git, "commit", "-qm", "mutated base", "--no-verify", "--allow-empty"], cwd=self.root,
                       check=True,
                       capture_output=True)
        if rel in self.originals:
            path.write_bytes(self.originals[rel])
        else:
            path.unlink()

    def apply(self, case: Case) -> None:
        """Write the case's files into the repository."""
        for rel, spec in case.files.items():
            if rel == "@cache":
                self.tamper_cache(spec)
                continue
            if rel.startswith("@base:"):
                self.commit_base(rel.removeprefix("@base:"), spec)
                continue
            path = self.root / rel
            self._remove(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            kind = spec.get("kind", "text")
            if kind == "text":
                path.write_text(spec["text"], encoding="utf-8", errors="surrogatepass")
            elif kind == "outside":
                path.symlink_to(self.outside)
            elif kind == "git-config":
                path.symlink_to(self.root / ".git" / "config")
            elif kind == "proc-environ":
                path.symlink_to("/proc/self/environ")
            elif kind == "dev-zero":
                path.symlink_to("/dev/zero")
            elif kind == "fifo":
                os.mkfifo(path)
            elif kind == "directory":
                path.mkdir()
            elif kind == "loop":
                path.symlink_to(path.name)
            elif kind == "empty":
                path.write_bytes(b"")
            elif kind == "oversized":
                path.write_bytes(b"a: " + b"x" * (1024 * 1024 + 10) + b"\n")
            elif kind == "latin1":
                path.write_bytes(self.originals.get(rel, b"a: 1\n") + b"\nnote: caf\xe9\n")
            elif kind == "big-export":
                self._big_export(path, spec)

    def reset(self, case: Case) -> None:
        """Put back what the case changed."""
        for rel in case.files:
            if rel == "@cache":
                continue
            if rel.startswith("@base:"):
                subprocess.run(["git", "reset", "-q", self.base], cwd=self.root, check=True)
                continue
            path = self.root / rel
            self._remove(path)
            if rel in self.originals:
                path.write_bytes(self.originals[rel])
            elif rel == LEAK:
                path.symlink_to(self.root / ".git" / "config")
        if "@cache" in case.files:
            if self.cache.exists():
                for folder in (p for p in self.cache.rglob("*") if p.is_dir() and not p.is_symlink()):
                    folder.chmod(0o700)
            shutil.rmtree(self.cache, ignore_errors=True)
            shutil.copytree(self.pristine_cache, self.cache, symlinks=True)
        if any(rel.startswith(f"{GATE_OUT}/") for rel in case.files):
            shutil.rmtree(self.root / GATE_OUT, ignore_errors=True)
            shutil.copytree(self.pristine_gate, self.root / GATE_OUT, symlinks=True)
        for rel in (REPORT_FILE, CODEOWNERS_FILE, BIG_EXPORT):
            self._remove(self.root / rel)
        if any(rel.startswith("out-base/") for rel in case.files) or case.args[-2:] == ["--out", "out-base"]:
            shutil.rmtree(self.root / "out-base", ignore_errors=True)
            shutil.copytree(self.pristine_out, self.root / "out-base", symlinks=True)
        shutil.rmtree(self.root / "out", ignore_errors=True)
        shutil.rmtree(self.root / "out-handover", ignore_errors=True)
        draft = self.root / "fleet" / "clusters" / "drafted.yaml"
        if draft.exists():
            draft.unlink()

    def _big_export(self, path: Path, spec: dict[str, str]) -> None:
        """Write a kubectl list of about ``spec['size']`` bytes: the first item of the source export repeated."""
        items = json.loads(self.originals[spec["source"]]).get("items") or [{}]
        item = json.dumps(items[0]).encode()
        count = max(1, int(spec["size"]) // (len(item) + 2))
        with path.open("wb") as handle:
            handle.write(b'{"apiVersion": "v1", "kind": "List", "items": [')
            for index in range(count):
                handle.write((b"," if index else b"") + item)
            if spec.get("cut") != "True":
                handle.write(b"]}")

    @staticmethod
    def _remove(path: Path) -> None:
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)


_CACHE_TAMPERING = ("flip", "flip", "truncate", "pickle", "json", "link-git", "oversized", "fifo", "open-folder")


def _rendered_case(ws: Workspace, rng: random.Random, args: list[str]) -> Case:
    """A file of the rendered tree edited by hand (as data or text) or replaced by a special file."""
    target = rng.choice(ws.rendered_files)
    roll = rng.random()
    if roll < 0.2:
        return Case(args, {target: _special(rng)}, "rendered special file")
    original = (ws.root / target).read_bytes().decode("utf-8", errors="replace")
    if roll < 0.5 and target.endswith((".yaml", ".yml")):
        with contextlib.suppress(yaml.YAMLError):
            docs = list(yaml.safe_load_all(original))
            if docs:
                index = rng.randrange(len(docs))
                docs[index], note = mutate_data(docs[index], rng)
                text = yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True, width=10_000)
                return Case(args, {target: {"kind": "text", "text": text}}, f"rendered {target} {note}")
    text, note = mutate_text(original, rng)
    return Case(args, {target: {"kind": "text", "text": text}}, f"rendered {target} {note}")


def _base_case(ws: Workspace, rng: random.Random, args: list[str]) -> Case | None:
    """The base revision's history mutated: a fleet or policy file committed in a changed form."""
    if rng.random() < 0.4:
        return None
    target = rng.choice([*FLEET_FILES, *POLICY_FILES, "fleet/clusters/extra.yaml"])
    if rng.random() < 0.05:
        return Case(args, {f"@base:{target}": {"kind": "blob", "size": str(rng.choice((10, 2 * 1024**2)))}},
                    "base blob")
    original = ws.originals.get(target, ws.originals["fleet/clusters/infer-north.yaml"]).decode("utf-8")
    if rng.random() < 0.6:
        mutated, note = mutate_data(ws.docs.get(target, ws.docs["fleet/clusters/infer-north.yaml"]), rng)
        text = _dump(mutated, False)
    else:
        text, note = mutate_text(original, rng)
    return Case(args, {f"@base:{target}": {"kind": "text", "text": text}}, f"base {target} {note}")


def _gate_case(ws: Workspace, rng: random.Random, args: list[str]) -> Case:
    """A pull request against the committed rendered tree: a hand edit or special file there (a forgery), or a
    changed input left unrendered (stale output), or both."""
    files: dict[str, dict[str, str]] = {}
    notes = []
    if rng.random() < 0.8:
        target = rng.choice(ws.gate_files)
        if rng.random() < 0.15:
            files[target] = _special(rng)
            notes.append(f"gate special {target}")
        else:
            original = (ws.root / target).read_bytes().decode("utf-8", errors="replace")
            text, note = mutate_text(original, rng)
            files[target] = {"kind": "text", "text": text}
            notes.append(f"gate forged {target} {note}")
    if rng.random() < 0.7:  # without the planted link the unchanged clusters are taken from the base
        files[LEAK] = {"kind": "absent"}
    if len(files) < 2 or rng.random() < 0.3:
        target = rng.choice(FLEET_FILES)
        mutated, note = mutate_data(ws.docs[target], rng)
        files[target] = {"kind": "text", "text": _dump(mutated, False)}
        notes.append(f"gate input {target} {note}")
    return Case(args, files, "; ".join(notes))


def _output_case(rng: random.Random, args: list[str]) -> Case:
    """A report or CODEOWNERS path replaced by a link, a FIFO or a device (or left alone)."""
    target = CODEOWNERS_FILE if args[0] == "codeowners" else REPORT_FILE
    if rng.random() < 0.2:
        return Case(args, {}, f"{target} absent")
    return Case(args, {target: _special(rng)}, f"{target} special")


def _big_export_case(rng: random.Random, args: list[str]) -> Case:
    """An export of 8-48 MB: one item repeated (nodes, or Jobs and Pods), sometimes cut short."""
    size = rng.choice((8, 24, 48)) * 1024**2
    return Case(args, {BIG_EXPORT: {"kind": "big-export", "size": str(size), "cut": str(rng.random() < 0.2),
                                    "source": JOBS_FILE if args[0] == "acceptance" else NODES_FILE}},
                f"export of {size // 1024**2} MB")


def make_case(ws: Workspace, rng: random.Random, command: str) -> Case:
    """A random input for ``command``."""
    args = list(rng.choice(COMMANDS[command]))
    if command == "rendered":
        return _rendered_case(ws, rng, args)
    if command == "gate-base":
        return _gate_case(ws, rng, args)
    if command == "output":
        return _output_case(rng, args)
    if command == "big-export":
        return _big_export_case(rng, args)
    if command == "cache":
        tamper = {"entry": str(rng.randrange(1 << 30)), "how": rng.choice(_CACHE_TAMPERING),
                  "at": str(rng.randrange(1 << 30))}
        return Case(args, {"@cache": tamper}, f"cache {tamper['how']}")
    if command in ("lint-base", "plan"):
        based = _base_case(ws, rng, args)
        if based is not None:
            return based
    if command in ("audit", "import") and rng.random() < 0.8:
        target = NODES_FILE if rng.random() < 0.6 else rng.choice(EXPORT_FILES)
    elif command in ("gate", "acceptance") and rng.random() < 0.8:
        target = rng.choice((JOBS_FILE, JOBS_FILE, NODES_FILE, "clusterpolicies.json"))
    elif command.startswith("lint") and rng.random() < 0.3:
        target = rng.choice(POLICY_FILES)
    elif command in ("render", "render-check", "handover", "plan") and rng.random() < 0.15:
        target = TEMPLATE_FILE
    elif command == "verify" and rng.random() < 0.5:
        target = rng.choice(CHART_FILES)
    elif rng.random() < 0.05:
        target = "fleet/clusters/extra.yaml"
    else:
        target = rng.choice(FLEET_FILES)
    roll = rng.random()
    if roll < 0.05 and target != NODES_FILE:
        return Case(args, {target: _special(rng)}, "special file")
    if target == TEMPLATE_FILE:  # a fleet override of the handover template, mutated as text
        text, note = mutate_text(SHIPPED_TEMPLATE.read_text(encoding="utf-8"), rng)
        if rng.random() < 0.3:
            payload = rng.choice(TEMPLATE_PAYLOADS)
            text, note = text + "\n" + payload + "\n", f"payload {payload}"
        return Case(args, {target: {"kind": "text", "text": text}}, "template " + note)
    original = ws.originals.get(target, ws.originals["fleet/clusters/infer-north.yaml"]).decode("utf-8")
    doc = ws.docs.get(target, ws.docs["fleet/clusters/infer-north.yaml"])
    if target.startswith(f"{CHART_DIR}/templates/"):  # Go templates: text changes only
        roll = 1.0
    if roll < 0.6:
        mutated, note = mutate_data(doc, rng)
        text = _dump(mutated, target.endswith(".json"))
    else:
        text, note = mutate_text(original, rng)
    if target == "fleet/clusters/extra.yaml" and rng.random() < 0.5:
        text = text.replace("name: infer-north", "name: extra", 1)
    return Case(args, {target: {"kind": "text", "text": text}}, note)


# --- running ------------------------------------------------------------------------------------------------

#: A run still going after this many seconds is stopped and counted as a hang.
HANG_SECONDS = 60


class _Hang(BaseException):
    """Raised by the alarm in a run that takes longer than :data:`HANG_SECONDS` (not an Exception, so gpuspec's
    own error handling does not swallow it)."""


def _alarm(_signum: int, _frame: object) -> None:
    raise _Hang


#: What precedes the canary where a mutation planted it as a credential (key, URL userinfo, token), in YAML,
#: flow YAML and JSON.  A later mutation may cut the context (``apiK~ey:``, ``word:``, a URL's ``//`` that makes
#: ``du:<canary>@host`` out of it, which reads as ``image:tag@digest`` does); then the canary is plain text,
#: which gpuspec may show, and is not checked.
PLANTED = ("password: ", "apiKey: ", "token: x", '"password": "', '"apiKey": "', '"token": "x', "//u:", "//deploy:",
           "//proxy:", "ghp_")


def planted(case: Case) -> bool:
    """True when some file of ``case`` still holds the canary as a credential (an intact planted form)."""
    for spec in case.files.values():
        text = spec.get("text", "")
        start = text.find(CANARY)
        while start >= 0:
            tail = text[start + len(CANARY): start + len(CANARY) + 20]
            token_intact = not text.endswith("ghp_", 0, start) or (len(tail) == 20 and tail.isalnum())
            # Inside a double-quoted YAML string opened earlier on its line, a planted "key: value" is only the
            # text of another value (a group name, a description), which gpuspec renders as it is.
            line = text[text.rfind("\n", 0, start) + 1:start]
            json_form = any(text.endswith(prefix, 0, start) for prefix in PLANTED if prefix.startswith('"'))
            quoted = not json_form and line.count('"') % 2 == 1
            if token_intact and not quoted and any(text.endswith(prefix, 0, start) for prefix in PLANTED):
                return True
            start = text.find(CANARY, start + 1)
    return False


def run_case(ws: Workspace, case: Case) -> Outcome:
    """Run one case in-process in the workspace and judge it."""
    from gpuspec.cli.main import run as run_cli

    ws.apply(case)
    out, err = ws.stdout, ws.stderr
    for stream in (out, err):
        stream.seek(0)
        stream.truncate()
    argv = sys.argv
    started = time.monotonic()
    cpu_started = _cpu()
    problems: list[str] = []
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    peak_before = _reset_peak()
    try:
        sys.argv = ["gpuspec", *case.args]
        cache = ws.cache_on() if "@cache" in case.files else contextlib.nullcontext()
        with cache, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_cli()
    except _Hang:
        code = -1
        problems.append(f"hung: stopped after {HANG_SECONDS} s")
    except BaseException as exc:  # anything escaping run() is a finding
        code = -1
        problems.append(f"escaped run(): {type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        sys.argv = argv
    seconds = time.monotonic() - started
    cpu = _cpu() - cpu_started
    text = out.getvalue() + err.getvalue()
    if code not in (0, 1, 2):
        problems.append(f"exit code {code}")
    if "internal error" in text or "Traceback" in text:
        problems.append("internal error: " + err.getvalue()[-400:])
    if "GS000" in text:
        problems.append("a rule crashed (GS000)")
    if OUTSIDE_MARK in text:
        problems.append("a file outside the repository reached the output")
    if GIT_MARK in text:
        problems.append("the .git/config extraheader reached the output")
    if ENV_MARK in text:
        problems.append("a secret of the environment reached the output")
    if case.args[:1] == ["render"] and "--base" in case.args and code == 0 and _forged(ws, case):
        problems.append("a hand-edited rendered file passed the pull-request gate")
    if (ws.root / ".git" / "config").read_bytes() != ws.git_config:
        problems.append(".git/config was changed")
        (ws.root / ".git" / "config").write_bytes(ws.git_config)
    if OUTSIDE_MARK not in ws.outside.read_text(errors="replace"):
        problems.append("the file outside the repository was changed")
    peak = _peak_bytes()
    if peak_before <= MEMORY_BOUND < peak:
        problems.append(f"peak memory {peak / 1024**2:.0f} MiB")
    if CANARY in text and planted(case):
        problems.append("the canary credential reached the output")
    if cpu > SLOW_SECONDS:
        problems.append(f"took {cpu:.1f} s of CPU ({seconds:.1f} s wall)")
    written = [ws.root / "out", ws.root / "out-handover"]
    check_canary = planted(case)
    if case.args[-2:] == ["--out", "out-base"]:  # a rendered tree given as input: only what it cannot hold
        written.append(ws.root / "out-base")
        check_canary = False
    marks = [m.encode() for m in (OUTSIDE_MARK, GIT_MARK, ENV_MARK)] + ([CANARY.encode()] if check_canary else [])
    for path in (p for folder in written if folder.is_dir() for p in folder.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.stat().st_size > 64 * 1024**2:
            continue
        data = path.read_bytes()
        if any(mark in data for mark in marks):
            problems.append(f"the canary, a secret or an outside file was written to {path.relative_to(ws.root)}")
            break
    ws.reset(case)
    return Outcome(code, seconds, problems)


def _cpu() -> float:
    """CPU seconds of this process and the children it waited for (helm, kubectl, git)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _forged(ws: Workspace, case: Case) -> bool:
    """True when the case changed the bytes of a file of the committed rendered tree (a forgery to refuse)."""
    for rel, spec in case.files.items():
        if not rel.startswith(f"{GATE_OUT}/"):
            continue
        if spec.get("kind") != "text":
            return True
        if spec["text"].encode("utf-8", "surrogatepass") != (ws.pristine_gate / rel.split("/", 1)[1]).read_bytes():
            return True
    return False


def _reset_peak() -> int:
    """Reset the process's peak resident memory to its current size where Linux allows it; return the peak.

    Without the reset (another system, or /proc refusing it) the peak is the whole process's so far, and only
    the run that first takes it over :data:`MEMORY_BOUND` is counted.
    """
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")
    return _peak_bytes()


def _peak_bytes() -> int:
    """The process's peak resident memory since the last reset (Linux's VmHWM) or since it started."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux reports KiB, macOS bytes
    return peak if sys.platform == "darwin" else peak * 1024


def save_case(case: Case, outcome: Outcome, folder: Path) -> Path:
    """Save a failing case as a regression fixture; return its folder."""
    target = folder / case.ident()
    target.mkdir(parents=True, exist_ok=True)
    data = case.to_json()
    data["problems"] = outcome.problems
    (target / "case.json").write_text(json.dumps(data, indent=1, ensure_ascii=True, sort_keys=True) + "\n")
    return target


def load_cases(folder: Path) -> list[tuple[str, Case]]:
    """Every saved regression case below ``folder`` (id, case)."""
    return [(p.parent.name, Case.from_json(json.loads(p.read_text()))) for p in sorted(folder.glob("*/case.json"))]


@contextlib.contextmanager
def workspace() -> Iterator[Workspace]:
    """A fresh workspace, the working directory inside it, no user cache, for the duration."""
    previous = Path.cwd()
    env = {k: os.environ.get(k) for k in ("GPUSPEC_NO_CACHE", "NO_COLOR", "GPUSPEC_DEBUG", *ENV_SECRETS)}
    with tempfile.TemporaryDirectory(prefix="gpuspec-fuzz-") as tmp:
        for key in ENV_SECRETS:  # what a CI job's environment holds: no command may print or write it
            os.environ[key] = ENV_MARK
        os.environ["GPUSPEC_NO_CACHE"] = "1"
        os.environ["NO_COLOR"] = "1"
        os.environ.pop("GPUSPEC_DEBUG", None)
        try:
            ws = Workspace(Path(tmp) / "repo")
        except BaseException:
            os.chdir(previous)
            raise
        os.chdir(ws.root)
        try:
            yield ws
        finally:
            from gpuspec.matrix import load as matrix_load

            setattr(matrix_load, "_load_matrix", _MATRIX_LOADER)  # noqa: B010 (as gpuspec defines it again)
            os.chdir(previous)
            for key, value in env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@dataclass
class Summary:
    """Counts of a fuzz run."""

    inputs: int = 0
    failures: int = 0
    internal_errors: int = 0
    max_seconds: float = 0.0
    slowest: str = ""
    by_command: Counter[str] = field(default_factory=Counter)
    exit_codes: Counter[int] = field(default_factory=Counter)
    saved: list[str] = field(default_factory=list)


def fuzz(inputs: int, seed: int, save: Path | None, report: Callable[[str], None] = print,
         every: int = 1000) -> Summary:
    """Run ``inputs`` random inputs (commands in turn) from ``seed``; save failing ones under ``save``."""
    rng = random.Random(seed)
    names = [name for name, weight in WEIGHTS.items() for _ in range(weight)]
    rng.shuffle(names)
    names = [*COMMANDS, *names]  # every command early, however short the run
    summary = Summary()
    started = time.monotonic()
    with workspace() as ws:
        for index in range(inputs):
            command = names[index % len(names)]
            case = make_case(ws, rng, command)
            outcome = run_case(ws, case)
            summary.inputs += 1
            summary.by_command[command] += 1
            summary.exit_codes[outcome.code] += 1
            if outcome.seconds > summary.max_seconds:
                summary.max_seconds, summary.slowest = outcome.seconds, f"{command}: {case.note}"
            if outcome.problems:
                summary.failures += 1
                if any("internal error" in p or "escaped" in p for p in outcome.problems):
                    summary.internal_errors += 1
                where = save_case(case, outcome, save).name if save is not None else "-"
                summary.saved.append(where)
                report(f"FAIL {command} {case.args} {case.note!r}: {outcome.problems} (saved: {where})")
            if every and (index + 1) % every == 0:
                report(f"{index + 1} inputs, {summary.failures} failures, max {summary.max_seconds:.2f} s, "
                       f"{time.monotonic() - started:.0f} s elapsed")
    return summary


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: run the fuzzer and print its counts (exit 1 when any input failed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", type=Path, default=DEFAULT_SAVE, help="folder for failing inputs")
    parser.add_argument("--no-save", action="store_true", help="do not save failing inputs")
    parser.add_argument("--every", type=int, default=1000, help="print progress every N inputs")
    options = parser.parse_args(argv)
    # A run that reads without bound then fails with MemoryError (a finding) instead of taking the machine.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    started = time.monotonic()
    summary = fuzz(options.inputs, options.seed, None if options.no_save else options.save,
                   report=lambda line: print(line, flush=True), every=options.every)
    print(json.dumps({
        "inputs": summary.inputs, "failures": summary.failures, "internal_errors": summary.internal_errors,
        "max_run_seconds": round(summary.max_seconds, 3), "slowest": summary.slowest,
        "by_command": dict(summary.by_command), "exit_codes": {str(k): v for k, v in summary.exit_codes.items()},
        "total_seconds": round(time.monotonic() - started, 1), "saved": summary.saved,
    }, indent=1, sort_keys=True), flush=True)
    return 1 if summary.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
