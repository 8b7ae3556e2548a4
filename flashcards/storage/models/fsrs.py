"""Fitted FSRS parameter sets, personal and per team deck."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Integer,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..schema import Base


class FsrsParameterSet(Base):
    """One fit of a person's FSRS parameters, adopted or not, with the scores that decided it.

    Every score is measured on the same held-out answers: this set's, the set in force when
    it was fitted (`previous_*`) and py-fsrs's defaults'. The parameters in force stay in
    `SchedulerSettings.parameters`, which the scheduler reads; the latest adopted set not
    reverted is the one they came from.
    """

    __tablename__ = "fsrs_parameter_sets"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Whose answers it was fitted to: a person's, or (NULL here) a team deck's members' on it.
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    parameters: Mapped[list[float]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column()
    answers: Mapped[int] = mapped_column(Integer)  # training items: answers on a later day
    cards: Mapped[int] = mapped_column(Integer)
    log_loss: Mapped[float] = mapped_column(Float)
    rmse_bins: Mapped[float] = mapped_column(Float)
    previous_log_loss: Mapped[float] = mapped_column(Float)
    previous_rmse_bins: Mapped[float] = mapped_column(Float)
    default_log_loss: Mapped[float] = mapped_column(Float)
    default_rmse_bins: Mapped[float] = mapped_column(Float)
    adopted: Mapped[bool] = mapped_column(Boolean)
    reverted_at: Mapped[datetime | None] = mapped_column(default=None)
    # The newest review-log row there was when the history was read: rows after it are the
    # answers new since this fit, whatever their `reviewed_at` (imported answers are dated in
    # the past). None: recorded without it (before 0016, or by a path that does not set it).
    history_end_log_id: Mapped[int | None] = mapped_column(Integer, default=None)
    # A team deck's set (optimizer.team): fitted to all its members' answers on it.
    deck_id: Mapped[int | None] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), index=True, default=None
    )

    __table_args__ = (CheckConstraint("(user_id IS NULL) <> (deck_id IS NULL)", name="one_owner"),)


class DeckFsrsParameters(Base):
    """A team deck's FSRS parameters in force, fitted to its members' answers on it (see
    optimizer.team): its cards are scheduled with them for a member without personal ones.
    No row: no team fit adopted (and never one for other decks)."""

    __tablename__ = "deck_fsrs_parameters"

    deck_id: Mapped[int] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), primary_key=True
    )
    parameters: Mapped[list[float]] = mapped_column(JSON)


# --- Password reset links (flashcards/people/resets.py) ---
