"""A GitHub runner in miniature for tests: runs a workflow job or a composite action's steps as the runner does.

``run:`` steps run in ``bash --noprofile --norc -eo pipefail`` with the step's ``env:`` (expressions expanded),
``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_ACTION_PATH`` and ``RUNNER_TEMP``; ``if:`` conditions are
evaluated (``success()``, ``always()``, ``failure()``, ``==``, ``!=``, ``&&``, ``||``, ``!``, contexts); step
outputs are read back.  A ``uses:`` step runs the local copy the test maps its reference to (a composite action's
folder, for the pinned gpuspec action), or a stand-in the test gives for a third-party action (setup-python puts
the runner's Python first on PATH; upload steps record what they would upload).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>&&|\|\||==|!=|!|\(|\)|,)|(?P<num>\d+(?:\.\d+)?)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*))")
_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def _python(expression: str) -> str:
    """A GitHub Actions expression as a Python expression over ``ctx(name)`` and the status functions."""
    out: list[str] = []
    pos = 0
    text = expression.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"cannot read expression {expression!r} at {text[pos:]!r}")
        pos = match.end()
        if match["str"] is not None:
            out.append(repr(match["str"][1:-1].replace("''", "'")))
        elif match["num"] is not None:
            out.append(match["num"])
        elif match["op"] is not None:
            out.append({"&&": " and ", "||": " or ", "!": " not ", "==": " == ", "!=": " != "}.get(match["op"],
                                                                                                     match["op"]))
        else:
            name = match["name"]
            rest = text[pos:].lstrip()
            if rest.startswith("("):
                out.append(f"fn_{name.lower()}")
            elif name in ("true", "false", "null"):
                out.append({"true": "True", "false": "False", "null": "''"}[name])
            else:
                out.append(f"ctx({name!r})")
    return "".join(out)


@dataclass
class Job:
    """What a job (or a composite action run on its own) left behind."""

    log: str = ""
    summary: str = ""
    failed: bool = False
    #: Per step id: its outputs.
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    #: What stand-ins recorded (uploads), in order.
    recorded: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


#: A stand-in for a third-party action: (runner, inputs, job) -> succeeded.
StandIn = Callable[["Runner", dict[str, str], Job], bool]


class Runner:
    """Runs jobs in ``workspace`` with ``path`` as PATH; ``actions`` maps a ``uses:`` reference to a local folder
    holding action.yml, ``stand_ins`` maps a reference prefix (``actions/setup-python@``) to a stand-in."""

    def __init__(self, workspace: Path, temp: Path, path: str, *, env: Mapping[str, str] | None = None,
                 actions: Mapping[str, Path] | None = None, stand_ins: Mapping[str, StandIn] | None = None,
                 github: Mapping[str, Any] | None = None) -> None:
        self.workspace, self.temp, self.path = workspace, temp, path
        self.env = dict(env or {})
        self.actions = dict(actions or {})
        self.stand_ins = dict(stand_ins or {})
        self.github: dict[str, Any] = {"event_name": "push", "repository": "acme/gpu-fleet", "event": {},
                                       **(github or {})}
        self._counter = 0
        temp.mkdir(parents=True, exist_ok=True)

    # -- expressions -------------------------------------------------------------------------------------------
    def evaluate(self, expression: str, contexts: Mapping[str, Any], job: Job) -> Any:
        """The value of one expression (the text inside ``${{ }}``, or a bare ``if:``)."""

        def ctx(name: str) -> Any:
            head, *rest = name.split(".")
            value: Any = contexts.get(head, "")
            for part in rest:
                value = value.get(part, "") if isinstance(value, dict) else ""
            return value

        names = {"ctx": ctx, "fn_always": lambda: True, "fn_success": lambda: not job.failed,
                 "fn_failure": lambda: job.failed, "fn_cancelled": lambda: False,
                 "fn_contains": lambda a, b: str(b).lower() in str(a).lower(),
                 "fn_startswith": lambda a, b: str(a).lower().startswith(str(b).lower())}
        return eval(_python(expression), {"__builtins__": {}}, names)  # a test helper: its own expressions only

    def expand(self, text: Any, contexts: Mapping[str, Any], job: Job) -> str:
        """``text`` with every ``${{ }}`` replaced by its value."""
        def value(match: re.Match[str]) -> str:
            got = self.evaluate(match.group(1), contexts, job)
            return "true" if got is True else "false" if got is False else str(got)

        return _EXPR.sub(value, str(text))

    def condition(self, step: Mapping[str, Any], contexts: Mapping[str, Any], job: Job) -> bool:
        """Whether a step (or job) with this ``if:`` runs."""
        raw = step.get("if")
        if raw is None:
            return not job.failed
        text = str(raw).strip()
        inner = _EXPR.fullmatch(text)
        expression = inner.group(1) if inner else text
        uses_status = re.search(r"\b(always|success|failure|cancelled)\s*\(", expression)
        if not uses_status:
            expression = f"success() && ({expression})"
        return bool(self.evaluate(expression, contexts, job))

    # -- steps -------------------------------------------------------------------------------------------------
    def _shell(self, script: str, env: Mapping[str, str], job: Job, step_id: str | None,
               contexts: dict[str, Any]) -> bool:
        self._counter += 1
        output = self.temp / f"output-{self._counter}"
        summary = self.temp / f"summary-{self._counter}"
        output.touch()
        run_env = {"PATH": self.path, "HOME": str(self.temp / "home"), "NO_COLOR": "1", "CI": "true",
                   "GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(self.temp), "GITHUB_WORKSPACE": str(self.workspace),
                   "GITHUB_EVENT_NAME": str(self.github.get("event_name", "")),
                   "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), **self.env, **env}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=self.workspace,
                              env=run_env, capture_output=True, text=True, timeout=1200, check=False)
        job.log += proc.stdout + proc.stderr
        if summary.exists():
            job.summary += summary.read_text(encoding="utf-8")
        if step_id:
            outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
            job.outputs[step_id] = outputs
            contexts["steps"][step_id] = {"outputs": outputs, "outcome": "success" if proc.returncode == 0
                                          else "failure"}
        return proc.returncode == 0

    def _uses(self, reference: str, inputs: dict[str, str], job: Job, step_id: str | None) -> bool:
        if reference in self.actions:
            return self.composite(self.actions[reference], inputs, job, step_id)
        for prefix, stand_in in self.stand_ins.items():
            if reference.startswith(prefix):
                return stand_in(self, inputs, job)
        raise AssertionError(f"no local copy or stand-in for {reference}")

    def composite(self, folder: Path, with_: Mapping[str, str], job: Job, step_id: str | None = None) -> bool:
        """Run the composite action in ``folder`` with inputs ``with_``; True when it succeeded."""
        action = yaml.safe_load((folder / "action.yml").read_text(encoding="utf-8"))
        unknown = set(with_) - set(action.get("inputs", {}))
        assert not unknown, f"inputs the action does not declare: {sorted(unknown)}"
        inputs = {k: str(v.get("default", "")) for k, v in action.get("inputs", {}).items()}
        inputs |= dict(with_)
        for name, spec in action.get("inputs", {}).items():
            assert not spec.get("required") or inputs.get(name, "") != "" or name in with_, f"input {name} required"
        contexts: dict[str, Any] = {"inputs": inputs, "steps": {}, "github": self.github,
                                    "runner": {"temp": str(self.temp)}, "env": {}}
        own = Job()
        for step in action["runs"]["steps"]:
            if not self.condition(step, contexts, own):
                own.skipped.append(step.get("name", step.get("uses", "")))
                continue
            ok = self._step(step, contexts, own, action_path=folder)
            own.failed = own.failed or not (ok or self._continues(step, contexts, own))
        job.log += own.log
        job.summary += own.summary
        job.failed = job.failed or own.failed
        job.recorded += own.recorded
        job.skipped += own.skipped
        if step_id:
            outputs = {k: self.expand(v.get("value", ""), contexts, own) for k, v in action.get("outputs", {}).items()}
            job.outputs[step_id] = outputs
        return not own.failed

    def action_step(self, folder: Path, name: str, with_: Mapping[str, str], job: Job | None = None) -> Job:
        """Run the one step called ``name`` of the composite action in ``folder`` (its ``if:`` is not consulted)."""
        action = yaml.safe_load((folder / "action.yml").read_text(encoding="utf-8"))
        inputs = {k: str(v.get("default", "")) for k, v in action.get("inputs", {}).items()} | dict(with_)
        contexts: dict[str, Any] = {"inputs": inputs, "steps": {}, "github": self.github,
                                    "runner": {"temp": str(self.temp)}, "env": {}}
        job = job or Job()
        [step] = [s for s in action["runs"]["steps"] if s.get("name") == name]
        job.failed = not self._step(step, contexts, job, action_path=folder)
        return job

    def _step(self, step: Mapping[str, Any], contexts: dict[str, Any], job: Job, action_path: Path | None) -> bool:
        env = {k: self.expand(v, contexts, job) for k, v in (step.get("env") or {}).items()}
        if action_path is not None:
            env["GITHUB_ACTION_PATH"] = str(action_path)
        if "run" in step:
            assert "${{" not in str(step["run"]), "inputs reach run scripts only through env"
            return self._shell(str(step["run"]), env, job, step.get("id"), contexts)
        inputs = {k: self.expand(v, contexts, job) for k, v in (step.get("with") or {}).items()}
        ok = self._uses(str(step["uses"]), inputs, job, step.get("id"))
        if step.get("id"):
            contexts["steps"].setdefault(step["id"], {"outputs": job.outputs.get(step["id"], {})})
            contexts["steps"][step["id"]]["outcome"] = "success" if ok else "failure"
        return ok

    def _continues(self, step: Mapping[str, Any], contexts: Mapping[str, Any], job: Job) -> bool:
        """Whether the step's ``continue-on-error`` is true (a failure then does not fail the job)."""
        return self.expand(step.get("continue-on-error", False), contexts, job).lower() == "true"

    def job(self, workflow: Mapping[str, Any], name: str) -> Job:
        """Run job ``name`` of ``workflow``; a job whose ``if:`` is false runs no step (``skipped`` says so)."""
        spec = workflow["jobs"][name]
        job = Job()
        contexts: dict[str, Any] = {"github": self.github, "steps": {}, "runner": {"temp": str(self.temp)},
                                    "env": {}, "inputs": {}}
        if not self.condition(spec, contexts, job):
            job.skipped.append(f"job {name}")
            return job
        for step in spec["steps"]:
            if not self.condition(step, contexts, job):
                job.skipped.append(step.get("name", step.get("uses", "")))
                continue
            ok = self._step(step, contexts, job, action_path=None)
            job.failed = job.failed or not (ok or self._continues(step, contexts, job))
        return job


def python_first(venv_bin: Path) -> StandIn:
    """A stand-in for actions/setup-python: ``venv_bin`` (a fresh virtualenv's bin) goes first on PATH."""
    def stand_in(runner: Runner, inputs: dict[str, str], job: Job) -> bool:
        runner.path = f"{venv_bin}:{runner.path}"
        job.log += f"setup-python stand-in: python {inputs.get('python-version', '')} from {venv_bin}\n"
        return True
    return stand_in


def recorder(kind: str) -> StandIn:
    """A stand-in that records its inputs (an upload) and succeeds."""
    def stand_in(runner: Runner, inputs: dict[str, str], job: Job) -> bool:
        job.recorded.append((kind, inputs))
        return True
    return stand_in


def no_op(runner: Runner, inputs: dict[str, str], job: Job) -> bool:
    """A stand-in for actions/checkout: the workspace already holds the checkout."""
    return True


def os_path() -> str:
    """The system PATH of a runner without this checkout's tools."""
    return os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin") if Path(p).is_dir())
