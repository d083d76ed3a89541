"""The command-line reference of docs/cli.md: every command's help as `gpuspec NAME --help` prints it."""

from __future__ import annotations

import click

#: The help options of the real command group (`cli/main.py`), so the text is the same in any process state.
HELP_OPTIONS = ["-h", "--help"]


def cli_reference() -> str:
    """One section per command (sorted), its help text at a fixed width so the document is reproducible."""
    from gpuspec.cli.main import COMMANDS, cli

    out: list[str] = []
    for name in sorted(COMMANDS):
        parent = click.Context(
            cli, info_name="gpuspec", terminal_width=100, max_content_width=100, help_option_names=HELP_OPTIONS
        )
        command = cli.get_command(parent, name)
        if command is None:  # pragma: no cover - COMMANDS names only importable commands
            continue
        ctx = click.Context(
            command,
            parent=parent,
            info_name=name,
            terminal_width=100,
            max_content_width=100,
            help_option_names=HELP_OPTIONS,
        )
        out += [f"### gpuspec {name}", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)
