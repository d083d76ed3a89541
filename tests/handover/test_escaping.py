"""No spec value can change a document's structure: Markdown, HTML, newlines and mentions are escaped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt

from gpuspec.templating import escape

from .helpers import copy_example, documents

HOSTILE = (
    "evil | pipe `tick` ``two`` <img src=x onerror=alert(1)> <!-- c --> @octo-org/team\n"
    "# Injected heading\n| a | b |\n|---|---|\n```\n$x^2$ [link](https://e.example) **bold** ~~s~~ > quote\n- item"
)


def _structure(markdown: str) -> list[tuple[str, str]]:
    """Block structure: (token type, tag) of every block token, plus heading texts and table cell counts."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    out: list[tuple[str, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "inline":
            if tokens[i - 1].type == "heading_open":
                out.append(("heading", tok.content.split(" ")[0]))
            continue
        out.append((tok.type, tok.tag))
    return out


def _set(root: Path, rel: str, edit: Any) -> None:
    path = root / "fleet" / rel
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _hostile_fleet(root: Path, value: str) -> None:
    def cluster(data: dict[str, Any]) -> None:
        data["metadata"]["description"] = value
        data["pools"][0]["sharing"]["justification"] = value
        data["pools"][1]["sharing"]["justification"] = value
        data["priorityClasses"][0]["description"] = value

    def fleet(data: dict[str, Any]) -> None:
        data["metadata"]["description"] = value
        line = value.replace("\n", " ")  # team contacts are one line each
        for team in data["teams"]:
            team.update(contact=line, onCall=line, escalation=[line, line])

    _set(root, "clusters/infer-north.yaml", cluster)
    _set(root, "fleet.yaml", fleet)


def test_hostile_values_keep_the_structure(tmp_path: Path) -> None:
    benign_root = copy_example(tmp_path / "benign")
    _hostile_fleet(benign_root, "plain words")
    hostile_root = copy_example(tmp_path / "hostile")
    _hostile_fleet(hostile_root, HOSTILE)
    benign, hostile = documents(benign_root), documents(hostile_root)
    for path in ("handover/infer-north.md", "handover/README.md"):
        assert _structure(hostile[path]) == _structure(benign[path]), path
        text = hostile[path]
        assert "<img" not in text and "<!-- c" not in text
        assert "@octo-org" not in text  # a zero-width space follows every @
        assert "\n# Injected" not in text and "\n```\n$x" not in text
        assert "$x^2$" not in text  # GitHub would render math
    assert HOSTILE.split("\n")[0][:4] in hostile["handover/infer-north.md"]


def test_escape_functions() -> None:
    assert escape.text("a | b\nc") == "a \\| b c"
    assert escape.text("<b>&") == "&lt;b&gt;&amp;"
    assert escape.text("@team") == "@&#8203;team"
    assert escape.text("- x") == "\\- x" and escape.text("1. x") == "1\\. x"
    assert escape.text("") == escape.DASH and escape.text(None) == escape.DASH
    assert escape.code("a`b|c") == "``a`b\\|c``"
    assert escape.code("`x`") == "`` `x` ``"
    assert escape.mermaid_label('a "b"\n<c> `d`') == "a #quot;b#quot; &lt;c&gt; #96;d#96;"
    assert escape.mermaid_id("pool-1 x") == "n_pool_1_x"
    block = escape.fenced(["x", "```y", "a\nb"], "sh")
    assert block.splitlines() == ["````sh", "x", "```y", "a", "b", "````"]
    assert escape.fenced(["x"], "sh", 2).splitlines() == ["  ```sh", "  x", "  ```"]


def test_plain_values_stay_readable() -> None:
    for value in ("580.173.02 (operator)", "1.33", "nvidia.com/gpu", "10%", "H100-SXM5-80GB", "a-b"):
        assert escape.text(value) == value
    assert escape.code("acme.example/gpu=h100:NoSchedule") == "`acme.example/gpu=h100:NoSchedule`"


URLS = ("see https://evil.example/login now", "www.evil.example/x", "HTTP://EVIL.EXAMPLE", "ftp://evil.example/f",
        "mail owner@evil.example")


def test_bare_urls_stay_text_in_github_flavored_markdown(tmp_path: Path) -> None:
    """GFM (GitHub's cmark-gfm) links bare URLs; a URL in a spec value is shown, never linked."""
    import cmarkgfm

    from gpuspec.plan.markdown import cell

    for value in URLS:
        assert "<a " in cmarkgfm.github_flavored_markdown_to_html(value), value  # what escaping has to prevent
        for escaped in (escape.text(value), cell(value)):
            html = cmarkgfm.github_flavored_markdown_to_html(escaped)
            assert "<a " not in html, (value, escaped, html)
            assert "evil.example" in html.lower()
    root = copy_example(tmp_path / "urls")
    _hostile_fleet(root, " ".join(URLS))
    for name, text in documents(root).items():
        html = cmarkgfm.github_flavored_markdown_to_html(text)
        assert "evil.example" in html.lower() or "README" in name, name
        assert not re.search(r'href="[^"]*evil', html, re.IGNORECASE), name
