"""`flashcards fsrs ...`: fit a person's (or a team deck's) FSRS parameters, or go back to
a person's previous ones."""

from __future__ import annotations

import click
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from ..errors import NotFound
from ..optimizer import auto, store, team
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
@click.option("--user", "email", help="The person's email.")
@click.option(
    "--due",
    is_flag=True,
    help="Everyone due for a fit (FLASHCARDS_FSRS_AUTO_MIN_*): the command for cron.",
)
@click.option("--team-deck", "slug", help="A team deck: fit it to all its members' answers.")
def optimize(email: str | None, due: bool, slug: str | None) -> None:
    """Fit one person's parameters, everyone due, or a team deck's; adopt a fit only when it
    predicts better."""
    if [email is not None, due, slug is not None].count(True) != 1:
        raise click.UsageError("give one of --user EMAIL, --due or --team-deck SLUG")
    if due:
        _optimize_due()
        return
    if slug is not None:
        _optimize_team_deck(slug)
        return
    assert email is not None
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


def _optimize_team_deck(slug: str) -> None:
    with context.open_engine() as engine:
        with Session(engine) as reading:
            try:
                deck = team.team_deck(reading, slug)
            except NotFound as exc:
                raise click.ClickException(str(exc)) from None
            history = team.read_history(reading, deck)
        click.echo(
            f"fitting on {len(history.items)} answers of {history.members} members "
            f"on {len({item.card_id for item in history.items})} cards"
        )
        outcome = team.fit(history)
        with storage_engine.transaction(engine) as session:
            report = _outcome(team.record(session, history, outcome, now=context.now()))
        click.echo(report)


def _optimize_due() -> None:
    flask_app = context.app()
    thresholds = auto.Thresholds.from_config(flask_app.config)
    engine: Engine = flask_app.extensions["flashcards.engine"]
    adopted = kept = skipped = 0
    try:
        # Team decks first: a member's own fit is then judged against their team's new set.
        decks = _optimize_due_team_decks(engine, thresholds)
        for result in auto.fit_due(engine, thresholds, now=context.now):
            person = result.due
            new = f"{person.new_answers} new answers on {person.new_cards} cards"
            if result.fitted is None:
                skipped += 1
                click.echo(f"{person.email}: skipped ({new}): {result.skipped}")
                continue
            fitted = result.fitted
            adopted += fitted.adopted
            kept += not fitted.adopted
            verdict = "adopted" if fitted.adopted else "kept the parameters in force"
            click.echo(
                f"{person.email}: {verdict} ({new}); "
                f"new {_scores(fitted.log_loss, fitted.rmse_bins)}; "
                f"previous {_scores(fitted.previous_log_loss, fitted.previous_rmse_bins)}"
            )
    finally:
        engine.dispose()  # a pooled PostgreSQL connection must not outlive the command
    click.echo(
        f"{adopted + kept + skipped} due: {adopted} adopted, {kept} kept, {skipped} skipped "
        f"(due: {thresholds.answers} new answers on {thresholds.cards} cards, "
        f"last fit {thresholds.days} days ago or more)"
    )
    if decks:
        click.echo(decks)


def _optimize_due_team_decks(engine: Engine, thresholds: auto.Thresholds) -> str | None:
    """Fit the team decks due, a line each; the summary line, or None when none was due."""
    counts = {"adopted": 0, "kept": 0, "skipped": 0}
    for result in auto.fit_due_team_decks(engine, thresholds, now=context.now):
        deck = result.due
        new = f"{deck.new_answers} new answers on {deck.new_cards} cards"
        if result.fitted is None:
            counts["skipped"] += 1
            click.echo(f"team deck {deck.slug}: skipped ({new}): {result.skipped}")
            continue
        fitted = result.fitted
        counts["adopted" if fitted.adopted else "kept"] += 1
        verdict = "adopted" if fitted.adopted else "kept the parameters in force"
        click.echo(
            f"team deck {deck.slug}: {verdict} ({new}); "
            f"new {_scores(fitted.log_loss, fitted.rmse_bins)}; "
            f"previous {_scores(fitted.previous_log_loss, fitted.previous_rmse_bins)}"
        )
    total = sum(counts.values())
    if not total:
        return None
    return (
        f"{total} team decks due: {counts['adopted']} adopted, {counts['kept']} kept, "
        f"{counts['skipped']} skipped"
    )


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
