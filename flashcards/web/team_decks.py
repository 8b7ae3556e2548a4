"""A team's own decks: upload a quiz text or a CSV, edit a card's text in the browser.

Every change goes through flashcards.teams.team_decks (and so `sync_deck`): members keep their
progress. Members see the cards; only owners and managers get the forms.
"""

from __future__ import annotations

import re

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..db import utcnow
from ..errors import Conflict, DeckFileError, InvalidInput
from ..http import db
from ..teams import membership, team_decks
from ..teams.roles import LEADS
from . import bp
from .auth import login_required, user_id
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
        if exc.line is not None:
            return str(_("Line %(line)d of the text cannot be read.", line=exc.line))
        return str(_("The text cannot be read as a quiz or a CSV file."))
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


@bp.get("/teams/<int:team_id>/decks/<slug>")
@login_required
def team_deck_page(team_id: int, slug: str) -> str:
    uid = user_id()
    session = db()
    team = membership.get_team(session, team_id_checked(team_id), uid)
    source = team_decks.deck_cards(session, team.id, uid, slug)
    default = source.locales[source.default_locale]
    others = [source.locales[loc] for loc in sorted(source.locales) if loc != default.locale]
    return render_template(
        "team_deck.html",
        team=team,
        lead=team.role in LEADS,
        source=source,
        default=default,
        others=others,
    )


@bp.post("/teams/<int:team_id>/decks/<slug>/cards/<key>")
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
    except (InvalidInput, Conflict):
        session.rollback()
        flash(_("The card was not saved: the question and the answer must not be empty."), "error")
        return back
    session.commit()
    flash(_("Card saved. Everyone keeps their progress on it."))
    return back
