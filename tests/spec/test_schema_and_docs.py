"""The JSON Schema for editors is generated from the models and stays current (spec reference: test_generated_docs)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from gpuspec.cli.main import cli
from gpuspec.model.jsonschema import spec_schema

REPO = Path(__file__).resolve().parents[2]


def test_schema_command_prints_draft_2020_12() -> None:
    result = CliRunner().invoke(cli, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", sorted((REPO / "fleet").rglob("*.yaml")), ids=lambda p: p.name)
def test_example_files_validate_against_generated_schema(path: Path) -> None:
    validator = jsonschema.Draft202012Validator(spec_schema("all"))
    errors = list(validator.iter_errors(yaml.safe_load(path.read_text())))
    assert not errors, [e.message for e in errors]


def test_schema_rejects_unknown_key() -> None:
    doc = yaml.safe_load((REPO / "fleet" / "clusters" / "train-east.yaml").read_text())
    doc["pools"][0]["gpus"] = 8
    validator = jsonschema.Draft202012Validator(spec_schema("cluster"))
    assert any("gpus" in e.message for e in validator.iter_errors(doc))


def test_committed_schema_file_is_current() -> None:
    committed = json.loads((REPO / "fleet" / "gpuspec.schema.json").read_text())
    assert committed == spec_schema("all"), "run: gpuspec schema > fleet/gpuspec.schema.json"
