"""Forgotten passwords: asking for a reset link by email, setting a new password with one,
and a team owner's reset link for a member (for servers that send no mail).

The page that asks answers the same whether or not the email has an account, and at the
same speed: the rate limits are counted for any address, and the link is made and mailed
after the answer has been sent (`Response.call_on_close`), so neither the page nor its
timing tells who has an account. A mail that fails is logged for the operator.
"""

from __future__ import annotations

import logging

from flask import copy_current_request_context, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from sqlalchemy import select
from werkzeug.wrappers import Response

from ..errors import InvalidInput, NotFound
from ..http.request_db import begin_writing, db, writes
from ..http.request_policies import client_address, limiter
from ..mail import MailNotSent
from ..people import account_limits, accounts, resets
from ..people.ratelimit import RateLimited
from ..storage.models import User
from ..storage.schema import MAX_ID, utcnow
from . import bp
from .auth import login_required, start_session, user_id
from .error_table import flash_error, message_for
from .mailing import mail_enabled, public_url, render_mail, send
from .teams import render_team, team_id_checked

log = logging.getLogger(__name__)


def reset_link(token: str) -> str:
    return public_url("web.reset_page", anchor=token)


def _try_again(exc: RateLimited) -> str:
    minutes = max(1, round(exc.retry_after / 60))
    return str(
        _("Too many reset links were asked for. Try again in %(minutes)d min.", minutes=minutes)
    )


@bp.route("/forgot", methods=["GET", "POST"])
def forgot_password() -> Response:
    if request.method == "GET" or not mail_enabled():
        return _page("forgot.html", email="")
    email = request.form.get("email", "")
    try:
        address = accounts.normalise_email(email)
    except InvalidInput:
        error = _("Enter an email address like name@example.com.")
        return _page("forgot.html", email=email, error=error, status=422)
    try:
        # Per client first: a client over its allowance takes no place from the address.
        limiter("reset_client").reserve(account_limits.reset_client_key(client_address()))
        limiter("reset").reserve(account_limits.reset_key(address))
    except RateLimited as exc:
        page = _page("forgot.html", email=email, error=_try_again(exc), status=429)
        page.headers["Retry-After"] = str(exc.retry_after)
        return page
    page = _page("forgot_sent.html", email=address)
    page.call_on_close(copy_current_request_context(lambda: _mail_reset_link(address)))
    return page


def _mail_reset_link(address: str) -> None:
    """After the answer: the link made and mailed, if the address has an account."""
    try:
        session = begin_writing()
        user = session.scalar(select(User).where(User.email == address))
        if user is None:
            return
        token = resets.issue(session, user.id, now=utcnow())
        session.commit()
        message = render_mail(
            "password_reset",
            to=user.email,
            locale=user.locale,
            name=user.display_name or user.email,
            email=user.email,
            link=reset_link(token),
        )
        if send([message]):
            log.warning("the mail server refused a password reset mail for user %s", user.id)
    except MailNotSent as exc:
        log.error("a password reset mail was not sent: %s", exc.detail)
    except Exception:
        # Nobody is waiting for this answer: what went wrong goes to the log.
        log.exception("a password reset link could not be made or mailed")


@bp.get("/reset")
def reset_page() -> Response:
    return _page("reset.html", link="")


@bp.post("/reset")
def reset_password() -> Response:
    pasted = request.form.get("link", "")
    token = resets.token_from(pasted)
    now = utcnow()
    try:
        resets.user_for(db(), token, now=now)  # a dead link takes no write lock
        session = begin_writing()
        user, revoked = resets.use(
            session,
            token,
            request.form.get("new_password", ""),
            now=now,
            revoke_tokens=request.form.get("revoke_tokens") == "1",
        )
    except resets.ResetLinkNotUsable:
        return _page("reset.html", link="", dead=True, status=404)
    except accounts.SamePassword as exc:
        return _page("reset.html", link=pasted, error=message_for(exc), status=422)
    except InvalidInput:  # the new password's length, the one value of this form left
        error = _(
            "Choose a password of %(min)d to %(max)d characters.",
            min=accounts.MIN_PASSWORD_LENGTH,
            max=accounts.MAX_PASSWORD_LENGTH,
        )
        return _page("reset.html", link=pasted, error=error, status=422)
    # Every session of the person ended with the new password; this browser gets a new
    # one, in the same commit.
    start_session(user)
    if revoked:
        flash(
            ngettext(
                "Your password is changed and you are signed in. %(num)d API token was revoked.",
                "Your password is changed and you are signed in. %(num)d API tokens were revoked.",
                revoked,
            )
        )
    else:
        flash(_("Your password is changed and you are signed in."))
    return redirect(url_for("web.library"), 303)


@bp.post("/teams/<int:team_id>/members/<int:member_id>/reset-link")
@writes
@login_required
def member_reset_link(team_id: int, member_id: int) -> Response:
    """A team owner's reset link for a member, shown once on the team's page, for them to
    hand over. Anyone but the owner of a team the member is in gets the 404 page."""
    if member_id > MAX_ID:
        raise NotFound("no such member")
    session = db()
    try:
        member, token = resets.issue_for_member(
            session, team_id_checked(team_id), user_id(), member_id, now=utcnow()
        )
    except resets.AdminResetByOwner as exc:
        flash_error(exc)
        return redirect(url_for("web.team_page", team_id=team_id), 303)
    session.commit()
    return render_team(team_id, reset_for=(member.email, reset_link(token)), status=201)


def _page(template: str, *, status: int = 200, **context: object) -> Response:
    page = render_template(
        template,
        mail=mail_enabled(),
        lifetime_minutes=int(resets.LIFETIME.total_seconds() // 60),
        **context,
    )
    return Response(page, status=status, mimetype="text/html")
