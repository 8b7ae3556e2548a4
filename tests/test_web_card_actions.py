"""The review page's card actions through the Flask test client, and leeches where people see
them: the review page, the team dashboard (page and API). SQLite and PostgreSQL."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

from flask import Flask
from flask.testing import FlaskClient
from fsrs import Rating, State
from sqlalchemy import Engine, func, select, update

from flashcards.srs import answer_effects as effects
from flashcards.srs import card_actions, study
from flashcards.srs import marks as mk
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardAction, CardMark, Deck, ReviewState, User
from flashcards.storage.schema import utcnow
from flashcards.teams import assignments, invitations, membership, progress, team_decks

from . import factories as f
from .conftest import T0
from .web_helpers import CARD_ID_RE, csrf, sign_up, subscribe

SLUG = "eks-model-training"


def _user_id(engine: Engine, email: str) -> int:
    with transaction(engine) as s:
        found = s.scalar(select(User.id).where(User.email == email))
        assert found is not None
        return found


def _shown_card(client: FlaskClient) -> int:
    match = CARD_ID_RE.search(client.get("/study").get_data(as_text=True))
    assert match
    return int(match[1])


def _act(client: FlaskClient, card: int | str, action: str, **extra: str) -> str:
    form = {"csrf_token": csrf(client, "/study"), "card_id": str(card), "card_action": action}
    response = client.post("/study/card", data={**form, **extra})
    assert response.status_code == 303, response.get_data(as_text=True)
    return client.get(response.headers["Location"]).get_data(as_text=True)


def test_the_review_pages_actions_and_their_refusals(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    card = _shown_card(client)
    assert "Undo" not in client.get("/study").get_data(as_text=True)
    page = _act(client, card, "bury")
    assert "Card buried until tomorrow" in page and _shown_card(client) != card
    assert ">Undo bury <kbd" in page  # the undo button says what it undoes
    second = _shown_card(client)
    page = _act(client, second, "flag", flag="6")
    assert "Flag set: Turquoise." in page and '<option value="6" selected>' in page
    assert ">Undo flag <kbd" in page
    user = _user_id(loaded_engine, "ana@example.com")
    with transaction(loaded_engine) as s:
        assert mk.card_marks(s, user, second).flag == 6
        other = f.make_user(s)
        private = f.card_ids(s, f.make_deck(s, "private", 1, owner_user_id=other).id)[0]
        before = s.scalar(select(func.count()).select_from(CardAction))
    # Other people's cards, bad values, a missing CSRF token: refused, nothing written.
    for card_id, action, extra in [
        (private, "suspend", {}),
        ("x", "bury", {}),
        (2**40, "bury", {}),
        (second, "delete", {}),
        (second, "flag", {"flag": "8"}),
        (second, "flag", {"flag": "red"}),
    ]:
        assert 'class="flash error"' in _act(client, card_id, action, **extra)
    response = client.post("/study/card", data={"card_id": str(second), "card_action": "suspend"})
    assert response.status_code in (400, 403)
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(CardAction)) == before
        assert mk.card_marks(s, other, private) == mk.Marks()
        assert not mk.card_marks(s, user, second).suspended


def test_forget_on_the_review_page_makes_the_card_new_again_after_the_new_cards(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    user = _user_id(loaded_engine, "ana@example.com")
    card = _shown_card(client)
    assert 'value="forget"' not in client.get("/study").get_data(as_text=True)  # new already
    with transaction(loaded_engine) as s:
        f.answer(s, user, card, Rating.Again, now=utcnow() - timedelta(minutes=5))
    page = client.get("/study").get_data(as_text=True)
    assert _shown_card(client) == card and 'value="forget"' in page  # learning, due now
    page = _act(client, card, "forget")
    assert "Card forgotten: it is new again" in page and ">Undo forget <kbd" in page
    assert _shown_card(client) != card  # the deck's other new cards come first
    with transaction(loaded_engine) as s:
        state = s.get(ReviewState, (user, card))
        assert state is not None and state.state == 0 and state.reps == 1
    # A card never studied has nothing to forget: said, nothing written.
    page = _act(client, _shown_card(client), "forget")
    assert "still new" in page


def test_the_review_page_says_a_leech_is_one(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client)
    subscribe(client, "en")
    card = _shown_card(client)
    user = _user_id(loaded_engine, "ana@example.com")
    with transaction(loaded_engine) as s:
        deck_id = s.scalar(select(Card.deck_id).where(Card.id == card))
        s.add(CardMark(user_id=user, card_id=card, deck_id=deck_id, leech=True))
    assert "This card is a leech" in client.get("/study").get_data(as_text=True)


def test_the_dashboard_counts_leeches_and_the_most_leeched_questions(
    app: Flask, loaded_engine: Engine
) -> None:
    now = utcnow()
    with transaction(loaded_engine) as s:
        lead = f.make_user(s, "lead@example.com")
        members = [f.make_user(s, f"m{i}@example.com") for i in range(2)]
        team = membership.create_team(s, lead, "T", now=now)
        for member in members:
            token = invitations.create_invitation(s, team.id, lead, now=now).token
            invitations.join(s, member, token, now=now)
        assignments.assign(s, team.id, lead, SLUG, None, now=now)
        deck_id = s.scalar(select(Deck.id).where(Deck.slug == SLUG))
        assert deck_id is not None
        cards = f.card_ids(s, deck_id)
        token = f.make_token(s, lead)
        team_id = team.id
    # Both members lapse on the first card an eighth time; one also on the second.
    for member, lapsing in ((members[0], cards[:2]), (members[1], cards[:1])):
        for card in lapsing:
            with transaction(loaded_engine) as s:
                f.set_state(s, member, card, state=State.Review, due=now - timedelta(hours=1),
                            last_review=now - timedelta(days=9))  # fmt: skip
                s.execute(
                    update(ReviewState)
                    .where(ReviewState.user_id == member, ReviewState.card_id == card)
                    .values(lapses=7)
                )
                study.answer(s, member, card, Rating.Again, str(uuid.uuid4()), now=now)
    with transaction(loaded_engine) as s:
        rows = {r.user_id: r.leeches for r in progress.dashboard(s, team_id, lead, now=now)}
        assert rows == {lead: 0, members[0]: 2, members[1]: 1}
        leeched = progress.hardest(s, team_id, lead, by_leeches=True)
        assert [(c.card_id, c.leeches) for c in leeched] == [(cards[0], 2), (cards[1], 1)]
        assert "leeches" in progress.members_csv(progress.dashboard(s, team_id, lead, now=now))
    api = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    body = api.get(f"/api/v1/teams/{team_id}/hardest?by=leeches", headers=headers).get_json()
    assert [(c["card_id"], c["leeches"]) for c in body["cards"]] == [(cards[0], 2), (cards[1], 1)]
    assert api.get(f"/api/v1/teams/{team_id}/hardest?by=x", headers=headers).status_code == 422
    dashboard = api.get(f"/api/v1/teams/{team_id}/dashboard", headers=headers).get_json()
    assert sorted(m["leeches"] for m in dashboard["members"]) == [0, 1, 2]


def test_a_team_lead_gets_an_edit_link_on_the_review_page(
    client: FlaskClient, engine: Engine
) -> None:
    sign_up(client, "lead@example.com")
    lead = _user_id(engine, "lead@example.com")
    with transaction(engine) as s:
        team = membership.create_team(s, lead, "T", now=T0)
        deck, _report = team_decks.create_team_deck(
            s, team.id, lead, fmt="csv", content="front,back\nOne?,Yes\n", locale="en",
            title="Mine", now=T0,
        )  # fmt: skip
        f.subscribe(s, lead, deck)
        team_id, slug = team.id, deck.slug
    page = client.get("/study").get_data(as_text=True)
    card = f"/teams/{team_id}/decks/{slug}/cards/q01"
    assert f'id="edit-card" class="link" href="{card}?study=*"' in page
    # Saved or retired there, the card's page goes back to studying.
    opened = client.get(f"{card}?study=*").get_data(as_text=True)
    assert '<a href="/study">Back to studying</a>' in opened
    edit = {"csrf_token": csrf(client, card), "locale": "en", "question": "One now?",
            "answer": "Yes", "explanation": "", "study": "*"}  # fmt: skip
    saved = client.post(card, data=edit)
    assert saved.status_code == 303 and saved.headers["Location"] == "/study"
    assert "Card saved. Everyone keeps their progress on it." in client.get("/study").get_data(
        as_text=True
    )


def test_the_leech_list_shows_leeches_and_unsuspends_them(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    assert "No leeches" in client.get("/leeches").get_data(as_text=True)
    card = _shown_card(client)
    user = _user_id(loaded_engine, "ana@example.com")
    with transaction(loaded_engine) as s:
        deck_id = s.scalar(select(Card.deck_id).where(Card.id == card))
        s.add(CardMark(user_id=user, card_id=card, deck_id=deck_id, leech=True, suspended=True))
        other = f.make_user(s)
        private = f.card_ids(s, f.make_deck(s, "private", 1, owner_user_id=other).id)[0]
        private_deck = s.scalar(select(Card.deck_id).where(Card.id == private))
        assert private_deck is not None
        s.add(
            CardMark(
                user_id=other, card_id=private, deck_id=private_deck, leech=True, suspended=True
            )
        )
    page = client.get("/leeches").get_data(as_text=True)
    assert f"/leeches/{card}/unsuspend" in page and "private q1" not in page
    token = csrf(client, "/leeches")
    refused = client.post(f"/leeches/{private}/unsuspend", data={"csrf_token": token})
    assert refused.status_code == 404
    response = client.post(f"/leeches/{card}/unsuspend", data={"csrf_token": token})
    assert response.status_code == 303
    with transaction(loaded_engine) as s:
        assert not mk.card_marks(s, user, card).suspended and mk.card_marks(s, user, card).leech
        assert mk.card_marks(s, other, private).suspended


def test_the_study_options_page_saves_and_refuses_a_bad_threshold(
    client: FlaskClient, engine: Engine
) -> None:
    sign_up(client)
    user = _user_id(engine, "ana@example.com")
    token = csrf(client, "/study-options")
    form = {"csrf_token": token, "bury_new": "1", "leech_threshold": "6", "leech_suspend": "1"}
    assert client.post("/study-options", data=form).status_code == 303
    with transaction(engine) as s:
        assert effects.options(s, user) == effects.Options(
            bury_new=True, leech_threshold=6, leech_suspend=True
        )
    response = client.post("/study-options", data={**form, "leech_threshold": "0"})
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "from 1 to 99" in page and 'value="6"' in page


def test_a_forgotten_card_in_custom_study_is_answered_from_the_web(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    user = _user_id(loaded_engine, "ana@example.com")
    card = _shown_card(client)
    with transaction(loaded_engine) as s:
        f.answer(s, user, card, Rating.Easy, now=utcnow() - timedelta(days=2))
        card_actions.forget(s, user, [card], now=utcnow())
        card_actions.set_flag(s, user, [card], 3, now=utcnow())
    token = csrf(client, "/study/custom")
    form = {"csrf_token": token, "mode": "flag", "flag": "3"}
    assert client.post("/study/custom", data=form).status_code == 303
    page = client.get("/study/custom?show=1").get_data(as_text=True)
    review_id = re.search(r'name="review_id" value="([^"]+)"', page)
    assert review_id and f'name="card_id" value="{card}"' in page
    form = {"csrf_token": token, "card_id": str(card), "rating": "3", "review_id": review_id[1]}
    response = client.post("/study/custom/answer", data=form)
    assert response.status_code == 303
    assert "answered or changed" not in client.get(response.headers["Location"]).get_data(
        as_text=True
    )
    with transaction(loaded_engine) as s:
        state = s.get(ReviewState, (user, card))
        assert state is not None and state.state == int(State.Learning) and state.reps == 2
