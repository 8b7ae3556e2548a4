"""What an import did, for the edges to say: the decks made or updated, what was left out,
and notes in English (each edge words them in its person's language from the counts)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .planning import SKIP_REASONS


@dataclass
class ImportReport:
    deck_id: int
    slug: str
    title: str
    default_locale: str
    cards: int = 0
    texts: int = 0
    review_states: int = 0
    review_logs: int = 0
    # Media files: not kept at all (a deck that is not a person's own, whose cards are
    # text only), added to the person's media folder for the cards, or in the package but
    # used by no card imported.
    media_left_out: int = 0
    media_added: int = 0
    media_unused: int = 0
    # Names the cards use that the package lacks (shown as missing), and files kept for
    # Anki that the pages do not show (SVG, which can carry script).
    media_missing: list[str] = field(default_factory=list)
    media_not_shown: int = 0
    formatting_simplified: int = 0
    # Cards whose every Anki card was suspended, imported without progress (of which
    # suspending is part): they are studied like any other.
    suspended_made_active: int = 0
    # Cloze notes, each made into a card per deletion number (`cloze`).
    cloze_notes: int = 0
    # A package imported again into the deck it came from (`reimport`): cards added to it,
    # and cards whose texts or tags changed; everyone's progress on the deck is kept.
    updated: bool = False
    added: int = 0
    changed: int = 0
    # Anki tags per card key, as stored on the cards (keys are a deck's: with subdecks, the
    # last deck's card of a key); and how many cards have tags.
    tags: dict[str, list[str]] = field(default_factory=dict)
    tagged: int = 0
    # Notes left out, by reason (a key of SKIP_REASONS).
    skipped: dict[str, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    # Every deck the package went into, the first as above: one per Anki deck (subdeck).
    decks: list[ImportedDeck] = field(default_factory=list)


@dataclass
class ImportedDeck:
    """One deck an import made, or updated (a package's deck that came from it)."""

    deck_id: int
    slug: str
    title: str
    default_locale: str
    updated: bool
    cards: int
    texts: int
    review_states: int
    review_logs: int
    added: int = 0
    changed: int = 0
    missing_language: int = 0  # new cards without a text in the deck's language, left out
    # A deck the person studies but does not own: new cards left out, cards whose edited
    # texts were not applied.
    not_owned_new: int = 0
    not_owned_edited: int = 0


def skip_messages(skipped: Counter[str] | dict[str, int]) -> list[str]:
    return [
        f"{count} note(s) left out: they {SKIP_REASONS[reason]}."
        for reason, count in skipped.items()
        if count
    ]


def english_messages(report: ImportReport) -> list[str]:
    """What was left out or changed, in English (the edges say it in the person's language)."""
    messages = skip_messages(report.skipped)
    # A deck updated with nothing new has no news of how its Cloze notes became cards.
    if report.cloze_notes and (not report.updated or report.added):
        messages.append(
            f"{report.cloze_notes} Cloze note(s) became question-and-answer cards, one per"
            " deletion number."
        )
    if report.media_left_out:
        messages.append(
            f"{report.media_left_out} media file(s) (images, sounds) were left out: "
            "cards here are text only."
        )
    if report.media_unused:
        messages.append(
            f"{report.media_unused} media file(s) were left out: no card imported uses them."
        )
    if report.media_missing:
        messages.append(
            f"{len(report.media_missing)} media file(s) the cards use are not in the package "
            f"({', '.join(report.media_missing[:3])}): the cards show them as missing."
        )
    if report.media_not_shown:
        messages.append(
            f"{report.media_not_shown} media file(s) are kept for Anki but not shown on these "
            "pages (SVG images, which can carry scripts, or sounds browsers do not play)."
        )
    if report.formatting_simplified:
        messages.append(
            f"{report.formatting_simplified} note(s) had formatting (bold, lists, links) that "
            "was reduced to plain text."
        )
    if report.suspended_made_active:
        messages.append(
            f"{report.suspended_made_active} card(s) suspended in Anki were imported as active,"
            " without progress: import with progress to keep them suspended."
        )
    return messages
