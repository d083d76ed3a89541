"""`gpuspec schema`: the JSON Schema of spec files, for editors."""

from __future__ import annotations

import json

import click

from gpuspec.model.jsonschema import spec_schema


@click.command("schema")
@click.option("--kind", type=click.Choice(["all", "cluster", "fleet"]), default="all", show_default=True,
              help="Schema of cluster files, of fleet.yaml, or one schema accepting either.")
def schema_command(kind: str) -> None:
    """Print the JSON Schema (draft 2020-12) of fleet spec files."""
    click.echo(json.dumps(spec_schema(kind), indent=2, sort_keys=True))
