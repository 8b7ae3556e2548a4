"""The card browser: every card the person studies or may edit, searched, sorted and paged
(`srs/browse.py`), bulk actions on a selection (`srs/card_actions.py`, one action, one undo),
and each card's history of answers with a chart of its stability."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from flask import flash, redirect, render_template, request, url_for
from flask_babel import get_timezone, ngettext
from flask_babel import gettext as _
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..decks import deck_tree
from ..errors import (
    CardNotFound,
    CardNotStudied,
    CardRetired,
    InvalidInput,
    NotDeckOwner,
    NotFound,
    NothingToUndo,
    NotLatestAnswer,
    UnknownReviewId,
)
from ..http.request_db import db, writes
from ..srs import browse, card_actions, card_moves, study, subscriptions
from ..srs.card_history import load_history
from ..storage.retry import retrying
from ..storage.schema import MAX_ID, utcnow
from . import bp
from .auth import login_required, user_id
from .charts import bar_chart
from .error_table import flash_error
from .i18n import date_label, interval, locale_code, one_decimal, when
from .study import flag_names, undo_button, undone_message

# The bulk form's choices, in its order.
ACTIONS = (
    "suspend", "unsuspend", "bury", "flag", "add_tag", "remove_tag", "forget", "due", "move"
)  # fmt: skip


def state_names() -> dict[str, str]:
    return {
        "new": _("New"),
        "learning": _("Learning"),
        "review": _("Review"),
        "relearning": _("Relearning"),
    }


def rating_names() -> dict[int, str]:
    return {1: _("Again"), 2: _("Hard"), 3: _("Good"), 4: _("Easy")}


def _search() -> tuple[browse.Search, str | None]:
    """The search the query string asks for; a bad value is said and left out."""
    try:
        return browse.parse_search(request.args), None
    except InvalidInput as exc:
        rest = {k: v for k, v in request.args.items() if k != exc.field}
        try:
            return browse.parse_search(rest), exc.field
        except InvalidInput:
            return browse.Search(), exc.field


@bp.get("/browse")
@login_required
def browse_page() -> str:
    uid = user_id()
    session = db()
    now = utcnow()
    search, bad = _search()
    page = browse.browse(session, uid, search, now=now)
    args = browse.search_args(page.search)
    decks = browse.searched_decks(session, uid)
    return render_template(
        "browse.html",
        page=page,
        args=args,
        # A new sort starts at the first page.
        sort_args={k: v for k, v in args.items() if k not in ("page", "sort", "order")},
        bad_field=bad,
        states=state_names(),
        flags=flag_names(),
        sorts=_sort_names(),
        # As Anki's Edit menu names it: the last change may be a study answer, not the browser's.
        **undo_button(session, uid, now),
        now=now,
        move_decks=_titled(
            session, {slug: decks.get(slug) for _id, slug in card_moves.own_decks(session, uid)}
        ),
        search_decks=_titled(session, decks),
        titles=subscriptions.deck_titles(session, {c.deck_slug for c in page.cards}),
    )


def _titled(session: Any, decks: dict[str, str | None]) -> list[tuple[str, str, str | None]]:
    """Each deck's slug, title and title's language, a subdeck after its parent: the title
    in the language the person studies the deck in (`decks`), else in the page's."""
    locale = locale_code()
    titles = subscriptions.deck_titles(session, decks)  # one statement for them all
    found = [(slug, *titles.of(slug, studied or locale)) for slug, studied in decks.items()]
    return sorted(found, key=lambda d: deck_tree.name_key(d[1]))


def _sort_names() -> dict[str, str]:
    return {
        "due": _("Due"),
        "interval": _("Interval"),
        "difficulty": _("Difficulty"),
        "stability": _("Stability"),
        "lapses": _("Lapses"),
        "reviews": _("Reviews"),
    }


def _back() -> Response:
    """To the browser page the form was sent from, its search kept (read back through the
    search's own parser, so nothing else of the form's reaches the address)."""
    try:
        search = browse.parse_search(dict(request.form.items()))
    except InvalidInput:
        search = browse.Search()
    keep: dict[str, Any] = {
        k: v for k, v in browse.search_args(search).items() if k in request.form
    }
    return redirect(url_for("web.browse_page", **keep), code=303)


def _selection() -> list[int]:
    ids = []
    for raw in request.form.getlist("card_id"):
        if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_ID:
            raise CardNotFound(f"no card {raw[:20]}")
        ids.append(int(raw))
    return ids


def _done(action: str, n: int) -> str:
    """What to say once the action is done to `n` cards."""
    said = {
        "suspend": lambda: ngettext("Suspended %(num)d card.", "Suspended %(num)d cards.", n),
        "unsuspend": lambda: ngettext("Unsuspended %(num)d card.", "Unsuspended %(num)d cards.", n),
        "bury": lambda: ngettext(
            "Buried %(num)d card until tomorrow.", "Buried %(num)d cards until tomorrow.", n
        ),
        "flag": lambda: ngettext("Flagged %(num)d card.", "Flagged %(num)d cards.", n),
        "add_tag": lambda: ngettext("Tagged %(num)d card.", "Tagged %(num)d cards.", n),
        "remove_tag": lambda: ngettext("Untagged %(num)d card.", "Untagged %(num)d cards.", n),
        "forget": lambda: ngettext(
            "Forgot %(num)d card: it is new again.", "Forgot %(num)d cards: they are new again.", n
        ),
        "due": lambda: ngettext("Rescheduled %(num)d card.", "Rescheduled %(num)d cards.", n),
        "move": lambda: ngettext("Moved %(num)d card.", "Moved %(num)d cards.", n),
    }
    return str(said[action]())


def _flag() -> int | None:
    raw = request.form.get("action_flag", "")
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) < 3):
        raise InvalidInput("flag must be 0 (none) to 7", field="flag")
    return int(raw)


_FORM_ERRORS: dict[str, Callable[[], str]] = {
    "card_ids": lambda: _(
        "Select at least one card (at most %(most)d).", most=card_actions.MAX_SELECTION
    ),
    "action": lambda: _("Choose what to do with the selected cards."),
    "flag": lambda: _("Choose a flag."),
    "tag": lambda: _(
        "A tag is one word (no spaces) of at most %(most)d characters, and not “leech”.",
        most=card_actions.MAX_TAG,
    ),
    "due": lambda: _("Due in: a number of days (0 is today) or a range such as 1-7."),
    "deck": lambda: _("Choose one of your own decks to move the cards to."),
}


@bp.post("/browse/actions")
@writes
@login_required
def browse_actions() -> Response:
    uid = user_id()
    session = db()
    try:
        ids = _selection()
        if not ids:
            raise InvalidInput("no cards given", field="card_ids")
        action = request.form.get("action", "")
        if action not in ACTIONS:  # unbury: the browser's page shows no buried state to undo
            raise InvalidInput("choose an action", field="action")
        flag, tag, due = _flag(), request.form.get("action_tag"), request.form.get("due")
        deck = request.form.get("action_deck") or None
        now = utcnow()

        def change() -> card_actions.ActionResult:
            return card_actions.act(
                session,
                uid,
                ids,
                action,
                now=now,
                flag=flag,
                tag=tag or None,
                due=due or None,
                restore_position=request.form.get("restore_position") == "on",
                reset_counts=request.form.get("reset_counts") == "on",
                deck=deck,
            )

        # Two first marks of one card at once meet at its primary key; the retry finds the row.
        retrying(session, change, retry_on=(IntegrityError,))
    except InvalidInput as exc:
        session.rollback()
        flash(_FORM_ERRORS.get(exc.field or "", _FORM_ERRORS["action"])(), "error")
        return _back()
    except (NotDeckOwner, NotFound) as exc:
        if isinstance(exc, CardNotFound):
            raise  # a card not theirs to see: the 404 page
        # A card of a shipped or team deck, or a deck picked that is not theirs.
        session.rollback()
        flash(_("Cards move only from one of your own decks to another."), "error")
        return _back()
    except (CardNotStudied, CardRetired) as exc:
        session.rollback()
        flash_error(exc)
        return _back()
    flash(_done(action, len(ids)))
    return _back()


@bp.post("/browse/undo")
@writes
@login_required
def browse_undo() -> Response:
    uid = user_id()
    sent = request.form.get("action_id", "")
    try:
        action_id = str(uuid.UUID(sent))
    except ValueError:
        flash(_("That undo could not be read. Please try again."), "error")
        return _back()
    session = db()
    try:
        undone = retrying(
            session, lambda: study.undo(session, uid, now=utcnow(), review_id=action_id)
        )
    except (UnknownReviewId, NothingToUndo, NotLatestAnswer) as exc:
        flash_error(exc)
        return _back()
    flash(undone_message(undone.what))
    return _back()


@bp.get("/browse/cards/<int:card_id>")
@login_required
def card_history(card_id: int) -> str:
    uid = user_id()
    if card_id > MAX_ID:
        raise CardNotFound(f"no card {card_id}")
    session = db()
    history = load_history(session, uid, card_id)
    title = subscriptions.deck_titles(session, [history.deck_slug]).of(
        history.deck_slug, history.locale
    )
    answers = history.answers
    labels = [when(a.reviewed_at) for a in answers]
    chart = bar_chart(
        _("Stability"),
        _("The card's stability, in days, after each answer."),
        labels,
        [a.stability for a in answers],
        value_text=[one_decimal(a.stability) for a in answers],
        every=max(1, len(answers) // 6),
        axis_labels=[date_label(a.reviewed_at.astimezone(get_timezone()).date()) for a in answers],
    )
    rows = [(label, one_decimal(a.stability)) for label, a in zip(labels, answers, strict=True)]
    return render_template(
        "browse_card.html",
        history=history,
        deck_title=title,
        charts=[(chart, rows, None if answers else _("No answers yet: each answer adds a bar."))],
        ratings=rating_names(),
        states=state_names(),
        interval=interval,
        date_label=date_label,
    )
