"""Accounts and how a person signs in: users, API tokens, browser sessions, sign-in limits,
password resets."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Integer,
    SmallInteger,
    String,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..schema import Base, utcnow


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Stored lower-cased, so a plain unique constraint makes it unique case-insensitively.
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    display_name: Mapped[str] = mapped_column(String(100), default="")
    locale: Mapped[str] = mapped_column(String(16), default="en")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    day_start_hour: Mapped[int] = mapped_column(SmallInteger, default=4)
    # "system" follows the browser's prefers-color-scheme; "light" and "dark" override it.
    # Left to the server default, and not read back after an insert (eager_defaults below),
    # so that an INSERT names no column newer than the rest (tests build users on old schemas).
    theme: Mapped[str] = mapped_column(String(8), server_default="system")
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint("day_start_hour BETWEEN 0 AND 23", name="day_start_hour"),
        CheckConstraint("theme IN ('system', 'light', 'dark')", name="theme"),
    )
    __mapper_args__ = {"eager_defaults": False}  # noqa: RUF012 (typed Any by SQLAlchemy)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # SHA-256 of the token: a leaked database does not leak usable tokens.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(100), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebSession(Base):
    """A signed-in browser session. The cookie carries a random id and only its SHA-256 is
    stored: deleting the row (signing out) ends the session, a copy of the cookie included."""

    __tablename__ = "web_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Renewed at most daily while the session is used; a session unused for its lifetime ends.
    seen_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class RateLimitCount(Base):
    """Failures of one rate-limit key (a hash: sign-ins per email and address, sign-ups per
    address) in its window. In the database, so that every worker and instance counts
    together without Redis; expired rows are pruned as new failures come."""

    __tablename__ = "rate_limits"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer)
    window_ends: Mapped[datetime] = mapped_column(index=True)


class PasswordReset(Base):
    """A one-time password reset link. Only the SHA-256 of its token is stored; the row is
    deleted when the link is used, and a link made before the password last changed is dead
    (`password_stamp`, a hash of the password hash it was made under, no longer matches)."""

    __tablename__ = "password_resets"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    password_stamp: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column(index=True)


# --- Anki sync (flashcards/anki_sync/) ---
