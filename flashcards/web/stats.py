"""The personal stats page: card states, reviews per day, due forecast, retention, hard cards."""

from __future__ import annotations

from flask import render_template
from flask_babel import format_date, format_decimal, format_percent
from flask_babel import gettext as _

from ..http.request_db import db
from ..srs import stats
from ..storage.schema import utcnow
from . import bp
from .auth import login_required, user_id
from .charts import bar_chart


def _day(d: object) -> str:
    return str(format_date(d, "short"))


@bp.get("/stats")
@login_required
def stats_page() -> str:
    uid = user_id()
    session = db()
    now = utcnow()
    by_state = stats.cards_by_state(session, uid)
    daily = stats.reviews_per_day(session, uid, now=now)
    forecast = stats.due_forecast(session, uid, now=now)
    weeks = stats.retention_by_week(session, uid, now=now)
    hardest = stats.hardest_cards(session, uid)

    reviews_chart = bar_chart(
        _("Reviews per day"),
        _("Answers on each of the last %(days)d days.", days=len(daily)),
        [_day(d.day) for d in daily],
        [d.count for d in daily],
        every=15,
    )
    forecast_chart = bar_chart(
        _("Due forecast"),
        _("Cards due on each of the next %(days)d days.", days=len(forecast)),
        [_day(d.day) for d in forecast],
        [d.count for d in forecast],
        every=7,
    )
    retention_chart = bar_chart(
        _("True retention per week"),
        _("Share of review answers that were not Again, per week."),
        [_day(w.week_start) for w in weeks],
        [w.rate or 0 for w in weeks],
        value_text=[str(format_percent(w.rate)) if w.rate is not None else "—" for w in weeks],
        maximum=1.0,
        tick_text=[str(format_percent(v)) for v in (0, 0.5, 1)],
        every=3,
    )
    return render_template(
        "stats.html",
        by_state=list(by_state.items()),
        total=sum(by_state.values()),
        charts=[
            (reviews_chart, [(_day(d.day), format_decimal(d.count)) for d in daily]),
            (forecast_chart, [(_day(d.day), format_decimal(d.count)) for d in forecast]),
            (
                retention_chart,
                [
                    (
                        _day(w.week_start),
                        format_percent(w.rate) if w.rate is not None else "—",
                    )
                    for w in weeks
                ],
            ),
        ],
        hardest=hardest,
        total_reviews=sum(d.count for d in daily),
    )
