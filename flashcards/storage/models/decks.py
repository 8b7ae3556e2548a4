"""Decks and cards, with their text per language."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..schema import Base, utcnow


class Deck(Base):
    __tablename__ = "decks"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(100), unique=True)
    default_locale: Mapped[str] = mapped_column(String(16))
    # No owner: a shipped deck, visible to everyone. Teams own decks through `owner_team_id`.
    owner_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    owner_team_id: Mapped[int | None] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), index=True, default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # A deck made on an Anki device whose cards are studied here too (`anki_sync.adopted`):
    # that deck's id, under which its cards go back to devices.
    anki_deck_id: Mapped[int | None] = mapped_column(BigInteger, default=None)

    __table_args__ = (
        Index("ix_decks_owner_anki_deck", "owner_user_id", "anki_deck_id", unique=True),
    )


class DeckText(Base):
    __tablename__ = "deck_texts"

    deck_id: Mapped[int] = mapped_column(
        ForeignKey("decks.id", ondelete="CASCADE"), primary_key=True
    )
    locale: Mapped[str] = mapped_column(String(16), primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")


class Card(Base):
    __tablename__ = "cards"

    id: Mapped[int] = mapped_column(primary_key=True)
    deck_id: Mapped[int] = mapped_column(ForeignKey("decks.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(100))
    position: Mapped[int] = mapped_column(Integer)
    # Labels kept from an imported Anki note (Anki's tags), exported again as its tags.
    tags: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    # A card removed from its deck file is retired: never introduced again, history kept.
    retired_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Cards of one deck with the same note key came from one note (the deletions of an Anki
    # Cloze note): siblings, which an answer to one of them may bury. None: a card alone.
    note_key: Mapped[str | None] = mapped_column(String(100), default=None)
    # A card made from a note added on an Anki device keeps that note's and card's ids in
    # every collection the sync builds (others get ids derived from ours), so the device's
    # note stays the same note, with its history, instead of being swapped for a copy.
    anki_note_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    anki_card_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # A card of a note of the device's own note type (`anki_sync.adopted`): which of the
    # note's cards it is. The note stays as the device sent it; None: our note type's.
    anki_ord: Mapped[int | None] = mapped_column(Integer, default=None)

    __table_args__ = (
        UniqueConstraint("deck_id", "key"),
        # Live cards first: the queue counts a deck's live cards and finds its next new one
        # by a range of this index alone.
        Index("ix_cards_deck_retired_position", "deck_id", "retired_at", "position"),
        Index("ix_cards_deck_note", "deck_id", "note_key"),
        Index("ix_cards_anki_note_id", "anki_note_id"),
        Index("ix_cards_anki_card_id", "anki_card_id"),
    )


class CardText(Base):
    """One language's version of a card; review state belongs to the card, not to this."""

    __tablename__ = "card_texts"

    card_id: Mapped[int] = mapped_column(
        ForeignKey("cards.id", ondelete="CASCADE"), primary_key=True
    )
    locale: Mapped[str] = mapped_column(String(16), primary_key=True)
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    explanation: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The guid of the Anki note this text was imported from: exported again under it, so that
    # Anki recognises its own note instead of adding a second copy.
    anki_guid: Mapped[str | None] = mapped_column(String(64))
