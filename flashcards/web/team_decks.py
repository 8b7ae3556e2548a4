"""A team's own decks: their list and pages, a page of cards at a time and searchable; add,
edit and retire cards, delete a deck. Uploads are `web/team_deck_uploads.py`.

Every change goes through flashcards.teams.team_decks (and so `sync_deck`): members keep their
progress. Members see the cards; only owners and managers get the forms, one card's on its own
page, so that a 5,000-card deck's page stays light.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import replace

from flask import flash, redirect, render_template, request, url_for
from flask_babel import format_number, ngettext
from flask_babel import gettext as _
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..decks.card_editing import MAX_TAGS, ClozeSaved, from_cloze
from ..decks.card_pages import CardRow, CardTexts
from ..decks.cloze import MAX_CLOZE_CARDS
from ..decks.deckfile import MAX_TEXT
from ..errors import (
    EditingRetiredCard,
    InvalidInput,
    LanguageNotInDeck,
    LastCardOfDeck,
    NoClozeDeletion,
    NotClozeCard,
    TextTooLong,
    TooManyCards,
    TooManyDeletions,
)
from ..http.request_db import db, writes
from ..storage.retry import retrying
from ..storage.schema import utcnow
from ..teams import membership, team_decks
from ..teams.deck_uploads import MAX_CARDS, MAX_UPLOAD_BYTES
from ..teams.roles import LEADS
from ..teams.roles import membership as role_check
from . import bp
from .auth import login_required, user_id
from .deck_cards import back_from_card, form_tags, listing, listing_args, study_page
from .error_table import flash_error, message_for
from .i18n import whole_number
from .teams import team_id_checked
from .uploads import mebibytes


def upload_limits() -> str:
    """What the upload form takes, stated on it."""
    return str(
        _(
            "A file or text of up to %(size)s MiB, with at most %(cards)s cards.",
            size=mebibytes(MAX_UPLOAD_BYTES),
            cards=whole_number(MAX_CARDS),
        )
    )


def decks_page(
    team_id: int,
    *,
    error: str | None = None,
    status: int = 200,
    form: Mapping[str, str] | None = None,
) -> Response:
    uid = user_id()
    session = db()
    team = membership.get_team(session, team_id_checked(team_id), uid)
    page = render_template(
        "team_decks.html",
        team=team,
        lead=team.role in LEADS,
        decks=team_decks.list_team_decks(session, team.id, uid),
        error=error,
        form=form or {},
        upload_limits=upload_limits(),
    )
    return Response(page, status=status, mimetype="text/html")


@bp.get("/teams/<int:team_id>/decks")
@login_required
def team_decks_page(team_id: int) -> Response:
    return decks_page(team_id)


def as_typed(card: CardRow, typed: Mapping[str, str] | None) -> CardRow:
    """The card with a refused edit's form (one language's texts, and tags if it has them)
    as it was sent, so the page shown again loses nothing typed."""
    if typed is None:
        return card
    if "tags" in typed:
        card = replace(card, tags=tuple(typed["tags"].split()))
    if not typed.get("locale"):  # a Cloze text's form: `cloze_text` carries what it typed
        return card
    sent = CardTexts(*(typed.get(name, "") for name in ("question", "answer", "explanation")))
    return replace(card, texts={**card.texts, typed["locale"]: sent})


def deck_page(
    team_id: int,
    slug: str,
    *,
    error: str | None = None,
    status: int = 200,
    form: Mapping[str, str] | None = None,
) -> Response:
    uid = user_id()
    session = db()
    team = membership.get_team(session, team_id_checked(team_id), uid)
    # The query string only: an upload refused for its size has a form that must not be read.
    query, number = listing(request.args)
    deck, cards = team_decks.deck_card_page(session, team.id, uid, slug, query=query, page=number)
    page = render_template(
        "team_deck.html",
        team=team,
        lead=team.role in LEADS,
        deck=deck,
        others=[loc for loc in deck.locales if loc != deck.default_locale],
        cards=cards,
        error=error,
        form=form or {},
        upload_limits=upload_limits(),
    )
    return Response(page, status=status, mimetype="text/html")


@bp.get("/teams/<int:team_id>/decks/<slug>")
@login_required
def team_deck_page(team_id: int, slug: str) -> Response:
    return deck_page(team_id, slug)


@bp.get("/teams/<int:team_id>/decks/<slug>/cards/<key>")
@login_required
def team_card_page(team_id: int, slug: str, key: str) -> str:
    """One card in every language: its edit forms and retire button, for leads."""
    return _card_page(team_id, slug, key)


def _card_page(team_id: int, slug: str, key: str, typed: Mapping[str, str] | None = None) -> str:
    """The card's page; with `typed`, a refused edit's form as it was sent (`as_typed`)."""
    uid = user_id()
    session = db()
    team = membership.get_team(session, team_id_checked(team_id), uid)
    deck, card = team_decks.deck_card(session, team.id, uid, slug, key)
    lead = team.role in LEADS
    cloze = None
    if lead:
        with suppress(NotClozeCard):  # a plain card: its page has no Cloze form
            cloze = team_decks.cloze_text(session, team.id, uid, slug, key)
    if cloze is not None and typed is not None and "cloze" in typed:
        cloze = replace(cloze, text=typed.get("cloze", ""), extra=typed.get("extra", ""))
    return render_template(
        "team_card.html",
        team=team,
        lead=lead,
        cloze=cloze,
        deck=deck,
        card=as_typed(card, typed),
        locales=[deck.default_locale] + [loc for loc in deck.locales if loc != deck.default_locale],
        listing=listing_args(request.args if typed is None else typed),
        study_url=study_page(request.args if typed is None else typed),
    )


@bp.post("/teams/<int:team_id>/decks/<slug>/cards/<key>/cloze")
@writes
@login_required
def edit_team_cloze(team_id: int, slug: str, key: str) -> Response:
    session = db()
    try:
        saved = team_decks.edit_cloze(
            session,
            team_id_checked(team_id),
            user_id(),
            slug,
            key,
            text=request.form.get("cloze", ""),
            extra=request.form.get("extra", ""),
            tags=form_tags(request.form),
            now=utcnow(),
        )
    except InvalidInput as exc:
        session.rollback()
        flash(_("The Cloze text was not saved.") + " " + card_problem(exc), "error")
        return Response(_card_page(team_id, slug, key, request.form), 400, mimetype="text/html")
    session.commit()
    flash(cloze_saved(saved, team=True))
    # The card asked about may have gone with its number: the text's first card then.
    shown = key if key in saved.keys else saved.keys[0]
    return back_from_card(
        request.form,
        url_for(
            "web.team_card_page", team_id=team_id, slug=slug, key=shown,
            **listing_args(request.form),
        ),
    )  # fmt: skip


@bp.post("/teams/<int:team_id>/decks/<slug>/cards/<key>")
@writes
@login_required
def edit_team_card(team_id: int, slug: str, key: str) -> Response:
    session = db()
    back = back_from_card(
        request.form,
        url_for(
            "web.team_card_page", team_id=team_id, slug=slug, key=key, **listing_args(request.form)
        ),
    )
    try:
        team_decks.set_card(
            session,
            team_id_checked(team_id),
            user_id(),
            slug,
            key,
            locale=request.form.get("locale", ""),
            question=request.form.get("question", ""),
            answer=request.form.get("answer", ""),
            explanation=request.form.get("explanation", ""),
            tags=form_tags(request.form),
            now=utcnow(),
        )
    except InvalidInput as exc:
        session.rollback()
        flash(_("The card was not saved.") + " " + card_problem(exc), "error")
        return Response(_card_page(team_id, slug, key, request.form), 400, mimetype="text/html")
    except EditingRetiredCard as exc:
        session.rollback()
        flash(_("The card was not saved.") + " " + message_for(exc), "error")
        return _to_deck(team_id, slug)  # the card's own page is gone with it
    session.commit()
    flash(_("Card saved. Everyone keeps their progress on it."))
    return back


def card_problem(exc: InvalidInput) -> str:
    """What was wrong with a card the domain refused, as a translated sentence."""
    field = exc.field or ""
    if isinstance(exc, TooManyCards):
        return str(
            _(
                "A deck holds at most %(limit)s cards.",
                limit=whole_number(exc.limit),
            )
        )
    if field == "tags":
        return str(
            _(
                "Tags are single words separated by spaces, at most %(count)s of them.",
                count=whole_number(MAX_TAGS),
            )
        )
    if isinstance(exc, TextTooLong):
        return str(
            _("A text may have at most %(count)s characters.", count=format_number(MAX_TEXT))
        )
    if isinstance(exc, NoClozeDeletion):
        return str(_("A Cloze text needs at least one deletion, such as {{c1::Paris}}."))
    if isinstance(exc, TooManyDeletions):
        return str(
            _(
                "A Cloze text makes a card for each deletion number: at most %(count)s.",
                count=whole_number(MAX_CLOZE_CARDS),
            )
        )
    if field in ("front", "back"):
        return str(_("The question and the answer must not be empty."))
    if isinstance(exc, LanguageNotInDeck):
        return str(_("This deck is not available in that language."))
    if field == "locale":
        return str(_("Add the card in the deck's default language first, then translate it."))
    return str(_("Reload the page and try again."))


def _to_deck(team_id: int, slug: str) -> Response:
    """To the deck's page of cards a form was sent from (or to studying, `back_from_card`)."""
    return back_from_card(
        request.form,
        url_for("web.team_deck_page", team_id=team_id, slug=slug, **listing_args(request.form)),
    )


@bp.post("/teams/<int:team_id>/decks/<slug>/cards")
@writes
@login_required
def add_team_card(team_id: int, slug: str) -> Response:
    session = db()
    team = team_id_checked(team_id)
    uid = user_id()

    def work() -> list[str]:
        return team_decks.add_cards(
            session,
            team,
            uid,
            slug,
            question=request.form.get("question", ""),
            answer=request.form.get("answer", ""),
            explanation=request.form.get("explanation", ""),
            tags=form_tags(request.form),
            now=utcnow(),
        )

    try:
        # Two cards added at once may pick the same new key; the retry picks another.
        keys = retrying(session, work, retry_on=(IntegrityError,), attempts=3)
    except InvalidInput as exc:
        session.rollback()
        flash(_("The card was not added.") + " " + card_problem(exc), "error")
        return _to_deck(team_id, slug)
    if from_cloze(keys):
        flash(cloze_added(len(keys)))
    else:
        flash(_("Card added. Members will see it as a new card."))
    return _to_deck(team_id, slug)


def cloze_added(count: int) -> str:
    return str(
        ngettext(
            "%(num)d card added from the Cloze text, one for each deletion number. It comes up as "
            "a new card.",
            "%(num)d cards added from the Cloze text, one for each deletion number. They come up "
            "as new cards.",
            count,
        )
    )


def cloze_saved(saved: ClozeSaved, *, team: bool) -> str:
    """What saving a Cloze text did: its cards, and those a number added or taken out made
    or retired, whose progress is not the text's any more."""
    count = len(saved.keys)
    said = []
    if not saved.added:  # every card kept its progress
        if team:
            said.append(
                ngettext(
                    "Cloze text saved: %(num)d card. Everyone keeps their progress on it.",
                    "Cloze text saved: %(num)d cards. Everyone keeps their progress on them.",
                    count,
                )
            )
        else:
            said.append(
                ngettext(
                    "Cloze text saved: %(num)d card. Your progress on it is kept.",
                    "Cloze text saved: %(num)d cards. Your progress on them is kept.",
                    count,
                )
            )
    else:
        said.append(
            ngettext("Cloze text saved: %(num)d card.", "Cloze text saved: %(num)d cards.", count)
        )
        said.append(
            ngettext(
                "%(num)d of them is new, for a number added.",
                "%(num)d of them are new, for the numbers added.",
                len(saved.added),
            )
        )
        kept = count - len(saved.added)
        if kept and team:
            said.append(
                ngettext(
                    "Everyone keeps their progress on %(num)d of them.",
                    "Everyone keeps their progress on %(num)d of them.",
                    kept,
                )
            )
        elif kept:
            said.append(
                ngettext(
                    "Your progress on %(num)d of them is kept.",
                    "Your progress on %(num)d of them is kept.",
                    kept,
                )
            )
    if saved.retired:
        said.append(
            ngettext(
                "%(num)d card was retired with the number taken out: it no longer comes up, "
                "and its answers stay in the history.",
                "%(num)d cards were retired with the numbers taken out: they no longer come "
                "up, and their answers stay in the history.",
                len(saved.retired),
            )
        )
    return " ".join(str(part) for part in said)


@bp.post("/teams/<int:team_id>/decks/<slug>/cards/<key>/retire")
@writes
@login_required
def retire_team_card(team_id: int, slug: str, key: str) -> Response:
    session = db()
    try:
        team_decks.retire_card(
            session, team_id_checked(team_id), user_id(), slug, key, now=utcnow()
        )
    except LastCardOfDeck as exc:
        session.rollback()
        flash_error(exc)
        # The card stays: back to its page, as it was opened.
        return redirect(
            url_for(
                "web.team_card_page", team_id=team_id, slug=slug, key=key,
                **listing_args(request.form),
            ),
            303,
        )  # fmt: skip
    session.commit()
    flash(_("Card retired. It no longer comes up in anyone’s study."))
    return _to_deck(team_id, slug)


@bp.get("/teams/<int:team_id>/decks/<slug>/delete")
@login_required
def delete_team_deck_page(team_id: int, slug: str) -> str:
    """The confirmation asked before a deck is deleted (a page: it works without script)."""
    uid = user_id()
    session = db()
    role_check(session, team_id_checked(team_id), uid, *LEADS)
    team = membership.get_team(session, team_id, uid)
    source = team_decks.deck_cards(session, team.id, uid, slug)
    return render_template(
        "team_deck_delete.html",
        team=team,
        source=source,
        default=source.locales[source.default_locale],
    )


@bp.post("/teams/<int:team_id>/decks/<slug>/delete")
@writes
@login_required
def delete_team_deck(team_id: int, slug: str) -> Response:
    session = db()
    team_decks.delete_team_deck(session, team_id_checked(team_id), user_id(), slug)
    session.commit()
    flash(_("The deck is deleted."))
    return redirect(url_for("web.team_decks_page", team_id=team_id), 303)
