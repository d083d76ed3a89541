"""Where gpuspec comes from is data (gpuspec/origin.json, `init --source`): install lines, action and hook pins and
rule links all come from it, and nothing links a repository it does not name."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from gpuspec import __version__
from gpuspec.catalogue import CATALOGUE
from gpuspec.origin import Origin, SourceError, parse_source
from gpuspec.report.sarif import _rule

REPO = Path(__file__).resolve().parents[1]
SHA = "0123456789abcdef0123456789abcdef01234567"


def test_the_checked_in_origin_names_no_repository_it_does_not_own() -> None:
    data = json.loads((REPO / "gpuspec" / "origin.json").read_text(encoding="utf-8"))
    assert data["commit"] is None, "the commit is stamped into a release build, never committed"
    assert data["index"] is False, "gpuspec is not published on PyPI by this project"
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for rel in tracked.split():
        if rel.startswith(("gpuspec/", "docs/", "ci/", ".github/")) or rel in ("README.md", "action.yml",
                                                                            ".pre-commit-hooks.yaml"):
            path = REPO / rel
            if path.is_file() and path.suffix in (".py", ".md", ".yaml", ".yml", ".json", ".j2"):
                assert "github.com/gpuspec/" not in path.read_text(encoding="utf-8"), rel


@pytest.mark.parametrize(("source", "install", "action"), [
    ("gpuspec==0.1.0", "gpuspec==0.1.0", None),
    (f"git+https://github.com/acme/gpuspec@{SHA}", f"gpuspec @ git+https://github.com/acme/gpuspec@{SHA}",
     f"acme/gpuspec@{SHA}"),
    (f"gpuspec[verify] @ git+https://github.com/acme/gpuspec.git@{SHA}",
     f"gpuspec @ git+https://github.com/acme/gpuspec.git@{SHA}", f"acme/gpuspec@{SHA}"),
    (f"git+https://git.acme.example/tools/gpuspec@{SHA}", f"gpuspec @ git+https://git.acme.example/tools/gpuspec@{SHA}",
     None),
    ("dist/gpuspec-0.1.0-py3-none-any.whl", "dist/gpuspec-0.1.0-py3-none-any.whl", None),
    ("https://files.acme.example/gpuspec-0.1.0-py3-none-any.whl",
     "https://files.acme.example/gpuspec-0.1.0-py3-none-any.whl", None),
])
def test_sources(source: str, install: str, action: str | None) -> None:
    parsed = parse_source(source, Origin(__version__))
    assert parsed.install == install and parsed.action == action


@pytest.mark.parametrize("source", [
    "gpuspec", "gpuspec==latest", "git+https://github.com/acme/gpuspec@v0.1.0", "git+https://github.com/a/b@main",
    f"git+http://github.com/acme/gpuspec@{SHA}", f"git+file:///srv/gpuspec@{SHA}", "two\nlines", "",
    f"git+https://user:token@github.com/acme/gpuspec@{SHA}",
])
def test_sources_that_pin_nothing_are_refused(source: str) -> None:
    with pytest.raises(SourceError):
        parse_source(source, Origin(__version__))


def test_rule_links_follow_the_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = CATALOGUE["GS502"]
    monkeypatch.setattr("gpuspec.catalogue.entry.origin", lambda: Origin(__version__))
    assert entry.help_url is None
    assert "helpUri" not in _rule("GS502", entry)
    known = Origin(__version__, "https://github.com/acme/gpuspec", SHA)
    monkeypatch.setattr("gpuspec.catalogue.entry.origin", lambda: known)
    assert entry.help_url == f"https://github.com/acme/gpuspec/blob/{SHA}/docs/rules.md#gs502"
    assert _rule("GS502", entry)["helpUri"] == entry.help_url
    assert entry.help_url and re.match(r"https://github\.com/acme/[a-z]+/blob/[0-9a-f]{40}/docs/rules\.md#gs502\Z",
                                       entry.help_url)
