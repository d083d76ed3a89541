"""The `gpuspec` command group: every subcommand is registered here, errors become exit code 2."""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

from gpuspec import __version__, exitcodes
from gpuspec.errors import GpuspecError
from gpuspec.escaping import terminal_lines
from gpuspec.redaction import redact_text

#: Command name → "module:attribute"; modules are imported only when their command runs (fast start-up).
COMMANDS: dict[str, str] = {
    "init": "gpuspec.cli.init_cmd:init_command",
    "validate": "gpuspec.cli.validate_cmd:validate_command",
    "lint": "gpuspec.cli.lint_cmd:lint_command",
    "rules": "gpuspec.cli.rules_cmd:rules_command",
    "explain": "gpuspec.cli.rules_cmd:explain_command",
    "render": "gpuspec.cli.render_cmd:render_command",
    "verify": "gpuspec.cli.verify_cmd:verify_command",
    "images": "gpuspec.cli.images_cmd:images_command",
    "codeowners": "gpuspec.cli.codeowners_cmd:codeowners_command",
    "deviations": "gpuspec.cli.deviations_cmd:deviations_command",
    "handover": "gpuspec.cli.handover_cmd:handover_command",
    "plan": "gpuspec.cli.plan_cmd:plan_command",
    "audit": "gpuspec.cli.audit_cmd:audit_command",
    "import": "gpuspec.cli.import_cmd:import_command",
    "migrate": "gpuspec.cli.migrate_cmd:migrate_command",
    "schema": "gpuspec.cli.schema_cmd:schema_command",
    "matrix": "gpuspec.cli.matrix_cmd:matrix_command",
    "tools": "gpuspec.cli.tools_cmd:tools_group",
    "acceptance": "gpuspec.cli.acceptance_cmd:acceptance_group",
    "gate": "gpuspec.cli.gate_cmd:gate_command",
    "upgrade": "gpuspec.cli.upgrade_cmd:upgrade_command",
}


#: Command name → first paragraph of its help, so `gpuspec --help` imports no command (a test keeps these
#: equal to the commands' own help).
SUMMARIES: dict[str, str] = {
    "acceptance": "Acceptance evidence: report what the acceptance Jobs of the rendered revision proved.",
    "gate": "Promote only on live evidence: exit 0 when the exported cluster (or pool) really runs the spec.",
    "audit": "Compare exported node state with the spec of one cluster (offline).",
    "codeowners": "Print the CODEOWNERS section that makes each cluster's owners review its files.",
    "deviations": "List every deliberate deviation of the fleet, by cluster.",
    "explain": "Show one finding id's documentation: title, severity, rationale, examples and parameters.",
    "handover": "Write the handover documents of the fleet's clusters (Markdown).",
    "init": "Create a fleet repository in DIR (default: the current folder) that validates, lints and renders at "
            "once.",
    "images": "Print every image:tag the clusters pull, sorted and de-duplicated.",
    "import": "Draft a cluster spec from what a cluster runs.",
    "lint": "Lint the fleet: schema, references, support matrix and policy rules.",
    "migrate": "Print the node-by-node procedure that moves hand-configured GPU nodes onto the spec (runs nothing).",
    "matrix": "Show what a GPU Operator release supports and pins; without VERSION, list release lines and status.",
    "plan": "Show what changes between the fleet at REV and the working tree.",
    "render": "Compile the fleet into pinned Helm values, Kustomize overlays and Argo CD / Flux objects.",
    "rules": "List every finding id gpuspec reports, and the custom rules of the policy packs: id, severity, "
             "stage, title.",
    "schema": "Print the JSON Schema (draft 2020-12) of fleet spec files.",
    "tools": "External tools and schemas that `verify` uses (helm, kubectl with built-in kustomize, platform CRDs).",
    "upgrade": "Plan the pull requests that take clusters to a GPU Operator release, driver branch or Kubernetes "
               "minor.",
    "validate": "Check the fleet spec against its schema, its references and NVIDIA's support matrix.",
    "verify": "Render each cluster's GPU Operator chart with helm and build its overlay with kustomize, then check "
              "the result.",
}


class LazyGroup(click.Group):
    """A command group that imports a command's module only when that command is used."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of `gpuspec --help`, from :data:`SUMMARIES` (no command module is imported)."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, click.Command(name, help=SUMMARIES.get(name, "")).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, sorted."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command called ``cmd_name``, imported on first use."""
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="gpuspec")
def cli() -> None:
    """Declarative NVIDIA GPU Operator fleets: validate, lint, render, verify, plan, audit.

    Every command defaults to ./fleet, ./policies and ./rendered. Exit codes:
    0 clean, 1 findings at or above the fail threshold, 2 usage or input error.
    """


def run() -> int:
    """Run the CLI and return its exit code; every error becomes a message and code 2, never a traceback."""
    try:
        os.getcwd()
    except OSError:  # every relative path, report name and cache key starts from it
        click.echo("gpuspec: error: the working folder no longer exists (deleted or moved); "
                   "cd into the fleet repository again", err=True)
        return exitcodes.INPUT_ERROR
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:  # click's form of KeyboardInterrupt (Ctrl-C)
        click.echo("gpuspec: interrupted", err=True)
        return exitcodes.INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return exitcodes.INPUT_ERROR
    except GpuspecError as exc:
        click.echo(f"gpuspec: error: {terminal_lines(redact_text(str(exc)))}", err=True)
        return exitcodes.INPUT_ERROR
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else exitcodes.INPUT_ERROR
    except KeyboardInterrupt:
        click.echo("gpuspec: interrupted", err=True)
        return exitcodes.INTERRUPTED
    except BrokenPipeError:
        return exitcodes.OK
    except RuntimeError as exc:
        # pathlib's resolve() on Python < 3.13 raises RuntimeError on a symbolic link loop in an input tree: that
        # is bad input (nothing is written: every output is replaced atomically), not a bug.
        if not str(exc).startswith("Symlink loop from "):
            return _internal_error(exc)
        click.echo(f"gpuspec: error: {terminal_lines(redact_text(str(exc)))}: a symbolic link loop; remove it",
                   err=True)
        return exitcodes.INPUT_ERROR
    except Exception as exc:
        return _internal_error(exc)
    return exitcodes.OK


def _internal_error(exc: BaseException) -> int:
    """Report an unexpected exception as gpuspec's bug (its traceback with GPUSPEC_DEBUG) and return exit code 2."""
    if os.environ.get("GPUSPEC_DEBUG"):
        import traceback

        traceback.print_exc()
    click.echo(
        f"gpuspec: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in gpuspec; set GPUSPEC_DEBUG=1 for the traceback and report it.",
        err=True,
    )
    return exitcodes.INPUT_ERROR


def main() -> None:
    """Console entry point: run the CLI as a short-lived batch process and exit with its code.

    A run allocates many acyclic objects (one per YAML node and spec field), so the cyclic garbage
    collector is switched off, and the process ends without tearing its heap down object by object
    (which took a third of a second on a 1,000-cluster fleet). Every command closes its files and
    worker pools before returning, so only the standard streams need flushing.
    """
    gc.disable()
    code = run()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
