"""A team deck's uploads on the web: a quiz text or a CSV, as a new deck or a language of one.

The form states its limits; a refused upload shows its page again with what was typed and a
sentence in the person's language naming the line and the reason, built from the error's
data (`DeckFileError.reason` and `facts`, `TooManyCards.count`), never from its English text.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping

from flask import flash, redirect, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..decks.locales import UnknownLocale
from ..errors import (
    DeckFileError,
    InvalidInput,
    QuestionCountMismatch,
    TooManyCards,
    UploadTooLarge,
)
from ..http.request_db import db, writes
from ..storage.schema import utcnow
from ..teams import team_decks
from ..teams.deck_uploads import MAX_UPLOAD_BYTES, UPLOAD, check_size
from . import bp
from .auth import login_required, user_id
from .i18n import whole_number
from .team_decks import deck_page, decks_page
from .teams import team_id_checked
from .uploads import mebibytes, upload_form

CREATE_ENDPOINT = "web.create_team_deck"
LOCALE_ENDPOINT = "web.upload_team_deck_locale"


def too_large_message() -> str:
    return str(
        _(
            "This upload is too large: a quiz text or CSV may have up to %(size)s MiB.",
            size=mebibytes(MAX_UPLOAD_BYTES),
        )
    )


def _upload_text() -> str:
    upload = request.files.get("file")
    if upload is not None and upload.filename:
        raw: bytes = upload.read(MAX_UPLOAD_BYTES + 1)
        if len(raw) > MAX_UPLOAD_BYTES:
            upload.stream.seek(0, io.SEEK_END)
            check_size(upload.stream.tell())
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise DeckFileError(
                UPLOAD, line, "not UTF-8 text", reason="not-utf8", field="file"
            ) from None
    return request.form.get("content", "")


Clause = Callable[[Mapping[str, str | int]], str]


def _clauses() -> dict[str, Clause]:
    """What is wrong on a line, by the error's reason; `facts` fills in its values."""
    n = whole_number
    return {
        "empty-front": lambda f: _("the front is empty"),
        "empty-back": lambda f: _("the back is empty"),
        "too-long": lambda f: _(
            "a text is longer than %(count)s characters", count=n(int(f["limit"]))
        ),
        "extra-cells": lambda f: _(
            "%(cells)s cells, but the columns are %(columns)s",
            cells=n(int(f["cells"])),
            columns=n(int(f["columns"])),
        ),
        "invalid-key": lambda f: _(
            "“%(key)s” cannot be a key (use a-z, 0-9, - and _)", key=str(f["key"])[:40]
        ),
        "duplicate-key": lambda f: _(
            "the key “%(key)s” is already another card's in this language", key=str(f["key"])
        ),
        "unknown-column": lambda f: _(
            "“%(column)s” is not a column we know (front, back, key, locale, explanation)",
            column=str(f["column"])[:40],
        ),
        "csv-syntax": lambda f: _("this is not valid CSV (is a quotation mark left open?)"),
        "cloze-unclosed": lambda f: _(
            "the Cloze deletion {{c%(number)s::…}} is not closed with }}", number=int(f["number"])
        ),
        "too-many-deletions": lambda f: _(
            "a Cloze text makes a card for each deletion number: at most %(count)s",
            count=n(int(f["limit"])),
        ),
        "not-utf8": lambda f: _("this is not UTF-8 text"),
        "nul": lambda f: _("a NUL character is not text"),
        "marker-first": lambda f: _("an answer marker line comes before question 1"),
        "no-question-one": lambda f: _(
            "question 1 (“1. …”) should follow the title and the subtitle"
        ),
        "no-title": lambda f: _("the quiz's title should come before question 1"),
        "no-questions": lambda f: _("no numbered question (“1. …”) was found"),
        "expected-question": lambda f: _(
            "question %(number)s (“%(number)s. …”) was expected", number=n(int(f["expected"]))
        ),
        "question-number": lambda f: _(
            "question %(found)s where %(expected)s was expected",
            found=n(int(f["found"])),
            expected=n(int(f["expected"])),
        ),
        "no-marker": lambda f: _(
            "question %(number)s needs an answer marker line (such as “Answer”) after it",
            number=n(int(f["question"])),
        ),
        "second-marker": lambda f: _(
            "a second answer marker line in question %(number)s", number=n(int(f["question"]))
        ),
        "no-answer": lambda f: _("question %(number)s has no answer", number=n(int(f["question"]))),
    }


def _file_error(exc: DeckFileError) -> str:
    if isinstance(exc, QuestionCountMismatch):
        return str(
            _(
                "Questions in the text: %(questions)s; cards in the deck: %(cards)s. "
                "A translation needs one question per card.",
                questions=whole_number(exc.questions),
                cards=whole_number(exc.cards),
            )
        )
    if exc.reason == "empty":
        return str(_("The text is empty."))
    if exc.reason == "header-only":
        return str(_("The CSV has only the row naming its columns, and no cards."))
    clause = _clauses().get(exc.reason)
    if clause is None or exc.line is None:
        if exc.line is not None:
            return str(_("Line %(line)s of the text cannot be read.", line=whole_number(exc.line)))
        return str(_("The text cannot be read as a quiz or a CSV file."))
    return str(
        _("Line %(line)s: %(reason)s.", line=whole_number(exc.line), reason=clause(exc.facts))
    )


def upload_error(exc: InvalidInput | UploadTooLarge) -> str:
    """A translated sentence for an upload the domain refused."""
    if isinstance(exc, UploadTooLarge):
        return too_large_message()
    if isinstance(exc, DeckFileError):
        return _file_error(exc)
    if isinstance(exc, TooManyCards):
        return str(
            _(
                "%(count)s cards: a team deck holds at most %(limit)s.",
                count=whole_number(exc.count),
                limit=whole_number(exc.limit),
            )
        )
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
    if field == "title":
        return str(_("Give the deck a title (at most 200 characters)."))
    if field == "locale":
        return str(_("Choose a supported language for the cards."))
    return str(_("The text cannot be read as a quiz or a CSV file."))


def _kept_form(exc: InvalidInput | UploadTooLarge) -> dict[str, str]:
    """What was typed, to fill the form again (a pasted text over the limit is not sent
    back), and which of its fields the error is about (`invalid`): the title, the language,
    else the text pasted or, with none, the file."""
    kept = {name: request.form.get(name, "") for name in ("format", "title", "locale")}
    content = request.form.get("content", "")
    if len(content.encode("utf-8", "surrogatepass")) <= MAX_UPLOAD_BYTES:
        kept["content"] = content
    field = getattr(exc, "field", None)
    kept["invalid"] = field if field in ("title", "locale") else "content" if content else "file"
    return kept


@bp.post("/teams/<int:team_id>/decks")
@writes
@login_required
def create_team_deck(team_id: int) -> Response:
    session = db()
    try:
        content = _upload_text()
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
    except (InvalidInput, UploadTooLarge) as exc:
        session.rollback()
        status = 413 if isinstance(exc, UploadTooLarge) else 422
        return decks_page(team_id, error=upload_error(exc), status=status, form=_kept_form(exc))
    session.commit()
    flash(_("Deck created. Assign it on the team page so members study it."))
    return redirect(url_for("web.team_deck_page", team_id=team_id, slug=deck.slug), 303)


@bp.post("/teams/<int:team_id>/decks/<slug>/source")
@writes
@login_required
def upload_team_deck_locale(team_id: int, slug: str) -> Response:
    session = db()
    try:
        content = _upload_text()
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
    except (InvalidInput, UploadTooLarge) as exc:
        session.rollback()
        status = 413 if isinstance(exc, UploadTooLarge) else 422
        return deck_page(
            team_id, slug, error=upload_error(exc), status=status, form=_kept_form(exc)
        )
    session.commit()
    flash(_("Language uploaded. Everyone keeps their progress on the cards."))
    return redirect(url_for("web.team_deck_page", team_id=team_id, slug=slug), 303)


def _too_large_create() -> Response:
    args = request.view_args or {}
    return decks_page(int(args["team_id"]), error=too_large_message(), status=413, form={})


def _too_large_locale() -> Response:
    args = request.view_args or {}
    return deck_page(
        int(args["team_id"]), str(args["slug"]), error=too_large_message(), status=413, form={}
    )


upload_form(CREATE_ENDPOINT, lambda: MAX_UPLOAD_BYTES, _too_large_create)
upload_form(LOCALE_ENDPOINT, lambda: MAX_UPLOAD_BYTES, _too_large_locale)
