"""Custom study on the web: the form that starts a session, and its cards, one at a time.

Plain forms (POST, then redirect), like the study page. Answers are ordinary answers through
`study.answer`; a preview only moves on. More new or review cards of a deck today start no
session: the deck's limits are raised, and the deck's study page shows them.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import replace

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from werkzeug.wrappers import Response

from ..errors import InvalidInput, NoCardsMatch, NotSubscribed
from ..http.request_db import db, writes
from ..people.accounts import user_clock
from ..srs import custom_study, subscriptions
from ..srs.state_rows import answered_from
from ..storage.schema import MAX_ID, utcnow
from . import bp
from .account import WHOLE_NUMBER
from .auth import login_required, user_id
from .deck_cards import CUSTOM_STUDY
from .error_table import flash_error, message_for
from .i18n import locale_code
from .study import (
    answer_from_form,
    card_controls,
    flag_names,
    rating_buttons,
    review_id_for,
    undo_button,
)


def mode_labels() -> dict[str, str]:
    return {
        "ahead": _("Study ahead: review cards due in the next days"),
        "forgotten": _("Review the cards you forgot in the last days"),
        "extra_new": _("Learn more new cards of a deck today"),
        "extra_review": _("Review more cards of a deck today"),
        "preview": _("Preview new cards of a deck, without scheduling them"),
        "tag": _("Study the cards with a tag"),
        "flag": _("Study the cards with a flag"),
    }


def _whole(raw: str | None) -> object:
    text = (raw or "").strip()
    if not text:
        return None
    return int(text) if WHOLE_NUMBER.fullmatch(text) else text


def _form_page(
    form: dict[str, str], error: str | None = None, status: int = 200
) -> tuple[str, int]:
    session = db()
    decks = [
        d for d in subscriptions.deck_summaries(session, user_id(), locale_code())
        if d.subscribed_locale is not None
    ]  # fmt: skip
    if not form.get("deck") and len(decks) == 1 and "mode" not in request.form:
        form = {**form, "deck": decks[0].slug}
    return render_template(
        "custom_study.html", card=None, study=None, decks=decks, modes=mode_labels(),
        form=form, error=error, flag_names=flag_names(),
    ), status  # fmt: skip


@bp.get("/study/custom")
@login_required
def custom_study_page() -> str | tuple[str, int]:
    uid = user_id()
    session = db()
    now = utcnow()
    try:
        clock = user_clock(session, uid)
        card, current = custom_study.next_card(session, uid, now=now, clock=clock)
    except custom_study.NoCustomStudy:
        # As Anki's custom study is the current deck's: the deck studied when it was asked
        # for (the study page's link names it), or the only one the person studies.
        return _form_page(
            {"mode": "ahead", "days": "1", "amount": "", "deck": request.args.get("deck", "")}
        )
    if card is not None:
        # A forgotten card is answered from its `answered_from` state: the page's review id
        # and intervals must be those of the answer it sends.
        card = replace(card, state=answered_from(session, uid, card.card_id))
    buttons = []
    if card is not None and current.mode != "preview":
        buttons = rating_buttons(session, uid, card, now, clock)
    # The study page's controls: the card's actions and an undo that come back here.
    controls = (
        card_controls(session, uid, card.card_id, CUSTOM_STUDY, {"show": "1"})
        if card
        else {"flag_names": flag_names()}
    )
    return render_template(
        "custom_study.html", card=card, study=current, modes=mode_labels(), buttons=buttons,
        locale=locale_code(),
        titles=subscriptions.deck_titles(session, [current.deck_slug] if current.deck_slug else []),
        review_id=review_id_for(uid, card) if card else None,
        revealed=request.args.get("show") == "1",
        **undo_button(session, uid, now),
        **controls,
    )  # fmt: skip


@bp.post("/study/custom")
@writes
@login_required
def start_custom_study() -> Response | tuple[str, int]:
    fields = ("mode", "deck", "days", "amount", "tag", "flag")
    form = {k: request.form.get(k, "") for k in fields}
    session = db()
    uid = user_id()
    try:
        started = custom_study.start(
            session, uid, mode=form["mode"], deck=form["deck"] or None,
            days=_whole(form["days"]), amount=_whole(form["amount"]),
            tag=form["tag"] or None, flag=_whole(form["flag"]), now=utcnow(),
            clock=user_clock(session, uid),
        )  # fmt: skip
    except (InvalidInput, NotSubscribed) as exc:
        session.rollback()
        return _form_page(form, _start_error(exc, form), 422)
    except NoCardsMatch as exc:
        session.rollback()
        return _form_page(form, message_for(exc), 409)
    session.commit()
    if isinstance(started, custom_study.ExtendedLimits):
        _flash_extended(started)
        return redirect(url_for("web.session_page", deck=started.deck_slug), code=303)
    return redirect(url_for("web.custom_study_page"), code=303)


def _flash_extended(extended: custom_study.ExtendedLimits) -> None:
    if extended.extra_new:
        flash(
            ngettext(
                "This deck shows %(num)d new card more than its daily limit today.",
                "This deck shows %(num)d new cards more than its daily limit today.",
                extended.extra_new,
            )
        )
    if extended.extra_reviews:
        flash(
            ngettext(
                "This deck shows %(num)d review more than its daily limit today.",
                "This deck shows %(num)d reviews more than its daily limit today.",
                extended.extra_reviews,
            )
        )


def _start_error(exc: InvalidInput | NotSubscribed, form: dict[str, str]) -> str:
    tag = (
        _("A tag has at most %(max)d characters.", max=custom_study.MAX_TAG)
        if form["tag"].strip()
        else _("Type the tag whose cards you want to study.")
    )
    messages: dict[str, str] = {
        "mode": _("Choose what to study."),
        "deck": _("Choose one of the decks you study."),
        "days": _("Give a number of days from %(low)d to %(high)d.", low=1, high=365),
        "amount": _("Give a number of cards from %(low)d to %(high)d.", low=1, high=9999),
        "tag": tag,
        "flag": _("Choose a flag."),
    }
    found = messages.get(exc.field or "")
    return found if found is not None else str(_("Check the form: a value is not allowed."))


def _card_id() -> int | None:
    try:
        card_id = int(request.form.get("card_id", ""))
    except ValueError:
        return None
    return card_id if 1 <= card_id <= MAX_ID else None


def _back() -> Response:
    return redirect(url_for("web.custom_study_page"), code=303)


@bp.post("/study/custom/answer")
@writes
@login_required
def custom_study_answer() -> Response:
    answer_from_form(user_id())  # a real answer, as on the study page
    return _back()


@bp.post("/study/custom/next")
@writes
@login_required
def custom_study_next() -> Response:
    uid = user_id()
    card_id = _card_id()
    session = db()
    if card_id is not None:
        try:
            custom_study.previewed(
                session, uid, card_id, now=utcnow(), clock=user_clock(session, uid)
            )
        except (custom_study.NoCustomStudy, InvalidInput) as exc:
            flash_error(exc)
            return _back()
        session.commit()
    return _back()


@bp.post("/study/custom/end")
@writes
@login_required
def end_custom_study() -> Response:
    session = db()
    # Ended already (a second tab, a resend): the same place either way.
    with suppress(custom_study.NoCustomStudy):
        custom_study.end(session, user_id())
    session.commit()
    flash(_("Custom study ended."))
    return redirect(url_for("web.custom_study_page"), code=303)
