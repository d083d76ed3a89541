"""A fleet file over the size bound gives GS101 at its position, and no traceback.

Every other broken-fleet case lives in the one fixture layout (tests/rules/fixtures/GS1xx/fail-*/, laid over the
example fleet, run by tests/rules/test_rule_fixtures.py, which checks `gpuspec validate` too). This one stays
here because its input (over 1 MiB) is generated rather than committed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuspec.cli.main import cli
from gpuspec.loader.positions import locate_findings
from gpuspec.pipeline.validate import validate_fleet

INFER = "clusters/infer-north.yaml"


def test_file_over_the_size_bound(fleet_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (fleet_copy / INFER).write_text("# padding\n" * 120_000)
    monkeypatch.chdir(fleet_copy.parent)
    findings = locate_findings(validate_fleet(Path("fleet"), Path("policies")).findings)
    expected_file = os.path.join("fleet", INFER)
    positions = [(f.line, f.column) for f in findings if f.rule_id == "GS101" and f.file == expected_file]
    assert (1, 1) in positions, [(f.rule_id, f.file, f.line, f.message) for f in findings]

    run = CliRunner().invoke(cli, ["validate", "fleet"])
    assert run.exit_code == 2, run.output
    assert f"{expected_file}:1:1: error GS101" in run.output
    assert "Traceback" not in run.output
