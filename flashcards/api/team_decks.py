"""JSON API for a team's private decks: upload, read, edit and retire cards, delete."""

from __future__ import annotations

from flask import Response
from sqlalchemy.exc import IntegrityError

from ..http.request_db import db, writes
from ..storage.retry import retrying
from ..storage.schema import utcnow
from ..teams import team_decks
from . import bp
from .auth import current_user_id
from .bodies import parse_body
from .models import reply
from .models_own_decks import ClozeCards, ClozeEdit
from .models_teams import (
    AddedKeys,
    CardEdit,
    NewCard,
    SourceCard,
    SourceLocale,
    TeamDeck,
    TeamDeckCards,
    TeamDeckList,
    TeamDeckSync,
    Upload,
)
from .openapi import Answer, documented
from .teams import TAGS, checked_id

# --- team decks ---


def _upload_fields() -> tuple[str, str, str, str | None]:
    body = parse_body(Upload)
    return body.format, body.content, body.locale, body.title or None


@bp.get("/teams/<int:team_id>/decks")
@documented(
    "listTeamDecks", "The team's own decks.", {200: Answer("Decks.", TeamDeckList)}, tags=TAGS
)
def list_team_decks(team_id: int) -> Response:
    user_id = current_user_id()
    decks = team_decks.list_team_decks(db(), checked_id(team_id, "team"), user_id)
    return reply(
        TeamDeckList(
            decks=[
                TeamDeck(
                    slug=d.slug,
                    title=d.title,
                    default_locale=d.default_locale,
                    locales=d.locales,
                    card_count=d.card_count,
                )
                for d in decks
            ]
        )
    )


@bp.post("/teams/<int:team_id>/decks")
@documented(
    "createTeamDeck",
    "Upload a quiz text or CSV as a new team deck.",
    {201: Answer("The new deck's cards.", TeamDeckSync)},
    403,
    409,
    body=Upload,
    tags=TAGS,
)
@writes
def create_team_deck(team_id: int) -> Response:
    user_id = current_user_id()
    fmt, content, locale, title = _upload_fields()
    session = db()
    _deck, report = retrying(
        session,
        lambda: team_decks.create_team_deck(
            session,
            checked_id(team_id, "team"),
            user_id,
            fmt=fmt,
            content=content,
            locale=locale,
            title=title,
            now=utcnow(),
        ),
        retry_on=(IntegrityError,),  # two uploads with the same title took the same slug
        attempts=3,
    )
    return reply(TeamDeckSync.of(report), 201)


@bp.get("/teams/<int:team_id>/decks/<slug>")
@documented(
    "getTeamDeck",
    "A team deck's cards in every language.",
    {200: Answer("The deck's cards.", TeamDeckCards)},
    tags=TAGS,
)
def get_team_deck(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    source, tags = team_decks.deck_cards_and_tags(db(), checked_id(team_id, "team"), user_id, slug)
    return reply(
        TeamDeckCards(
            slug=source.slug,
            default_locale=source.default_locale,
            locales={
                loc.locale: SourceLocale(
                    title=loc.title,
                    description=loc.description,
                    cards=[
                        SourceCard(
                            key=c.key,
                            front=c.question,
                            back=c.answer,
                            explanation=c.explanation,
                            tags=tags.get(c.key, []),
                        )
                        for c in loc.cards
                    ],
                )
                for loc in source.locales.values()
            },
        )
    )


@bp.delete("/teams/<int:team_id>/decks/<slug>")
@documented(
    "deleteTeamDeck",
    "Delete a team deck and progress on it.",
    {204: Answer("Deleted.")},
    403,
    tags=TAGS,
)
@writes
def delete_team_deck(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    session = db()
    team_decks.delete_team_deck(session, checked_id(team_id, "team"), user_id, slug)
    session.commit()
    return Response(status=204)


@bp.put("/teams/<int:team_id>/decks/<slug>/source")
@documented(
    "uploadTeamDeckLocale",
    "Replace or add one language; progress is kept.",
    {200: Answer("What changed.", TeamDeckSync)},
    403,
    409,
    body=Upload,
    tags=TAGS,
)
@writes
def upload_team_deck_locale(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    fmt, content, locale, title = _upload_fields()
    session = db()
    report = team_decks.upload_locale(
        session,
        checked_id(team_id, "team"),
        user_id,
        slug,
        fmt=fmt,
        content=content,
        locale=locale,
        title=title,
        now=utcnow(),
    )
    session.commit()
    return reply(TeamDeckSync.of(report))


@bp.put("/teams/<int:team_id>/decks/<slug>/cards/<key>")
@documented(
    "setTeamCard",
    "Edit or add a card; progress is kept. A retired card is not edited (409).",
    {200: Answer("What changed.", TeamDeckSync)},
    403,
    409,
    body=CardEdit,
    tags=TAGS,
)
@writes
def set_team_card(team_id: int, slug: str, key: str) -> Response:
    user_id = current_user_id()
    body = parse_body(CardEdit)
    session = db()
    report = team_decks.set_card(
        session,
        checked_id(team_id, "team"),
        user_id,
        slug,
        key,
        locale=body.locale,
        question=body.front,
        answer=body.back,
        explanation=body.explanation,
        tags=body.tags,
        now=utcnow(),
    )
    session.commit()
    return reply(TeamDeckSync.of(report))


@bp.post("/teams/<int:team_id>/decks/<slug>/cards")
@documented(
    "addTeamCard",
    "Add a card to a team's deck, in its default language, with a key of its own; it comes up "
    "as new for everyone assigned the deck. A front written with Anki's Cloze deletions "
    "({{c1::Paris}}) makes a card for each deletion number, as an Anki Cloze note does. "
    "Leads only.",
    {201: Answer("The keys of the cards added.", AddedKeys)},
    403,
    body=NewCard,
    tags=TAGS,
)
@writes
def add_team_card(team_id: int, slug: str) -> Response:
    user_id = current_user_id()
    body = parse_body(NewCard)
    session = db()
    keys = retrying(
        session,
        lambda: team_decks.add_cards(
            session,
            checked_id(team_id, "team"),
            user_id,
            slug,
            question=body.front,
            answer=body.back,
            explanation=body.explanation,
            tags=body.tags,
            now=utcnow(),
        ),
        retry_on=(IntegrityError,),  # two cards added at once picked the same new key
        attempts=3,
    )
    return reply(AddedKeys(keys=keys), 201)


@bp.get("/teams/<int:team_id>/decks/<slug>/cards/<key>/cloze")
@documented(
    "getTeamClozeText",
    "The Cloze text a card of a team's deck was made from, with its sibling cards. Leads "
    "only; 404 for a card of no Cloze text.",
    {200: Answer("The text and its cards.", ClozeCards)},
    403,
    tags=TAGS,
)
def get_team_cloze_text(team_id: int, slug: str, key: str) -> Response:
    found = team_decks.cloze_text(db(), checked_id(team_id, "team"), current_user_id(), slug, key)
    return reply(ClozeCards.of(found))


@bp.put("/teams/<int:team_id>/decks/<slug>/cards/<key>/cloze")
@documented(
    "editTeamClozeText",
    "Change the Cloze text a card of a team's deck was made from, with its sibling cards, as "
    "Anki edits a Cloze note: each number's card keeps everyone's progress, a new number adds "
    "a card, a number taken out retires its card. Leads only; 404 for a card of no Cloze text, "
    "422 for a text without a deletion.",
    {200: Answer("The text and its cards.", ClozeCards)},
    403,
    body=ClozeEdit,
    tags=TAGS,
)
@writes
def edit_team_cloze_text(team_id: int, slug: str, key: str) -> Response:
    user_id = current_user_id()
    body = parse_body(ClozeEdit)
    session = db()
    team_id = checked_id(team_id, "team")
    saved = team_decks.edit_cloze(
        session, team_id, user_id, slug, key, text=body.text, extra=body.extra, tags=body.tags,
        now=utcnow(),
    )  # fmt: skip
    found = team_decks.cloze_text(session, team_id, user_id, slug, saved.keys[0])  # as stored
    session.commit()
    return reply(ClozeCards.of(found, saved))


@bp.delete("/teams/<int:team_id>/decks/<slug>/cards/<key>")
@documented(
    "retireTeamCard",
    "Retire a card (history kept).",
    {204: Answer("Retired.")},
    403,
    409,
    tags=TAGS,
)
@writes
def retire_team_card(team_id: int, slug: str, key: str) -> Response:
    user_id = current_user_id()
    session = db()
    team_decks.retire_card(session, checked_id(team_id, "team"), user_id, slug, key, now=utcnow())
    session.commit()
    return Response(status=204)
