"""Settings, read from `FLASHCARDS_*` environment variables when the app is created."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

MiB = 1024 * 1024


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value is None or value == "" else int(value)


def load_secret_key(instance_path: Path) -> str:
    """Use FLASHCARDS_SECRET_KEY, else a key generated once and kept owner-only in the instance."""
    from_env = os.environ.get("FLASHCARDS_SECRET_KEY")
    if from_env:
        return from_env
    key_file = instance_path / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    instance_path.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    # O_EXCL: two workers starting at once must not write two different keys.
    try:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return key_file.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(key)
    return key


def settings_from_env(instance_path: Path) -> dict[str, Any]:
    default_db = f"sqlite:///{instance_path / 'flashcards.sqlite3'}"
    return {
        "DATABASE_URL": os.environ.get("FLASHCARDS_DATABASE_URL") or default_db,
        "SIGNUP_OPEN": _env_bool("FLASHCARDS_SIGNUP_OPEN", True),
        "MAX_CONTENT_LENGTH": _env_int("FLASHCARDS_MAX_BODY_BYTES", 1 * MiB),
        "MAX_UPLOAD_BYTES": _env_int("FLASHCARDS_MAX_UPLOAD_BYTES", 64 * MiB),
        "APKG_MAX_NOTES": _env_int("FLASHCARDS_APKG_MAX_NOTES", 100_000),
        "SESSION_COOKIE_SECURE": _env_bool("FLASHCARDS_SECURE_COOKIES", False),
        "REDIS_URL": os.environ.get("FLASHCARDS_REDIS_URL") or None,
        "SQLITE_SYNCHRONOUS": os.environ.get("FLASHCARDS_SQLITE_SYNCHRONOUS", "NORMAL").upper(),
        "SIGNIN_ATTEMPTS_PER_15_MIN": _env_int("FLASHCARDS_SIGNIN_ATTEMPTS", 10),
    }
