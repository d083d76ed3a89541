"""The fast path of redaction (needles, line spans) replaces exactly what running every pattern over the whole
text replaces: on the committed output, the docs, and thousands of generated texts built to sit on its edges."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from gpuspec import redaction
from gpuspec.redaction import REDACTED, VALUE_PATTERNS, redact_text

REPO = Path(__file__).resolve().parents[2]
#: The userinfo pattern as it was before it began with its literal "//" (the reference for the new form).
_OLD_USERINFO = re.compile(r"(?:(?<=[A-Za-z0-9+.\-]):|(?<![^\s\"'=(<\[{,]))//[^/\s:@]+:[^/\s@]+@")


def _reference(text: str) -> str:
    """Every pattern over the whole text, one after the other: the plain form the fast path must equal."""
    if not text:
        return text
    for pattern, kind in VALUE_PATTERNS:
        if kind == "a URL with user:password":
            text = _OLD_USERINFO.sub(lambda m: m.group(0)[: m.group(0).index("//") + 2] + REDACTED + "@", text)
        else:
            text = pattern.sub(REDACTED, text)
    if redaction._pem_in_certificate(text):
        text = text[: text.find("-----BEGIN CERTIFICATE-----")] + REDACTED
    return redaction._KEY_VALUE.sub(redaction._redact_key_value, text)


_FRAGMENTS = (
    "password: Zq7canaryPW91", "PASSWORD=hunter2hunter2", "db_pwd: x", "paſſword: Zq7canaryPW91",
    "token: abc", "Token=abcdef", "\u0130token: v", "api-key: k1", "api_key= k2", "apiKey: k3", "access_key: a",
    "private-key: p", "credentials: c", "authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: token abcdefgh",
    "extraheader = AUTHORIZATION: basic Zq7canaryPW91", "Bearer abcdefghijklmnopqrstuv",
    "basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
    "AKIAABCDEFGHIJKLMNOP", "aws_secret_access_key = abcdefghijklmnopqrstuvwxyz", "ghp_" + "a" * 36,
    "github_pat_" + "b" * 40, "glpat-" + "c" * 24, "xoxb-1234567890-abc", "eyJabcdefghij.eyJabcdefghij.abcdefghij",
    "nvapi-" + "d" * 30, "https://u:Zq7canaryPW91@h.example/x", " //u:p@h", "'//u:p@h'", "a//u:p@h", "x=//a:b@c",
    '"auths": {', "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN CERTIFICATE-----\nabc\nPRIVATE KEY",
    "secret: |", "secret: >-", "token: |2", "pullSecrets: name", "imagePullSecrets: regcred", "kubeConfigSecret: kc",
    "\\\"password\\\": \\\"Zq7canaryPW91\\\"", "Kelvin \u212aey", "dotless \u0131", "secret", "SECRET", "toKen",
    "nvcr.io/nvidia/driver@sha256:" + "e" * 64, "https://github.com/org/repo", "- name: x", "key: value",
    "\n", "\r\n", "\n\n", " ", "\t", ":", "=", "'", '"', "|", ">", "@", "/", "//", "{", "}", ",", "—", "×", "é",
)


def _generated(rng: random.Random) -> str:
    parts = [rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 40))]
    if rng.random() < 0.5:  # long texts take the fast path
        parts.insert(rng.randrange(len(parts) + 1), "filler text without credentials\n" * rng.randint(16, 40))
    return "".join(parts)


def test_generated_texts_are_redacted_as_by_every_pattern_over_the_whole_text() -> None:
    rng = random.Random(20261202)
    for _ in range(3000):
        text = _generated(rng)
        assert redact_text(text) == _reference(text), text


@pytest.mark.parametrize("folder", ["rendered", "docs", "tests/hostile/fuzz_regressions"])
def test_committed_texts_are_redacted_as_by_every_pattern_over_the_whole_text(folder: str) -> None:
    files = [p for p in (REPO / folder).rglob("*") if p.is_file() and p.stat().st_size < 4 * 1024 * 1024]
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert redact_text(text) == _reference(text), path


def test_a_long_document_with_credentials_on_some_lines_keeps_every_other_line() -> None:
    """Credential lines far apart in a long document are all redacted; a case-folded keyword (ſ, İ, the
    Kelvin sign) is matched as the case-insensitive pattern matches it."""
    lines = [f"plain line number {i}" for i in range(400)]
    lines[3] = "password: Zq7canaryPW91"
    lines[200] = "  paſſword: Zq7canaryPW91"
    lines[399] = "url: https://u:Zq7canaryPW91@h.example/x"
    text = "\n".join(lines)
    out = redact_text(text)
    assert "Zq7canaryPW91" not in out and out.count(REDACTED) == 3
    assert out.splitlines()[100] == "plain line number 100"
