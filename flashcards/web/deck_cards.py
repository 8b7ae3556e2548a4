"""A deck's cards, a page at a time and searchable in any of its languages, read-only but
for a person's own decks, whose cards they add and edit here (`web/own_decks.py`): the
shipped and personal decks' counterpart of a team deck's page (`web/team_decks.py`)."""

from __future__ import annotations

from collections.abc import Mapping

from flask import render_template, request

from ..decks.card_pages import card_page, clean_query
from ..http.request_db import db
from ..srs import subscriptions
from ..storage.models import DeckText
from . import bp
from .auth import login_required, user_id


def listing(values: Mapping[str, str]) -> tuple[str, int]:
    """The search and the page asked for: a query string's, or a form's hidden fields."""
    query = clean_query(values.get("q"))
    raw = values.get("page", "")
    page = int(raw) if raw.isdigit() and len(raw) < 7 else 1
    return query, page


@bp.get("/decks/<slug>/cards")
@login_required
def deck_cards(slug: str) -> str:
    uid = user_id()
    session = db()
    deck = subscriptions.find_visible_deck(session, uid, slug)
    reading = subscriptions.reading_locale(session, uid, deck)
    locales = subscriptions.deck_locales(session, deck.id)
    query, page = listing(request.args)
    cards = card_page(session, deck.id, query=query, page=page)
    title = session.get(DeckText, (deck.id, reading)) or session.get(
        DeckText, (deck.id, deck.default_locale)
    )
    return render_template(
        "deck_cards.html",
        slug=deck.slug,
        title=title.title if title else deck.slug,
        title_locale=title.locale if title else deck.default_locale,
        reading=reading,
        others=[loc for loc in locales if loc != reading],
        cards=cards,
        own=deck.owner_user_id == uid,
        default_locale=deck.default_locale,
    )
