"""Load the packaged support-matrix data once and keep it (validated) for the process."""

from __future__ import annotations

import functools
import threading
from importlib import resources
from typing import Any

import yaml

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
        return Matrix.model_validate(raw_matrix())
    except (OSError, yaml.YAMLError, ValueError) as exc:  # pydantic.ValidationError is a ValueError
        raise GpuspecError(f"gpuspec's packaged support-matrix data is unreadable: {exc}") from exc
