"""Team pages: my teams, a team's page (members, roles, invitation links, renaming and
deleting). Joining by link is `join`.

Thin over flashcards.teams, which decides who may do what: someone outside a team gets the
404 page, a member without the role the 403 page. The pages only hide what a role cannot do.
"""

from __future__ import annotations

from datetime import timedelta

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..errors import (
    AlreadyOwner,
    InvalidInput,
    InvalidLabel,
    NotFound,
    OwnerCannotLeave,
    OwnerRoleByTransferOnly,
    RemovingSelf,
)
from ..http.request_db import begin_writing, db, write_transaction, writes
from ..people.names import looks_like_another
from ..storage.schema import MAX_ID, utcnow
from ..teams import assignments, invitations, membership, pacing, team_decks
from ..teams.roles import LEADS, MANAGER, MEMBER, OWNER
from ..teams.roles import membership as role_check
from . import bp, invite_mail
from .auth import current_user, login_required, user_id
from .error_table import flash_error
from .i18n import locale_code
from .join import invitation_link
from .mailing import mail_enabled

LIFETIMES = (1, 7, 30, 90)  # days an invitation link may last, as offered in the form


def team_id_checked(team_id: int) -> int:
    # Larger ids exist nowhere, and PostgreSQL would refuse them as out of range (a 500).
    if team_id > MAX_ID:
        raise NotFound(f"no team {team_id}")
    return team_id


def role_names() -> dict[str, str]:
    return {OWNER: _("Owner"), MANAGER: _("Manager"), MEMBER: _("Member")}


def status_names() -> dict[str, str]:
    return {
        "on_track": _("On track"),
        "behind": _("Behind"),
        "done": _("Done"),
        "no_due_date": _("No due date"),
    }


def _back(team_id: int) -> Response:
    return redirect(url_for("web.team_page", team_id=team_id), 303)


@bp.get("/teams")
@login_required
def teams_page() -> str:
    return render_template(
        "teams.html", teams=membership.teams_of(db(), user_id()), roles=role_names()
    )


@bp.post("/teams")
@writes
@login_required
def create_team() -> Response:
    session = db()
    try:
        team = membership.create_team(
            session, user_id(), request.form.get("name", ""), now=utcnow()
        )
    except InvalidInput:
        flash(_("Give the team a name of at most 100 characters."), "error")
        return redirect(url_for("web.teams_page"), 303)
    session.commit()
    flash(_("Team created. Invite people with a link."))
    return _back(team.id)


def render_team(
    team_id: int,
    *,
    new_link: str | None = None,
    reset_for: tuple[str, str] | None = None,
    status: int = 200,
) -> Response:
    """The team's page; `new_link` an invitation link made by this request, `reset_for` a
    password reset link (the member's email and the link), each shown this once."""
    uid = user_id()
    session = db()
    team = membership.get_team(session, team_id_checked(team_id), uid)
    now = utcnow()
    lead = team.role in LEADS
    members = membership.list_members(session, team.id, uid) if lead else []
    links = invitations.list_invitations(session, team.id, uid) if lead else []
    removed = membership.list_removed(session, team.id, uid) if lead else []
    page = render_template(
        "team.html",
        team=team,
        lead=lead,
        members=members,
        removed=removed,
        lookalikes={m.user_id for m in members if looks_like_another(m.display_name, m.email)},
        links=[(i, invitations.invitation_state(i, now)) for i in links],
        assignments=assignments.list_assignments(session, team.id, uid, now=now, refresh=False),
        assignable=assignments.assignable_decks(session, team.id, locale_code()) if lead else [],
        new_link=new_link,
        reset_for=reset_for,
        mail=mail_enabled(),
        max_invite_mails=invite_mail.MAX_INVITE_MAILS,
        roles=role_names(),
        statuses=status_names(),
        lifetimes=LIFETIMES,
        max_label=invitations.MAX_LABEL,
        me=uid,
    )
    return Response(page, status=status, mimetype="text/html")


@bp.get("/teams/<int:team_id>")
@login_required
def team_page(team_id: int) -> Response:
    # Today's pace is shown as the study queue will use it (a short write when it changed).
    pacing.keep_pacing_current(db(), user_id(), now=utcnow(), write=write_transaction)
    return render_team(team_id)


@bp.post("/teams/<int:team_id>/invitations")
@login_required
def create_invitation(team_id: int) -> Response:
    to: list[str] = []
    if mail_enabled():
        try:
            to = invite_mail.addresses(request.form.get("emails", ""))
        except InvalidInput as exc:
            flash(invite_mail.address_error(exc), "error")
            return _back(team_id)
    session = begin_writing()
    try:
        days = int(request.form.get("days", "7"))
        raw_uses = request.form.get("max_uses", "").strip()
        max_uses = int(raw_uses) if raw_uses else None
        new = invitations.create_invitation(
            session,
            team_id_checked(team_id),
            user_id(),
            now=utcnow(),
            lifetime=timedelta(days=days),
            max_uses=max_uses,
            label=request.form.get("label", ""),
        )
    except InvalidLabel:
        flash(
            _(
                "A label may have at most %(max)d characters and no control characters.",
                max=invitations.MAX_LABEL,
            ),
            "error",
        )
        return _back(team_id)
    except (ValueError, OverflowError, InvalidInput):  # Overflow: days beyond timedelta's
        flash(_("A link lasts 1 to 90 days and may be used 1 to 10,000 times."), "error")
        return _back(team_id)
    lead = current_user()
    assert lead is not None
    team_name = membership.get_team(session, team_id, lead.id).name
    session.commit()
    link = invitation_link(new.token)
    if to:
        # Nothing read between the commit and the mail limit's reservation: on SQLite a
        # read in this (writing) session would hold the write lock the reservation needs.
        invite_mail.mail_invitation(
            lead.id,
            to,
            token=new.token,
            team=team_name,
            lead=lead.display_name or lead.email,
            days=days,
            language=invite_mail.mail_language(request.form.get("mail_locale")),
        )
    # The token is shown this once (only its hash is kept), so the page is rendered, not
    # redirected to.
    return render_team(team_id, new_link=link, status=201)


@bp.post("/teams/<int:team_id>/invitations/<int:invitation_id>/revoke")
@writes
@login_required
def revoke_invitation(team_id: int, invitation_id: int) -> Response:
    session = db()
    if invitation_id > MAX_ID:
        raise NotFound("no such invitation")
    invitations.revoke_invitation(
        session, team_id_checked(team_id), user_id(), invitation_id, now=utcnow()
    )
    session.commit()
    flash(_("The link is revoked: nobody can join with it any more."))
    return _back(team_id)


@bp.post("/teams/<int:team_id>/leave")
@writes
@login_required
def leave(team_id: int) -> Response:
    session = db()
    try:
        membership.leave_team(session, team_id_checked(team_id), user_id(), now=utcnow())
    except OwnerCannotLeave as exc:
        flash_error(exc)
        return _back(team_id)
    session.commit()
    flash(_("You left the team. Your own progress is kept."))
    return redirect(url_for("web.teams_page"), 303)


@bp.post("/teams/<int:team_id>/members/<int:member_id>/remove")
@writes
@login_required
def remove_member(team_id: int, member_id: int) -> Response:
    session = db()
    try:
        membership.remove_member(
            session, team_id_checked(team_id), user_id(), _member(member_id), now=utcnow()
        )
    except RemovingSelf as exc:
        flash_error(exc)
        return _back(team_id)
    session.commit()
    flash(_("The member was removed. Their own progress is kept."))
    return _back(team_id)


@bp.post("/teams/<int:team_id>/removals/<int:member_id>/allow")
@writes
@login_required
def allow_back(team_id: int, member_id: int) -> Response:
    session = db()
    membership.allow_back(session, team_id_checked(team_id), user_id(), _member(member_id))
    session.commit()
    flash(_("They can join again with an invitation link."))
    return _back(team_id)


@bp.post("/teams/<int:team_id>/members/<int:member_id>/role")
@writes
@login_required
def change_role(team_id: int, member_id: int) -> Response:
    session = db()
    try:
        membership.change_role(
            session,
            team_id_checked(team_id),
            user_id(),
            _member(member_id),
            request.form.get("role", ""),
        )
    except (InvalidInput, OwnerRoleByTransferOnly):
        # The form offers manager and member: any other role sent is the owner's.
        flash_error(OwnerRoleByTransferOnly)
        return _back(team_id)
    session.commit()
    flash(_("Role changed."))
    return _back(team_id)


@bp.post("/teams/<int:team_id>/members/<int:member_id>/owner")
@writes
@login_required
def transfer_ownership(team_id: int, member_id: int) -> Response:
    session = db()
    try:
        membership.transfer_ownership(
            session, team_id_checked(team_id), user_id(), _member(member_id)
        )
    except AlreadyOwner as exc:
        flash_error(exc)
        return _back(team_id)
    session.commit()
    flash(_("Ownership handed over. You are now a manager of this team."))
    return _back(team_id)


def _member(member_id: int) -> int:
    if member_id > MAX_ID:
        raise NotFound("no such member")
    return member_id


@bp.post("/teams/<int:team_id>/rename")
@writes
@login_required
def rename_team(team_id: int) -> Response:
    session = db()
    try:
        membership.rename_team(
            session, team_id_checked(team_id), user_id(), request.form.get("name", "")
        )
    except InvalidInput:
        flash(_("Give the team a name of at most 100 characters."), "error")
        return _back(team_id)
    session.commit()
    flash(_("Team renamed."))
    return _back(team_id)


@bp.get("/teams/<int:team_id>/delete")
@login_required
def delete_team_page(team_id: int) -> str:
    """The confirmation asked before a team is deleted (a page: it works without script)."""
    uid = user_id()
    session = db()
    role_check(session, team_id_checked(team_id), uid, OWNER)
    team = membership.get_team(session, team_id, uid)
    return render_template(
        "team_delete.html",
        team=team,
        members=len(membership.list_members(session, team.id, uid)),
        decks=len(team_decks.list_team_decks(session, team.id, uid)),
    )


@bp.post("/teams/<int:team_id>/delete")
@writes
@login_required
def delete_team(team_id: int) -> Response:
    session = db()
    membership.delete_team(session, team_id_checked(team_id), user_id(), now=utcnow())
    session.commit()
    flash(_("The team is deleted. Everyone keeps their progress on the shipped decks."))
    return redirect(url_for("web.teams_page"), 303)
