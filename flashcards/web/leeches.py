"""The person's leeches: cards they keep forgetting, with a way back into study for the
suspended ones."""

from __future__ import annotations

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..errors import CardNotFound
from ..http.request_db import db, writes
from ..srs import card_actions, cards
from ..storage.retry import retrying
from ..storage.schema import MAX_ID, utcnow
from . import bp
from .auth import login_required, user_id
from .error_table import flash_error


@bp.get("/leeches")
@login_required
def leeches_page() -> str:
    return render_template("leeches.html", leeches=cards.leeches(db(), user_id()))


@bp.post("/leeches/<int:card_id>/unsuspend")
@writes
@login_required
def unsuspend_leech(card_id: int) -> Response:
    uid = user_id()
    session = db()
    try:
        if card_id > MAX_ID:
            raise CardNotFound(f"no card {card_id}")
        retrying(
            session,
            lambda: card_actions.suspend(session, uid, [card_id], now=utcnow(), on=False),
            retry_on=(IntegrityError,),
        )
    except CardNotFound as exc:
        flash_error(exc)
    else:
        flash(_("Unsuspended: the card is back in your reviews."))
    return redirect(url_for("web.leeches_page"), code=303)
