"""Property tests: no mutation of the example fleet makes gpuspec validate raise or print a traceback."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuspec.cli.main import cli
from gpuspec.loader.positions import locate_findings
from gpuspec.pipeline.lint import lint_fleet
from gpuspec.pipeline.validate import validate_fleet
from gpuspec.report.base import ReportContext
from gpuspec.report.jsonreport import JsonReporter
from gpuspec.report.registry import reporter
from gpuspec.report.text import TextReporter

REPO = Path(__file__).resolve().parents[2]
CLUSTER = REPO / "fleet" / "clusters" / "train-east.yaml"
BASE = yaml.safe_load(CLUSTER.read_text())

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False),
    st.text(max_size=20), st.sampled_from(["1.34", "v26.7.0", "580", "all", "none", "mixed", "H100-SXM5-80GB"]),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                            max_size=3), max_leaves=6)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key/index path in a document."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(paths(value, (*prefix, index)))
    return out


ALL_PATHS = [p for p in paths(BASE) if p]


def mutate(doc: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    """Return doc with the node at path deleted or replaced."""
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "delete":
        del parent[last]
    else:
        parent[last] = value
    return doc


def run_validate(fleet_root: Path) -> None:
    """Validate, lint and report; any exception here, or a rule that crashed (GS000), is a bug."""
    result = validate_fleet(fleet_root / "fleet", fleet_root / "policies")
    located = locate_findings(result.findings)
    context = ReportContext(tool_version="test", command="validate")
    TextReporter().render(located, context)
    JsonReporter().render(located, context)
    lint = lint_fleet(fleet_root / "fleet", fleet_root / "policies")
    assert not [f for f in lint.findings if f.rule_id == "GS000"], [f.message for f in lint.findings]
    for name in ("sarif", "github", "junit"):
        reporter(name).render(lint.findings, context)


def make_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="gpuspec-fuzz-"))
    shutil.copytree(REPO / "fleet", root / "fleet")
    shutil.copytree(REPO / "policies", root / "policies")
    return root


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALL_PATHS), st.sampled_from(["delete", "replace"]), values)
def test_structural_mutations_never_crash(path: tuple[Any, ...], action: str, value: Any) -> None:
    root = make_root()
    try:
        doc = mutate(yaml.safe_load(CLUSTER.read_text()), path, action, value)
        (root / "fleet" / "clusters" / "train-east.yaml").write_text(yaml.safe_dump(doc))
        run_validate(root)
    finally:
        shutil.rmtree(root)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(CLUSTER.read_bytes())), st.binary(min_size=1, max_size=12))
def test_byte_insertions_never_crash(offset: int, junk: bytes) -> None:
    root = make_root()
    try:
        data = CLUSTER.read_bytes()
        (root / "fleet" / "clusters" / "train-east.yaml").write_bytes(data[:offset] + junk + data[offset:])
        run_validate(root)
        result = CliRunner().invoke(cli, ["validate", str(root / "fleet"), "--policies", str(root / "policies")])
        assert result.exit_code in (0, 1, 2), result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert "Traceback" not in result.output
    finally:
        shutil.rmtree(root)
