"""Bodies of the personal FSRS endpoints (`fsrs.py`)."""

from __future__ import annotations

from datetime import date

from pydantic import Field

from ..optimizer import reschedule, retention
from ..optimizer.fit import DEFAULTS
from ..optimizer.store import InForce
from ..storage.models import FsrsParameterSet
from .models import Reply, Timestamp


class FsrsScores(Reply):
    """How well parameters predicted held-out answers: lower is better for both."""

    log_loss: float = Field(description="Mean log loss of the predicted recall.")
    rmse_bins: float = Field(description="RMSE of the predicted recall, binned as Anki bins it.")


class FsrsParameterSetReply(Reply):
    """One fit of the caller's parameters, scored on the later answers it did not train on."""

    id: int
    parameters: list[float] = Field(description="The 21 FSRS-6 parameters fitted.")
    created_at: Timestamp
    answers: int = Field(description="Answers it was fitted and judged on.")
    cards: int
    scores: FsrsScores = Field(description="This set's, on the held-out answers.")
    previous_scores: FsrsScores = Field(
        description="Those of the parameters in force when it was fitted, on the same answers."
    )
    default_scores: FsrsScores = Field(description="The defaults', on the same answers.")
    adopted: bool = Field(description="Adopted: it predicted better than the parameters in force.")
    reverted: bool = Field(description="Adopted, and later reverted.")

    @classmethod
    def of(cls, row: FsrsParameterSet) -> FsrsParameterSetReply:
        return cls(
            id=row.id,
            parameters=list(row.parameters),
            created_at=row.created_at,
            answers=row.answers,
            cards=row.cards,
            scores=FsrsScores(log_loss=row.log_loss, rmse_bins=row.rmse_bins),
            previous_scores=FsrsScores(
                log_loss=row.previous_log_loss, rmse_bins=row.previous_rmse_bins
            ),
            default_scores=FsrsScores(
                log_loss=row.default_log_loss, rmse_bins=row.default_rmse_bins
            ),
            adopted=row.adopted,
            reverted=row.reverted_at is not None,
        )


class TeamDeckParameters(Reply):
    """A team deck the caller studies, with parameters fitted to all its members' answers."""

    deck: str = Field(description="The deck's slug.")
    parameters: list[float]
    in_force: bool = Field(
        description="Its cards are scheduled with them for the caller, who has no personal "
        "parameters yet (their own take over once fitted and better)."
    )


class FsrsOverview(Reply):
    """The caller's FSRS parameters in force, where they came from, and every fit."""

    parameters: list[float] = Field(description="The parameters the scheduler uses now.")
    personal: bool = Field(description="Personal parameters; false: the defaults.")
    in_force_set_id: int | None = Field(description="The fit they came from, if any.")
    scores: FsrsScores | None = Field(
        description="Those of the parameters in force when they were adopted, on that fit's "
        "held-out answers; null for the defaults."
    )
    default_scores: FsrsScores | None = Field(
        description="The defaults' on the same answers; null for the defaults."
    )
    optimizer_available: bool = Field(
        description="Whether this server can fit parameters (its optional optimizer is installed)."
    )
    history: list[FsrsParameterSetReply] = Field(description="Every fit, newest first.")
    team_decks: list[TeamDeckParameters] = Field(
        description="Team decks the caller studies that have parameters of their own."
    )

    @classmethod
    def of(cls, state: InForce, *, optimizer_available: bool) -> FsrsOverview:
        current = state.set
        return cls(
            parameters=list(state.parameters),
            personal=state.parameters != DEFAULTS,
            in_force_set_id=current.id if current is not None else None,
            scores=FsrsScores(log_loss=current.log_loss, rmse_bins=current.rmse_bins)
            if current is not None
            else None,
            default_scores=FsrsScores(
                log_loss=current.default_log_loss, rmse_bins=current.default_rmse_bins
            )
            if current is not None
            else None,
            optimizer_available=optimizer_available,
            history=[FsrsParameterSetReply.of(row) for row in state.history],
            team_decks=[
                TeamDeckParameters(
                    deck=deck.slug,
                    parameters=list(deck.parameters),
                    in_force=deck.in_force,
                )
                for deck in state.team_decks
            ],
        )


class WorkloadDay(Reply):
    """One study day's due cards (today's with the overdue ones)."""

    day: date = Field(description="The study day, in the caller's timezone and day start.")
    before: int = Field(description="Cards due that day as scheduled now.")
    after: int = Field(description="Cards due that day once rescheduled.")


class ReschedulePlan(Reply):
    """What rescheduling the caller's review cards with the parameters in force does."""

    review_cards: int = Field(description="Review cards looked at.")
    moved: int = Field(description="Review cards whose due date changes.")
    applied: bool = Field(description="False for a preview; true once written.")
    days: list[WorkloadDay] = Field(description="The next 30 study days, from today.")

    @classmethod
    def of(cls, planned: reschedule.Plan, *, applied: bool) -> ReschedulePlan:
        return cls(
            review_cards=planned.review_cards,
            moved=planned.moved,
            applied=applied,
            days=[WorkloadDay(day=d.day, before=d.before, after=d.after) for d in planned.days],
        )


class RetentionRow(Reply):
    retention: float = Field(description="A desired retention.")
    reviews_per_day: float = Field(description="Simulated reviews per day, averaged over a year.")
    remembered: float = Field(description="Share of the introduced cards remembered at its end.")


class RetentionOverview(Reply):
    """The caller's collection simulated for a year at each desired retention."""

    desired_retention: float = Field(description="The caller's own setting.")
    suggested: float = Field(
        description="The retention at which a card kept in memory costs the least review time."
    )
    too_high: bool = Field(
        description="The caller's setting is above 0.97, where the workload explodes."
    )
    cards: int = Field(description="Live cards of the decks the caller studies.")
    new_per_day: int
    rows: list[RetentionRow] = Field(description="From 0.70 to 0.97, by 0.01.")

    @classmethod
    def of(cls, found: retention.RetentionView) -> RetentionOverview:
        return cls(
            desired_retention=found.collection.desired_retention,
            suggested=found.suggested,
            too_high=found.too_high,
            cards=found.collection.cards,
            new_per_day=found.collection.new_per_day,
            rows=[
                RetentionRow(
                    retention=p.retention,
                    reviews_per_day=p.reviews_per_day,
                    remembered=p.remembered,
                )
                for p in found.points
            ],
        )
