"""The `gpuspec` command group: every subcommand is registered here, errors become exit code 2."""

from __future__ import annotations

import os
import sys
import traceback

import click

from gpuspec import __version__, exitcodes
from gpuspec.cli.audit_cmd import audit_command
from gpuspec.cli.import_cmd import import_command
from gpuspec.cli.lint_cmd import lint_command
from gpuspec.cli.plan_cmd import plan_command
from gpuspec.cli.rules_cmd import explain_command, rules_command
from gpuspec.cli.schema_cmd import schema_command
from gpuspec.cli.validate_cmd import validate_command
from gpuspec.errors import GpuspecError


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="gpuspec")
def cli() -> None:
    """Declarative NVIDIA GPU Operator fleets: validate, lint, render, verify, plan, audit.

    Every command defaults to ./fleet, ./policies and ./rendered. Exit codes:
    0 clean, 1 findings at or above the fail threshold, 2 usage or input error.
    """


COMMANDS = [
    lint_command, rules_command, explain_command,
    plan_command,
    validate_command,
    schema_command,
    audit_command,
    import_command,
]

for _command in COMMANDS:
    cli.add_command(_command)


def main() -> None:
    """Run the CLI; turn every error into a message and exit code 2, never a traceback."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("gpuspec: aborted", err=True)
        sys.exit(exitcodes.INPUT_ERROR)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exitcodes.INPUT_ERROR)
    except GpuspecError as exc:
        click.echo(f"gpuspec: error: {exc}", err=True)
        sys.exit(exitcodes.INPUT_ERROR)
    except SystemExit as exc:
        sys.exit(exc.code if isinstance(exc.code, int) else exitcodes.INPUT_ERROR)
    except KeyboardInterrupt:
        click.echo("gpuspec: interrupted", err=True)
        sys.exit(exitcodes.INPUT_ERROR)
    except BrokenPipeError:
        sys.exit(exitcodes.OK)
    except Exception as exc:
        if os.environ.get("GPUSPEC_DEBUG"):
            traceback.print_exc()
        click.echo(
            f"gpuspec: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in gpuspec; set GPUSPEC_DEBUG=1 for the traceback and report it.",
            err=True,
        )
        sys.exit(exitcodes.INPUT_ERROR)
    sys.exit(exitcodes.OK)


if __name__ == "__main__":  # pragma: no cover
    main()
