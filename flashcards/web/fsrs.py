"""Personal FSRS on the settings page: the parameters in force, every fit, "Optimize now"
and "Go back to the previous parameters"; and rescheduling with them, previewed on a page of
its own (the preview replays the whole review log, which the settings page should not wait on).

The fit and the revert are `optimizer.store`'s, as the API's (`api/fsrs.py`) are; this
module only words their outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass

from babel.numbers import format_decimal
from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from ..errors import NotEnoughHistory, NothingToRevert, OptimizerUnavailable
from ..http.request_db import db, write_transaction, writes
from ..http.request_policies import reserve_fit
from ..optimizer import reschedule, retention, store
from ..optimizer.fit import DEFAULTS, MINIMUM, HistoryMinimum
from ..people.ratelimit import RateLimited
from ..storage.models import FsrsParameterSet, SchedulerSettings
from ..storage.retry import with_retries
from ..storage.schema import utcnow
from . import bp
from .auth import login_required, user_id
from .i18n import locale_code, when, whole_number


@dataclass(frozen=True)
class FsrsSection:
    """What the settings page shows of the person's parameters."""

    state: store.InForce
    unavailable: str | None  # why this server cannot fit, translated; None: it can
    minimum: HistoryMinimum
    desired_retention: float

    high_retention = retention.HIGH_RETENTION

    @property
    def retention_too_high(self) -> bool:
        return self.desired_retention > retention.HIGH_RETENTION

    @property
    def current(self) -> FsrsParameterSet | None:
        return self.state.set

    @property
    def personal(self) -> bool:
        """Parameters not the defaults, whether or not a fit here is their source."""
        return self.state.parameters != DEFAULTS

    def status(self, row: FsrsParameterSet) -> str:
        if self.current is not None and row.id == self.current.id:
            return str(_("In force"))
        if row.adopted and row.reverted_at is not None:
            return str(_("Adopted, later reverted"))
        if row.adopted:
            return str(_("Adopted, later replaced"))
        return str(_("Not adopted"))


def section(session: Session, uid: int) -> FsrsSection:
    settings = session.get_one(SchedulerSettings, uid)
    return FsrsSection(
        store.in_force(session, uid), _unavailable_reason(), MINIMUM, settings.desired_retention
    )


def _unavailable_reason() -> str | None:
    why = store.unavailable()
    if why is store.Unavailable.SWITCHED_OFF:
        return str(
            _(
                "Optimization is unavailable on this server: its administrator has switched "
                "it off (FLASHCARDS_OPTIMIZER=off)."
            )
        )
    if why is store.Unavailable.NOT_INSTALLED:
        return str(
            _(
                "Optimization is unavailable on this server: its optional optimizer package "
                "(flashcards[optimizer]) is not installed."
            )
        )
    return None


@bp.app_template_filter("score")
def score(value: float) -> str:
    """A log loss or RMSE to four decimals, with the page's decimal mark ("0,3521")."""
    return str(format_decimal(value, "0.0000", locale=locale_code()))


def _back_to_settings() -> Response:
    return redirect(url_for("web.settings", _anchor="fsrs"))


@bp.post("/settings/fsrs/optimize")
@login_required
def optimize_fsrs() -> Response:
    uid = user_id()
    try:
        # Counted like the API's: a fit costs up to a second of a worker's CPU.
        reserve_fit(uid)
        fitted = store.optimize(db(), write_transaction, uid, now=utcnow())
    except RateLimited as exc:
        minutes = max(1, round(exc.retry_after / 60))
        flash(
            _(
                "You have asked for too many fits. Try again in %(minutes)d min.",
                minutes=minutes,
            ),
            "error",
        )
    except NotEnoughHistory:
        flash(
            _(
                "Not enough history to fit your parameters yet: a fit needs at least "
                "%(answers)s answers on %(cards)s cards, each on a later day than the card’s "
                "previous answer.",
                answers=whole_number(MINIMUM.answers),
                cards=whole_number(MINIMUM.cards),
            ),
            "error",
        )
    except OptimizerUnavailable:
        flash(_unavailable_reason() or _("Optimization is unavailable on this server."), "error")
    else:
        if fitted.adopted:
            flash(
                _(
                    "New parameters adopted: they predict your later answers better (log loss "
                    "%(new)s instead of %(old)s).",
                    new=score(fitted.log_loss),
                    old=score(fitted.previous_log_loss),
                )
            )
        else:
            flash(
                _(
                    "The parameters in force were kept: the new ones do not predict your "
                    "later answers better (log loss %(new)s, against %(old)s).",
                    new=score(fitted.log_loss),
                    old=score(fitted.previous_log_loss),
                )
            )
    return _back_to_settings()


@bp.post("/settings/fsrs/revert")
@writes
@login_required
def revert_fsrs() -> Response:
    session = db()
    try:
        state = store.revert(session, user_id(), now=utcnow())
    except NothingToRevert:
        flash(_("The default parameters are in force already: there is nothing to go back to."))
        return _back_to_settings()
    session.commit()
    if state.set is None:
        flash(_("Back to the default parameters."))
    else:
        flash(_("Back to the parameters fitted on %(date)s.", date=when(state.set.created_at)))
    return _back_to_settings()


def _reschedule_plan(uid: int) -> reschedule.Plan:
    session = db()
    planned = reschedule.plan(session, uid, now=utcnow())
    session.rollback()  # the read is over: nothing held while the page is built
    return planned


@bp.get("/settings/fsrs/reschedule")
@login_required
def reschedule_preview() -> str:
    planned = _reschedule_plan(user_id())
    return render_template("fsrs_reschedule.html", plan=planned)


@bp.post("/settings/fsrs/reschedule")
@login_required
def reschedule_apply() -> Response:
    uid = user_id()

    def attempt() -> reschedule.Plan:
        planned = _reschedule_plan(uid)
        with write_transaction() as session:
            reschedule.apply(session, planned)
        return planned

    planned = with_retries(attempt)
    flash(
        ngettext(
            "%(num)d review card rescheduled with the parameters in force.",
            "%(num)d review cards rescheduled with the parameters in force.",
            planned.moved,
        )
    )
    return _back_to_settings()


@bp.get("/settings/fsrs/retention")
@login_required
def retention_view() -> str:
    session = db()
    found = retention.collection(session, user_id())
    session.rollback()  # the simulation holds nothing open
    try:
        simulated: retention.RetentionView | None = retention.view(found)
    except OptimizerUnavailable:
        simulated = None
    return render_template(
        "fsrs_retention.html",
        view=simulated,
        unavailable=_unavailable_reason(),
        high=retention.HIGH_RETENTION,
    )
