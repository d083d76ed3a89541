"""The GitHub workflows and the pre-commit hook manifest: valid against their schemas, calling real commands."""

from __future__ import annotations

import json
import re
import shlex
from importlib import resources
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest

from gpuspec.cli.main import cli
from gpuspec.loader.yamlread import read_yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
HOOKS = REPO / ".pre-commit-hooks.yaml"

#: The manifest format pre-commit reads (pre_commit/clientlib.py MANIFEST_HOOK_DICT), as JSON Schema.
PRE_COMMIT_MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["id", "name", "entry", "language"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
            "name": {"type": "string", "minLength": 1},
            "entry": {"type": "string", "minLength": 1},
            "language": {"enum": [
                "conda", "coursier", "dart", "docker", "docker_image", "dotnet", "fail", "golang", "haskell",
                "julia", "lua", "node", "perl", "pygrep", "python", "r", "ruby", "rust", "script", "swift",
                "system", "unsupported", "unsupported_script",
            ]},
            "alias": {"type": "string"},
            "files": {"type": "string"},
            "exclude": {"type": "string"},
            "types": {"type": "array", "items": {"type": "string"}},
            "types_or": {"type": "array", "items": {"type": "string"}},
            "exclude_types": {"type": "array", "items": {"type": "string"}},
            "additional_dependencies": {"type": "array", "items": {"type": "string"}},
            "args": {"type": "array", "items": {"type": "string"}},
            "always_run": {"type": "boolean"},
            "fail_fast": {"type": "boolean"},
            "pass_filenames": {"type": "boolean"},
            "description": {"type": "string"},
            "language_version": {"type": "string"},
            "log_file": {"type": "string"},
            "minimum_pre_commit_version": {"type": "string"},
            "require_serial": {"type": "boolean"},
            "stages": {"type": "array", "items": {"type": "string"}},
            "verbose": {"type": "boolean"},
        },
    },
}


def workflow_schema() -> dict[str, Any]:
    """The GitHub workflow JSON schema check-jsonschema vendors (SchemaStore's github-workflow.json)."""
    pytest.importorskip("check_jsonschema", reason="the test extra installs check-jsonschema")
    ref = resources.files("check_jsonschema").joinpath("builtin_schemas", "vendor", "github-workflows.json")
    data: dict[str, Any] = json.loads(ref.read_text(encoding="utf-8"))
    return data


def load(path: Path) -> Any:
    """A YAML file read with YAML 1.2 scalars (so the key `on` stays a string, as GitHub reads it)."""
    return read_yaml(path, str(path))


def run_scripts(workflow: Any) -> list[str]:
    """Every `run:` script of every job."""
    return [step["run"] for job in workflow["jobs"].values() for step in job.get("steps", []) if "run" in step]


def uses(workflow: Any) -> list[str]:
    """Every action a workflow uses."""
    return [step["uses"] for job in workflow["jobs"].values() for step in job.get("steps", []) if "uses" in step]


def gpuspec_invocations(script: str) -> list[list[str]]:
    """The argument lists of every `gpuspec ...` command line in a shell script (variables dropped)."""
    calls = []
    for line in script.replace("\\\n", " ").splitlines():  # a line continued with a backslash is one command
        match = re.search(r"(?:^|[;&|]\s*)gpuspec\s+(.*?)(?:\s*(?:\|\||&&|>>?|\|).*)?$", line.strip())
        if match:
            calls.append([a for a in shlex.split(match.group(1)) if not a.startswith("$")])
    return calls


def check_invocation(args: list[str]) -> None:
    """Fail unless ``args`` names a gpuspec command and only options it has."""
    ctx = click.Context(cli)
    command = cli.get_command(ctx, args[0])
    assert command is not None, f"gpuspec has no command {args[0]!r}"
    known = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    for arg in args[1:]:
        if arg.startswith("--"):
            assert arg.split("=", 1)[0] in known, f"gpuspec {args[0]} has no option {arg}"


def test_workflow_files_exist() -> None:
    assert [p.name for p in WORKFLOWS] == ["gpuspec.yml", "release.yml", "tests.yml"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_validate_against_the_github_workflow_schema(path: Path) -> None:
    schema = workflow_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    errors = sorted(validator_class(schema).iter_errors(load(path)), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_schema_check_can_fail() -> None:
    schema = workflow_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert list(validator.iter_errors({"on": "push", "jobs": {"x": {"runs-on": "ubuntu-latest", "stepz": []}}}))


ACTION = REPO / "action.yml"


def action_steps() -> dict[str, Any]:
    """The steps of the composite action, by name."""
    return {step["name"]: step for step in load(ACTION)["runs"]["steps"]}


def test_gpuspec_workflow_gates_lint_with_sarif_and_annotations_render_check_and_plan_comment() -> None:
    workflow = load(REPO / ".github/workflows/gpuspec.yml")
    jobs = workflow["jobs"]
    assert set(jobs) == {"lint", "render", "plan"}
    checks = {name: next(s["with"] for s in job["steps"] if s.get("uses") == "./") for name, job in jobs.items()}
    assert checks["lint"]["check"] == "lint" and "HEAD^1" in checks["lint"]["base"]
    assert checks["render"]["check"] == "render-check"
    assert checks["plan"] == {"check": "plan", "gpuspec": ".", "base": "HEAD^1"}
    assert jobs["lint"]["permissions"]["security-events"] == "write"
    plan = jobs["plan"]
    assert plan["if"] == "github.event_name == 'pull_request'"
    assert plan["permissions"]["pull-requests"] == "write"
    for job in jobs.values():
        checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
        assert checkout["with"]["persist-credentials"] is False
    assert workflow["permissions"] == {}

    steps = action_steps()
    assert '--format sarif --output "$SARIF"' in steps["Lint (SARIF)"]["run"]
    assert "--format github" in steps["Lint (gate, annotations)"]["run"]
    assert steps["Upload SARIF to code scanning"]["uses"].startswith("github/codeql-action/upload-sarif@")
    assert '--out "$RENDERED" --check' in steps["rendered/ is up to date"]["run"]
    assert 'gpuspec plan --base "$BASE" "$FLEET" --format markdown' in steps["Plan against the base"]["run"]
    script = steps["Post or update the plan comment"]["with"]["script"]
    assert "<!-- gpuspec-plan -->" in script and "updateComment" in script and "createComment" in script


def test_plan_comment_marker_matches_the_markdown_report() -> None:
    from gpuspec.plan.markdown import COMMENT_MARKER

    assert COMMENT_MARKER in ACTION.read_text(encoding="utf-8")


def test_tests_workflow_runs_the_suite_through_ci_run() -> None:
    workflow = load(REPO / ".github/workflows/tests.yml")
    assert run_scripts(workflow) == ["bash .ci/run", "python -m pip install --disable-pip-version-check --quiet .",
                                     "bash scripts/portable-check"]
    assert [s["run"] for s in workflow["jobs"]["test"]["steps"] if "run" in s] == ["bash .ci/run"]
    assert (REPO / ".ci" / "run").is_file()


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_call_existing_gpuspec_commands_and_options(path: Path) -> None:
    calls = [args for script in run_scripts(load(path)) for args in gpuspec_invocations(script)]
    for args in calls:
        check_invocation(args)
    assert calls == [] or path.name == "tests.yml"


def test_action_calls_existing_gpuspec_commands_and_options() -> None:
    scripts = [s["run"] for s in action_steps().values() if "run" in s]
    calls = [args for script in scripts for args in gpuspec_invocations(script) if args[0] != "--version"]
    for args in calls:
        check_invocation(args)
    assert sorted(a[0] for a in calls) == ["gate", "gate", "lint", "lint", "lint", "lint", "plan", "render", "tools",
                                           "verify"]


def test_invocation_check_can_fail() -> None:
    with pytest.raises(AssertionError, match="no option --nope"):
        check_invocation(["plan", "--nope"])
    with pytest.raises(AssertionError, match="no command"):
        check_invocation(["frobnicate"])


def test_pre_commit_hooks_shape_and_commands() -> None:
    hooks = load(HOOKS)
    jsonschema.validate(hooks, PRE_COMMIT_MANIFEST_SCHEMA)
    assert [h["id"] for h in hooks] == ["gpuspec-lint", "gpuspec-render", "gpuspec-render-check"]
    for hook in hooks:
        assert hook["pass_filenames"] is False
        words = shlex.split(hook["entry"])
        assert words[0] == "gpuspec"
        check_invocation(words[1:])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{"id": "x", "name": "x", "entry": "x", "language": "python", "bogus": 1}],
                            PRE_COMMIT_MANIFEST_SCHEMA)
