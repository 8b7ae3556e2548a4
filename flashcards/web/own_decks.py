"""A person's own decks on the web: made from the library ("New deck"), their cards added,
edited and retired from the deck's cards page (`web/deck_cards.py`), one card's forms on its
own page. The editing itself is `decks/own_decks.py`, shared in `decks/card_editing.py` with
a team's decks, so progress is kept."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import replace

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..anki_sync import note_edits
from ..decks import card_editing, media_refs, own_decks
from ..decks.card_pages import card_texts
from ..decks.deckfile import MAX_TITLE
from ..decks.media_refs import NotShownMediaType
from ..errors import CardOfAnkiNote, DeckTitleTaken, EditingRetiredCard, InvalidInput, NotFound
from ..http.request_db import db, writes
from ..people import media_folder
from ..people.media_folder import InvalidMediaName, MediaQuotaExceeded
from ..srs import subscriptions
from ..storage.models import DeckText
from ..storage.retry import retrying
from ..storage.schema import utcnow
from . import bp
from .auth import login_required, user_id
from .deck_cards import back_from_card, form_tags, listing_args, study_page
from .error_table import message_for
from .team_decks import as_typed, card_problem, cloze_added, cloze_saved
from .uploads import mebibytes, upload_form


def new_deck_page(*, status: int = 200, form: Mapping[str, str] | None = None) -> Response:
    page = render_template("own_deck_new.html", form=form or {})
    return Response(page, status=status, mimetype="text/html")


@bp.get("/decks/new")
@login_required
def new_deck() -> Response:
    return new_deck_page()


@bp.post("/decks/new")
@writes
@login_required
def create_deck() -> Response:
    session = db()
    uid = user_id()
    default = request.form.get("locale", "")
    others = [loc for loc in request.form.getlist("other_locales") if loc != default]
    try:
        # Two decks made at once with one title may take the same slug: the retry numbers it.
        deck = retrying(
            session,
            lambda: own_decks.create_own_deck(
                session,
                uid,
                title=request.form.get("title", ""),
                locales=[default, *others],
                now=utcnow(),
            ),
            retry_on=(IntegrityError,),
            attempts=3,
        )
    except DeckTitleTaken as exc:
        session.rollback()
        flash(message_for(exc), "error")
        return new_deck_page(status=409, form=request.form)
    except InvalidInput as exc:
        session.rollback()
        if exc.field == "title":
            flash(_("A title needs 1 to %(num)d characters.", num=MAX_TITLE), "error")
        else:
            flash(_("Choose the deck's languages from the list."), "error")
        return new_deck_page(status=422, form=request.form)
    flash(_("Deck created. Add its first card."))
    return redirect(url_for("web.deck_cards", slug=deck.slug), 303)


def _to_cards(slug: str) -> Response:
    """To the deck's page of cards a form was sent from (or to studying, `back_from_card`)."""
    return back_from_card(
        request.form, url_for("web.deck_cards", slug=slug, **listing_args(request.form))
    )


@bp.get("/decks/<slug>/cards/<key>")
@login_required
def own_card_page(slug: str, key: str) -> str:
    """One card of the person's own deck in every language: its forms and retire button."""
    return _card_page(slug, key)


def _card_page(slug: str, key: str, typed: Mapping[str, str] | None = None) -> str:
    """The card's page; with `typed`, a refused edit's form (its language's texts and tags,
    or its Cloze text) shown as it was sent, so nothing typed is lost."""
    session = db()
    deck = own_decks.find_own_deck(session, user_id(), slug)
    card = card_texts(session, deck.id, key)
    if card is None:
        raise NotFound(f"no card '{key}' in this deck")
    cloze = None if card.from_anki_note else card_editing.cloze_text(session, deck, key)
    if cloze is not None and typed is not None and "cloze" in typed:
        cloze = replace(cloze, text=typed.get("cloze", ""), extra=typed.get("extra", ""))
    anki_editable = note_edits.editable(session, user_id(), deck.id, key)
    if card.from_anki_note and not anki_editable:
        typed = None  # shown read-only: what was typed is no text of the card's
    title = session.get(DeckText, (deck.id, deck.default_locale))
    locales = subscriptions.deck_locales(session, deck.id)
    return render_template(
        "own_card.html",
        slug=deck.slug,
        title=title.title if title else deck.slug,
        default_locale=deck.default_locale,
        card=as_typed(card, typed),
        cloze=cloze,
        anki_editable=anki_editable,
        locales=[deck.default_locale] + [loc for loc in locales if loc != deck.default_locale],
        listing=listing_args(request.args if typed is None else typed),
        study_url=study_page(request.args if typed is None else typed),
    )


@bp.post("/decks/<slug>/cards")
@writes
@login_required
def add_own_card(slug: str) -> Response:
    session = db()
    uid = user_id()
    try:
        # Two cards added at once may pick the same new key; the retry picks another.
        keys = retrying(
            session,
            lambda: note_edits.add_card(
                session,
                uid,
                slug,
                question=request.form.get("question", ""),
                answer=request.form.get("answer", ""),
                explanation=request.form.get("explanation", ""),
                tags=form_tags(request.form),
                now=utcnow(),
            ),
            retry_on=(IntegrityError,),
            attempts=3,
        )
    except InvalidInput as exc:
        session.rollback()
        flash(_("The card was not added.") + " " + card_problem(exc), "error")
        return _to_cards(slug)
    if card_editing.from_cloze(keys):
        flash(cloze_added(len(keys)))
    else:
        flash(_("Card added. It comes up as a new card."))
    return _to_cards(slug)


@bp.post("/decks/<slug>/cards/<key>/cloze")
@writes
@login_required
def edit_own_cloze(slug: str, key: str) -> Response:
    session = db()
    try:
        saved = own_decks.edit_cloze(
            session,
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
        return Response(_card_page(slug, key, request.form), 400, mimetype="text/html")
    session.commit()
    flash(cloze_saved(saved, team=False))
    # The card asked about may have gone with its number: the text's first card then.
    shown = key if key in saved.keys else saved.keys[0]
    return back_from_card(
        request.form,
        url_for("web.own_card_page", slug=slug, key=shown, **listing_args(request.form)),
    )


@bp.post("/decks/<slug>/cards/<key>")
@writes
@login_required
def edit_own_card(slug: str, key: str) -> Response:
    session = db()
    back = back_from_card(
        request.form,
        url_for("web.own_card_page", slug=slug, key=key, **listing_args(request.form)),
    )
    try:
        note_edits.edit_card(
            session,
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
        return Response(_card_page(slug, key, request.form), 400, mimetype="text/html")
    except EditingRetiredCard as exc:
        session.rollback()
        flash(_("The card was not saved.") + " " + message_for(exc), "error")
        return _to_cards(slug)  # the card's own page is gone with it
    except CardOfAnkiNote as exc:
        session.rollback()
        flash(_("The card was not saved.") + " " + message_for(exc), "error")
        return Response(_card_page(slug, key, request.form), 409, mimetype="text/html")
    session.commit()
    flash(_("Card saved. Your progress on it is kept."))
    texts = (request.form.get(name, "") for name in ("question", "answer", "explanation"))
    named = media_refs.names(*texts)
    missing = sorted(named - media_folder.live_files(session, user_id(), named).keys())
    if missing:
        # A few names: a flash lives in the session's cookie, which a long list would burst.
        flash(
            ngettext(
                "No file named %(names)s is in your media yet: the card shows it as missing "
                "until one is added (from Anki, or in a package).",
                "No files named %(names)s are in your media yet: the card shows them as "
                "missing until they are added (from Anki, or in a package).",
                len(missing),
                names=", ".join(missing[:3]) + (" …" if len(missing) > 3 else ""),
            ),
            "error",
        )
    return back


ADD_MEDIA_ENDPOINT = "web.add_own_card_media"
# What a file's name may keep of a name a browser sends (some send the whole path): room
# left for `media_folder.place`'s "-<sha8>-<n>" within the folder's 255 bytes.
MAX_UPLOAD_NAME_BYTES = 200


@bp.post("/decks/<slug>/cards/<key>/media")
@writes
@login_required
def add_own_card_media(slug: str, key: str) -> Response:
    """A picture or sound from the person's computer, added to one language's question or
    answer of the card (`own_decks.add_media`)."""
    session = db()
    own_decks.find_own_deck(session, user_id(), slug)  # someone else's: 404, before all else
    back = redirect(
        url_for("web.own_card_page", slug=slug, key=key, **listing_args(request.form)), 303
    )
    upload = request.files.get("file")
    data = upload.read() if upload is not None else b""
    if upload is None or not data:
        flash(_("Choose an image or a sound to add."), "error")
        return back
    if len(data) > _media_limit():  # within the form's slack, past the file's limit
        return _media_too_large()
    try:
        stored = own_decks.add_media(
            session, user_id(), slug, key, locale=request.form.get("locale", ""),
            side=request.form.get("side", ""), name=_file_name(upload.filename or ""), data=data,
            quota_mb=int(current_app.config["MEDIA_QUOTA_MB"]), now=utcnow(),
        )  # fmt: skip
    except NotShownMediaType:
        session.rollback()
        flash(
            _(
                "The file was not added: only images (PNG, JPEG, GIF, WebP, AVIF, BMP) and "
                "sounds or videos (MP3, Ogg, WAV, M4A, AAC, FLAC, MP4, WebM) can be."
            ),
            "error",
        )
        return back
    except InvalidMediaName:
        session.rollback()
        flash(
            _("The file was not added: rename it (a shorter, plain name) and try again."), "error"
        )
        return back
    except MediaQuotaExceeded as exc:
        session.rollback()
        flash(_("The file was not added.") + " " + message_for(exc), "error")
        return back
    except InvalidInput as exc:  # a side that is none, a text then too long
        session.rollback()
        flash(_("The file was not added.") + " " + card_problem(exc), "error")
        return back
    session.commit()
    flash(_("%(name)s was added to the card.", name=stored))
    return back


def _file_name(sent: str) -> str:
    """The name a browser sent for a file, as a name of the media folder: its last part,
    in NFC, without control characters or what a card's token cannot hold, shortened (its
    type kept)."""
    name = unicodedata.normalize("NFC", re.split(r"[/\\]", sent)[-1])
    name = "".join(
        "_" if c in ":[]" else c for c in name if unicodedata.category(c)[0] != "C"
    ).strip()
    name = name or "file"
    stem, dot, suffix = name.rpartition(".")
    if not dot or len(suffix.encode()) > 16:
        stem, suffix = name, ""
    # By bytes (a Korean character is three), cut between characters.
    while len(f"{stem}.{suffix}".encode()) > MAX_UPLOAD_NAME_BYTES and stem:
        stem = stem[:-1]
    return unicodedata.normalize("NFC", f"{stem}.{suffix}" if suffix else stem)


def _media_too_large() -> Response:
    flash(
        _(
            "This file is too large: images and sounds up to %(size)s MiB can be added.",
            size=mebibytes(_media_limit()),
        ),
        "error",
    )
    return redirect(url_for("web.own_card_page", **(request.view_args or {})), 303)


def _media_limit() -> int:
    return min(int(current_app.config["MAX_UPLOAD_BYTES"]), media_folder.MAX_FILE_BYTES)


upload_form(ADD_MEDIA_ENDPOINT, _media_limit, _media_too_large)


@bp.post("/decks/<slug>/cards/<key>/retire")
@writes
@login_required
def retire_own_card(slug: str, key: str) -> Response:
    session = db()
    own_decks.retire_card(session, user_id(), slug, key, now=utcnow())
    session.commit()
    flash(_("Card retired. It no longer comes up in your study."))
    return _to_cards(slug)
