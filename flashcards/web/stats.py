"""The personal stats page: card states, a year of reviews, reviews per day, due forecast,
retention, hard cards. Each part says what will appear there, and when, while it is empty."""

from __future__ import annotations

from datetime import date

from babel import Locale
from babel.core import get_global
from babel.dates import get_day_names
from flask import render_template
from flask_babel import format_date, format_decimal, format_percent, ngettext
from flask_babel import gettext as _

from ..http.request_db import db
from ..srs import stats
from ..storage.schema import utcnow
from . import bp
from .auth import login_required, user_id
from .charts import Heatmap, bar_chart, heatmap
from .i18n import locale_code, whole_number

YEAR = 365
DAILY = 90


def _day(d: object) -> str:
    return str(format_date(d, "short"))


def _year_heatmap(year: list[stats.DayCount]) -> Heatmap:
    # A language alone has no week: its likeliest country's says which day begins one
    # (Sunday for en-US and ko-KR, Monday for es-ES).
    code = locale_code()
    locale = Locale.parse(get_global("likely_subtags").get(code, code))

    def day_label(day: date, count: int) -> str:
        return str(
            ngettext(
                "%(date)s: %(answers)s answer",
                "%(date)s: %(answers)s answers",
                count,
                date=format_date(day, "full"),
                answers=whole_number(count),
            )
        )

    def legend_text(level: int, most: int) -> str:
        if level == 0:
            return str(_("No answers"))
        return str(
            ngettext(
                "Up to %(answers)s answer",
                "Up to %(answers)s answers",
                most,
                answers=whole_number(most),
            )
        )

    return heatmap(
        _("A year of reviews"),
        _("Answers on each day of the last year, one square a day, darker on busier days."),
        [(d.day, d.count) for d in year],
        first_weekday=locale.first_week_day,
        day_label=day_label,
        month_name=lambda d: str(format_date(d, "MMM")),
        weekday_names=[get_day_names("abbreviated", locale=locale)[i] for i in range(7)],
        legend_text=legend_text,
    )


@bp.get("/stats")
@login_required
def stats_page() -> str:
    uid = user_id()
    session = db()
    now = utcnow()
    by_state = stats.cards_by_state(session, uid)
    year = stats.reviews_per_day(session, uid, now=now, days=YEAR)  # one read for both charts
    daily = year[-DAILY:]
    forecast = stats.due_forecast(session, uid, now=now)
    weeks = stats.retention_by_week(session, uid, now=now)
    hardest = stats.hardest_cards(session, uid)
    total_reviews = sum(d.count for d in daily)
    retention_answers = sum(w.answers for w in weeks)

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
        focus=0,  # today, where the forecast begins
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
    if retention_answers:
        retention_empty = None
    elif any(d.count for d in year):
        retention_empty = _(
            "Retention counts only answers to cards in review: cards you have learned, which "
            "come back a day or more after you first study them. None of your answers in the "
            "last 12 weeks was to such a card yet; they will appear here, week by week."
        )
    else:
        retention_empty = _(
            "Retention counts answers to cards in review: cards you have learned, which come "
            "back a day or more after you first study them. It appears here, week by week, "
            "once you answer them."
        )
    subscribed = stats.is_subscribed(session, uid)
    return render_template(
        "stats.html",
        by_state=list(by_state.items()),
        total=sum(by_state.values()),
        subscribed=subscribed,
        heatmap=_year_heatmap(year) if any(d.count for d in year) else None,
        charts=[
            (
                reviews_chart,
                [(_day(d.day), format_decimal(d.count)) for d in daily],
                None
                if total_reviews
                else _(
                    "Each day you study, a bar shows how many answers you gave. Nothing in "
                    "the last %(days)d days yet.",
                    days=len(daily),
                ),
            ),
            (
                forecast_chart,
                [(_day(d.day), format_decimal(d.count)) for d in forecast],
                None
                if any(d.count for d in forecast)
                else _(
                    "The cards you have studied come back for review on the days shown here. "
                    "Once you study some, each of the next %(days)d days shows how many.",
                    days=len(forecast),
                ),
            ),
            (
                retention_chart,
                [
                    (
                        _day(w.week_start),
                        format_percent(w.rate) if w.rate is not None else "—",
                    )
                    for w in weeks
                ],
                retention_empty,
            ),
        ],
        hardest=hardest,
        total_reviews=total_reviews,
    )
