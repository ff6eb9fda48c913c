"""Passwords in URLs: found by redis-py's own parser, hidden where a URL is shown, scrubbed
from foreign text once remembered."""

from __future__ import annotations

import pytest

from harness.backends.redis_keys import escape_glob, pattern_of
from harness.redact import has_redacted_password, redact_url, remember, scrub, url_secrets


@pytest.mark.parametrize(("url", "shown", "secrets"), [
    ("redis://:sec%40ret@h:6379/0", "redis://:***@h:6379/0", {"sec@ret", "sec%40ret"}),
    ("rediss://user:pw1@h/1", "rediss://user:***@h/1", {"pw1"}),
    ("redis://h/0?password=qs%2Bx&db=1", "redis://h/0?password=***&db=1", {"qs+x", "qs%2Bx"}),
    ("unix://:pw2@/tmp/s.sock?db=1", "unix://:***@/tmp/s.sock?db=1", {"pw2"}),
    ("redis://:pw3@h:99999/0", "redis://:***@h:99999/0", {"pw3"}),  # redis-py refuses it
    ("redis://h:6379/0", "redis://h:6379/0", set()),
    ("redis://user@h/0", "redis://user@h/0", set()),
    ("sqlite:///tmp/x.db", "sqlite:///tmp/x.db", set()),
])
def test_the_password_is_found_and_hidden(url: str, shown: str, secrets: set[str]) -> None:
    assert url_secrets(url) == secrets
    assert redact_url(url) == shown


def test_remembered_secrets_are_scrubbed_from_foreign_text() -> None:
    remember("redis://:Hunter2-unit@h/0")
    assert scrub("AuthError for redis://:Hunter2-unit@h/0 (Hunter2-unit)") == (
        "AuthError for redis://:***@h/0 (***)")
    assert scrub("nothing here") == "nothing here"


def test_a_redacted_url_is_recognised() -> None:
    assert has_redacted_password(redact_url("redis://:abc@h/0"))
    assert not has_redacted_password("redis://:abc@h/0")
    assert not has_redacted_password("redis://h/0")


@pytest.mark.parametrize(("name", "escaped"), [
    ("glob[x", "glob\\[x"), ("*", "\\*"), ("a?b", "a\\?b"), ("b\\s", "b\\\\s"),
    ("x]y", "x\\]y"), ("plain-1", "plain-1")])
def test_glob_characters_are_escaped(name: str, escaped: str) -> None:
    assert escape_glob(name) == escaped
    assert pattern_of(f"harness:{name}") == f"harness:{escaped}:*"
