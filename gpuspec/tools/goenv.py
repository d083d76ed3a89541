"""Environment for the short-lived Go tools verify runs many times (helm template, kubectl kustomize).

Each run lives for tens of milliseconds and allocates well under 100 MB, yet Go's collector runs several
times in it: about a fifth of each run's CPU.  Without collection until the heap nears a soft limit
(``GOGC=off`` with ``GOMEMLIMIT``), the same run does the same work with less CPU, and a run that needs
more memory still collects once it nears the limit.  Only the collector's schedule changes, never what
the tool prints.  A user who sets ``GOGC`` or ``GOMEMLIMIT`` keeps their own settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: Soft heap limit of each tool run: a run that needs more collects as usual (one helm template of a chart
#: with the real GPU Operator CRDs peaks at ~70 MiB RSS; the joint GitOps build is the largest run).
MEMORY_LIMIT = "128MiB"


def short_run_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) with the collector settings above, unless it sets its own."""
    env = dict(os.environ if environ is None else environ)
    if "GOGC" not in env and "GOMEMLIMIT" not in env:
        env["GOGC"] = "off"
        env["GOMEMLIMIT"] = MEMORY_LIMIT
    return env
