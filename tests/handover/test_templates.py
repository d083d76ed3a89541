"""Template overrides in fleet/templates/, StrictUndefined and the sandbox."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuspec.errors import GpuspecError

from .helpers import copy_example, documents

CONTACTS = """{% extends "gpuspec/handover/cluster.md.j2" %}
{% block contacts %}
## Contacts

On call for {{ cluster.name | code }}: {{ "gpu-oncall@acme.example" }}
{% endblock %}
"""


def _override(root: Path, name: str, text: str) -> None:
    path = root / "fleet" / "templates" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_fleet_override_extends_the_shipped_template(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    before = documents(root)
    _override(root, "handover/cluster.md.j2", CONTACTS)
    after = documents(root)
    doc = after["handover/train-east.md"]
    assert "On call for `train-east`: gpu-oncall@&#8203;acme.example" in doc
    assert "No on-call contacts are recorded" not in doc
    assert "## Placement scheme" in doc  # the other blocks come from the shipped template
    # The override is an input: the document changes with it, the header (no digest) does not.
    assert before["handover/train-east.md"] != doc
    assert before["handover/train-east.md"].splitlines()[0] == doc.splitlines()[0]


def test_index_override_replaces_the_shipped_template(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    _override(root, "handover/index.md.j2",
              "{{ header }}\n# Our GPU clusters\n{% for c in clusters %}\n- {{ c.name }}\n{% endfor %}\n")
    index = documents(root)["handover/README.md"]
    assert index.splitlines()[1:] == ["# Our GPU clusters", "- infer-north", "- train-east"]


def test_plan_comment_override(tmp_path: Path) -> None:
    root = copy_example(tmp_path)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    _override(root, "plan/comment.md.j2", "{{ marker }}\nOur plan: {{ cell(headline) }}\n")
    result = subprocess.run([sys.executable, "-m", "gpuspec.cli.main", "plan", "--base", "HEAD", "--format",
                             "markdown"], cwd=root, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "<!-- gpuspec-plan -->\nOur plan: no fleet changes since HEAD\n"


@pytest.mark.parametrize(("template", "message"), [
    ("{{ header }}{{ clusterr.name }}", "'clusterr' is undefined"),
    ("{{ header }}{{ ''.__class__.__mro__ }}", "unsafe"),
    ("{{ header }}{% for x in %}", "template syntax error"),
])
def test_broken_or_unsafe_override_is_an_input_error(tmp_path: Path, template: str, message: str) -> None:
    root = copy_example(tmp_path)
    _override(root, "handover/cluster.md.j2", template)
    with pytest.raises(GpuspecError, match=message):
        documents(root)
    result = subprocess.run([sys.executable, "-m", "gpuspec.cli.main", "render", "--out", "out"], cwd=root,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert not (root / "out").exists()
