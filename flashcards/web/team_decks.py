"""A team's own decks: upload a quiz text or a CSV (a new deck or another language of one),
add, edit and retire cards in the browser, delete a deck.

Every change goes through flashcards.teams.team_decks (and so `sync_deck`): members keep their
progress. Members see the cards; only owners and managers get the forms.
"""

from __future__ import annotations

import re

from flask import flash, redirect, render_template, request, url_for
from flask_babel import format_number
from flask_babel import gettext as _
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..decks.deckfile import MAX_TEXT
from ..decks.locales import UnknownLocale
from ..errors import (
    DeckFileError,
    EditingRetiredCard,
    InvalidInput,
    LanguageNotInDeck,
    LastCardOfDeck,
    QuestionCountMismatch,
    TextTooLong,
)
from ..http.request_db import db, writes
from ..storage.models import Card
from ..storage.retry import retrying
from ..storage.schema import utcnow
from ..teams import membership, team_decks
from ..teams.roles import LEADS, team_deck
from ..teams.roles import membership as role_check
from . import bp
from .auth import login_required, user_id
from .error_table import flash_error, message_for
from .teams import team_id_checked

LINE_RE = re.compile(r"^line (\d+):")
MAX_UPLOAD_CHARS = 500_000  # a quiz or CSV text; the body limit (1 MiB) comes first anyway


def _page(team_id: int, *, error: str | None = None, status: int = 200) -> Response:
    uid = user_id()
    session = db()
    team = membership.get_team(session, team_id_checked(team_id), uid)
    page = render_template(
        "team_decks.html",
        team=team,
        lead=team.role in LEADS,
        decks=team_decks.list_team_decks(session, team.id, uid),
        error=error,
        form=request.form,
    )
    return Response(page, status=status, mimetype="text/html")


@bp.get("/teams/<int:team_id>/decks")
@login_required
def team_decks_page(team_id: int) -> Response:
    return _page(team_id)


def _upload_text() -> str:
    upload = request.files.get("file")
    if upload is not None and upload.filename:
        raw: bytes = upload.read(MAX_UPLOAD_CHARS * 4 + 1)
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InvalidInput("not UTF-8", field="file") from None
    return request.form.get("content", "")


def upload_error(exc: InvalidInput) -> str:
    """A translated sentence for an upload the domain refused."""
    if isinstance(exc, DeckFileError):
        if isinstance(exc, QuestionCountMismatch):
            return str(
                _(
                    "Questions in the text: %(questions)d; cards in the deck: %(cards)d. "
                    "A translation needs one question per card.",
                    questions=exc.questions,
                    cards=exc.cards,
                )
            )
        if exc.line is not None:
            return str(_("Line %(line)d of the text cannot be read.", line=exc.line))
        return str(_("The text cannot be read as a quiz or a CSV file."))
    if isinstance(exc, team_decks.UnknownCardKey):
        return str(
            _(
                "The deck has no card “%(key)s”. A translation names the deck's cards: in a "
                "CSV file, by their keys in a “key” column.",
                key=exc.key,
            )
        )
    if isinstance(exc, UnknownLocale) and exc.line is not None:
        return str(
            _(
                "Line %(line)d: “%(code)s” is not a language code we know (for example en, "
                "es or ko).",
                line=exc.line,
                code=exc.code[:40],
            )
        )
    field = exc.field or ""
    line = LINE_RE.match(exc.detail)
    if line is not None:
        return str(_("Line %(line)d of the text cannot be read.", line=int(line.group(1))))
    if field == "file":
        return str(_("The file must be UTF-8 text."))
    if field == "title":
        return str(_("Give the deck a title (at most 200 characters)."))
    if field == "locale":
        return str(_("Choose a supported language for the cards."))
    return str(_("The text cannot be read as a quiz or a CSV file."))


@bp.post("/teams/<int:team_id>/decks")
@writes
@login_required
def create_team_deck(team_id: int) -> Response:
    session = db()
    try:
        content = _upload_text()
        if not content.strip() or len(content) > MAX_UPLOAD_CHARS:
            raise InvalidInput("empty or too long", field="content")
        deck, _report = team_decks.create_team_deck(
            session,
            team_id_checked(team_id),
            user_id(),
            fmt=request.form.get("format", "quiz"),
            content=content,
            locale=request.form.get("locale", "en"),
            title=request.form.get("title", "").strip() or None,
            now=utcnow(),
        )
    except InvalidInput as exc:
        session.rollback()
        return _page(team_id, error=upload_error(exc), status=422)
    session.commit()
    flash(_("Deck created. Assign it on the team page so members study it."))
    return redirect(url_for("web.team_deck_page", team_id=team_id, slug=deck.slug), 303)


def _deck_page(team_id: int, slug: str, *, error: str | None = None, status: int = 200) -> Response:
    uid = user_id()
    session = db()
    team = membership.get_team(session, team_id_checked(team_id), uid)
    source = team_decks.deck_cards(session, team.id, uid, slug)
    default = source.locales[source.default_locale]
    others = [source.locales[loc] for loc in sorted(source.locales) if loc != default.locale]
    page = render_template(
        "team_deck.html",
        team=team,
        lead=team.role in LEADS,
        source=source,
        default=default,
        others=others,
        error=error,
        form=request.form,
    )
    return Response(page, status=status, mimetype="text/html")


@bp.get("/teams/<int:team_id>/decks/<slug>")
@login_required
def team_deck_page(team_id: int, slug: str) -> Response:
    return _deck_page(team_id, slug)


@bp.post("/teams/<int:team_id>/decks/<slug>/cards/<key>")
@writes
@login_required
def edit_team_card(team_id: int, slug: str, key: str) -> Response:
    session = db()
    back = redirect(url_for("web.team_deck_page", team_id=team_id, slug=slug), 303)
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
            now=utcnow(),
        )
    except InvalidInput as exc:
        session.rollback()
        flash(_("The card was not saved.") + " " + _card_problem(exc), "error")
        return back
    except EditingRetiredCard as exc:
        session.rollback()
        flash(_("The card was not saved.") + " " + message_for(exc), "error")
        return back
    session.commit()
    flash(_("Card saved. Everyone keeps their progress on it."))
    return back


def _card_problem(exc: InvalidInput) -> str:
    """What was wrong with a card the domain refused, as a translated sentence."""
    field = exc.field or ""
    if isinstance(exc, TextTooLong):
        return str(
            _("A text may have at most %(count)s characters.", count=format_number(MAX_TEXT))
        )
    if field in ("front", "back"):
        return str(_("The question and the answer must not be empty."))
    if isinstance(exc, LanguageNotInDeck):
        return str(_("This deck is not available in that language."))
    if field == "locale":
        return str(_("Add the card in the deck's default language first, then translate it."))
    return str(_("Reload the page and try again."))


def _to_deck(team_id: int, slug: str) -> Response:
    return redirect(url_for("web.team_deck_page", team_id=team_id, slug=slug), 303)


def _new_card(team_id: int, slug: str) -> tuple[str, str]:
    """A key no card of the deck ever had (reusing a retired card's key would bring back
    everyone's progress on that old question), and the deck's default language."""
    session = db()
    role_check(session, team_id, user_id(), *LEADS)
    deck = team_deck(session, team_id, slug)
    taken = set(session.scalars(select(Card.key).where(Card.deck_id == deck.id)))
    number = len(taken) + 1
    while f"c{number:03d}" in taken:
        number += 1
    return f"c{number:03d}", deck.default_locale


@bp.post("/teams/<int:team_id>/decks/<slug>/cards")
@writes
@login_required
def add_team_card(team_id: int, slug: str) -> Response:
    session = db()
    team = team_id_checked(team_id)
    uid = user_id()

    def work() -> None:
        key, locale = _new_card(team, slug)
        team_decks.set_card(
            session,
            team,
            uid,
            slug,
            key,
            locale=locale,
            question=request.form.get("question", ""),
            answer=request.form.get("answer", ""),
            explanation=request.form.get("explanation", ""),
            now=utcnow(),
        )

    try:
        # Two cards added at once may pick the same new key; the retry picks another.
        retrying(session, work, retry_on=(IntegrityError,), attempts=3)
    except InvalidInput as exc:
        session.rollback()
        flash(_("The card was not added.") + " " + _card_problem(exc), "error")
        return _to_deck(team_id, slug)
    flash(_("Card added. Members will see it as a new card."))
    return _to_deck(team_id, slug)


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
        return _to_deck(team_id, slug)
    session.commit()
    flash(_("Card retired. It no longer comes up in anyone’s study."))
    return _to_deck(team_id, slug)


@bp.post("/teams/<int:team_id>/decks/<slug>/source")
@writes
@login_required
def upload_team_deck_locale(team_id: int, slug: str) -> Response:
    session = db()
    try:
        content = _upload_text()
        if not content.strip() or len(content) > MAX_UPLOAD_CHARS:
            raise InvalidInput("empty or too long", field="content")
        team_decks.upload_locale(
            session,
            team_id_checked(team_id),
            user_id(),
            slug,
            fmt=request.form.get("format", "quiz"),
            content=content,
            locale=request.form.get("locale", ""),
            title=request.form.get("title", "").strip() or None,
            now=utcnow(),
        )
    except InvalidInput as exc:
        session.rollback()
        return _deck_page(team_id, slug, error=upload_error(exc), status=422)
    session.commit()
    flash(_("Language uploaded. Everyone keeps their progress on the cards."))
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
