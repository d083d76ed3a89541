"""Errors that end a command with exit code 2 and a one-line message, never a traceback."""

from __future__ import annotations


class GpuspecError(Exception):
    """An error the user can act on; the CLI prints it and exits with code 2."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\nhint: {self.hint}"


class ToolMissingError(GpuspecError):
    """An external tool (helm, kubectl, kustomize, git) could not be found."""
