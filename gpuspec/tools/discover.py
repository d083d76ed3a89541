"""Find the external tools gpuspec drives: helm, kubectl (for ``kubectl kustomize``), kustomize and git.

Search order for helm: the ``--helm`` option, env ``GPUSPEC_HELM``, ``.tools/bin/helm`` of the gpuspec
checkout gpuspec runs from (its own tool cache, filled by ``scripts/install-tools``), the user cache's
``tools/bin`` (where ``gpuspec tools install`` puts them), then PATH.  A ``.tools/bin`` in the current
directory or its parents is never used: a fleet repository is input, and an executable it ships must
not run in CI.
kubectl follows the same order with ``--kubectl`` / ``GPUSPEC_KUBECTL``.  Kustomize is
``kubectl kustomize`` when kubectl is found, else a ``kustomize`` binary (``GPUSPEC_KUSTOMIZE``,
``.tools/bin/kustomize``, PATH).  git comes from PATH.

An explicitly named tool (option or environment variable) that does not exist is an error; gpuspec
does not silently fall back to another binary the user did not ask for.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpuspec.errors import ToolMissingError

ENV_HELM = "GPUSPEC_HELM"
ENV_KUBECTL = "GPUSPEC_KUBECTL"
ENV_KUSTOMIZE = "GPUSPEC_KUSTOMIZE"

#: Where ``scripts/install-tools`` puts the binaries, relative to a repository root.
TOOLS_BIN = Path(".tools") / "bin"

INSTALL_HINT = (
    "run `gpuspec tools install` (installs pinned, hash-checked helm and kubectl into the user cache, where "
    "gpuspec finds them), or put the tool on PATH, or name it with {option} / {env}"
)


@dataclass(frozen=True, slots=True)
class KustomizeCommand:
    """The argv prefix that builds a kustomization: ``(kubectl, "kustomize")`` or ``(kustomize, "build")``."""

    argv: tuple[str, ...]
    via: str  # "kubectl" or "kustomize"

    def build_argv(self, directory: str | os.PathLike[str]) -> list[str]:
        """The full command line that builds the kustomization in ``directory``."""
        return [*self.argv, os.fspath(directory)]


def local_tool_dirs(cwd: Path | None = None) -> list[Path]:
    """The tool folders searched before PATH: gpuspec's own tool caches, those that exist.

    That is the ``.tools/bin`` of the gpuspec source checkout gpuspec runs from, then ``tools/bin`` of
    the user cache (``gpuspec tools install``).  ``cwd`` is not
    searched (nor its parents): the working directory is the fleet repository, which is input.
    """
    checkout = _checkout_root()
    found = [checkout / TOOLS_BIN] if checkout is not None and (checkout / TOOLS_BIN).is_dir() else []
    from gpuspec.tools.install import user_tools_dir

    user = user_tools_dir()
    if user.is_dir() and user not in found:
        found.append(user)
    return found


def find_helm(
    explicit: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Path:
    """Locate helm (``--helm`` value, ``GPUSPEC_HELM``, ``.tools/bin``, PATH) or raise ToolMissingError."""
    return _find("helm", explicit, option="--helm", env_var=ENV_HELM, env=env, cwd=cwd)


def find_kubectl(
    explicit: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Path:
    """Locate kubectl (``--kubectl`` value, ``GPUSPEC_KUBECTL``, ``.tools/bin``, PATH).

    Raises ToolMissingError when none is found.
    """
    return _find("kubectl", explicit, option="--kubectl", env_var=ENV_KUBECTL, env=env, cwd=cwd)


def find_kustomize(
    kubectl: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> KustomizeCommand:
    """Locate a way to build kustomizations: ``kubectl kustomize`` first, else a ``kustomize`` binary.

    An explicit ``kubectl`` argument or ``GPUSPEC_KUBECTL`` that does not exist raises
    :class:`ToolMissingError` rather than falling back to kustomize.
    """
    environ = os.environ if env is None else env
    if kubectl is not None or environ.get(ENV_KUBECTL):
        path = find_kubectl(kubectl, env=environ, cwd=cwd)
        return KustomizeCommand(argv=(str(path), "kustomize"), via="kubectl")
    kubectl_path = _lookup("kubectl", env=environ, cwd=cwd)
    if kubectl_path is not None:
        return KustomizeCommand(argv=(str(kubectl_path), "kustomize"), via="kubectl")
    if environ.get(ENV_KUSTOMIZE):
        path = _find("kustomize", None, option="--kubectl", env_var=ENV_KUSTOMIZE, env=environ, cwd=cwd)
        return KustomizeCommand(argv=(str(path), "build"), via="kustomize")
    kustomize_path = _lookup("kustomize", env=environ, cwd=cwd)
    if kustomize_path is not None:
        return KustomizeCommand(argv=(str(kustomize_path), "build"), via="kustomize")
    raise ToolMissingError(
        "kustomize not found: no kubectl (GPUSPEC_KUBECTL, .tools/bin/kubectl, PATH) "
        "and no kustomize binary (GPUSPEC_KUSTOMIZE, .tools/bin/kustomize, PATH)",
        hint=INSTALL_HINT.format(option="--kubectl", env=ENV_KUBECTL),
    )


def find_git(*, env: Mapping[str, str] | None = None) -> Path:
    """Locate git on PATH or raise ToolMissingError."""
    environ = os.environ if env is None else env
    found = shutil.which("git", path=environ.get("PATH", os.defpath))
    if found is None:
        raise ToolMissingError("git not found on PATH", hint="install git with your system package manager")
    return Path(found)


def _find(
    name: str,
    explicit: str | os.PathLike[str] | None,
    *,
    option: str,
    env_var: str,
    env: Mapping[str, str] | None,
    cwd: Path | None,
) -> Path:
    environ = os.environ if env is None else env
    hint = INSTALL_HINT.format(option=option, env=env_var)
    for value, origin in ((explicit, option), (environ.get(env_var) or None, env_var)):
        if value is None:
            continue
        resolved = _resolve_named(os.fspath(value), environ, cwd)
        if resolved is None:
            raise ToolMissingError(
                f"{name} not found at {os.fspath(value)!r} (from {origin}): no such executable", hint=hint
            )
        return resolved
    found = _lookup(name, env=environ, cwd=cwd)
    if found is None:
        raise ToolMissingError(
            f"{name} not found: looked at {option}, {env_var}, .tools/bin/{name}, the user cache and PATH",
            hint=hint
        )
    return found


def _lookup(name: str, *, env: Mapping[str, str], cwd: Path | None) -> Path | None:
    from gpuspec.tools.install import user_tools_dir

    user = user_tools_dir()
    for directory in local_tool_dirs(cwd):
        candidate = directory / name
        if directory == user:
            if verified_user_tool(candidate):
                return candidate
        elif _is_executable(candidate):
            return candidate
    found = shutil.which(name, path=env.get("PATH", os.defpath))
    return Path(found) if found else None


def _resolve_named(value: str, env: Mapping[str, str], cwd: Path | None) -> Path | None:
    if os.sep in value or (os.altsep and os.altsep in value):
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = (cwd or Path.cwd()) / path
        return path if _is_executable(path) else None
    found = shutil.which(value, path=env.get("PATH", os.defpath))
    return Path(found) if found else None


_VERIFIED: dict[tuple[str, int, int, int, int, int], bool] = {}


def verified_user_tool(path: Path) -> bool:
    """True when ``path`` in the user cache's ``tools/bin`` is a pinned tool with its pinned sha256, in folders of
    this user that others cannot write (the cache folder may be shared or restored: a binary there runs only
    after its hash is checked again, once per process and file version)."""
    from gpuspec.tools.install import BINARIES, sha256_file

    pinned = BINARIES.get(path.name)
    if pinned is None:
        return False  # only the pinned tools are ever taken from the cache
    try:
        info = os.lstat(path)
        for folder in (path.parent, path.parent.parent):
            folder_info = os.lstat(folder)
            if folder_info.st_uid != os.geteuid() or folder_info.st_mode & 0o022 or os.path.islink(folder):
                return False
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022 \
            or not os.access(path, os.X_OK):
        return False
    version = (os.fspath(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if version not in _VERIFIED:
        try:
            _VERIFIED[version] = sha256_file(path) == pinned[1]
        except OSError:
            return False
    return _VERIFIED[version]


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _checkout_root() -> Path | None:
    """The gpuspec source checkout this package runs from, if it is one (has scripts/install-tools)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "scripts" / "install-tools").is_file() else None
