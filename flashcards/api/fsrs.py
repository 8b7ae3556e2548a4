"""The caller's personal FSRS parameters: GET /api/v1/me/fsrs, POST .../optimize, .../revert,
and rescheduling with them: GET (preview) and POST (apply) .../reschedule."""

from __future__ import annotations

from flask import Response

from ..http.request_db import db, write_transaction, writes
from ..http.request_policies import reserve_fit
from ..optimizer import reschedule, retention, store
from ..optimizer.fit import optimizer_available
from ..storage.retry import with_retries
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .models import reply
from .models_fsrs import FsrsOverview, FsrsParameterSetReply, ReschedulePlan, RetentionOverview
from .openapi import Answer, documented


def _overview(user_id: int) -> FsrsOverview:
    state = store.in_force(db(), user_id)
    return FsrsOverview.of(state, optimizer_available=optimizer_available())


@bp.get("/me/fsrs")
@documented(
    "getFsrs",
    "The caller's FSRS parameters in force, their scores next to the defaults', and every fit.",
    {200: Answer("The parameters in force and the history of fits.", FsrsOverview)},
)
def get_fsrs() -> Response:
    return reply(_overview(current_user_id()))


@bp.post("/me/fsrs/optimize")
@documented(
    "optimizeFsrs",
    "Fit the caller's FSRS parameters to their review history.",
    {
        200: Answer(
            "The fit, recorded; `adopted` says whether it is now in force (it is only when it "
            "predicts the later answers it did not train on better than the parameters in "
            "force).",
            FsrsParameterSetReply,
        )
    },
    409,
    429,
    description="409 when the history is too short to fit (the detail says how much is "
    "needed); 429 with Retry-After past the fits an account may ask for per hour "
    "(FLASHCARDS_FITS_PER_HOUR); 503 when this server has no optimizer installed (the detail "
    "says so).",
)
def optimize_fsrs() -> Response:
    user_id = current_user_id()
    reserve_fit(user_id)
    # Read, fit outside any transaction, then one short write (see `store.optimize`).
    fitted = store.optimize(db(), write_transaction, user_id, now=utcnow())
    body = FsrsParameterSetReply.of(fitted)
    return reply(body)


@bp.post("/me/fsrs/revert")
@documented(
    "revertFsrs",
    "Return to the parameters in force before the current ones (the defaults at the start).",
    {200: Answer("The parameters now in force and the history of fits.", FsrsOverview)},
    409,
    description="409 when the defaults are in force already.",
)
@writes
def revert_fsrs() -> Response:
    user_id = current_user_id()
    session = db()
    state = store.revert(session, user_id, now=utcnow())
    body = FsrsOverview.of(state, optimizer_available=optimizer_available())
    session.commit()
    return reply(body)


def _plan(user_id: int) -> reschedule.Plan:
    session = db()
    planned = reschedule.plan(session, user_id, now=utcnow())
    session.rollback()  # the read is over: no snapshot kept while the answer is built
    return planned


@bp.get("/me/fsrs/reschedule")
@documented(
    "previewFsrsReschedule",
    "How rescheduling the caller's review cards with the parameters in force would change "
    "the next 30 days' workload.",
    {200: Answer("Due cards per study day, before and after; nothing written.", ReschedulePlan)},
)
def preview_reschedule() -> Response:
    return reply(ReschedulePlan.of(_plan(current_user_id()), applied=False))


@bp.post("/me/fsrs/reschedule")
@documented(
    "applyFsrsReschedule",
    "Reschedule the caller's review cards with the parameters in force, in one transaction.",
    {200: Answer("What was written: the same numbers the preview gave.", ReschedulePlan)},
    description="Each card's memory state is replayed from its review log with the "
    "parameters in force, and its due date set from it at its deck's desired retention, as "
    "Anki's reschedule does. No review-log entry is written. An answer given meanwhile "
    "makes the write start again from a new plan.",
)
def apply_reschedule() -> Response:
    user_id = current_user_id()

    def attempt() -> reschedule.Plan:
        planned = _plan(user_id)
        with write_transaction() as session:
            reschedule.apply(session, planned)
        return planned

    return reply(ReschedulePlan.of(with_retries(attempt), applied=True))


@bp.get("/me/fsrs/retention")
@documented(
    "getFsrsRetention",
    "The caller's workload and share remembered at each desired retention from 0.70 to 0.97, "
    "simulated from their parameters, with a suggested value.",
    {200: Answer("A year of the caller's collection simulated per retention.", RetentionOverview)},
    description="503 when this server has no optimizer installed (its simulator is part of it).",
)
def get_retention() -> Response:
    session = db()
    found = retention.collection(session, current_user_id())
    session.rollback()  # the simulation holds nothing open
    return reply(RetentionOverview.of(retention.view(found)))
