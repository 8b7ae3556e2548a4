"""Teams, their members, invitations, removals and deck assignments."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..schema import Base, utcnow


class Team(Base):
    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TeamMember(Base):
    """A user's membership; every team has exactly one row with role 'owner'."""

    __tablename__ = "team_members"

    team_id: Mapped[int] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[str] = mapped_column(String(16))
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint("role IN ('owner', 'manager', 'member')", name="role"),
        # At most one owner per team, enforced by the database as well as by teams/.
        Index(
            "ix_team_members_one_owner",
            "team_id",
            unique=True,
            sqlite_where=text("role = 'owner'"),
            postgresql_where=text("role = 'owner'"),
        ),
    )


class TeamInvitation(Base):
    """A join link; only the SHA-256 of its token is stored."""

    __tablename__ = "team_invitations"

    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
    max_uses: Mapped[int | None] = mapped_column(Integer, default=None)
    uses: Mapped[int] = mapped_column(Integer, default=0)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
    # The lead's own name for the link ("March cohort"), so that links can be told apart.
    label: Mapped[str] = mapped_column(String(100), default="", server_default="")


class TeamRemoval(Base):
    """Someone a lead removed from a team. No invitation link lets them back in (not the one
    they joined with, nor one shared with a whole group) until a lead allows it."""

    __tablename__ = "team_removals"

    team_id: Mapped[int] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    removed_at: Mapped[datetime] = mapped_column(default=utcnow)


class TeamAssignment(Base):
    """A deck a team studies, with an optional due date (a calendar day in each member's zone)."""

    __tablename__ = "team_assignments"

    team_id: Mapped[int] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True
    )
    deck_id: Mapped[int] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    due_date: Mapped[date | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


# --- Personal FSRS parameters (flashcards/optimizer/) ---
