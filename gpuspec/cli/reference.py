"""The command-line reference (docs/cli.md), generated from the click commands themselves."""

from __future__ import annotations

import importlib
import inspect

import click

from gpuspec.cli.main import COMMANDS


def _command(target: str) -> click.Command:
    module_name, attribute = target.split(":")
    command = getattr(importlib.import_module(module_name), attribute)
    assert isinstance(command, click.Command)
    return command


def _markdown(text: str) -> str:
    """Help text as Markdown: angle brackets shown, not read as HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    return _markdown(" ".join(text.split())).replace("|", "\\|")


def _option_row(param: click.Parameter) -> str:
    assert isinstance(param, click.Option)
    names = ", ".join(f"`{n}`" for n in (*param.opts, *param.secondary_opts))
    if not param.is_flag:
        choices = param.type.choices if isinstance(param.type, click.Choice) else None
        metavar = param.metavar or ("[" + "|".join(map(str, choices)) + "]" if choices else param.type.name.upper())
        names += f" {_cell(metavar)}"
    help_text = _cell(param.help or "")
    if param.show_default and param.default not in (None, False, ()):
        help_text += f" (default: `{param.default}`)"
    if param.required:
        help_text += " Required."
    return f"| {names} | {help_text.strip()} |"


def _section(path: str, command: click.Command) -> list[str]:
    arguments = " ".join(
        p.human_readable_name if p.required else f"[{p.human_readable_name}]"
        for p in command.params if isinstance(p, click.Argument)
    )
    usage = f"gpuspec {path}" + (" [OPTIONS]" if any(isinstance(p, click.Option) for p in command.params) else "")
    usage += f" {arguments}" if arguments else ""
    lines = [f"### `gpuspec {path}`", "", "```text", usage, "```", ""]
    lines += [_markdown(inspect.cleandoc(command.help or "")).strip(), ""]
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
    if options:
        lines += ["| option | meaning |", "| --- | --- |", *(_option_row(p) for p in options), ""]
    return lines


def cli_reference() -> str:
    """Every command and sub-command: usage, help and options, as Markdown."""
    lines: list[str] = []
    for name in sorted(COMMANDS):
        command = _command(COMMANDS[name])
        if isinstance(command, click.Group):
            for sub in sorted(command.commands):
                lines += _section(f"{name} {sub}", command.commands[sub])
        else:
            lines += _section(name, command)
    return "\n".join(lines).rstrip() + "\n"
