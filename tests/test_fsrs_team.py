"""A team deck's FSRS parameters: fitted to its members' answers, the newcomers' start."""

from __future__ import annotations

from datetime import timedelta

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from fsrs import Rating
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from flashcards.cli import main
from flashcards.errors import NotFound
from flashcards.optimizer import reschedule, store, team
from flashcards.optimizer.fit import DEFAULTS, fit, fit_and_judge, split_in_time
from flashcards.srs import queue, subscriptions
from flashcards.srs.scheduling import SchedulerConfig, fuzz_seed, review
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Deck,
    DeckFsrsParameters,
    FsrsParameterSet,
    SchedulerSettings,
    TeamMember,
)
from flashcards.teams.membership import create_team

from .conftest import T0
from .db_snapshots import built_once
from .factories import answer, card_ids, make_deck, make_token, make_user
from .fsrs_learner import simulate_learner
from .test_web_fsrs import sign_in

DAYS = 60
PER_DAY = 3
LATER = T0 + timedelta(days=DAYS + 1)


def _team(engine: Engine, learners: int = 3) -> tuple[int, int, list[int]]:
    """A team deck studied by `learners` members for DAYS days; (team, deck, members)."""
    return built_once(engine, ("fsrs-team", learners), lambda: _studied_team(engine, learners))


def _studied_team(engine: Engine, learners: int) -> tuple[int, int, list[int]]:
    with transaction(engine) as session:
        owner = make_user(session, "lead@example.com")
        team_id = create_team(session, owner, "Night class", now=T0).id
        deck = make_deck(session, "night-class-words", DAYS * PER_DAY)
        deck.owner_team_id = team_id
        members = []
        for n in range(learners):
            member = make_user(session, f"member{n}@example.com")
            session.add(TeamMember(team_id=team_id, user_id=member, role="member", joined_at=T0))
            session.flush()
            # Seeds whose held-out days the fit predicts better than the defaults do, as a
            # team of these learners' would: some draws (seed 0) happen to suit the defaults.
            simulate_learner(session, member, T0, days=DAYS, new_per_day=PER_DAY, seed=n + 3,
                             deck=deck)  # fmt: skip
            members.append(member)
        return team_id, deck.id, members


def _fit_deck(engine: Engine, deck_id: int) -> FsrsParameterSet:
    with Session(engine) as reading:
        deck = team.team_deck(reading, "night-class-words")
        assert deck.id == deck_id
        return team.optimize(reading, lambda: transaction(engine), deck, now=LATER)


def test_a_team_deck_is_fitted_to_all_its_members_answers(engine: Engine) -> None:
    _team_id, deck_id, members = _team(engine)
    with Session(engine) as session:
        history = team.read_history(session, team.team_deck(session, "night-class-words"))
        alone = store.read_history(session, members[0])
    assert history.members == 3
    assert len(history.items) > 2.5 * len(alone.items)  # everyone's answers, not one's
    fitted = _fit_deck(engine, deck_id)
    assert fitted.adopted and fitted.user_id is None and fitted.deck_id == deck_id
    assert fitted.answers == len(history.items)
    with Session(engine) as session:
        assert session.get_one(DeckFsrsParameters, deck_id).parameters == fitted.parameters
        # No member's own settings or history of fits changes: the set is the deck's.
        for member in members:
            assert session.get_one(SchedulerSettings, member).parameters is None
            assert store.in_force(session, member).history == []


def test_a_newcomer_is_scheduled_with_the_team_parameters(engine: Engine) -> None:
    team_id, deck_id, _members = _team(engine)
    fitted = _fit_deck(engine, deck_id)
    with transaction(engine) as session:
        newcomer = make_user(session, "new@example.com")
        session.add(TeamMember(team_id=team_id, user_id=newcomer, role="member", joined_at=T0))
        outsider_deck = make_deck(session, "shipped-words", 3)
        first, second = card_ids(session, deck_id)[:2], card_ids(session, outsider_deck.id)[:1]
    with transaction(engine) as session:
        subscriptions.subscribe(session, newcomer, session.get_one(Deck, deck_id), None, now=LATER)
    with Session(engine) as session:
        shown, _counts = queue.next_card(session, newcomer, now=LATER)
    # The card shown, and its four buttons' intervals, come with the team's set.
    assert shown is not None and shown.deck_id == deck_id
    assert shown.config.parameters == tuple(fitted.parameters)
    with transaction(engine) as session:
        on_team = answer(session, newcomer, first[0], "easy", now=LATER)
        elsewhere = answer(session, newcomer, second[0], "easy", now=LATER)
    with_team = review(
        SchedulerConfig(parameters=tuple(fitted.parameters)), None, Rating.Easy, LATER,
        seed=fuzz_seed(newcomer, first[0], 0),
    )  # fmt: skip
    with_defaults = review(
        SchedulerConfig(), None, Rating.Easy, LATER, seed=fuzz_seed(newcomer, second[0], 0)
    )
    assert on_team.state.stability == with_team.stability != with_defaults.stability
    assert elsewhere.state.stability == with_defaults.stability  # not a team deck: defaults
    with transaction(engine) as session:
        session.get_one(SchedulerSettings, newcomer).parameters = list(DEFAULTS)
        own = answer(session, newcomer, first[1], "easy", now=LATER)
    assert own.state.stability == with_defaults.stability  # their own set comes first


def test_a_member_moves_to_their_own_only_when_it_beats_the_team_set(engine: Engine) -> None:
    _team_id, deck_id, members = _team(engine)
    fitted = _fit_deck(engine, deck_id)
    with Session(engine) as session:
        history = store.read_history(session, members[0])
    assert history.rivals == (tuple(fitted.parameters),)
    # A rival that predicts exactly as well as the fit (the fit itself) keeps the member on it.
    train, _held_out = split_in_time(history.items)
    own = fit(train)
    assert fit_and_judge(history.items, None).adopt is True
    assert fit_and_judge(history.items, None, rivals=[own]).adopt is False
    with transaction(engine) as session:
        session.get_one(SchedulerSettings, members[0]).parameters = list(own)
    with Session(engine) as session:
        assert store.read_history(session, members[0]).rivals == ()


def test_only_a_team_deck_can_be_fitted_as_one(engine: Engine) -> None:
    with transaction(engine) as session:
        make_deck(session, "shipped", 3)
    with Session(engine) as session:
        for slug in ("shipped", "missing"):
            with pytest.raises(NotFound):
                team.team_deck(session, slug)


def test_cli_fits_a_team_deck_with_a_progress_line(engine: Engine, cli: CliRunner) -> None:
    _team_id, deck_id, _members = _team(engine)
    result = cli.invoke(main, ["fsrs", "optimize", "--team-deck", "night-class-words"])
    assert result.exit_code == 0, result.output
    first, second = result.output.splitlines()[:2]
    assert first.startswith("fitting on ") and " answers of 3 members on " in first
    assert second.startswith("adopted")
    with Session(engine) as session:
        assert session.get(DeckFsrsParameters, deck_id) is not None
    unknown = cli.invoke(main, ["fsrs", "optimize", "--team-deck", "nope"])
    assert unknown.exit_code == 1 and "no team deck 'nope'" in unknown.output
    both = cli.invoke(main, ["fsrs", "optimize", "--due", "--team-deck", "nope"])
    assert both.exit_code == 2 and "give one of --user EMAIL, --due or --team-deck" in both.output


def test_due_fits_team_decks_first_then_the_members_against_them(
    engine: Engine, cli: CliRunner
) -> None:
    _team_id, deck_id, members = _team(engine)
    result = cli.invoke(main, ["fsrs", "optimize", "--due"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("team deck night-class-words: adopted (")
    assert lines[-1] == "1 team decks due: 1 adopted, 0 kept, 0 skipped"
    with Session(engine) as session:
        team_set = session.get_one(DeckFsrsParameters, deck_id).parameters
        for member in members:
            own = store.in_force(session, member).history
            assert len(own) == 1, result.output  # each member was due, and fitted once
            # Judged against the team's set as well: adopted only if it beat it too.
            rivals = fit_and_judge(
                store.read_history(session, member).items, None, rivals=[team_set]
            )
            assert own[0].adopted == rivals.adopt
    again = cli.invoke(main, ["fsrs", "optimize", "--due"])
    assert "team deck" not in again.output  # fitted a moment ago: not due


def test_rescheduling_a_member_uses_the_team_set_on_its_deck(engine: Engine) -> None:
    _team_id, deck_id, members = _team(engine, learners=2)
    with Session(engine) as session:
        assert reschedule.plan(session, members[0], now=LATER).moves == []
    fitted = _fit_deck(engine, deck_id)
    with Session(engine) as session:
        planned = reschedule.plan(session, members[0], now=LATER)
    assert planned.moved > 10
    # Exactly as if the team's set were the member's own.
    with transaction(engine) as session:
        session.get_one(SchedulerSettings, members[0]).parameters = list(fitted.parameters)
    with Session(engine) as session:
        assert reschedule.plan(session, members[0], now=LATER) == planned


def test_members_see_the_team_set_in_force_and_nothing_of_each_other(
    engine: Engine, client: FlaskClient
) -> None:
    _team_id, deck_id, members = _team(engine, learners=2)
    fitted = _fit_deck(engine, deck_id)
    with transaction(engine) as session:
        token = make_token(session, members[0])
    auth = {"Authorization": f"Bearer {token}"}
    overview = client.get("/api/v1/me/fsrs", headers=auth).get_json()
    assert overview["team_decks"] == [
        {"deck": "night-class-words", "parameters": fitted.parameters, "in_force": True}
    ]
    assert overview["history"] == []  # the team's fit is not one of theirs
    sign_in(client, "member0@example.com")
    page = client.get("/settings").get_data(as_text=True)
    sentence = "On your team deck night-class-words, your cards are scheduled with parameters"
    assert sentence in page
    for other in ("member1@example.com", "lead@example.com"):
        assert other not in page and other not in str(overview)
    # With parameters of their own, the team's are listed but no longer in force for them.
    with transaction(engine) as session:
        session.get_one(SchedulerSettings, members[0]).parameters = list(DEFAULTS)
    overview = client.get("/api/v1/me/fsrs", headers=auth).get_json()
    assert [deck["in_force"] for deck in overview["team_decks"]] == [False]
    assert sentence not in client.get("/settings").get_data(as_text=True)
