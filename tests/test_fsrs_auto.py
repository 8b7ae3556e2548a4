"""The automatic trigger: who is due for a fit, and `flashcards fsrs optimize --due` for cron."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards.cli import main
from flashcards.optimizer.auto import Thresholds, due_for_fit
from flashcards.optimizer.fit import OPTIMIZER_SWITCH
from flashcards.storage.engine import transaction
from flashcards.storage.models import FsrsParameterSet, ReviewLog
from flashcards.storage.schema import utcnow

from .conftest import T0
from .factories import answer, card_ids, make_deck, make_parameter_set, make_user
from .fsrs_learner import simulate_learner

SMALL = Thresholds(answers=6, cards=3, days=7)


def _answers(session: Session, user: int, cards: list[int], count: int, *, start: datetime) -> None:
    """`count` answers, round the `cards` in turn, a minute apart from `start`."""
    for n in range(count):
        answer(session, user, cards[n % len(cards)], "good", now=start + timedelta(minutes=n))


def _fit(session: Session, user: int, created_at: datetime, end: int | None) -> None:
    """A fit kept at `created_at` whose history ended at review-log row `end`."""
    make_parameter_set(session, user, [0.3] * 21, created_at, end_log_id=end)


def _last_log_id(session: Session, user: int) -> int | None:
    return session.scalar(select(func.max(ReviewLog.id)).where(ReviewLog.user_id == user))


def _due(engine: Engine, now: datetime) -> list[str]:
    with Session(engine) as session:
        return [due.email for due in due_for_fit(session, SMALL, now=now)]


def test_the_trigger_fires_only_past_each_threshold(engine: Engine) -> None:
    now = T0 + timedelta(days=30)
    with transaction(engine) as session:
        cards = card_ids(session, make_deck(session, "auto", 6).id)
        few_answers = make_user(session, "few-answers@example.com")
        _answers(session, few_answers, cards[:3], 5, start=T0)
        few_cards = make_user(session, "few-cards@example.com")
        _answers(session, few_cards, cards[:2], 20, start=T0)
        enough = make_user(session, "enough@example.com")  # exactly at both thresholds
        _answers(session, enough, cards[:3], 6, start=T0)
        recent = make_user(session, "recent@example.com")  # plenty, but fitted 6 days ago
        _answers(session, recent, cards, 20, start=T0)
        _fit(session, recent, now - timedelta(days=6), end=0)
        refit = make_user(session, "refit@example.com")  # fitted long ago, then 5 answers
        _answers(session, refit, cards, 20, start=T0)
        _fit(session, refit, T0 + timedelta(days=1), end=_last_log_id(session, refit))
        _answers(session, refit, cards[:3], 5, start=T0 + timedelta(days=2))
    assert _due(engine, now) == ["enough@example.com"]
    assert _due(engine, now + timedelta(days=1)) == ["enough@example.com", "recent@example.com"]

    with transaction(engine) as session:
        _answers(session, few_answers, cards[:3], 1, start=T0 + timedelta(days=3))
        _answers(session, few_cards, cards[2:3], 1, start=T0 + timedelta(days=3))
        # Dated before the fit, as an Anki import would be, yet new since it: it counts.
        _answers(session, refit, cards[:3], 1, start=T0)
    assert _due(engine, now) == [
        "few-answers@example.com",
        "few-cards@example.com",
        "enough@example.com",
        "refit@example.com",
    ]


def test_a_fit_kept_without_its_history_end_counts_the_answers_dated_after_it(
    engine: Engine,
) -> None:
    with transaction(engine) as session:
        cards = card_ids(session, make_deck(session, "auto", 3).id)
        user = make_user(session, "before-0016@example.com")
        _answers(session, user, cards, 20, start=T0)
        _fit(session, user, T0 + timedelta(days=1), end=None)
        _answers(session, user, cards, 5, start=T0 + timedelta(days=2))
    assert _due(engine, T0 + timedelta(days=30)) == []
    with transaction(engine) as session:
        _answers(session, user, cards, 1, start=T0 + timedelta(days=3))
    assert _due(engine, T0 + timedelta(days=30)) == ["before-0016@example.com"]


def test_due_fits_exactly_the_due_people_once_and_too_little_history_never_stops_it(
    engine: Engine, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLASHCARDS_FSRS_AUTO_MIN_ANSWERS", "100")
    monkeypatch.setenv("FLASHCARDS_FSRS_AUTO_MIN_CARDS", "20")
    monkeypatch.setenv("FLASHCARDS_FSRS_AUTO_MIN_DAYS", "7")
    with transaction(engine) as session:
        # First in the run: due by the trigger's thresholds, too little for a fit.
        short = make_user(session, "short@example.com")
        simulate_learner(session, short, T0, days=15)
        learner = make_user(session, "learner@example.com")
        simulate_learner(session, learner, T0, days=50, seed=11)  # 452 items
        beginner = make_user(session, "beginner@example.com")  # 9 cards: not due
        simulate_learner(session, beginner, T0, days=3)
        learner_end = _last_log_id(session, learner)

    result = cli.invoke(main, ["fsrs", "optimize", "--due"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("short@example.com: skipped (")
    assert "need at least 400 answers on 50 cards" in lines[0]
    assert lines[1].startswith("learner@example.com: adopted (")
    assert "new log loss" in lines[1] and "previous log loss" in lines[1]
    assert lines[2].startswith("2 due: 1 adopted, 0 kept, 1 skipped")
    assert len(lines) == 3
    with Session(engine) as session:
        sets = list(session.scalars(select(FsrsParameterSet)))
    assert [(s.user_id, s.adopted, s.history_end_log_id) for s in sets] == [
        (learner, True, learner_end)
    ]

    again = cli.invoke(main, ["fsrs", "optimize", "--due"])
    assert again.exit_code == 0, again.output
    assert "learner@example.com" not in again.output
    assert again.output.splitlines()[-1].startswith("1 due: 0 adopted, 0 kept, 1 skipped")
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(FsrsParameterSet)) == 1
        # A week on, the learner is still not due: nothing was answered since the fit.
        later = due_for_fit(session, Thresholds(100, 20, 7), now=utcnow() + timedelta(days=8))
        assert [due.email for due in later] == ["short@example.com"]


def test_optimize_takes_either_a_person_or_due(cli: CliRunner) -> None:
    for args in ([], ["--due", "--user", "learner@example.com"]):
        result = cli.invoke(main, ["fsrs", "optimize", *args])
        assert result.exit_code == 2
        assert "give one of --user EMAIL, --due or --team-deck SLUG" in result.output


def test_due_without_the_optimizer_fails_saying_why_even_with_nobody_due(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OPTIMIZER_SWITCH, "off")
    result = cli.invoke(main, ["fsrs", "optimize", "--due"])
    assert result.exit_code == 1 and "the optimizer is switched off" in result.output
