"""Assigning decks to a team, and the lead's dashboard (members' progress, hardest questions).

The dashboard is for owners and managers only; flashcards.teams.progress refuses anyone else
(403 for a member, 404 outside the team) before a number is read.
"""

from __future__ import annotations

from datetime import date

from flask import flash, redirect, render_template, request, url_for
from flask_babel import format_decimal, format_percent
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..errors import DueDateInPast
from ..http.request_db import db, writes
from ..storage.schema import utcnow
from ..teams import assignments, membership, progress
from . import bp
from .auth import login_required, user_id
from .charts import bar_chart
from .i18n import locale_code
from .teams import role_names, status_names, team_id_checked

HARDEST_LIMIT = 20


@bp.post("/teams/<int:team_id>/assignments")
@writes
@login_required
def assign_deck(team_id: int) -> Response:
    session = db()
    raw_due = request.form.get("due_date", "").strip()
    try:
        due = date.fromisoformat(raw_due) if raw_due else None
    except ValueError:
        flash(_("Enter the due date as a date, for example 2026-05-31."), "error")
        return redirect(url_for("web.team_page", team_id=team_id), 303)
    try:
        _assignment, created = assignments.assign(
            session,
            team_id_checked(team_id),
            user_id(),
            request.form.get("deck", ""),
            due,
            now=utcnow(),
        )
    except DueDateInPast:
        session.rollback()
        flash(_("A due date cannot be in the past: choose today or a later day."), "error")
        return redirect(url_for("web.team_page", team_id=team_id), 303)
    session.commit()
    if created:
        flash(_("Deck assigned. Every member now studies it."))
    else:
        flash(_("Due date updated."))
    return redirect(url_for("web.team_page", team_id=team_id), 303)


@bp.post("/teams/<int:team_id>/assignments/<slug>/remove")
@writes
@login_required
def unassign_deck(team_id: int, slug: str) -> Response:
    session = db()
    assignments.unassign(session, team_id_checked(team_id), user_id(), slug, now=utcnow())
    session.commit()
    flash(_("The deck is no longer assigned. Members keep their progress."))
    return redirect(url_for("web.team_page", team_id=team_id), 303)


@bp.get("/teams/<int:team_id>/dashboard")
@login_required
def team_dashboard(team_id: int) -> str:
    uid = user_id()
    session = db()
    team = membership.get_team(session, team_id_checked(team_id), uid)
    locale = locale_code()
    rows = progress.dashboard(session, team.id, uid, now=utcnow(), locale=locale)
    hardest = progress.hardest(session, team.id, uid, limit=HARDEST_LIMIT, locale=locale)
    leeched = progress.hardest(
        session, team.id, uid, limit=HARDEST_LIMIT, locale=locale, by_leeches=True
    )
    names = [r.display_name or r.email for r in rows]
    shares = [r.introduced / r.total if r.total else 0.0 for r in rows]
    progress_chart = bar_chart(
        _("Cards introduced per member"),
        _("Share of the team's cards each member has started studying."),
        names,
        shares,
        value_text=[str(format_percent(s)) for s in shares],
        maximum=1.0,
        tick_text=[str(format_percent(v)) for v in (0, 0.5, 1)],
        # Members are in no time order: the first takes the tab stop, and on a phone the
        # chart opens at its start (`BarChart.opens_at_end`).
        focus=0,
    )
    answers_chart = bar_chart(
        _("Answers in the last 7 days"),
        _("How many answers each member gave in the last 7 days."),
        names,
        [r.answers_7d for r in rows],
        focus=0,
    )
    charts = [
        (progress_chart, [(n, format_percent(s)) for n, s in zip(names, shares, strict=True)]),
        (
            answers_chart,
            [(n, format_decimal(r.answers_7d)) for n, r in zip(names, rows, strict=True)],
        ),
    ]
    return render_template(
        "team_dashboard.html",
        team=team,
        rows=rows,
        hardest=hardest,
        leeched=leeched,
        charts=charts,
        roles=role_names(),
        statuses=status_names(),
    )


@bp.get("/teams/<int:team_id>/dashboard.csv")
@login_required
def team_dashboard_csv(team_id: int) -> Response:
    uid = user_id()
    session = db()
    team = team_id_checked(team_id)
    rows = progress.dashboard(session, team, uid, now=utcnow())
    return Response(
        progress.members_csv(rows),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="team-{team}-members.csv"'},
    )
