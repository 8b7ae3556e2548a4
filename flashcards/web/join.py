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

from ..errors import InvitationNotUsable
from ..http.request_db import db, writes
from ..people.token_hashes import token_hash
from ..storage.models import Team, TeamInvitation, TeamMember, TeamRemoval
from ..storage.retry import retrying
from ..storage.schema import utcnow
from ..teams import invitations
from . import bp
from .auth import PENDING_JOIN_KEY, current_user, login_required, user_id


def invitation_link(token: str) -> str:
    return url_for("web.join_page", _anchor=token, _external=True)


def token_from(pasted: str) -> str:
    """The token of a pasted link (`…/join#token`, or an older `…/join/token`) or code.

    The older form is only read from the page's form: there is no `/join/<token>` route,
    which would take the token in its path, into every access log on the way.
    """
    text = pasted.strip()
    return text.rpartition("#")[2] if "#" in text else text.rpartition("/")[2]


def _invited_team(token: str) -> tuple[Team, bool] | None:
    """The team a link invites to, and whether the link still works; None for no link."""
    if not invitations.TOKEN_RE.match(token):
        return None
    found = (
        db()
        .execute(
            select(TeamInvitation, Team)
            .join(Team, Team.id == TeamInvitation.team_id)
            .where(TeamInvitation.token_hash == token_hash(token))
        )
        .first()
    )
    if found is None:
        return None
    return found[1], invitations.invitation_state(found[0], utcnow()) == "active"


def _is_member(team: Team) -> bool:
    user = current_user()
    return user is not None and db().get(TeamMember, (team.id, user.id)) is not None


def _was_removed(team: Team) -> bool:
    user = current_user()
    return user is not None and db().get(TeamRemoval, (team.id, user.id)) is not None


def _page(
    *, token: str | None = None, team: Team | None = None, member: bool = False, status: int = 200
) -> Response:
    page = render_template(
        "join.html",
        token=token,
        team=team,
        member=member,
        dead=status == 404,
        removed=status == 403,
    )
    return Response(page, status=status, mimetype="text/html")


def _removed(team: Team) -> Response:
    session.pop(PENDING_JOIN_KEY, None)
    return _page(team=team, status=403)


def _dead_link() -> Response:
    session.pop(PENDING_JOIN_KEY, None)
    return _page(status=404)


@bp.get("/join")
def join_page() -> Response:
    pending = session.get(PENDING_JOIN_KEY)
    if not isinstance(pending, str) or current_user() is None:
        return _page()
    invited = _invited_team(pending)
    if invited is None:
        return _dead_link()
    team, works = invited
    if _is_member(team):
        # Their own team's link, even one used up since: nothing to confirm.
        session.pop(PENDING_JOIN_KEY, None)
        return _page(team=team, member=True)
    if _was_removed(team):
        return _removed(team)
    if not works:
        return _dead_link()
    return _page(token=pending, team=team)


@bp.post("/join")
def open_invitation() -> Response:
    """The link a person opened or pasted: it replaces any invitation they had pending (in
    the cookie: the database is only read)."""
    token = token_from(request.form.get("invitation", ""))
    invited = _invited_team(token)
    if invited is None or not (invited[1] or _is_member(invited[0])):
        return _dead_link()
    session[PENDING_JOIN_KEY] = token
    if current_user() is None:
        flash(_("Sign in or create an account to join “%(team)s”.", team=invited[0].name))
        return redirect(url_for("web.signin", next=url_for("web.join_page")), 303)
    return redirect(url_for("web.join_page"), 303)


@bp.post("/join/confirm")
@writes
@login_required
def join() -> Response:
    uid = user_id()
    token = request.form.get("token", "")
    session_db = db()
    invited = _invited_team(token)
    already = invited is not None and _is_member(invited[0])

    def work() -> int:
        return invitations.join(session_db, uid, token, now=utcnow()).team_id

    try:
        # Two requests joining at once collide on the membership's key; the retry finds it.
        team_id = retrying(session_db, work, retry_on=(IntegrityError,), attempts=2)
    except InvitationNotUsable:
        return _dead_link()  # revoked, expired or used up since the confirmation was shown
    except invitations.RemovedFromTeam as exc:
        removed_from = session_db.get(Team, exc.team_id)
        assert removed_from is not None  # the invitation that named it references it
        return _removed(removed_from)
    session.pop(PENDING_JOIN_KEY, None)
    if already:
        flash(_("You are already in this team."))
    else:
        flash(_("Welcome to the team. Its assigned decks are in your library."))
    return redirect(url_for("web.team_page", team_id=team_id), 303)
