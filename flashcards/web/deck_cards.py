"""A deck's cards, a page at a time and searchable in any of its languages, read-only but
for a person's own decks, whose cards they add and edit here (`web/own_decks.py`): the
shipped and personal decks' counterpart of a team deck's page (`web/team_decks.py`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flask import redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from ..decks.card_pages import card_page, clean_query
from ..decks.deckfile import SLUG_RE
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


# A card's page opened while studying (`e`) names the study page it came from: ALL_DECKS,
# or the deck studied alone. It travels with the search and page, so that a change saved
# goes back to studying, as closing Anki's editor does.
ALL_DECKS = "*"  # no deck's slug (`SLUG_RE`)
CUSTOM_STUDY = "+"  # nor is this: the custom study session
# Opened from the answer side, the page also names the card and its reveal (the study page's
# `card` and `show`), so that saving comes back to the answer, as Anki's editor does.
SHOWN_RE = re.compile(r"1|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def listing_args(values: Mapping[str, str]) -> dict[str, Any]:
    """The query-string arguments that bring back the page of cards (or the study page) a
    change was made from."""
    query, page = listing(values)
    args: dict[str, Any] = {}
    if query:
        args["q"] = query
    if page > 1:
        args["page"] = page
    studied = values.get("study", "")
    if studied in (ALL_DECKS, CUSTOM_STUDY) or SLUG_RE.fullmatch(studied):
        args["study"] = studied
        shown, card = values.get("show", ""), values.get("card", "")
        if SHOWN_RE.fullmatch(shown) and re.fullmatch(r"[0-9]{0,19}", card):
            args["show"] = shown
            if card:
                args["card"] = card
    return args


def form_tags(form: Mapping[str, str]) -> list[str] | None:
    """The tags a card's form gives (separated by white space), None where it has no tags
    field (a translation's form: tags are the card's, edited with its first language)."""
    return form["tags"].split() if "tags" in form else None


def study_page(values: Mapping[str, str]) -> str | None:
    """The study page a card's page was opened from (`listing_args`), on the side it was
    opened from, or None."""
    args = listing_args(values)
    studied = args.get("study")
    if studied is None:
        return None
    shown = {name: args[name] for name in ("card", "show") if name in args}
    if studied == CUSTOM_STUDY:
        return url_for("web.custom_study_page", **shown)
    return url_for("web.session_page", deck=None if studied == ALL_DECKS else studied, **shown)


def back_from_card(values: Mapping[str, str], otherwise: str) -> Response:
    """Where a change made on a card's page goes: back to studying if the page was opened
    from there, else `otherwise` (the card's page, or its deck's once it is retired)."""
    return redirect(study_page(values) or otherwise, 303)


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
