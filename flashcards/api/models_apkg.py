"""Bodies of the Anki package endpoints (`apkg.py`); the packages themselves are binary."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..anki import ImportReport
from .models import Reply

Count = Annotated[int, Field(ge=0)]


class ImportedDeck(Reply):
    slug: str
    title: str
    default_locale: str


class ImportedSubdeck(ImportedDeck):
    updated: bool = Field(description="True: the deck the package's deck came from, updated.")
    cards: Count = Field(description="Cards created, or the package's cards in an updated deck.")


class Imported(Reply):
    """What an .apkg import did: a new deck owned by the caller, who is subscribed to it, or
    the caller's deck the package came from, updated. A package of several Anki decks
    (subdecks) makes, or updates, one deck for each."""

    deck: ImportedDeck = Field(description="The first of `decks`: a parent before its subdecks.")
    decks: list[ImportedSubdeck] = Field(
        description="Every deck the package went into, one per Anki deck, parents first."
    )
    updated: bool = Field(
        description="True: the package updated the caller's decks it came from (by note GUID), "
        "keeping their progress; false: it made at least one new deck."
    )
    cards_added: Count = Field(description="Cards new to an updated deck.")
    cards_changed: Count = Field(
        description="Cards of an updated deck whose texts or tags changed."
    )
    cards: Count = Field(
        description="Cards created, or in an updated deck the package's cards (a card has one "
        "text per language)."
    )
    texts: Count = Field(description="Notes imported: one per card and language.")
    review_states: Count = Field(description="Cards with progress (with_scheduling).")
    review_logs: Count = Field(description="Answers taken from Anki's review log.")
    media_added: Count = Field(
        description="Images and sounds the cards use, added to the person's media folder "
        "(their text names them as [image:name] and [sound:name])."
    )
    media_missing: list[str] = Field(
        description="Names of media files the imported cards use that the package lacks."
    )
    media_not_shown: Count = Field(
        description="Media files kept for Anki that the pages do not show (SVG images)."
    )
    media_left_out: Count = Field(
        description="Media files not imported: the package's, when the deck keeps no media, "
        "and those no imported card uses."
    )
    formatting_simplified: Count = Field(
        description="Notes whose HTML formatting was reduced to plain text."
    )
    suspended_made_active: Count = Field(
        description="Cards suspended in Anki, imported as active: an import without "
        "progress (with_scheduling false) does not keep them suspended."
    )
    cloze_notes: Count = Field(
        description="Cloze notes, each made into a question-and-answer card per deletion number."
    )
    skipped: dict[str, Count] = Field(
        description="Notes left out, by reason: empty_front, duplicate, no_notetype, "
        "too_many_deletions, too_long, missing_language; and, imported again into a deck the "
        "person studies but does not own, not_owned_new (new notes) and not_owned_edited "
        "(notes whose edited texts were kept as the deck's)."
    )
    tags: Count = Field(description="Cards that kept tags from their Anki notes.")
    messages: list[str] = Field(
        description="What was left out or changed, e.g. notes skipped and why."
    )

    @classmethod
    def of(cls, report: ImportReport) -> Imported:
        return cls(
            deck=ImportedDeck(
                slug=report.slug, title=report.title, default_locale=report.default_locale
            ),
            decks=[
                ImportedSubdeck(
                    slug=d.slug,
                    title=d.title,
                    default_locale=d.default_locale,
                    updated=d.updated,
                    cards=d.cards,
                )
                for d in report.decks
            ],
            updated=report.updated,
            cards_added=report.added,
            cards_changed=report.changed,
            cards=report.cards,
            texts=report.texts,
            review_states=report.review_states,
            review_logs=report.review_logs,
            media_added=report.media_added,
            media_missing=report.media_missing,
            media_not_shown=report.media_not_shown,
            media_left_out=report.media_left_out + report.media_unused,
            formatting_simplified=report.formatting_simplified,
            suspended_made_active=report.suspended_made_active,
            cloze_notes=report.cloze_notes,
            skipped=report.skipped,
            tags=report.tagged,
            messages=report.messages,
        )
