"""The study session: one card at a time, answered with plain forms (POST, then redirect).

With JavaScript the same forms are sent by fetch() and the next card's HTML replaces the
current one, so nothing reloads. Each answer form carries a review id derived from the card's
state: every tab, reload or back-button copy of the same card shows the same id, so the engine
(idempotent by review id) applies an answer to that state once, however often it is sent.

Without JavaScript the answer is shown by a link, and that link names the card and its state
(the same review id): a reveal address opened again after the card was answered (Back, a
stale tab) shows the card due now face down, never its answer. An answer whose review id is
neither the card's current one nor one already stored was given to a card at another state
than shown, and is refused with nothing written.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from datetime import datetime
from typing import Any

from flask import current_app, flash, make_response, redirect, render_template, request, url_for
from flask_babel import gettext as _
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from ..errors import (
    CardNotFound,
    CardNotStudied,
    CardRetired,
    InvalidInput,
    NothingToUndo,
    NotLatestAnswer,
    NotSubscribed,
    ReviewIdReused,
    UnknownReviewId,
)
from ..http.request_db import db, writes
from ..http.request_policies import pace_before_queue
from ..people.accounts import user_clock
from ..srs import card_actions, cards, marks, queue, stats, study, subscriptions
from ..srs.days import Clock
from ..srs.queue import NextCard
from ..srs.scheduling import CardState, fuzz_seed, preview
from ..srs.state_rows import answered_from
from ..srs.workload import workload
from ..storage.models import Deck
from ..storage.retry import retrying
from ..storage.schema import MAX_ID, utcnow
from . import bp
from .auth import login_required, user_id
from .deck_cards import ALL_DECKS
from .error_table import flash_error
from .i18n import interval, relative, when


def review_id_for(uid: int, card: NextCard) -> str:
    return review_id_at(uid, card.card_id, card.state)


def review_id_at(uid: int, card_id: int, state: CardState | None) -> str:
    """The review id of an answer to the card at this state (None: new)."""
    basis = f"{uid}:{card_id}:{state.reps if state else 0}:"
    basis += state.last_review.isoformat() if state and state.last_review else "new"
    if state is not None and state.last_review is None:
        # Forgotten (new again), at this time: not the answer that first introduced it.
        basis += ":" + state.due.isoformat()
    key = str(current_app.config["SECRET_KEY"]).encode()
    digest = hmac.new(key, basis.encode(), hashlib.sha256).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def rating_labels() -> dict[int, str]:
    return {1: _("Again"), 2: _("Hard"), 3: _("Good"), 4: _("Easy")}


def rating_buttons(
    session: Session, uid: int, card: NextCard, now: datetime, clock: Clock
) -> list[dict[str, object]]:
    """The four rating buttons of `card`, each with the interval it stores if pressed now."""
    seed = fuzz_seed(uid, card.card_id, card.state.reps if card.state else 0)
    balance = workload(session, uid, now, clock, card.card_id)
    outcomes = preview(card.config, card.state, now, seed=seed, clock=clock, workload=balance)
    labels = rating_labels()
    return [
        {
            "rating": int(rating),
            "label": labels[int(rating)],
            "interval": interval((outcome.due - now).total_seconds()),
        }
        for rating, outcome in outcomes.items()
    ]


@bp.get("/study")
@login_required
def session_page() -> Response:
    # Never from the cache: Back must ask again, so that a reveal address shows what is due.
    response = make_response(_session_page())  # a page, or the redirect to pick a deck
    response.headers["Cache-Control"] = "no-store"
    return response


def _session_page() -> str | Response:
    uid = user_id()
    slug = request.args.get("deck") or None
    session = db()
    now = utcnow()
    pace_before_queue(uid, now)
    clock = user_clock(session, uid)  # read once: the queue and the preview both need it
    # The deck asked for and its subdecks; None: every deck.
    deck = subscriptions.find_visible_deck(session, uid, slug) if slug else None
    deck_ids = subscriptions.with_subdecks(session, uid, deck) if deck else None
    card, counts = queue.next_card(session, uid, now=now, deck_ids=deck_ids, clock=clock)
    # The undo form names the answer it undoes: sent twice, it undoes that one only once.
    undo = undo_button(session, uid, now)
    if card is None:
        next_at: datetime | None = stats.next_due(session, uid, now=now, deck_ids=deck_ids)
        subscribed = next_at is not None or stats.is_subscribed(session, uid, deck_ids=deck_ids)
        if not subscribed and slug is None and undo["undo_review_id"] is None:
            # Nothing is "done" for someone who studies no deck: they pick one first.
            flash(_("Pick a deck to study first: subscribe to one below."))
            return redirect(url_for("web.library"), code=303)
        elsewhere = None
        if deck is not None and deck_ids is not None:  # what their other decks hold today
            by_deck = queue.counts_by_deck(session, uid, now=now, clock=clock)
            elsewhere = sum(c.total for d, c in by_deck.items() if d not in deck_ids)
        return render_template(
            "study_done.html",
            counts=counts,
            deck_slug=slug,
            deck_title=_title_of(session, uid, deck) if deck else None,
            elsewhere=elsewhere,
            with_subdecks=deck_ids is not None and len(deck_ids) > 1,
            **undo,
            subscribed=subscribed,
            next_at=next_at,
            next_when=when(next_at) if next_at else None,
            next_relative=relative(next_at, now) if next_at else None,
        )
    buttons = rating_buttons(session, uid, card, now, clock)
    review_id = review_id_for(uid, card)
    # The answer is shown only for the card and state its reveal link was made for.
    asked = request.args.get("show")
    revealed = asked == review_id and request.args.get("card") == str(card.card_id)
    deck_title, deck_title_locale = subscriptions.deck_title(session, card.deck_id, card.locale)
    return render_template(
        "study.html",
        card=card,
        counts=counts,
        buttons=buttons,
        review_id=review_id,
        **undo,
        deck_slug=slug,
        deck_title=deck_title,
        deck_title_locale=deck_title_locale,
        revealed=revealed,
        stale_reveal=asked is not None and not revealed,
        **card_controls(
            session, uid, card.card_id, None, {"card": str(card.card_id), "show": review_id}
        ),
    )


def _title_of(session: Session, uid: int, deck: Deck) -> tuple[str, str | None]:
    """The deck's title in the language the person studies it in, with that language."""
    return subscriptions.deck_title(
        session, deck.id, subscriptions.reading_locale(session, uid, deck)
    )


def _back(slug: str | None) -> Response:
    """Back to the study page a form was sent from: the deck studied, or custom study's."""
    if request.form.get("back") == "custom":
        return redirect(url_for("web.custom_study_page"), code=303)
    return redirect(url_for("web.session_page", deck=slug or None), code=303)


@bp.post("/study/answer")
@writes
@login_required
def answer() -> Response:
    answer_from_form(user_id())
    return _back(request.form.get("deck") or None)


def answer_from_form(uid: int) -> None:
    """Answer the card a rating button names (a real answer), and say what it gave."""
    try:
        card_id = int(request.form.get("card_id", ""))
        if not 1 <= card_id <= MAX_ID:
            raise ValueError(card_id)
        rating = study.parse_rating(int(request.form.get("rating", "")))
        review_id = str(uuid.UUID(request.form.get("review_id", "")))
    except (ValueError, InvalidInput):
        flash(_("That answer could not be read. Please answer again."), "error")
        return
    session = db()
    now = utcnow()
    if review_id != review_id_at(uid, card_id, answered_from(session, uid, card_id)) and not (
        study.review_id_taken(session, review_id)
    ):
        # Not the state the card was shown at, nor a resend of a stored answer: answered in
        # another tab since, or never shown face down. Kept as it is.
        flash(
            _(
                "That card was answered or changed after it was shown (in another tab or window?)."
                " Nothing was recorded: here is the card to study now."
            ),
            "error",
        )
        return
    try:
        result = retrying(
            session,
            lambda: study.answer(session, uid, card_id, rating, review_id, now=now),
            retry_on=(IntegrityError,),  # a racing first answer, or the same review id
        )
    except (CardNotFound, NotSubscribed, CardRetired, ReviewIdReused) as exc:
        flash_error(exc)
        return
    if result.created:
        flash(
            _(
                "Previous card: %(rating)s, next review in %(interval)s.",
                rating=rating_labels()[int(rating)],
                interval=interval((result.state.due - now).total_seconds()),
            )
        )


@bp.post("/study/undo")
@writes
@login_required
def undo() -> Response:
    uid = user_id()
    slug = request.form.get("deck") or None
    sent = request.form.get("review_id")
    try:
        review_id = str(uuid.UUID(sent)) if sent else None
    except ValueError:
        flash(_("That undo could not be read. Please try again."), "error")
        return _back(slug)
    session = db()
    try:
        undone = retrying(
            session,
            lambda: study.undo(session, uid, now=utcnow(), review_id=review_id),
        )
    except (UnknownReviewId, NothingToUndo, NotLatestAnswer) as exc:
        flash_error(exc)
        return _back(slug)
    flash(undone_message(undone.what))
    return _back(slug)


# --- Actions on the card shown: bury, suspend, flag (Anki's keys: -, @, Ctrl+1..7), edit ---


def undo_wording(what: str) -> str:
    """The undo button's words: what it undoes, an answer or an action on the card."""
    labels = {
        "answer": _("Undo answer"),
        "suspend": _("Undo suspend"),
        "unsuspend": _("Undo unsuspend"),
        "bury": _("Undo bury"),
        "unbury": _("Undo unbury"),
        "flag": _("Undo flag"),
        "forget": _("Undo forget"),
        "due": _("Undo set due date"),
        "move": _("Undo move"),
        "tag": _("Undo add tag"),
        "untag": _("Undo remove tag"),
    }
    return str(labels.get(what, _("Undo last action")))


def undo_button(session: Session, uid: int, now: datetime) -> dict[str, str | None]:
    """What the undo button of a page needs (`undo_review_id`, `undo_label`): the id of what
    it undoes, so that sent twice it undoes that once, and its name; both None: nothing."""
    undoable = study.undoable_what(session, uid, now=now)
    if undoable is None:
        return {"undo_review_id": None, "undo_label": None}
    return {"undo_review_id": undoable[0], "undo_label": undo_wording(undoable[1])}


def undone_message(what: str) -> str:
    """What an undo says it did: an answer's card is due again; an action is simply gone."""
    if what == "answer":
        return str(_("Undone. The card is back in the queue."))
    return str(_("Undone."))


def flag_names() -> dict[int, str]:
    return {
        0: _("No flag"),
        1: _("Red"),
        2: _("Orange"),
        3: _("Green"),
        4: _("Blue"),
        5: _("Pink"),
        6: _("Turquoise"),
        7: _("Purple"),
    }


def card_controls(
    session: Any, uid: int, card_id: int, studied: str | None, shown: dict[str, str]
) -> dict[str, Any]:
    """What the action controls of the card shown need: its marks, the flags, where to
    edit it (None: the person may not). `studied` is the study page it is shown on
    (`web.deck_cards.study_page`): the card's page comes back there once a change is saved,
    to the answer side (`shown`: that page's reveal arguments) when opened from there."""
    place = cards.edit_place(session, uid, card_id)
    studied = studied or request.args.get("deck") or ALL_DECKS

    def edit_url(side: dict[str, Any]) -> str | None:
        if place is None:
            return None
        if place.team_id is None:
            return url_for(
                "web.own_card_page", slug=place.slug, key=place.key, study=studied, **side
            )
        return url_for(
            "web.team_card_page", team_id=place.team_id, slug=place.slug, key=place.key,
            study=studied, **side,
        )  # fmt: skip

    return {
        "card_marks": marks.card_marks(session, uid, card_id),
        "flag_names": flag_names(),
        "edit_url": edit_url({}),
        "edit_answer_url": edit_url(shown),
    }


@bp.post("/study/card")
@writes
@login_required
def card_action() -> Response:
    uid = user_id()
    slug = request.form.get("deck") or None
    # Not "action": a form control of that name would hide the form's own action from JS.
    action = request.form.get("card_action", "")
    try:
        card_id = int(request.form.get("card_id", ""))
        if not 1 <= card_id <= MAX_ID or action not in ("bury", "suspend", "flag", "forget"):
            raise ValueError(action)
        flag = int(request.form.get("flag", "0")) if action == "flag" else 0
        if flag not in card_actions.FLAGS:
            raise ValueError(flag)
    except ValueError:
        flash(_("That action could not be read. Please try again."), "error")
        return _back(slug)
    session = db()
    now = utcnow()
    selection = [card_id]

    def act() -> card_actions.ActionResult:
        if action == "bury":
            return card_actions.bury(session, uid, selection, now=now)
        if action == "suspend":
            return card_actions.suspend(session, uid, selection, now=now)
        if action == "forget":
            return card_actions.forget(session, uid, selection, now=now)
        return card_actions.set_flag(session, uid, selection, flag, now=now)

    try:
        retrying(session, act, retry_on=(IntegrityError,))
    except (CardNotFound, CardNotStudied) as exc:
        session.rollback()
        flash_error(exc)
        return _back(slug)
    if action == "bury":
        flash(_("Card buried until tomorrow. Undo brings it back."))
    elif action == "suspend":
        flash(_("Card suspended: it stays out of your reviews. Undo brings it back."))
    elif action == "forget":
        flash(
            _("Card forgotten: it is new again, after the deck's new cards. Undo brings it back.")
        )
    elif flag:
        flash(_("Flag set: %(colour)s.", colour=flag_names()[flag]))
    else:
        flash(_("Flag removed."))
    return _back(slug)
