"""Joining a team by invitation link.

A link is `/join#<token>`. The token is in the fragment, which browsers never send: no access
log (Werkzeug's, gunicorn's, a proxy's) and no Referer carries it. The join page's script
posts it; without script, the person pastes the link into the page's form. Someone not signed
in yet keeps the token in their session while they sign in or create an account
(`auth.PENDING_JOIN_KEY`), and comes back to the confirmation.
"""

from __future__ import annotations

from flask import flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from werkzeug.wrappers import Response

from ..db import retrying, utcnow
from ..http import db
from ..models import Team, TeamInvitation
from ..teams import invitations
from . import bp
from .auth import PENDING_JOIN_KEY, current_user, login_required, user_id


def invitation_link(token: str) -> str:
    return url_for("web.join_page", _anchor=token, _external=True)


def token_from(pasted: str) -> str:
    """The token of a pasted link (`…/join#token`, or an older `…/join/token`) or code."""
    text = pasted.strip()
    return text.rpartition("#")[2] if "#" in text else text.rpartition("/")[2]


def _active_team(token: str) -> Team | None:
    """The team a link invites to while it works (joining checks it again)."""
    if not invitations.TOKEN_RE.match(token):
        return None
    found = (
        db()
        .execute(
            select(TeamInvitation, Team)
            .join(Team, Team.id == TeamInvitation.team_id)
            .where(TeamInvitation.token_hash == invitations.token_hash(token))
        )
        .first()
    )
    if found is None or invitations.invitation_state(found[0], utcnow()) != "active":
        return None
    return found[1]


def _page(token: str | None = None, team: Team | None = None, status: int = 200) -> Response:
    page = render_template("join.html", token=token, team=team, dead=status == 404)
    return Response(page, status=status, mimetype="text/html")


@bp.get("/join")
def join_page() -> Response:
    pending = session.get(PENDING_JOIN_KEY)
    if not isinstance(pending, str) or current_user() is None:
        return _page()
    team = _active_team(pending)
    if team is None:
        session.pop(PENDING_JOIN_KEY, None)
        return _page(status=404)
    return _page(pending, team)


@bp.post("/join")
def open_invitation() -> Response:
    token = token_from(request.form.get("invitation", ""))
    team = _active_team(token)
    if team is None:
        session.pop(PENDING_JOIN_KEY, None)
        return _page(status=404)
    session[PENDING_JOIN_KEY] = token
    if current_user() is None:
        flash(_("Sign in or create an account to join “%(team)s”.", team=team.name))
        return redirect(url_for("web.signin", next=url_for("web.join_page")), 303)
    return redirect(url_for("web.join_page"), 303)


@bp.post("/join/confirm")
@login_required
def join() -> Response:
    uid = user_id()
    token = request.form.get("token", "")
    session_db = db()

    def work() -> int:
        return invitations.join(session_db, uid, token, now=utcnow()).team_id

    # Two requests joining at once collide on the membership's key; the retry finds it.
    team_id = retrying(session_db, work, retry_on=(IntegrityError,), attempts=2)
    session.pop(PENDING_JOIN_KEY, None)
    flash(_("Welcome to the team. Its assigned decks are in your library."))
    return redirect(url_for("web.team_page", team_id=team_id), 303)
