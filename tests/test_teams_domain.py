"""Teams' domain on both databases: membership rules, invitations, assignments with pacing,
team decks that keep progress across edits, and access ending with membership."""

from __future__ import annotations

import uuid
from datetime import date, datetime, timedelta

import pytest
from fsrs import Rating
from sqlalchemy import Engine, event, func, select
from sqlalchemy.orm import Session

from flashcards.decks.access import visible_decks
from flashcards.errors import (
    EditingRetiredCard,
    InvalidInput,
    ManagerRemovesMembersOnly,
    NotFound,
    NothingToUndo,
    OwnerCannotLeave,
    OwnerNotRemovable,
    RoleRequired,
)
from flashcards.people.accounts import create_user
from flashcards.srs import deck_settings, queue, study
from flashcards.srs.queue import new_allowance
from flashcards.srs.subscriptions import subscribe
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Deck,
    ReviewState,
    SchedulerSettings,
    Subscription,
    Team,
    TeamAssignment,
    User,
)
from flashcards.teams import assignments, invitations, membership, progress, team_decks
from flashcards.teams.assignments import expected_introduced, status
from flashcards.teams.pacing import team_pace
from tests.conftest import T0

QUIZ = """Team quiz
Two questions
1. What is one plus one?
Answer
Two. Basic arithmetic.
2. What colour is the sky?
Answer
Blue. Usually.
"""
QUIZ_ES = """Cuestionario
Dos preguntas
1. ¿Cuánto es uno más uno?
Respuesta
Dos. Aritmética.
2. ¿De qué color es el cielo?
Respuesta
Azul.
"""


def users(s: Session) -> tuple[int, int, int, int]:
    lead = create_user(s, "lead@example.com", "password1", now=T0).id
    ana = create_user(s, "ana@example.com", "password1", now=T0, locale="es").id
    ben = create_user(s, "ben@example.com", "password1", now=T0, locale="ko").id
    eve = create_user(s, "eve@example.com", "password1", now=T0).id
    return lead, ana, ben, eve


def team_of_two(s: Session) -> tuple[int, int, Team]:
    """The users, and a team of the lead with Ana as its member."""
    lead, ana, _ben, _eve = users(s)
    team = membership.create_team(s, lead, "T", now=T0)
    invitations.join(s, ana, invitations.create_invitation(s, team.id, lead, now=T0).token, now=T0)
    return lead, ana, team


def english_and_spanish_deck(s: Session, team_id: int, lead: int) -> Deck:
    """A team deck of QUIZ, with QUIZ_ES as its Spanish."""
    deck, _report = team_decks.create_team_deck(
        s, team_id, lead, fmt="quiz", content=QUIZ, locale="en", title=None, now=T0
    )
    team_decks.upload_locale(
        s, team_id, lead, deck.slug, fmt="quiz", content=QUIZ_ES, locale="es", title=None,
        now=T0,
    )  # fmt: skip
    return deck


def visible(s: Session, user_id: int, slug: str) -> bool:
    return s.scalar(select(Deck.id).where(Deck.slug == slug, visible_decks(user_id))) is not None


def test_pacing_formula() -> None:
    today = date(2026, 3, 2)
    assert team_pace(100, today, today + timedelta(days=9)) == 10
    assert team_pace(101, today, today + timedelta(days=9)) == 11
    assert team_pace(100, today, today) == 100
    assert team_pace(100, today, today - timedelta(days=3)) == 100
    assert (
        new_allowance(20, 10) == 20 and new_allowance(5, 10) == 10 and new_allowance(5, None) == 5
    )
    assert expected_introduced(10, today, today, today + timedelta(days=4)) == 0
    assert expected_introduced(10, today, today + timedelta(days=1), today + timedelta(days=4)) == 2
    assert status(2, 10, today, today + timedelta(days=1), today + timedelta(days=4)) == "on_track"
    assert status(1, 10, today, today + timedelta(days=1), today + timedelta(days=4)) == "behind"
    assert status(10, 10, today, today + timedelta(days=9), today) == "done"
    assert status(9, 10, today, today + timedelta(days=9), today) == "behind"
    assert status(0, 10, today, today, None) == "no_due_date"


def test_team_lifecycle_roles_and_owner_rules(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, ana, ben, eve = users(s)
        team = membership.create_team(s, lead, "  Platform   team ", now=T0)
        assert team.name == "Platform team"
        inv = invitations.create_invitation(s, team.id, lead, now=T0, max_uses=2)
        invitations.join(s, ana, inv.token, now=T0)
        invitations.join(s, ana, inv.token, now=T0)  # already in: no use counted
        invitations.join(s, ben, inv.token, now=T0)
        with pytest.raises(NotFound, match="used up"):
            invitations.join(s, eve, inv.token, now=T0)
        assert [m.role for m in membership.list_members(s, team.id, lead)] == [
            "member",
            "member",
            "owner",
        ]
        with pytest.raises(RoleRequired):
            membership.list_members(s, team.id, ana)
        with pytest.raises(NotFound):
            membership.list_members(s, team.id, eve)
        with pytest.raises(NotFound):
            membership.get_team(s, team.id, eve)
        with pytest.raises(RoleRequired):
            membership.change_role(s, team.id, ana, ben, "manager")
        membership.change_role(s, team.id, lead, ana, "manager")
        with pytest.raises(InvalidInput):
            membership.change_role(s, team.id, lead, ben, "owner")
        with pytest.raises(OwnerNotRemovable):
            membership.remove_member(s, team.id, ana, lead, now=T0)
        with pytest.raises(NotFound):
            membership.remove_member(s, team.id, lead, eve, now=T0)
        with pytest.raises(OwnerCannotLeave):
            membership.leave_team(s, team.id, lead, now=T0)
        membership.transfer_ownership(s, team.id, lead, ben)
        roles = {m.user_id: m.role for m in membership.list_members(s, team.id, ben)}
        assert roles == {lead: "manager", ana: "manager", ben: "owner"}
        assert sorted(roles.values()).count("owner") == 1
        with pytest.raises(ManagerRemovesMembersOnly):
            membership.remove_member(s, team.id, lead, ana, now=T0)  # managers: plain members only
        membership.leave_team(s, team.id, lead, now=T0)
        with pytest.raises(NotFound):
            membership.get_team(s, team.id, lead)


def test_invitation_expiry_and_revocation(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, ana, ben, _ = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        inv = invitations.create_invitation(s, team.id, lead, now=T0, lifetime=timedelta(hours=1))
        assert inv.invitation.token_hash != inv.token and len(inv.invitation.token_hash) == 64
        with pytest.raises(NotFound, match="expired"):
            invitations.join(s, ana, inv.token, now=T0 + timedelta(hours=2))
        other = invitations.create_invitation(s, team.id, lead, now=T0)
        invitations.revoke_invitation(s, team.id, lead, other.invitation.id, now=T0)
        with pytest.raises(NotFound, match="revoked"):
            invitations.join(s, ben, other.token, now=T0)
        with pytest.raises(NotFound):
            invitations.join(s, ben, "not-a-token", now=T0)
        with pytest.raises(InvalidInput):
            invitations.create_invitation(s, team.id, lead, now=T0, max_uses=0)


def test_invitation_labels_are_one_line_and_bounded(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, _ana, _ben, _ = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        inv = invitations.create_invitation(s, team.id, lead, now=T0, label="  March\n  cohort ")
        assert inv.invitation.label == "March cohort"
        # Emoji sequences joined by ZWJ are fine; only controls that reorder text are not.
        family = invitations.create_invitation(
            s, team.id, lead, now=T0, label="Team \U0001f468\u200d\U0001f469"
        )
        assert family.invitation.label == "Team \U0001f468\u200d\U0001f469"
        plain = invitations.create_invitation(s, team.id, lead, now=T0)
        assert plain.invitation.label == ""
        for bad in ("x" * (invitations.MAX_LABEL + 1), 7, "x\x07y", "\u202eevil", "a\x9bb"):
            with pytest.raises(InvalidInput) as info:
                invitations.create_invitation(s, team.id, lead, now=T0, label=bad)  # type: ignore[arg-type]
            assert info.value.field == "label"
        listed = invitations.list_invitations(s, team.id, lead)
        assert sorted(i.label for i in listed) == ["", "March cohort", family.invitation.label]


def test_assignment_subscribes_in_each_language_and_paces(loaded_engine: Engine) -> None:
    with transaction(loaded_engine) as s:
        lead, ana, ben, eve = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        inv = invitations.create_invitation(s, team.id, lead, now=T0)
        invitations.join(s, ana, inv.token, now=T0)
        # Due in 3 days (4 study days including today): ceil(15 / 4) = 4 < default 20.
        assignments.assign(s, team.id, lead, "eks-model-training", T0.date() + timedelta(3), now=T0)
        with pytest.raises(RoleRequired):
            assignments.assign(s, team.id, ana, "eks-model-training", None, now=T0)
        deck_id = s.scalar(select(Deck.id).where(Deck.slug == "eks-model-training"))
        sub = s.get(Subscription, (ana, deck_id))
        # The pace is kept apart from Ana's own new-cards setting, which stays unset.
        assert sub is not None and sub.locale == "es" and sub.paced_new_per_day == 4
        assert sub.new_per_day is None
        invitations.join(s, ben, inv.token, now=T0)  # joins later: subscribed too, in Korean
        sub_ben = s.get(Subscription, (ben, deck_id))
        assert sub_ben is not None and sub_ben.locale == "ko"

        settings = s.get(SchedulerSettings, ana)
        assert settings is not None
        settings.new_per_day = 2
        views = assignments.list_assignments(s, team.id, ana, now=T0)
        assert [(v.slug, v.total, v.introduced, v.new_per_day, v.status) for v in views] == [
            ("eks-model-training", 15, 0, 4, "on_track")
        ]
        # Answering 4 today keeps the allowance at 4 for the rest of the day.
        for _ in range(4):
            card, _counts = queue.next_card(s, ana, now=T0, deck_ids=[deck_id])
            assert card is not None and card.kind == "new"
            study.answer(s, ana, card.card_id, Rating.Good, str(uuid.uuid4()), now=T0)
        card, counts = queue.next_card(s, ana, now=T0, deck_ids=[deck_id])
        assert counts.new == 0
        views = assignments.list_assignments(s, team.id, ana, now=T0 + timedelta(minutes=1))
        assert views[0].new_per_day == 4 and views[0].introduced == 4
        # Two days later with nothing more done: behind; 11 cards left over 2 days -> 6.
        later = T0 + timedelta(days=2)
        views = assignments.list_assignments(s, team.id, ana, now=later)
        assert (views[0].status, views[0].new_per_day) == ("behind", 6)
        # Unassigning gives back the person's own limit.
        assignments.unassign(s, team.id, lead, "eks-model-training", now=later)
        s.refresh(sub)
        assert sub.paced_new_per_day is None
        with pytest.raises(NotFound):
            assignments.list_assignments(s, team.id, eve, now=T0)


def test_a_members_assignments_are_read_in_as_many_statements_for_any_number_of_decks(
    loaded_engine: Engine,
) -> None:
    sent: list[str] = []

    def record(*args: object) -> None:
        sent.append(str(args[2]))

    with transaction(loaded_engine) as s:
        lead, ana, _ben, _eve = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        invitations.join(
            s, ana, invitations.create_invitation(s, team.id, lead, now=T0).token, now=T0
        )
        assignments.assign(s, team.id, lead, "eks-model-training", None, now=T0)
        deck_id = s.scalar(select(Deck.id).where(Deck.slug == "eks-model-training"))
        card, _counts = queue.next_card(s, ana, now=T0, deck_ids=[deck_id])
        assert card is not None
        study.answer(s, ana, card.card_id, Rating.Good, str(uuid.uuid4()), now=T0)

        def read() -> tuple[int, dict[int, list[assignments.DeckAssignment]]]:
            sent.clear()
            event.listen(loaded_engine, "before_cursor_execute", record)
            try:
                found = assignments.assignments_by_deck(s, ana, now=T0)
                views = assignments.list_assignments(s, team.id, ana, now=T0, refresh=False)
            finally:
                event.remove(loaded_engine, "before_cursor_execute", record)
            assert {v.deck_id: v.introduced for v in views}[deck_id] == 1
            return len(sent), found

        one, found = read()
        assert list(found) == [deck_id]
        for n in range(3):
            deck, _report = team_decks.create_team_deck(
                s, team.id, lead, fmt="csv", content=f"front,back\nQ{n}?,A\nR{n}?,B\n",
                locale="en", title=f"Deck {n}", now=T0,
            )  # fmt: skip
            assignments.assign(s, team.id, lead, deck.slug, None, now=T0)
        four, found = read()
        assert len(found) == 4
        # Each figure (cards, answers, subscriptions, titles) is one read for all the decks.
        assert four == one, sent


def test_a_members_own_new_cards_setting_outlives_team_pacing(loaded_engine: Engine) -> None:
    with transaction(loaded_engine) as s:
        lead, ana, team = team_of_two(s)
        deck = s.scalars(select(Deck).where(Deck.slug == "eks-model-training")).one()
        subscribe(s, ana, deck, "es", now=T0)
        deck_settings.set_deck_overrides(s, ana, deck.id, {"new_per_day": 5})

        def allowance(now: datetime) -> int:
            _card, counts = queue.next_card(s, ana, now=now, deck_ids=[deck.id])
            return counts.new

        assignments.assign(s, team.id, lead, "eks-model-training", None, now=T0)
        assert allowance(T0) == 5  # no due date: her own 5 a day
        # Due in 1 day (2 study days): ceil(15 / 2) = 8 a day is above her 5.
        assignments.assign(s, team.id, lead, "eks-model-training", T0.date() + timedelta(1), now=T0)
        assert allowance(T0) == 8
        deck_settings.set_deck_overrides(s, ana, deck.id, {"new_per_day": 12})
        assert allowance(T0) == 12  # her own number, higher than the pace, wins
        assignments.unassign(s, team.id, lead, "eks-model-training", now=T0)
        assert allowance(T0) == 12
        assignments.assign(s, team.id, lead, "eks-model-training", T0.date() + timedelta(1), now=T0)
        membership.leave_team(s, team.id, ana, now=T0)
        assert deck_settings.deck_overrides(s, ana, deck.id) == {
            "desired_retention": None, "new_per_day": 12, "reviews_per_day": None,
            "maximum_interval": None,
        }  # fmt: skip
        assert allowance(T0) == 12


def test_team_deck_upload_edit_keeps_progress_and_removal_ends_access(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, ana, _, eve = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        other = membership.create_team(s, eve, "Other", now=T0)
        inv = invitations.create_invitation(s, team.id, lead, now=T0)
        invitations.join(s, ana, inv.token, now=T0)
        deck, report = team_decks.create_team_deck(
            s, team.id, lead, fmt="quiz", content=QUIZ, locale="en", title=None, now=T0
        )
        assert deck.slug == f"team{team.id}-team-quiz" and report.added == ["q01", "q02"]
        with pytest.raises(RoleRequired):
            team_decks.create_team_deck(
                s, team.id, ana, fmt="quiz", content=QUIZ, locale="en", title=None, now=T0
            )
        team_decks.upload_locale(
            s,
            team.id,
            lead,
            deck.slug,
            fmt="quiz",
            content=QUIZ_ES,
            locale="es",
            title=None,
            now=T0,
        )
        assert visible(s, ana, deck.slug) and visible(s, lead, deck.slug)
        assert not visible(s, eve, deck.slug)
        with pytest.raises(NotFound):
            team_decks.deck_cards(s, other.id, eve, deck.slug)
        with pytest.raises(NotFound):
            team_decks.deck_cards(s, team.id, eve, deck.slug)

        assignments.assign(s, team.id, lead, deck.slug, None, now=T0)
        sub = s.get(Subscription, (ana, deck.id))
        assert sub is not None and sub.locale == "es"
        with pytest.raises(NotFound):  # another team cannot assign it
            assignments.assign(s, other.id, eve, deck.slug, None, now=T0)
        card, _ = queue.next_card(s, ana, now=T0, deck_ids=[deck.id])
        assert card is not None and card.question == "¿Cuánto es uno más uno?"
        study.answer(s, ana, card.card_id, Rating.Good, str(uuid.uuid4()), now=T0)

        later = T0 + timedelta(hours=1)
        report = team_decks.set_card(
            s,
            team.id,
            lead,
            deck.slug,
            "q01",
            locale="en",
            question="1 + 1?",
            answer="2",
            explanation="",
            now=later,
        )
        assert report.updated == ["q01"]
        team_decks.set_card(
            s,
            team.id,
            lead,
            deck.slug,
            "q03",
            locale="en",
            question="New?",
            answer="Yes",
            explanation="",
            now=later,
        )
        team_decks.retire_card(s, team.id, lead, deck.slug, "q02", now=later)
        cards = team_decks.deck_cards(s, team.id, ana, deck.slug)
        assert cards.keys == ["q01", "q03"]
        # An edit of the retired card (a page opened before it was retired) is refused,
        # rather than bringing the old question back with everyone's progress.
        with pytest.raises(EditingRetiredCard):
            team_decks.set_card(
                s, team.id, lead, deck.slug, "q02",
                locale="en", question="Two?", answer="2", explanation="", now=later,
            )  # fmt: skip
        assert team_decks.deck_cards(s, team.id, ana, deck.slug).keys == ["q01", "q03"]
        state = s.get(ReviewState, (ana, card.card_id))
        assert state is not None and state.reps == 1  # progress kept through the edits

        membership.remove_member(s, team.id, lead, ana, now=later)
        assert not visible(s, ana, deck.slug)
        assert s.get(Subscription, (ana, deck.id)) is None
        assert s.get(ReviewState, (ana, card.card_id)) is not None  # history kept
        with pytest.raises(NotFound):
            study.answer(s, ana, card.card_id, Rating.Good, str(uuid.uuid4()), now=later)


def test_csv_upload_and_errors(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, *_ = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        content = (
            "front,back,key,locale\nHello?,Hi,greet,en\nHola?,Hola,greet,es\nBye?,Bye,bye,en\n"
        )
        deck, _ = team_decks.create_team_deck(
            s, team.id, lead, fmt="csv", content=content, locale="en", title="Words", now=T0
        )
        source = team_decks.deck_cards(s, team.id, lead, deck.slug)
        assert source.keys == ["greet", "bye"] and sorted(source.locales) == ["en", "es"]
        with pytest.raises(InvalidInput, match="upload:1: the back is empty"):
            team_decks.create_team_deck(
                s, team.id, lead, fmt="csv", content="a,\n", locale="en", title="X", now=T0
            )
        with pytest.raises(InvalidInput, match="not in the default locale"):
            team_decks.create_team_deck(
                s,
                team.id,
                lead,
                fmt="csv",
                content="a,b,k,en\nc,d,z,es\n",
                locale="en",
                title="X",
                now=T0,
            )
        with pytest.raises(InvalidInput):
            team_decks.create_team_deck(
                s, team.id, lead, fmt="quiz", content="nonsense", locale="en", title=None, now=T0
            )


def test_deleting_a_team_keeps_shipped_history(loaded_engine: Engine) -> None:
    with transaction(loaded_engine) as s:
        lead, ana, *_ = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        inv = invitations.create_invitation(s, team.id, lead, now=T0)
        invitations.join(s, ana, inv.token, now=T0)
        assignments.assign(s, team.id, lead, "eks-model-training", None, now=T0)
        deck, _ = team_decks.create_team_deck(
            s, team.id, lead, fmt="quiz", content=QUIZ, locale="en", title=None, now=T0
        )
        shipped = s.scalar(select(Deck.id).where(Deck.slug == "eks-model-training"))
        card, _ = queue.next_card(s, ana, now=T0, deck_ids=[shipped])
        assert card is not None
        study.answer(s, ana, card.card_id, Rating.Again, str(uuid.uuid4()), now=T0)
        with pytest.raises(RoleRequired):
            membership.delete_team(s, team.id, ana, now=T0)
        membership.delete_team(s, team.id, lead, now=T0)
        assert s.get(ReviewState, (ana, card.card_id)) is not None
        assert s.get(Subscription, (ana, shipped)) is not None
        assert s.scalar(select(func.count()).select_from(Deck).where(Deck.id == deck.id)) == 0


def test_reuploading_the_default_language_keeps_keys_by_position(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, *_ = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        deck, _ = team_decks.create_team_deck(
            s,
            team.id,
            lead,
            fmt="csv",
            content="front,back,key\nA?,a,alpha\n",
            locale="en",
            title="Words",
            now=T0,
        )
        card, _ = queue.next_card(s, lead, now=T0, deck_ids=[deck.id])
        assert card is None  # not subscribed: team decks are studied once assigned
        assignments.assign(s, team.id, lead, deck.slug, None, now=T0)
        card, _ = queue.next_card(s, lead, now=T0, deck_ids=[deck.id])
        assert card is not None and card.key == "alpha"
        study.answer(s, lead, card.card_id, Rating.Good, str(uuid.uuid4()), now=T0)
        report = team_decks.upload_locale(
            s,
            team.id,
            lead,
            deck.slug,
            fmt="quiz",
            content=QUIZ,
            locale="en",
            title=None,
            now=T0,
        )
        assert report.updated == ["alpha"] and report.added == ["q01"] and not report.retired
        assert team_decks.deck_cards(s, team.id, lead, deck.slug).keys == ["alpha", "q01"]
        assert s.get(ReviewState, (lead, card.card_id)) is not None
        with pytest.raises(InvalidInput, match="questions but the deck has"):
            team_decks.upload_locale(
                s,
                team.id,
                lead,
                deck.slug,
                fmt="quiz",
                content=QUIZ.split("2.")[0],
                locale="es",
                title=None,
                now=T0,
            )


def test_dashboard_numbers_hardest_and_csv(loaded_engine: Engine) -> None:
    with transaction(loaded_engine) as s:
        lead, ana, ben, eve = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        other = membership.create_team(s, eve, "Other", now=T0)
        inv = invitations.create_invitation(s, team.id, lead, now=T0)
        for user in (ana, ben):
            invitations.join(s, user, inv.token, now=T0)
        other_inv = invitations.create_invitation(s, other.id, eve, now=T0)
        invitations.join(s, ben, other_inv.token, now=T0)
        due = T0.date() + timedelta(days=4)
        assignments.assign(s, team.id, lead, "eks-model-training", due, now=T0)
        assignments.assign(s, other.id, eve, "eks-model-training", due + timedelta(20), now=T0)
        deck_id = s.scalar(select(Deck.id).where(Deck.slug == "eks-model-training"))
        assert deck_id is not None
        ratings = {ana: [Rating.Easy, Rating.Again, Rating.Again], ben: [Rating.Again]}
        answered: dict[int, list[int]] = {}
        for user, seq in ratings.items():
            for rating in seq:
                card, _ = queue.next_card(s, user, now=T0, deck_ids=[deck_id])
                assert card is not None and card.kind == "new"
                study.answer(s, user, card.card_id, rating, str(uuid.uuid4()), now=T0)
                answered.setdefault(user, []).append(card.card_id)
        later = T0 + timedelta(days=30)
        with pytest.raises(RoleRequired):
            progress.dashboard(s, team.id, ana, now=later)
        rows = {r.email: r for r in progress.dashboard(s, team.id, lead, now=later)}
        a = rows["ana@example.com"]
        assert (a.introduced, a.total, a.in_review, a.overdue) == (3, 15, 1, 1)
        assert a.answers_7d == 0 and a.last_activity == T0
        assert a.recall is not None and 0 < a.recall < 1
        assert [x.status for x in a.assignments] == ["behind"]
        assert rows["lead@example.com"].introduced == 0
        # Ben's answer counts for his teams' leads, each seeing only their own team's members.
        hard = progress.hardest(s, team.id, lead)
        shares = {h.card_id: (h.answers, h.again_share) for h in hard}
        first_card = answered[ana][0]
        assert shares[first_card] == (2, 0.5)  # ana Easy, ben Again: the same first card
        assert hard[-1].card_id == first_card
        assert all(h.question for h in hard)
        other_rows = progress.dashboard(s, other.id, eve, now=later)
        assert {r.email for r in other_rows} == {"eve@example.com", "ben@example.com"}
        text = progress.members_csv(list(rows.values()))
        assert text.splitlines()[0].split(",")[:3] == ["email", "display_name", "role"]
        assert "eks-model-training" in text  # ana is behind on it
        # Ben is paced by the earlier of his two teams' due dates.
        settings = s.get(SchedulerSettings, ben)
        assert settings is not None
        settings.new_per_day = 1
        views = assignments.list_assignments(s, other.id, ben, now=T0 + timedelta(hours=1))
        sub = s.get(Subscription, (ben, deck_id))
        # 15 cards still new this morning, 5 days to the nearer due date (25 to the other).
        assert sub is not None and views[0].new_per_day == sub.paced_new_per_day == 3
        assert views[0].due_date == due + timedelta(20)  # the other team's own due date


def test_the_database_allows_one_owner_per_team(engine: Engine) -> None:
    from sqlalchemy.exc import IntegrityError

    from flashcards.storage.models import TeamMember

    with transaction(engine) as s:
        lead, ana, *_ = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        team_id = team.id
        s.add(TeamMember(team_id=team_id, user_id=ana, role="member", joined_at=T0))
    with pytest.raises(IntegrityError), transaction(engine) as s:
        member = s.get(TeamMember, (team_id, ana))
        assert member is not None
        member.role = "owner"
        s.flush()
    with transaction(engine) as s:
        membership.transfer_ownership(s, team_id, lead, ana)
        assert membership.get_team(s, team_id, ana).role == "owner"


def test_undo_leaves_alone_a_team_deck_the_member_has_left(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, ana, team = team_of_two(s)
        deck, _report = team_decks.create_team_deck(
            s, team.id, lead, fmt="quiz", content=QUIZ, locale="en", title=None, now=T0
        )
        assignments.assign(s, team.id, lead, deck.slug, None, now=T0)
        card, _ = queue.next_card(s, ana, now=T0, deck_ids=[deck.id])
        assert card is not None
        study.answer(s, ana, card.card_id, Rating.Good, str(uuid.uuid4()), now=T0)
        assert study.undoable(s, ana, now=T0) is not None
        membership.leave_team(s, team.id, ana, now=T0)
        # Her history stays, but the deck is no longer hers to change.
        assert study.undoable(s, ana, now=T0) is None
        with pytest.raises(NothingToUndo):
            study.undo(s, ana, now=T0)
        state = s.get(ReviewState, (ana, card.card_id))
        assert state is not None and state.reps == 1


def test_a_shorter_default_language_retires_cards_in_every_language(engine: Engine) -> None:
    with transaction(engine) as s:
        lead, _ana, _ben, _eve = users(s)
        team = membership.create_team(s, lead, "T", now=T0)
        deck = english_and_spanish_deck(s, team.id, lead)
        shorter = QUIZ[: QUIZ.index("2. What colour")]
        report = team_decks.upload_locale(
            s, team.id, lead, deck.slug, fmt="quiz", content=shorter, locale="en", title=None,
            now=T0,
        )  # fmt: skip
        assert report.retired == ["q02"]
        source = team_decks.current_source(s, deck)
        assert {loc: [c.key for c in source.locales[loc].cards] for loc in ("en", "es")} == {
            "en": ["q01"],
            "es": ["q01"],
        }
        assert source.locales["es"].cards[0].question == "¿Cuánto es uno más uno?"


def test_progress_counts_the_assigned_decks_only(loaded_engine: Engine) -> None:
    """A team deck nobody is assigned has no progress to show: totals are the assigned decks'
    cards, so they add up to the per-deck rows and a member can reach 100 %."""
    three = "front,back\nQ1,A1\nQ2,A2\nQ3,A3\n"
    with transaction(loaded_engine) as s:
        lead, ana, team = team_of_two(s)
        assigned_deck, _ = team_decks.create_team_deck(
            s, team.id, lead, fmt="csv", content=three, locale="en", title="Three", now=T0
        )
        spare, _ = team_decks.create_team_deck(
            s,
            team.id,
            lead,
            fmt="csv",
            content="front,back\nQ,A\n",
            locale="en",
            title="One",
            now=T0,
        )
        assignments.assign(s, team.id, lead, "eks-model-training", None, now=T0)
        assignments.assign(s, team.id, lead, assigned_deck.slug, None, now=T0)
        # Ana studies the spare deck of her own accord, and gets its one card wrong.
        subscribe(s, ana, spare, None, now=T0)
        card, _ = queue.next_card(s, ana, now=T0, deck_ids=[spare.id])
        assert card is not None
        study.answer(s, ana, card.card_id, Rating.Again, str(uuid.uuid4()), now=T0)
        rows = {r.email: r for r in progress.dashboard(s, team.id, lead, now=T0)}
        for row in rows.values():
            assert row.total == sum(a.total for a in row.assignments) == 18
        a = rows["ana@example.com"]
        assert (a.introduced, a.in_review, a.answers_7d, a.last_activity) == (0, 0, 0, None)
        assert a.recall is None
        # Its editors still learn which of the team's own questions are hard.
        assert [h.card_id for h in progress.hardest(s, team.id, lead)] == [card.card_id]
        csv_rows = progress.members_csv(list(rows.values())).splitlines()[1:]
        assert {line.split(",")[4] for line in csv_rows} == {"18"}


def test_hardest_questions_in_the_viewers_language_where_the_card_has_it(
    engine: Engine,
) -> None:
    with transaction(engine) as s:
        lead, ana, team = team_of_two(s)
        both = english_and_spanish_deck(s, team.id, lead)
        english, _ = team_decks.create_team_deck(
            s,
            team.id,
            lead,
            fmt="csv",
            content="front,back\nOnly English?,Yes\n",
            locale="en",
            title="English only",
            now=T0,
        )
        for deck in (both, english):
            assignments.assign(s, team.id, lead, deck.slug, None, now=T0)
            card, _ = queue.next_card(s, ana, now=T0, deck_ids=[deck.id])
            assert card is not None
            study.answer(s, ana, card.card_id, Rating.Again, str(uuid.uuid4()), now=T0)

        def shown(locale: str | None) -> set[tuple[str, str]]:
            hard = progress.hardest(s, team.id, lead, locale=locale)
            return {(h.question, h.locale) for h in hard}

        assert shown("es") == {("¿Cuánto es uno más uno?", "es"), ("Only English?", "en")}
        assert (
            shown("ko")
            == shown(None)
            == {
                ("What is one plus one?", "en"),
                ("Only English?", "en"),
            }
        )


def test_a_due_date_before_the_leads_today_is_refused(loaded_engine: Engine) -> None:
    # 06:00 UTC is 22:00 the evening before in Los Angeles, where the lead is.
    now = datetime(2026, 3, 2, 6, 0, tzinfo=T0.tzinfo)
    with transaction(loaded_engine) as s:
        lead, _ana, team = team_of_two(s)
        leader = s.get(User, lead)
        assert leader is not None
        leader.timezone = "America/Los_Angeles"
        yesterday = date(2026, 2, 28)
        with pytest.raises(InvalidInput) as refused:
            assignments.assign(s, team.id, lead, "eks-model-training", yesterday, now=now)
        assert refused.value.field == "due_date"
        assert s.scalar(select(func.count()).select_from(TeamAssignment)) == 0
        assert s.scalar(select(func.count()).select_from(Subscription)) == 0
        # Today where the lead is, though already yesterday in UTC.
        assignment, _ = assignments.assign(
            s, team.id, lead, "eks-model-training", date(2026, 3, 1), now=now
        )
        with pytest.raises(InvalidInput):
            assignments.assign(s, team.id, lead, "eks-model-training", yesterday, now=now)
        assert assignment.due_date == date(2026, 3, 1)


QUIZ_KO = """퀴즈
두 문제
1. 1 더하기 1은 얼마인가요?
정답
2입니다. 기본 산수.
2. 하늘은 무슨 색인가요?
정답
파란색입니다.
"""


def test_members_given_the_decks_language_move_to_theirs_when_it_is_added(
    engine: Engine,
) -> None:
    with transaction(engine) as s:
        lead, ana, ben, eve = users(s)  # English, Spanish, Korean, English
        team = membership.create_team(s, lead, "T", now=T0)
        for member in (ana, ben, eve):
            token = invitations.create_invitation(s, team.id, lead, now=T0).token
            invitations.join(s, member, token, now=T0)
        deck = english_and_spanish_deck(s, team.id, lead)
        assignments.assign(s, team.id, lead, deck.slug, None, now=T0)

        def studied_in() -> dict[int, str]:
            rows = s.execute(
                select(Subscription.user_id, Subscription.locale).where(
                    Subscription.deck_id == deck.id
                )
            )
            return {user: locale for user, locale in rows}

        assert studied_in() == {lead: "en", ana: "es", ben: "en", eve: "en"}  # no Korean yet
        team_decks.upload_locale(
            s, team.id, lead, deck.slug, fmt="quiz", content=QUIZ_KO, locale="ko",
            title=None, now=T0,
        )  # fmt: skip
        assert studied_in() == {lead: "en", ana: "es", ben: "ko", eve: "en"}
