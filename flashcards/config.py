"""Settings, read from `FLASHCARDS_*` environment variables when the app is created."""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import mail
from .errors import InvalidInput

MiB = 1024 * 1024
TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off", ""})
SQLITE_SYNCHRONOUS = frozenset({"OFF", "NORMAL", "FULL", "EXTRA"})


def parse_bool(value: str, name: str) -> bool:
    """true/false, yes/no, on/off or 1/0; anything else is an error naming `name`."""
    word = value.strip().lower()
    # A typo ("ture") must not silently flip a setting to its opposite.
    if word not in TRUE | FALSE:
        raise InvalidInput(f"{name} must be true or false, not '{value}'", field=name)
    return word in TRUE


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else parse_bool(value, name)


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise InvalidInput(f"{name} must be a whole number, not '{value}'", field=name) from None
    if number < 0:
        raise InvalidInput(f"{name} must not be negative", field=name)
    return number


def _env_choice(name: str, default: str, choices: frozenset[str]) -> str:
    value = (os.environ.get(name) or default).strip().upper()
    if value not in choices:
        allowed = ", ".join(sorted(choices))
        raise InvalidInput(f"{name} must be one of {allowed}, not '{value}'", field=name)
    return value


def load_secret_key(instance_path: Path) -> str:
    """Use FLASHCARDS_SECRET_KEY, else a key generated once and kept owner-only in the instance."""
    from_env = os.environ.get("FLASHCARDS_SECRET_KEY")
    if from_env:
        return from_env
    key_file = instance_path / "secret_key"
    existing = _read_key(key_file)
    if existing:
        return existing
    instance_path.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    # Written in full to a private temporary file, then linked into place: a worker starting
    # at the same moment sees either no key file or a complete one, never an empty one, and
    # the first link wins.
    tmp = instance_path / f".secret_key.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(key)
        if existing == "":
            os.replace(tmp, key_file)  # an empty key file (left by a crash) is replaced
            return key
        try:
            os.link(tmp, key_file)
        except FileExistsError:
            return _read_key(key_file) or key
        return key
    finally:
        tmp.unlink(missing_ok=True)


def _read_key(key_file: Path) -> str | None:
    """The stored key, "" for an empty file, None for no file."""
    try:
        if key_file.stat().st_mode & 0o077:
            key_file.chmod(0o600)  # someone loosened it; a readable key signs anyone's session
        return key_file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None


def settings_from_env(instance_path: Path) -> dict[str, Any]:
    default_db = f"sqlite:///{instance_path / 'flashcards.sqlite3'}"
    return {
        "DATABASE_URL": os.environ.get("FLASHCARDS_DATABASE_URL") or default_db,
        "SIGNUP_OPEN": _env_bool("FLASHCARDS_SIGNUP_OPEN", True),
        "MAX_CONTENT_LENGTH": _env_int("FLASHCARDS_MAX_BODY_BYTES", 1 * MiB),
        # The one upload there is, an Anki package, gets a limit of its own: MAX_CONTENT_LENGTH
        # stays small for every other body, and the import views raise it for their request.
        "MAX_UPLOAD_BYTES": _env_int("FLASHCARDS_APKG_MAX_BYTES", 64 * MiB),
        "APKG_MAX_NOTES": _env_int("FLASHCARDS_APKG_MAX_NOTES", 100_000),
        "SESSION_COOKIE_SECURE": _env_bool("FLASHCARDS_SECURE_COOKIES", False),
        "REDIS_URL": os.environ.get("FLASHCARDS_REDIS_URL") or None,
        # Interpolated into a PRAGMA statement, so only the known words are accepted.
        "SQLITE_SYNCHRONOUS": _env_choice(
            "FLASHCARDS_SQLITE_SYNCHRONOUS", "NORMAL", SQLITE_SYNCHRONOUS
        ),
        "SIGNIN_ATTEMPTS_PER_15_MIN": _env_int("FLASHCARDS_SIGNIN_ATTEMPTS", 10),
        "SIGNUPS_PER_HOUR": _env_int("FLASHCARDS_SIGNUPS_PER_HOUR", 10),
        "TOKENS_PER_HOUR": _env_int("FLASHCARDS_TOKENS_PER_HOUR", 20),
        "FITS_PER_HOUR": _env_int("FLASHCARDS_FITS_PER_HOUR", 6),
        # When `flashcards fsrs optimize --due` fits a person again (see optimizer/auto.py):
        # this many answers new since their last fit, on this many cards, and that fit at
        # least this many days old.
        "FSRS_AUTO_MIN_ANSWERS": _env_int("FLASHCARDS_FSRS_AUTO_MIN_ANSWERS", 400),
        "FSRS_AUTO_MIN_CARDS": _env_int("FLASHCARDS_FSRS_AUTO_MIN_CARDS", 50),
        "FSRS_AUTO_MIN_DAYS": _env_int("FLASHCARDS_FSRS_AUTO_MIN_DAYS", 7),
        # How many reverse proxies stand in front: their X-Forwarded-* headers are believed,
        # so rate limits see the client's address instead of the proxy's. 0: none believed.
        "TRUSTED_PROXIES": _env_int("FLASHCARDS_TRUSTED_PROXIES", 0),
        **mail_settings_from_env(),
        # Password reset links asked for per email address, and per client address, an hour;
        # invitation mails a team lead may send an hour.
        "RESET_MAILS_PER_HOUR": _env_int("FLASHCARDS_RESET_MAILS_PER_HOUR", 3),
        "RESET_REQUESTS_PER_HOUR": _env_int("FLASHCARDS_RESET_REQUESTS_PER_HOUR", 10),
        "INVITE_MAILS_PER_HOUR": _env_int("FLASHCARDS_INVITE_MAILS_PER_HOUR", 50),
        # Anki sync bodies: this many bytes compressed, three times that decompressed (Anki's
        # own server's 100 MB limit by default).
        "SYNC_MAX_BYTES": _env_int("FLASHCARDS_SYNC_MAX_BYTES", 100 * MiB),
        # The media (images, sounds) one person may keep, in megabytes of live files.
        "MEDIA_QUOTA_MB": _env_int("FLASHCARDS_MEDIA_QUOTA_MB", 1000),
    }


def parse_base_url(value: str, name: str = "FLASHCARDS_BASE_URL") -> str:
    """The address people open the service at (`https://cards.example.com`, perhaps with a
    path prefix), without a trailing slash; InvalidInput naming `name` otherwise."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise InvalidInput(
            f"{name} must be the address people open, like https://cards.example.com",
            field=name,
        )
    return value.strip().rstrip("/")


def mail_settings_from_env() -> dict[str, Any]:
    """The SMTP server, the From address and the public address links in mail point to.

    Mail is sent only with all three: a link mailed must never be built from the Host header
    of the request that asked for it, which whoever asks chooses."""
    smtp_url = os.environ.get("FLASHCARDS_SMTP_URL") or None
    mail_from = os.environ.get("FLASHCARDS_MAIL_FROM") or None
    base_url = os.environ.get("FLASHCARDS_BASE_URL") or None
    if base_url is not None:
        base_url = parse_base_url(base_url)
    if smtp_url is not None:
        mail.parse_smtp_url(smtp_url)
        if mail_from is None or base_url is None:
            raise InvalidInput(
                "FLASHCARDS_SMTP_URL needs FLASHCARDS_MAIL_FROM (the sender) and "
                "FLASHCARDS_BASE_URL (the address links in mail point to)",
                field="FLASHCARDS_SMTP_URL",
            )
    if mail_from is not None:
        mail_from = mail.parse_sender(mail_from)
    return {"SMTP_URL": smtp_url, "MAIL_FROM": mail_from, "BASE_URL": base_url}


MIN_SECRET_KEY_BYTES = 32
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether a bind address reaches only this machine ("0.0.0.0" and "::" reach everyone)."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name that resolves elsewhere: assume it is reachable


# PostgreSQL's default max_connections, less a few it keeps for superusers.
POSTGRESQL_DEFAULT_CONNECTIONS = 97


def startup_warnings(config: Mapping[str, Any], host: str, *, connections: int = 0) -> list[str]:
    """Settings that work but leave a deployment weaker than it looks, for the operator.

    Warnings rather than errors: a short key or plain-HTTP cookies are a choice some setups
    make on purpose (a test box, TLS ended on the same host), and refusing to start would
    only teach people to silence the check.
    """
    warnings = []
    from_env = os.environ.get("FLASHCARDS_SECRET_KEY")
    if from_env and len(from_env.encode()) < MIN_SECRET_KEY_BYTES:
        warnings.append(
            f"FLASHCARDS_SECRET_KEY is {len(from_env.encode())} bytes; use at least "
            f"{MIN_SECRET_KEY_BYTES} random bytes (e.g. `python3 -c 'import secrets; "
            "print(secrets.token_hex(32))'`): a short key lets session cookies be forged by "
            "guessing it"
        )
    if not config.get("SESSION_COOKIE_SECURE") and not is_loopback(host):
        warnings.append(
            f"serving on {host}, reachable from other machines, with FLASHCARDS_SECURE_COOKIES "
            "off: session cookies would also travel over plain HTTP; serve behind an HTTPS "
            "proxy and set FLASHCARDS_SECURE_COOKIES=1"
        )
    url = str(config.get("DATABASE_URL", ""))
    if url.startswith("postgresql") and connections > POSTGRESQL_DEFAULT_CONNECTIONS:
        warnings.append(
            f"the workers and threads may open up to {connections} connections to "
            f"PostgreSQL, whose max_connections is 100 unless set higher: raise it, or serve "
            "with fewer workers or threads"
        )
    return warnings
