"""`flashcards fsrs ...`: fit a person's FSRS parameters, or go back to the previous ones."""

from __future__ import annotations

import click
from sqlalchemy.orm import Session

from ..optimizer import store
from ..people import accounts
from ..storage import engine as storage_engine
from ..storage.models import FsrsParameterSet
from . import context


def _scores(log_loss: float, rmse_bins: float) -> str:
    return f"log loss {log_loss:.4f}, RMSE(bins) {rmse_bins:.4f}"


def _outcome(fitted: FsrsParameterSet) -> str:
    verdict = (
        "adopted: the new parameters predict better"
        if fitted.adopted
        else "kept the parameters in force: the new ones do not predict better"
    )
    return (
        f"{verdict}\n"
        f"  new:       {_scores(fitted.log_loss, fitted.rmse_bins)}\n"
        f"  in force:  {_scores(fitted.previous_log_loss, fitted.previous_rmse_bins)}\n"
        f"  defaults:  {_scores(fitted.default_log_loss, fitted.default_rmse_bins)}\n"
    )


@click.group("fsrs")
def fsrs_group() -> None:
    """Personal FSRS parameters: fit them to a person's history, or revert."""


@fsrs_group.command("optimize")
@click.option("--user", "email", required=True, help="The person's email.")
def optimize(email: str) -> None:
    """Fit the person's parameters; adopt them only when they predict better."""
    with context.open_engine() as engine:
        with Session(engine) as reading:
            user_id = accounts.user_by_email(reading, email).id
            history = store.read_history(reading, user_id)
        click.echo(f"fitting on {len(history.items)} answers on {history.cards} cards")
        outcome = store.fit(history)
        with storage_engine.transaction(engine) as session:
            fitted = store.record(session, history, outcome, now=context.now())
            report = _outcome(fitted)
        click.echo(report)  # once committed: "adopted" must be true when it is read


@fsrs_group.command("revert")
@click.option("--user", "email", required=True, help="The person's email.")
def revert(email: str) -> None:
    """Return to the parameters in force before the current ones."""
    with context.transaction() as session:
        user = accounts.user_by_email(session, email)
        state = store.revert(session, user.id, now=context.now())
        where = (
            f"the set fitted on {state.set.created_at:%Y-%m-%d %H:%M} UTC"
            if state.set is not None
            else "the defaults"
        )
    click.echo(f"reverted: the parameters in force are {where}")


COMMANDS = [fsrs_group]
