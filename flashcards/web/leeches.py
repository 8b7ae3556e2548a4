"""The person's leeches (cards they keep forgetting, with a way back into study for the
suspended ones) and their burying and leech options."""

from __future__ import annotations

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..errors import CardNotFound, InvalidInput
from ..http.request_db import db, writes
from ..srs import answer_effects, card_actions, cards, subscriptions
from ..storage.retry import retrying
from ..storage.schema import MAX_ID, utcnow
from . import bp
from .auth import login_required, user_id


@bp.get("/leeches")
@login_required
def leeches_page() -> str:
    session = db()
    leeches = cards.leeches(session, user_id())
    titles = subscriptions.deck_titles(session, {c.deck_slug for c in leeches})
    return render_template("leeches.html", leeches=leeches, titles=titles)


@bp.post("/leeches/<int:card_id>/unsuspend")
@writes
@login_required
def unsuspend_leech(card_id: int) -> Response:
    uid = user_id()
    session = db()
    if card_id > MAX_ID:
        raise CardNotFound(f"no card {card_id}")
    # A card the person may not see is a 404 page, as any other object of someone else's.
    retrying(
        session,
        lambda: card_actions.suspend(session, uid, [card_id], now=utcnow(), on=False),
        retry_on=(IntegrityError,),
    )
    flash(_("Unsuspended: the card is back in your reviews."))
    return redirect(url_for("web.leeches_page"), code=303)


@bp.get("/study-options")
@login_required
def study_options_page() -> str:
    options = answer_effects.options(db(), user_id())
    return render_template(
        "study_options.html", options=options, max_threshold=answer_effects.MAX_LEECH_THRESHOLD
    )


@bp.post("/study-options")
@writes
@login_required
def study_options() -> Response:
    uid = user_id()
    session = db()
    flags = ("bury_new", "bury_reviews", "bury_interday", "leech_suspend")
    values: dict[str, object] = {name: request.form.get(name) == "1" for name in flags}
    try:
        values["leech_threshold"] = int(request.form.get("leech_threshold", ""))
        retrying(
            session,
            lambda: answer_effects.set_options(session, uid, **values),
            retry_on=(IntegrityError,),
        )
    except (ValueError, InvalidInput):
        session.rollback()
        flash(
            _(
                "The leech threshold must be a whole number from 1 to %(most)d.",
                most=answer_effects.MAX_LEECH_THRESHOLD,
            ),
            "error",
        )
    else:
        flash(_("Saved."))
    return redirect(url_for("web.study_options_page"), code=303)
