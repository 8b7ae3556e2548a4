"""The card browser's pages through the Flask test client: search and sort kept in the
address, bulk actions and their undo, a card's history, and other people's cards answering
404. SQLite and PostgreSQL."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

from flask.testing import FlaskClient
from sqlalchemy import Engine, select

from flashcards.srs import marks as mk
from flashcards.srs.card_history import load_history
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardMark, ReviewState, User
from flashcards.storage.schema import utcnow

from . import factories as f
from .web_helpers import answer_shown_card, csrf, sign_up, subscribe

PICK_RE = re.compile(r'name="card_id" value="(\d+)"')


def _uid(engine: Engine, email: str = "ana@example.com") -> int:
    with transaction(engine) as s:
        found = s.scalar(select(User.id).where(User.email == email))
        assert found is not None
        return found


def _bulk(client: FlaskClient, ids: list[str], action: str, **extra: str) -> str:
    form = {"csrf_token": csrf(client, "/browse"), "card_id": ids, "action": action, **extra}
    response = client.post("/browse/actions", data=form)
    assert response.status_code == 303, response.get_data(as_text=True)
    return client.get(response.headers["Location"]).get_data(as_text=True)


def test_browse_search_sort_bulk_actions_and_undo(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    page = client.get("/browse").get_data(as_text=True)
    assert 'href="/browse"' in client.get("/").get_data(as_text=True)  # in the nav
    ids = PICK_RE.findall(page)
    assert len(ids) == 15  # the shipped deck's cards
    page = _bulk(client, ids[:2], "suspend", q="", state="new", sort="lapses", order="desc")
    assert "Suspended 2 cards." in page
    uid = _uid(loaded_engine)
    with transaction(loaded_engine) as s:
        assert all(mk.card_marks(s, uid, int(i)).suspended for i in ids[:2])
    suspended = client.get("/browse?suspended=true").get_data(as_text=True)
    assert PICK_RE.findall(suspended) == ids[:2]
    assert suspended.count('data-mark="suspended"') == 2
    assert '<button type="submit" class="link">Undo suspend</button>' in suspended
    # The undo puts both back in one step, and the search is kept on the way back.
    undo = re.search(r'name="action_id" value="([^"]+)"', suspended)
    assert undo
    response = client.post(
        "/browse/undo",
        data={"csrf_token": csrf(client, "/browse"), "action_id": undo[1], "suspended": "true"},
    )
    assert response.status_code == 303 and response.headers["Location"].endswith(
        "/browse?suspended=true"
    )
    with transaction(loaded_engine) as s:
        assert not any(mk.card_marks(s, uid, int(i)).suspended for i in ids[:2])
    page = _bulk(client, ids[2:4], "add_tag", action_tag="verbos")
    assert "Tagged 2 cards." in page and ">Undo add tag</button>" in page
    assert PICK_RE.findall(client.get("/browse?tag=verbos").get_data(as_text=True)) == ids[2:4]
    _bulk(client, ids[2:3], "add_tag", action_tag="irregulares")
    # Tags read apart (a screen reader, a copy), not run together.
    tagged = client.get("/browse?tag=irregulares").get_data(as_text=True)
    assert (
        '<span class="badge tag">verbos</span> <span class="badge tag">irregulares</span>'
        in (tagged)
        or '<span class="badge tag">irregulares</span> <span class="badge tag">verbos</span>'
        in tagged
    )
    page = _bulk(client, ids[2:3], "flag", action_flag="3")
    # Back to the page the form was on: its search, not the action's own fields.
    form = {"csrf_token": csrf(client, "/browse"), "card_id": ids[5], "action": "flag"}
    response = client.post("/browse/actions", data={**form, "action_flag": "1", "tag": "verbos"})
    assert response.headers["Location"].endswith("/browse?tag=verbos")
    assert PICK_RE.findall(client.get("/browse?flag=3").get_data(as_text=True)) == ids[2:3]
    # A card answered: its state on one line, its stability a time in days, as Anki shows it.
    answer_shown_card(client, "4")
    page = client.get("/browse?state=review").get_data(as_text=True)
    row = re.search(r'<td class="state">Review</td>(.*?)</tr>', page, re.S)
    assert row and re.search(r"<td>[\d.]+ days</td>\s*<td>0</td>\s*<td>1</td>", row[1]), page
    # A sort's links keep the filters and toggle the order.
    page = client.get("/browse?tag=verbos&sort=lapses").get_data(as_text=True)
    assert 'href="/browse?tag=verbos&amp;sort=lapses&amp;order=desc"' in page
    assert 'aria-sort="ascending"' in page


def test_the_browsers_undo_names_a_study_answer_it_would_undo(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    # As Anki's Edit menu: one undo for answers and actions, named for what it takes back.
    sign_up(client)
    subscribe(client, "en")
    answer_shown_card(client, "3")
    page = client.get("/browse").get_data(as_text=True)
    assert '<button type="submit" class="link">Undo answer</button>' in page
    undo = re.search(r'name="action_id" value="([^"]+)"', page)
    assert undo
    form = {"csrf_token": csrf(client, "/browse"), "action_id": undo[1]}
    back = client.post("/browse/undo", data=form)
    said = client.get(back.headers["Location"]).get_data(as_text=True)
    assert "Undone. The card is back in the queue." in said
    with transaction(loaded_engine) as s:
        assert s.scalar(select(ReviewState.user_id)) is None  # the answer's state is gone
    # An action undone from the study page says no more than that it is undone.
    ids = PICK_RE.findall(said)
    _bulk(client, ids[:1], "flag", action_flag="2")
    study = client.get("/study").get_data(as_text=True)
    review = re.search(r'id="undo-form".*?name="review_id" value="([^"]+)"', study, re.S)
    assert review and "Undo flag" in study
    form = {"csrf_token": csrf(client, "/study"), "review_id": review[1]}
    said = client.get(client.post("/study/undo", data=form).headers["Location"]).get_data(
        as_text=True
    )
    assert "Undone." in said and "back in the queue" not in said


def test_bad_values_are_said_and_nothing_written(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    page = client.get("/browse?state=sleeping&flag=9&page=x")
    assert page.status_code == 200 and "could not be read" in page.get_data(as_text=True)
    ids = PICK_RE.findall(client.get("/browse").get_data(as_text=True))
    for action, extra, said in (
        ("explode", {}, "Choose what to do"),
        ("add_tag", {"action_tag": "two words"}, "A tag is one word"),
        ("due", {"due": "soon"}, "Due in: a number of days"),
        ("flag", {"action_flag": "12"}, "Choose a flag"),
        ("due", {"due": "3"}, "still new"),  # new cards have no schedule to move
    ):
        assert said in _bulk(client, ids[:2], action, **extra)
    assert "Select at least one card" in _bulk(client, [], "suspend")
    uid = _uid(loaded_engine)
    with transaction(loaded_engine) as s:
        assert mk.card_marks(s, uid, int(ids[0])) == mk.Marks()


def test_history_and_other_peoples_cards(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client)
    subscribe(client, "en")
    answer_shown_card(client, "3")
    page = client.get("/browse?reviewed_today=true").get_data(as_text=True)
    (answered,) = PICK_RE.findall(page)
    history = client.get(f"/browse/cards/{answered}").get_data(as_text=True)
    assert "Good" in history and "<svg" in history and "Show as a table" in history
    # Under the chart each answer's day, whole (its bar's label has the time too).
    axis = re.findall(r'<text class="xlabel"[^>]*>([^<]*)</text>', history)
    assert len(axis) == 1 and re.fullmatch(r"[A-Z][a-z]{2} \d{1,2}, \d{4}", axis[0]), axis
    with transaction(loaded_engine) as s:
        other = f.make_user(s, email="bo@example.com")
        theirs = f.make_deck(s, "bos-own", 2, owner_user_id=other)
        hidden = f.card_ids(s, theirs.id)[0]
    assert client.get(f"/browse/cards/{hidden}").status_code == 404
    assert client.get("/browse/cards/99999999999999").status_code == 404
    form = {"csrf_token": csrf(client, "/browse"), "card_id": [answered, str(hidden)]}
    response = client.post("/browse/actions", data={**form, "action": "suspend"})
    assert response.status_code == 404
    with transaction(loaded_engine) as s:
        assert not mk.card_marks(s, _uid(loaded_engine), int(answered)).suspended


def test_history_in_the_persons_language_and_time_zone(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, language="es", timezone="Asia/Seoul")
    subscribe(client, "es")
    answer_shown_card(client, "3")
    (answered,) = PICK_RE.findall(client.get("/browse?reviewed_today=true").get_data(as_text=True))
    page = client.get(f"/browse/cards/{answered}").get_data(as_text=True)
    assert "Historial de la tarjeta" in page and "Bien" in page and "Estabilidad" in page
    with transaction(loaded_engine) as s:
        history = load_history(s, _uid(loaded_engine), int(answered))
    local = history.answers[0].reviewed_at.astimezone(ZoneInfo("Asia/Seoul"))
    assert f"{local.hour}:{local.minute:02d}" in page  # Babel's short time, in Seoul


def test_move_between_own_decks_and_forget_with_anki_options(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    uid = _uid(loaded_engine)
    page = client.get("/browse").get_data(as_text=True)
    assert 'value="move"' not in page  # no own deck: nowhere to move to
    with transaction(loaded_engine) as s:
        first = f.make_deck(s, "ana-first", 2, owner_user_id=uid)
        second = f.make_deck(s, "ana-second", 1, owner_user_id=uid, locales=("es",))
        for deck in (first, second):
            f.subscribe(s, uid, deck)
        mine = [str(i) for i in f.card_ids(s, first.id)]
        (spanish,) = f.card_ids(s, second.id)
        shipped = PICK_RE.findall(page)[0]
    page = client.get("/browse?deck=ana-first").get_data(as_text=True)
    # The search's deck list: every deck browsed, by title, the one searched chosen.
    picker = page[page.index('id="b-deck"') : page.index("</select>", page.index('id="b-deck"'))]
    assert re.findall(r'<option value="([^"]*)"', picker) == [
        "",
        "ana-first",
        "ana-second",
        "eks-model-training",
    ]
    assert '<option value="ana-first" selected lang="en">ana-first (en)</option>' in picker
    assert 'value="move"' in page and '<option value="ana-second" lang="es">ana-second (es)' in page
    page = _bulk(client, mine, "move", action_deck="ana-second", deck="ana-first")
    assert "Moved 2 cards." in page and PICK_RE.findall(page) == []  # the search is kept
    page = client.get("/browse?deck=ana-second").get_data(as_text=True)
    assert PICK_RE.findall(page) == [str(spanish), *mine]  # last in their new deck
    assert "ana-first q1 en" in page  # its text came along
    # Refused, nothing moved: no deck picked, a shipped card.
    assert "Choose one of your own decks" in _bulk(client, mine, "move")
    page = _bulk(client, [shipped], "move", action_deck="ana-first")
    assert "Cards move only from one of your own decks to another." in page
    with transaction(loaded_engine) as s:
        assert set(f.card_ids(s, second.id)) >= {int(i) for i in mine}
    # Forget with Anki's options: studied, then new again with no reviews counted.
    with transaction(loaded_engine) as s:
        f.answer(s, uid, int(mine[0]), "easy", now=utcnow())
    page = _bulk(client, [mine[0]], "forget", restore_position="on", reset_counts="on")
    assert "Forgot 1 card: it is new again." in page
    with transaction(loaded_engine) as s:
        state = s.get(ReviewState, (uid, int(mine[0])))
        assert state is not None and (state.state, state.reps) == (0, 0)


def test_the_browser_history_and_leeches_name_decks_by_title_in_the_studied_language(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "es")
    title = '<td lang="es">Cuestionario sobre entrenamiento de modelos en EKS</td>'
    page = client.get("/browse").get_data(as_text=True)
    in_browser = title.replace("<td ", '<td class="deck-name" ')
    assert page.count(in_browser) == 15 and ">eks-model-training</td>" not in page
    # The deck filter names it so too, on an English page.
    assert (
        '<option value="eks-model-training" lang="es">Cuestionario sobre entrenamiento de '
        "modelos en EKS</option>"
    ) in page
    card = PICK_RE.findall(page)[0]
    history = client.get(f"/browse/cards/{card}").get_data(as_text=True)
    assert '<span lang="es">Cuestionario sobre entrenamiento de modelos en EKS</span>' in history
    uid = _uid(loaded_engine)
    with transaction(loaded_engine) as s:
        deck = s.scalar(select(Card.deck_id).where(Card.id == int(card)))
        s.add(CardMark(user_id=uid, card_id=int(card), deck_id=deck, leech=True))
    leeches = client.get("/leeches").get_data(as_text=True)
    assert title in leeches and "eks-model-training" not in leeches
