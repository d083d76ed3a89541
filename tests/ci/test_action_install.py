"""The action's install step takes every pip source form of the `gpuspec` input and adds the extra a check needs
(verify): name==version, name @ git+URL@COMMIT, a bare git+URL, a wheel URL and a wheel path.  What it hands pip is
recorded by a stand-in pip here and parsed as pip parses requirements; tests/package/test_action_sources.py
installs each form for real."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pip._vendor.packaging.requirements import Requirement

from .runner import Runner, os_path

REPO = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"
GIT = f"git+https://github.com/acme/gpuspec@{SHA}"
WHEEL_URL = "https://files.acme.example/gpuspec-0.1.0-py3-none-any.whl"


def _install(tmp_path: Path, requirement: str, check: str) -> tuple[int, str, str]:
    """Run the step with a stand-in `python -m pip` and `gpuspec`; the requirement pip got, the step's log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "pip-args"
    (bin_dir / "python").write_text(f"""#!/bin/bash
if [ "$1" = -m ] && [ "$2" = pip ]; then printf '%s\\n' "$@" > {record}; exit 0; fi
exec {sys.executable} "$@"
""")
    (bin_dir / "gpuspec").write_text("#!/bin/bash\necho \"gpuspec stand-in $*\"\n")
    for tool in ("python", "gpuspec"):
        (bin_dir / tool).chmod(0o755)
    record.unlink(missing_ok=True)
    runner = Runner(tmp_path, tmp_path / "runner", f"{bin_dir}:{os_path()}")
    job = runner.action_step(REPO, "Install gpuspec", {"check": check, "gpuspec": requirement})
    got = record.read_text().splitlines()[-1] if record.exists() else ""
    return (1 if job.failed else 0), got, job.log


@pytest.mark.parametrize(("given", "lint", "verify"), [
    ("gpuspec==0.1.0", "gpuspec==0.1.0", "gpuspec[verify]==0.1.0"),
    (f"gpuspec @ {GIT}", f"gpuspec @ {GIT}", f"gpuspec[verify] @ {GIT}"),
    (f"gpuspec[verify] @ {GIT}", f"gpuspec[verify] @ {GIT}", f"gpuspec[verify] @ {GIT}"),
    (GIT, GIT, f"gpuspec[verify] @ {GIT}"),
    (WHEEL_URL, WHEEL_URL, f"gpuspec[verify] @ {WHEEL_URL}"),
    (f"gpuspec @ {WHEEL_URL}", f"gpuspec @ {WHEEL_URL}", f"gpuspec[verify] @ {WHEEL_URL}"),
    ("dist/gpuspec-0.1.0-py3-none-any.whl", "dist/gpuspec-0.1.0-py3-none-any.whl",
     "dist/gpuspec-0.1.0-py3-none-any.whl[verify]"),
    ("/srv/wheels/gpuspec-0.1.0-py3-none-any.whl", "/srv/wheels/gpuspec-0.1.0-py3-none-any.whl",
     "/srv/wheels/gpuspec-0.1.0-py3-none-any.whl[verify]"),
])
def test_every_source_form_installs_with_the_extra_the_check_needs(
    tmp_path: Path, given: str, lint: str, verify: str,
) -> None:
    for check, expected in (("lint", lint), ("verify", verify)):
        code, got, log = _install(tmp_path, given, check)
        assert code == 0, log
        assert got == expected, (check, log)
        if "[verify]" in expected and not expected.startswith(("/", "dist/")):
            parsed = Requirement(expected)  # what pip parses: the name, the extra, the URL or version
            assert parsed.name == "gpuspec" and parsed.extras == {"verify"}


def test_an_empty_source_or_unknown_check_is_exit_2_with_an_annotation(tmp_path: Path) -> None:
    code, _, log = _install(tmp_path, "  ", "lint")
    assert code == 1 and "::error title=gpuspec gate::the gpuspec input is empty" in log
    code, _, log = _install(tmp_path, "gpuspec==0.1.0", "format")
    assert code == 1 and "::error title=gpuspec gate::unknown check 'format'" in log
