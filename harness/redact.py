"""Secrets in URLs: the password of a Redis URL (found by redis-py's own parser and
:mod:`urllib.parse`, never by a pattern of ours), the URL written without it, and the
process-wide list of secrets scrubbed from every line harness prints or writes that may
quote a driver's or a store's words (error lines, the errors of history events).

Contract: a password given in ``--redis-url``, ``HARNESS_REDIS_URL``, a scenario's
``[redis] url``, ``--pg-url``, ``HARNESS_PG_URL`` or ``[postgres] url`` never reaches
stdout, stderr or a file of the run directory; where a URL is shown its password reads
``***``. A URL whose password is ``***`` (read back from a
run directory) cannot connect: :func:`has_redacted_password` lets the target say so.
"""

from __future__ import annotations

from urllib.parse import quote, unquote, unquote_plus, urlsplit, urlunsplit

__all__ = ["ENV_VAR", "PG_ENV_VAR", "REDACTED", "has_redacted_password", "redact_url", "remember", "scrub",
           "url_secrets"]

REDACTED = "***"
_REDIS_SCHEMES = ("redis", "rediss", "unix")

#: The environment variable ``--redis-url`` is read from when the option is not given; the
#: reproduce line of a run whose URL had a password refers to it instead of the URL.
ENV_VAR = "HARNESS_REDIS_URL"
#: The same for ``--pg-url``.
PG_ENV_VAR = "HARNESS_PG_URL"

# Every secret this process has seen in a URL. Process-wide on purpose: the places that
# quote foreign text (a driver's exception, a store's error) cannot know which URL it
# came from. Worker processes remember their own URL when they start.
_secrets: set[str] = set()


def url_secrets(url: str) -> frozenset[str]:
    """The password of ``url`` in every form it may be printed: as redis-py uses it (the
    user-info password, else a ``?password=`` query argument) and as it is spelled in the
    URL (percent-encoded). Empty if there is none; a malformed URL is read as far as
    :func:`urllib.parse.urlsplit` can."""
    found: set[str] = set()
    try:
        parts = urlsplit(url)
        raw = parts.password
    except (ValueError, TypeError):
        return frozenset()
    if parts.scheme in _REDIS_SCHEMES:  # redis-py's reading of it, whatever ours says
        from redis.connection import parse_url

        try:
            pw = parse_url(url).get("password")  # type: ignore[no-untyped-call]
            if isinstance(pw, str):
                found.add(pw)
        except (ValueError, TypeError):  # a bad port, say: the user-info is still there
            pass
    if raw:
        found |= {raw, unquote(raw)}
    for item in parts.query.split("&"):
        key, _, value = item.partition("=")
        if unquote_plus(key) == "password" and value:
            found |= {value, unquote_plus(value), unquote(unquote_plus(value))}
    return frozenset(s for s in found if s)


def redact_url(url: str) -> str:
    """``url`` with its password (user-info or ``?password=``) replaced by ``***``; the
    rest as it was. Text that is not a URL has any remembered secret scrubbed."""
    secrets = url_secrets(url)
    if not secrets:  # nothing to hide: the URL exactly as given
        return scrub(url)
    try:
        parts = urlsplit(url)
        has_pw = parts.password is not None
    except (ValueError, TypeError):
        return scrub(url)
    netloc = parts.netloc
    if has_pw:
        userinfo, _, hostport = netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}:{REDACTED}@{hostport}"
    query = "&".join(_redact_arg(item) for item in parts.query.split("&")) if parts.query else ""
    return scrub(urlunsplit(parts._replace(netloc=netloc, query=query)), secrets)


def _redact_arg(item: str) -> str:
    """One ``key=value`` of a query, its value hidden if the key is ``password``."""
    key, _, value = item.partition("=")
    return f"{key}={REDACTED}" if unquote_plus(key) == "password" and value else item


def has_redacted_password(url: str) -> bool:
    """Whether ``url``'s password is the ``***`` a run directory holds instead of it."""
    return REDACTED in url_secrets(url) or quote(REDACTED) in url_secrets(url)


def remember(url: str) -> None:
    """Add ``url``'s password to the secrets :func:`scrub` removes in this process."""
    _secrets.update(s for s in url_secrets(url) if s not in (REDACTED, quote(REDACTED)))


def scrub(text: str, secrets: frozenset[str] | set[str] | None = None) -> str:
    """``text`` with every remembered secret (and every one of ``secrets``) replaced by
    ``***``, longest first so that one secret inside another leaves no tail behind."""
    for s in sorted(_secrets | set(secrets or ()), key=len, reverse=True):
        if s != REDACTED:
            text = text.replace(s, REDACTED)
    return text
