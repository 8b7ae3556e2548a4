"""Bodies of the own decks API (`own_decks.py`): a person's decks, made and edited by them."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from ..decks.card_editing import MAX_TAGS, ClozeSaved, ClozeText
from ..decks.card_pages import CardRow
from ..decks.deckfile import MAX_TITLE
from ..decks.own_decks import MAX_LOCALES
from ..storage.models import Deck
from .models import Body, Reply
from .models_teams import MAX_CARD_TEXT, MAX_LOCALE, AddedKeys, Tag, TaggedBody

Locale = Annotated[str, Field(max_length=MAX_LOCALE)]
# Not blank: the domain folds white space and says so in its own words (minLength and the
# pattern are for the document, not checked here, so the message stays the domain's).
Title = Annotated[
    str, Field(max_length=MAX_TITLE, json_schema_extra={"minLength": 1, "pattern": "\\S"})
]


class NewDeck(Body):
    title: Title
    locales: list[Locale] = Field(
        min_length=1,
        max_length=MAX_LOCALES,
        description="The deck's languages; the first is its default, in which cards are added.",
    )
    messages: ClassVar[dict[str, str]] = {
        "locales": f"locales must be a list of 1 to {MAX_LOCALES} language codes such as 'en'"
    }


class DeckPatch(Body):
    title: Title
    locale: Locale | None = Field(
        None, description="The language of the title; the deck's default when left out."
    )


class ClozeEdit(TaggedBody):
    text: str = Field(
        min_length=1, max_length=MAX_CARD_TEXT, description="The Cloze text, as {{c1::Paris}}."
    )
    extra: str = Field(
        "", max_length=MAX_CARD_TEXT, description="The explanation its cards share (Back Extra)."
    )
    tags: list[Tag] | None = Field(
        None, max_length=MAX_TAGS, description="The note's tags, so every card's; kept if left out."
    )


class ClozeCards(Reply):
    text: str
    extra: str
    keys: list[str] = Field(description="The text's live cards, by deletion number.")
    added: list[str] = Field(
        default_factory=list, description="After an edit: the cards of numbers it added."
    )
    retired: list[str] = Field(
        default_factory=list,
        description="After an edit: the cards of numbers it took out, retired (their answers "
        "stay in the history).",
    )

    @classmethod
    def of(cls, found: ClozeText, saved: ClozeSaved | None = None) -> ClozeCards:
        return cls(
            text=found.text,
            extra=found.extra,
            keys=[found.keys[n] for n in sorted(found.keys)],
            added=saved.added if saved else [],
            retired=saved.retired if saved else [],
        )


class CardPatch(TaggedBody):
    """What to change; a field left out stays as it is."""

    locale: Locale | None = Field(
        None,
        description="The language of front, back and explanation; the deck's default when "
        "left out. A language the card has no text in yet needs front and back.",
    )
    front: str | None = Field(None, max_length=MAX_CARD_TEXT)
    back: str | None = Field(None, max_length=MAX_CARD_TEXT)
    explanation: str | None = Field(None, max_length=MAX_CARD_TEXT)
    tags: list[Tag] | None = Field(None, max_length=MAX_TAGS, description="The card's tags.")


class OwnDeck(Reply):
    slug: str
    title: str
    default_locale: str
    locales: list[str]

    @classmethod
    def of(cls, deck: Deck, title: str, locales: list[str]) -> OwnDeck:
        return cls(slug=deck.slug, title=title, default_locale=deck.default_locale, locales=locales)


class CardText(Reply):
    front: str
    back: str
    explanation: str


class OwnCard(Reply):
    key: str
    tags: list[str]
    texts: dict[str, CardText] = Field(description="The card's text by language.")

    @classmethod
    def of(cls, row: CardRow) -> OwnCard:
        return cls(
            key=row.key,
            tags=list(row.tags),
            texts={
                loc: CardText(front=t.question, back=t.answer, explanation=t.explanation)
                for loc, t in row.texts.items()
            },
        )


class AddedCard(OwnCard, AddedKeys):
    """The card added, and the keys of every card added with it."""

    @classmethod
    def added(cls, row: CardRow, keys: list[str]) -> AddedCard:
        return cls(**OwnCard.of(row).model_dump(), keys=keys)
