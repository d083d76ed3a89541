"""Load the packaged support-matrix data once and keep it (validated) for the process."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from gpuspec import usercache
from gpuspec.errors import GpuspecError
from gpuspec.matrix.data_models import Matrix

#: Data file (without ``.yaml``) for each top-level field of :class:`Matrix`.
DATA_FILES: tuple[str, ...] = (
    "lifecycle",
    "releases",
    "platforms",
    "gpus",
    "mig",
    "precompiled",
    "nvidiadriver",
    "upgrades",
    "sharing",
    "airgap",
    "domain",
    "runtime",
    "openshift",
)

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_data_file(name: str) -> Any:
    """Return the parsed YAML of one packaged data file (``name`` without ``.yaml``)."""
    ref = resources.files("gpuspec.matrix").joinpath("data", f"{name}.yaml")
    with ref.open("r", encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_Loader)


def raw_matrix() -> dict[str, Any]:
    """Return all data files as plain parsed YAML, keyed by file name (no validation)."""
    return {name: read_data_file(name) for name in DATA_FILES}


_LOCK = threading.Lock()


def load_matrix() -> Matrix:
    """Return the validated support matrix; the first call reads the files, later calls reuse the result.

    Safe to call from several threads (verify checks clusters in parallel): the data is read once.
    """
    with _LOCK:
        return _load_matrix()


@functools.cache
def _load_matrix() -> Matrix:
    try:
        texts = {name: _data_bytes(name) for name in DATA_FILES}
        digest = hashlib.sha256(b"".join(hashlib.sha256(texts[n]).digest() for n in DATA_FILES)).hexdigest()
        cached = _read_compiled(digest)
        if cached is not None:
            return cached
        matrix = Matrix.model_validate({name: yaml.load(texts[name], Loader=_Loader) for name in DATA_FILES})
        _write_compiled(digest, matrix)
        return matrix
    except (OSError, yaml.YAMLError, ValueError) as exc:  # pydantic.ValidationError is a ValueError
        raise GpuspecError(f"gpuspec's packaged support-matrix data is unreadable: {exc}") from exc


def _data_bytes(name: str) -> bytes:
    return resources.files("gpuspec.matrix").joinpath("data", f"{name}.yaml").read_bytes()


# The validated matrix, compiled once: its JSON in the user cache, sealed (see gpuspec.usercache) and named by
# the sha256 of the data files and gpuspec's code fingerprint, so any change of the data or of the models
# rebuilds it.  Validating that JSON (pydantic-core, no Python object is ever unpickled) costs a few
# milliseconds instead of parsing and validating the YAML; an entry whose seal does not verify is ignored.
def _compiled_path(digest: str) -> Path | None:
    return usercache.entry_path("matrix-data", usercache.code_fingerprint(), digest)


def _read_compiled(digest: str) -> Matrix | None:
    data = usercache.load_bytes(_compiled_path(digest))
    if data is None:
        return None
    try:
        return Matrix.model_validate_json(data)
    except ValueError:  # a damaged entry (pydantic.ValidationError is a ValueError): rebuild it
        return None


def _write_compiled(digest: str, matrix: Matrix) -> None:
    path = _compiled_path(digest)
    if path is None:
        return
    text = matrix.model_dump_json(by_alias=True, round_trip=True)
    with contextlib.suppress(ValueError):
        if Matrix.model_validate_json(text) == matrix:  # only what JSON gives back unchanged is kept
            usercache.store_bytes(path, text.encode("utf-8"))
