"""The teams API end to end, and its authorization: every team route with another team's ids
and with a plain member's token answers 404 or 403 as problem+json, never data."""

from __future__ import annotations

import math
import uuid
from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient
from sqlalchemy import Engine, select

from flashcards.people.accounts import create_user, issue_token
from flashcards.srs.days import study_date
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, Deck
from flashcards.storage.schema import utcnow
from tests import factories as f
from tests.conftest import T0, load_shipped_decks

QUIZ = "Team quiz\nTwo questions\n1. One plus one?\nAnswer\nTwo.\n2. Sky colour?\nAnswer\nBlue.\n"


class Api:
    def __init__(self, client: FlaskClient, token: str) -> None:
        self.client, self.headers = client, {"Authorization": f"Bearer {token}"}

    def __call__(self, method: str, url: str, body: Any = None) -> Any:
        return self.client.open(
            url, method=method, headers=self.headers, json=body if body is not None else None
        )


@pytest.fixture
def world(client: FlaskClient, engine: Engine) -> dict[str, Any]:
    load_shipped_decks(engine)
    tokens = {}
    with transaction(engine) as s:
        for name, locale in (("lead", "en"), ("ana", "es"), ("ben", "ko"), ("eve", "en")):
            user = create_user(s, f"{name}@example.com", "password1", now=T0, locale=locale)
            tokens[name] = (user.id, issue_token(s, user.id, now=T0))
    api = {name: Api(client, tok) for name, (_, tok) in tokens.items()}
    ids = {name: uid for name, (uid, _) in tokens.items()}
    team = api["lead"]("POST", "/api/v1/teams", {"name": "Platform"}).get_json()
    other = api["eve"]("POST", "/api/v1/teams", {"name": "Other"}).get_json()
    inv = api["lead"]("POST", f"/api/v1/teams/{team['id']}/invitations", {"max_uses": 5})
    assert inv.status_code == 201
    for name in ("ana", "ben"):
        joined = api[name]("POST", "/api/v1/teams/join", {"token": inv.get_json()["token"]})
        assert joined.status_code == 200 and joined.get_json()["role"] == "member"
    deck = api["lead"](
        "POST",
        f"/api/v1/teams/{team['id']}/decks",
        {"format": "quiz", "content": QUIZ, "locale": "en"},
    )
    assert deck.status_code == 201, deck.get_json()
    other_deck = api["eve"](
        "POST",
        f"/api/v1/teams/{other['id']}/decks",
        {"format": "csv", "content": "front,back\nQ,A\n", "locale": "en", "title": "Secret"},
    ).get_json()
    other_inv = api["eve"]("POST", f"/api/v1/teams/{other['id']}/invitations").get_json()
    return {
        "api": api,
        "ids": ids,
        "team": team["id"],
        "other": other["id"],
        "deck": deck.get_json()["deck"],
        "other_deck": other_deck["deck"],
        "inv": inv.get_json()["id"],
        "other_inv": other_inv["id"],
    }


def test_lead_flow_two_languages_progress_and_hardest(world: dict[str, Any]) -> None:
    api, t = world["api"], world["team"]
    r = api["lead"](
        "PUT",
        f"/api/v1/teams/{t}/assignments/eks-model-training",
        {"due_date": (study_date(utcnow(), "UTC", 4) + timedelta(days=8)).isoformat()},
    )
    assert r.status_code == 201
    decks = {d["slug"]: d for d in api["ana"]("GET", "/api/v1/decks").get_json()["decks"]}
    assert decks["eks-model-training"]["subscription"] == {"locale": "es"}
    assert world["deck"] in decks and world["other_deck"] not in decks
    decks_ben = {d["slug"]: d for d in api["ben"]("GET", "/api/v1/decks").get_json()["decks"]}
    assert decks_ben["eks-model-training"]["subscription"] == {"locale": "ko"}

    for _ in range(3):
        card = api["ana"]("GET", "/api/v1/study/next?deck=eks-model-training").get_json()["card"]
        answer = {"card_id": card["id"], "rating": "again", "review_id": str(uuid.uuid4())}
        assert api["ana"]("POST", "/api/v1/reviews", answer).status_code == 201

    mine = api["ana"]("GET", f"/api/v1/teams/{t}/assignments").get_json()["assignments"]
    assert [(a["deck"], a["introduced"], a["total"]) for a in mine] == [
        ("eks-model-training", 3, 15)
    ]
    board = api["lead"]("GET", f"/api/v1/teams/{t}/dashboard")
    assert board.status_code == 200
    rows = {m["email"]: m for m in board.get_json()["members"]}
    assert set(rows) == {"lead@example.com", "ana@example.com", "ben@example.com"}
    assert rows["ana@example.com"]["introduced"] == 3
    assert rows["ana@example.com"]["answers_7d"] == 3
    # Three cards just answered Again are in learning: no recall to predict yet (it would read
    # as about 100 % minutes after the answers).
    assert rows["ana@example.com"]["in_review"] == 0
    assert rows["ana@example.com"]["predicted_recall"] is None
    assert rows["ben@example.com"]["introduced"] == 0
    # The team's own deck is not assigned: its 2 cards are no one's progress to make.
    assert rows["ana@example.com"]["total"] == 15
    hard = api["lead"]("GET", f"/api/v1/teams/{t}/hardest").get_json()["cards"]
    assert len(hard) == 3 and all(c["again_share"] == 1.0 for c in hard)
    csv_text = api["lead"]("GET", f"/api/v1/teams/{t}/dashboard.csv").get_data(as_text=True)
    assert csv_text.splitlines()[0].startswith("email,") and "ana@example.com" in csv_text
    # Members do not see each other.
    for url in ("dashboard", "dashboard.csv", "members", "hardest"):
        r = api["ana"]("GET", f"/api/v1/teams/{t}/{url}")
        assert r.status_code == 403 and r.mimetype == "application/problem+json"
        assert "ben@example.com" not in r.get_data(as_text=True)


def test_team_deck_edit_and_member_removal(world: dict[str, Any]) -> None:
    api, t, slug = world["api"], world["team"], world["deck"]
    r = api["lead"](
        "PUT",
        f"/api/v1/teams/{t}/decks/{slug}/cards/q01",
        {"locale": "en", "front": "1+1?", "back": "2"},
    )
    assert r.status_code == 200 and r.get_json()["updated"] == ["q01"]
    cards = api["ana"]("GET", f"/api/v1/teams/{t}/decks/{slug}").get_json()
    assert cards["locales"]["en"]["cards"][0]["front"] == "1+1?"
    keys = [c["key"] for c in cards["locales"]["en"]["cards"]]
    assert api["lead"]("DELETE", f"/api/v1/teams/{t}/decks/{slug}/cards/q01").status_code == 204
    # A retired card is not edited back to life.
    r = api["lead"](
        "PUT",
        f"/api/v1/teams/{t}/decks/{slug}/cards/q01",
        {"locale": "en", "front": "1+1 again?", "back": "2"},
    )
    assert r.status_code == 409 and r.get_json()["field"] == "key"
    cards = api["ana"]("GET", f"/api/v1/teams/{t}/decks/{slug}").get_json()
    assert [c["key"] for c in cards["locales"]["en"]["cards"]] == keys[1:]
    r = api["lead"]("DELETE", f"/api/v1/teams/{t}/members/{world['ids']['ana']}")
    assert r.status_code == 204
    assert api["ana"]("GET", f"/api/v1/teams/{t}/decks/{slug}").status_code == 404
    slugs = [d["slug"] for d in api["ana"]("GET", "/api/v1/decks").get_json()["decks"]]
    assert slug not in slugs
    r = api["lead"]("POST", f"/api/v1/teams/{t}/transfer", {"user_id": world["ids"]["ben"]})
    assert r.status_code == 200
    assert api["lead"]("DELETE", f"/api/v1/teams/{t}").status_code == 403
    assert api["ben"]("DELETE", f"/api/v1/teams/{t}").status_code == 204


def test_a_lead_tags_the_teams_cards_through_the_api(world: dict[str, Any], engine: Engine) -> None:
    """Tags on a team card, as on one's own: given when it is added, changed with an edit,
    kept by an edit that leaves them out, shared by a Cloze text's cards; a bad one is a 422
    that changes nothing."""
    api, t, slug = world["api"], world["team"], world["deck"]
    cards = f"/api/v1/teams/{t}/decks/{slug}/cards"

    def tags(key: str) -> list[str]:
        with engine.connect() as c:
            found = c.scalar(select(Card.tags).join(Deck).where(Deck.slug == slug, Card.key == key))
            return list(found or [])

    added = api["lead"]("POST", cards, {"front": "Pod?", "back": "Containers.", "tags": ["k8s"]})
    assert added.status_code == 201, added.get_json()
    (key,) = added.get_json()["keys"]
    assert tags(key) == ["k8s"]
    edit = {"locale": "en", "front": "1+1?", "back": "2", "tags": ["week-1", "math"]}
    assert api["lead"]("PUT", f"{cards}/q01", edit).status_code == 200
    assert tags("q01") == ["week-1", "math"]
    del edit["tags"]
    assert api["lead"]("PUT", f"{cards}/q01", edit).status_code == 200
    assert tags("q01") == ["week-1", "math"]
    bad = api["lead"]("PUT", f"{cards}/q01", {**edit, "front": "3?", "tags": ["two words"]})
    assert bad.status_code == 422 and bad.get_json()["field"] == "tags"
    assert tags("q01") == ["week-1", "math"]
    # Members read them with the cards (the same in every language).
    shown = api["ana"]("GET", f"/api/v1/teams/{t}/decks/{slug}").get_json()["locales"]["en"]
    assert [(c["front"], c["tags"]) for c in shown["cards"] if c["key"] == "q01"] == [
        ("1+1?", ["week-1", "math"])
    ]
    assert api["ana"]("PUT", f"{cards}/q01", {**edit, "tags": []}).status_code == 403
    cloze = {"front": "{{c1::Pods}} run on {{c2::nodes}}.", "tags": ["k8s"]}
    keys = api["lead"]("POST", cards, cloze).get_json()["keys"]
    text = {"text": "{{c1::Pods}} run on {{c2::nodes}}.", "tags": ["k8s", "week-2"]}
    assert api["lead"]("PUT", f"{cards}/{keys[0]}/cloze", text).status_code == 200
    assert [tags(k) for k in keys] == [["k8s", "week-2"]] * 2
    del text["tags"]
    assert api["lead"]("PUT", f"{cards}/{keys[0]}/cloze", text).status_code == 200
    assert [tags(k) for k in keys] == [["k8s", "week-2"]] * 2


def test_a_lead_adds_and_edits_a_cloze_text_through_the_api(
    world: dict[str, Any], engine: Engine
) -> None:
    api, t, slug = world["api"], world["team"], world["deck"]
    cards = f"/api/v1/teams/{t}/decks/{slug}/cards"
    text = {"front": "{{c1::Kubernetes}} schedules {{c2::pods::what}}.", "back": "On nodes."}
    assert api["ana"]("POST", cards, text).status_code == 403
    added = api["lead"]("POST", cards, text)
    assert added.status_code == 201, added.get_json()
    assert added.get_json() == {"keys": ["c003-c1", "c003-c2"]}
    shown = api["ana"]("GET", f"/api/v1/teams/{t}/decks/{slug}").get_json()["locales"]["en"]
    assert [(c["key"], c["front"], c["explanation"]) for c in shown["cards"][2:]] == [
        ("c003-c1", "[...] schedules pods.", "On nodes."),
        ("c003-c2", "Kubernetes schedules [what].", "On nodes."),
    ]
    # A plain new card by the same route.
    plain = api["lead"]("POST", cards, {"front": "Three?", "back": "3"})
    assert plain.status_code == 201 and plain.get_json() == {"keys": ["c005"]}
    # Read and edited as the text, by a lead: a member answers a card first, and keeps it.
    cloze = f"{cards}/c003-c1/cloze"
    assert api["ana"]("GET", cloze).status_code == 403
    assert api["lead"]("GET", cloze).get_json() == {
        "text": "{{c1::Kubernetes}} schedules {{c2::pods::what}}.",
        "extra": "On nodes.",
        "keys": ["c003-c1", "c003-c2"],
        "added": [],
        "retired": [],
    }
    with transaction(engine) as s:
        card_id = s.scalar(select(Card.id).where(Card.key == "c003-c2"))
        f.answer(s, world["ids"]["ana"], card_id, 3, now=utcnow())
    edit = {"text": "{{c2::Pods}} run on {{c3::nodes}}.", "extra": ""}
    assert api["ana"]("PUT", cloze, edit).status_code == 403
    saved = api["lead"]("PUT", cloze, edit)
    assert saved.status_code == 200, saved.get_json()
    assert saved.get_json() == {
        "text": "{{c2::Pods}} run on {{c3::nodes}}.",
        "extra": "",
        "keys": ["c003-c2", "c003-c3"],
        "added": ["c003-c3"],
        "retired": ["c003-c1"],
    }
    shown = api["ana"]("GET", f"/api/v1/teams/{t}/decks/{slug}").get_json()["locales"]["en"]
    assert [c["key"] for c in shown["cards"]] == ["q01", "q02", "c003-c2", "c005", "c003-c3"]
    progress = api["ana"]("GET", f"/api/v1/cards?deck={slug}&q=Pods").get_json()
    assert {c["key"]: c["reviews"] for c in progress["cards"]} == {"c003-c2": 1, "c003-c3": 0}
    # A plain card has no text to edit; a text without a deletion changes nothing.
    for refused in (
        api["lead"]("GET", f"{cards}/q01/cloze"),
        api["lead"]("PUT", f"{cards}/c005/cloze", edit),
    ):
        assert refused.status_code == 404
        assert refused.get_json()["type"].endswith("/not-cloze-card")
    refused = api["lead"]("PUT", f"{cards}/c003-c2/cloze", {"text": "no blanks"})
    assert refused.status_code == 422 and refused.get_json()["type"].endswith("no-cloze-deletion")
    assert api["lead"]("GET", f"{cards}/c003-c2/cloze").get_json()["keys"] == ["c003-c2", "c003-c3"]


def _routes(w: dict[str, Any]) -> list[tuple[str, str, Any]]:
    t, d, ana = w["team"], w["deck"], w["ids"]["ana"]
    upload = {"format": "quiz", "content": QUIZ, "locale": "en"}
    return [
        ("GET", f"/api/v1/teams/{t}", None),
        ("PATCH", f"/api/v1/teams/{t}", {"name": "x"}),
        ("DELETE", f"/api/v1/teams/{t}", None),
        ("GET", f"/api/v1/teams/{t}/members", None),
        ("PATCH", f"/api/v1/teams/{t}/members/{ana}", {"role": "manager"}),
        ("DELETE", f"/api/v1/teams/{t}/members/{ana}", None),
        ("DELETE", f"/api/v1/teams/{t}/membership", None),
        ("POST", f"/api/v1/teams/{t}/transfer", {"user_id": ana}),
        ("GET", f"/api/v1/teams/{t}/invitations", None),
        ("POST", f"/api/v1/teams/{t}/invitations", {}),
        ("DELETE", f"/api/v1/teams/{t}/invitations/{w['inv']}", None),
        ("GET", f"/api/v1/teams/{t}/assignments", None),
        ("PUT", f"/api/v1/teams/{t}/assignments/eks-model-training", {}),
        ("DELETE", f"/api/v1/teams/{t}/assignments/eks-model-training", None),
        ("GET", f"/api/v1/teams/{t}/decks", None),
        ("POST", f"/api/v1/teams/{t}/decks", upload),
        ("GET", f"/api/v1/teams/{t}/decks/{d}", None),
        ("DELETE", f"/api/v1/teams/{t}/decks/{d}", None),
        ("PUT", f"/api/v1/teams/{t}/decks/{d}/source", upload),
        (
            "PUT",
            f"/api/v1/teams/{t}/decks/{d}/cards/q01",
            {"locale": "en", "front": "a", "back": "b"},
        ),
        ("DELETE", f"/api/v1/teams/{t}/decks/{d}/cards/q01", None),
        ("POST", f"/api/v1/teams/{t}/decks/{d}/cards", {"front": "a", "back": "b"}),
        ("GET", f"/api/v1/teams/{t}/decks/{d}/cards/q01/cloze", None),
        ("PUT", f"/api/v1/teams/{t}/decks/{d}/cards/q01/cloze", {"text": "{{c1::a}}"}),
        ("GET", f"/api/v1/teams/{t}/dashboard", None),
        ("GET", f"/api/v1/teams/{t}/dashboard.csv", None),
        ("GET", f"/api/v1/teams/{t}/hardest", None),
    ]


def test_a_cloze_csv_makes_a_card_for_each_number_and_keeps_them_on_reupload(
    world: dict[str, Any], engine: Engine
) -> None:
    api, t = world["api"], world["team"]
    csv_text = (
        "front,back\n"
        '"{{c1::Kubernetes}} schedules {{c2::pods::what}}.",On nodes.\n'
        "What runs a pod?,A node.\n"
    )
    upload = {"format": "csv", "content": csv_text, "locale": "en", "title": "Cluster"}
    made = api["lead"]("POST", f"/api/v1/teams/{t}/decks", upload)
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["added"] == ["q01-c1", "q01-c2", "q02"]
    slug = made.get_json()["deck"]
    deck = f"/api/v1/teams/{t}/decks/{slug}"
    shown = api["ana"]("GET", deck).get_json()["locales"]["en"]["cards"]
    assert [(c["key"], c["front"], c["back"], c["explanation"]) for c in shown] == [
        ("q01-c1", "[...] schedules pods.", "Kubernetes schedules pods.", "On nodes."),
        ("q01-c2", "Kubernetes schedules [what].", "Kubernetes schedules pods.", "On nodes."),
        ("q02", "What runs a pod?", "A node.", ""),
    ]
    # Siblings of one text, as the API's own Cloze cards are: read and edited as the text.
    assert api["lead"]("GET", f"{deck}/cards/q01-c2/cloze").get_json() == {
        "text": "{{c1::Kubernetes}} schedules {{c2::pods::what}}.",
        "extra": "On nodes.",
        "keys": ["q01-c1", "q01-c2"],
        "added": [],
        "retired": [],
    }
    # A member studies them once assigned, and keeps the answer through a re-upload.
    assert api["lead"]("PUT", f"/api/v1/teams/{t}/assignments/{slug}", {}).status_code == 201
    card = api["ana"]("GET", f"/api/v1/study/next?deck={slug}").get_json()["card"]
    assert card["key"] == "q01-c1"
    answer = {"card_id": card["id"], "rating": "good", "review_id": str(uuid.uuid4())}
    assert api["ana"]("POST", "/api/v1/reviews", answer).status_code == 201
    again = api["lead"]("PUT", f"{deck}/source", {**upload, "content": csv_text + "Three?,3\n"})
    assert again.status_code == 200, again.get_json()
    assert (again.get_json()["added"], again.get_json()["updated"]) == (["q03"], [])
    assert again.get_json()["retired"] == []
    progress = api["ana"]("GET", f"/api/v1/cards?deck={slug}&q=schedules").get_json()
    assert {c["key"]: c["reviews"] for c in progress["cards"]} == {"q01-c1": 1, "q01-c2": 0}
    # A translation's Cloze row names the same cards, by its row's place.
    spanish = 'front,back\n"{{c1::Kubernetes}} planifica {{c2::pods::qué}}.",\n'
    translated = api["lead"]("PUT", f"{deck}/source", {**upload, "content": spanish,
                                                       "locale": "es"})  # fmt: skip
    assert translated.status_code == 200, translated.get_json()
    shown = api["ana"]("GET", deck).get_json()["locales"]["es"]["cards"]
    assert [(c["key"], c["front"]) for c in shown] == [
        ("q01-c1", "[...] planifica pods."),
        ("q01-c2", "Kubernetes planifica [qué]."),
    ]


def test_outsiders_get_404_on_every_route(world: dict[str, Any]) -> None:
    eve = world["api"]["eve"]
    for method, url, body in _routes(world):
        r = eve(method, url, body)
        assert r.status_code == 404, (method, url, r.status_code)
        assert r.mimetype == "application/problem+json"
        text = r.get_data(as_text=True)
        assert "Platform" not in text and "ana@example.com" not in text


def test_plain_members_get_403_on_lead_routes(world: dict[str, Any]) -> None:
    ben = world["api"]["ben"]
    t = world["team"]
    readable = {
        f"/api/v1/teams/{t}",
        f"/api/v1/teams/{t}/assignments",
        f"/api/v1/teams/{t}/decks",
        f"/api/v1/teams/{t}/decks/{world['deck']}",
    }
    for method, url, body in _routes(world):
        if url.endswith("/membership"):
            continue  # leaving is every member's right; tested below
        r = ben(method, url, body)
        if method == "GET" and url in readable:
            assert r.status_code == 200, (method, url)
        else:
            assert r.status_code == 403, (method, url, r.status_code)
            assert r.mimetype == "application/problem+json"
    assert ben("DELETE", f"/api/v1/teams/{t}/membership").status_code == 204
    assert ben("GET", f"/api/v1/teams/{t}").status_code == 404


def test_other_teams_ids_inside_my_team_are_404(world: dict[str, Any]) -> None:
    lead, t = world["api"]["lead"], world["team"]
    eve_id, other_deck = world["ids"]["eve"], world["other_deck"]
    checks = [
        ("DELETE", f"/api/v1/teams/{t}/invitations/{world['other_inv']}", None),
        ("PATCH", f"/api/v1/teams/{t}/members/{eve_id}", {"role": "manager"}),
        ("DELETE", f"/api/v1/teams/{t}/members/{eve_id}", None),
        ("POST", f"/api/v1/teams/{t}/transfer", {"user_id": eve_id}),
        ("PUT", f"/api/v1/teams/{t}/assignments/{other_deck}", {}),
        ("GET", f"/api/v1/teams/{t}/decks/{other_deck}", None),
        ("DELETE", f"/api/v1/teams/{t}/decks/{other_deck}", None),
        (
            "PUT",
            f"/api/v1/teams/{t}/decks/{other_deck}/cards/q01",
            {"locale": "en", "front": "a", "back": "b"},
        ),
        ("GET", f"/api/v1/teams/{world['other']}/decks/{other_deck}", None),
        ("GET", f"/api/v1/teams/{2**40}", None),
    ]
    for method, url, body in checks:
        r = lead(method, url, body)
        assert r.status_code == 404, (method, url, r.status_code)
        assert "Secret" not in r.get_data(as_text=True)
    hard = lead("GET", f"/api/v1/teams/{t}/hardest?deck={other_deck}").get_json()
    assert hard == {"cards": []}


def test_invitation_links_carry_a_label(world: dict[str, Any]) -> None:
    lead, t = world["api"]["lead"], world["team"]
    made = lead("POST", f"/api/v1/teams/{t}/invitations", {"label": "March cohort"})
    assert made.status_code == 201 and made.get_json()["label"] == "March cohort"
    before = lead("GET", f"/api/v1/teams/{t}/invitations").get_json()["invitations"]
    for bad in ("x" * 101, ["March"]):
        refused = lead("POST", f"/api/v1/teams/{t}/invitations", {"label": bad})
        assert refused.status_code == 422 and refused.get_json()["field"] == "label"
    listed = lead("GET", f"/api/v1/teams/{t}/invitations").get_json()["invitations"]
    assert listed == before  # nothing made by a refused request
    assert [i["label"] for i in listed] == ["March cohort", ""]  # newest first


def test_bad_input_is_a_precise_problem(world: dict[str, Any]) -> None:
    lead, t = world["api"]["lead"], world["team"]
    cases = [
        ("POST", "/api/v1/teams", {"name": ""}, 422, "name"),
        ("POST", "/api/v1/teams", {"name": "x", "extra": 1}, 422, "extra"),
        (
            "PUT",
            f"/api/v1/teams/{t}/assignments/eks-model-training",
            {"due_date": "soon"},
            422,
            "due_date",
        ),
        ("POST", f"/api/v1/teams/{t}/invitations", {"max_uses": 0}, 422, "max_uses"),
        (
            "POST",
            f"/api/v1/teams/{t}/decks",
            {"format": "pdf", "content": "x", "locale": "en"},
            422,
            "format",
        ),
        (
            "POST",
            f"/api/v1/teams/{t}/decks",
            {"format": "quiz", "content": "x", "locale": "en"},
            422,
            None,
        ),
        (
            "PATCH",
            f"/api/v1/teams/{t}/members/{world['ids']['lead']}",
            {"role": "member"},
            409,
            "role",
        ),
        ("POST", "/api/v1/teams/join", {"token": "nope"}, 404, "token"),
        ("GET", f"/api/v1/teams/{t}/hardest?limit=0", None, 422, "limit"),
        # What no database column can hold is refused, never a server error.
        ("POST", "/api/v1/teams", {"name": "a\u0000b"}, 422, "name"),
        ("POST", "/api/v1/teams", {"name": "a\ud800b"}, 400, None),
        ("POST", "/api/v1/teams/join", {"token": "a\u0000"}, 422, "token"),
        ("POST", "/api/v1/teams/join", {"token": "a b"}, 404, "token"),
        ("GET", f"/api/v1/teams/{t}/decks/a%00b", None, 404, None),
        ("PUT", f"/api/v1/teams/{t}/assignments/%00", {}, 404, None),
        ("GET", f"/api/v1/teams/{t}/hardest?deck=%00", None, 400, None),  # NUL is not text
        ("GET", f"/api/v1/teams/{t}/hardest?limit=%C2%B2", None, 422, "limit"),  # "²"
        (
            "PUT",
            f"/api/v1/teams/{t}/decks/{world['deck']}/cards/%00",
            {"locale": "en", "front": "a", "back": "b"},
            422,
            "key",
        ),
    ]
    for method, url, body, status, field in cases:
        r = lead(method, url, body)
        assert r.status_code == status, (url, r.get_json())
        assert r.mimetype == "application/problem+json"
        if field:
            assert r.get_json()["field"] == field


def test_members_see_their_pace_as_of_today(world: dict[str, Any]) -> None:
    api, t = world["api"], world["team"]
    today = study_date(utcnow(), "UTC", 4)
    due = today + timedelta(days=4)
    r = api["lead"](
        "PUT", f"/api/v1/teams/{t}/assignments/eks-model-training", {"due_date": due.isoformat()}
    )
    assert r.status_code == 201
    assert api["ana"]("PATCH", "/api/v1/me", {"new_per_day": 1}).status_code == 200
    mine = api["ana"]("GET", f"/api/v1/teams/{t}/assignments").get_json()["assignments"]
    eks = next(a for a in mine if a["deck"] == "eks-model-training")
    assert eks["new_per_day"] == math.ceil(15 / 5)
    assert eks["due_date"] == due.isoformat() and eks["status"] == "on_track"


def test_a_lead_cannot_assign_decks_they_see_but_the_team_does_not_own(
    world: dict[str, Any], engine: Engine
) -> None:
    """The lead's own private deck, and a deck of another team the lead is also in: the lead
    can study both, but assigning either would show it to people who must not see it."""
    lead, eve, t = world["api"]["lead"], world["api"]["eve"], world["team"]
    with transaction(engine) as s:
        f.make_deck(s, "leads-private", 1, owner_user_id=world["ids"]["lead"])
    token = eve("POST", f"/api/v1/teams/{world['other']}/invitations").get_json()["token"]
    assert lead("POST", "/api/v1/teams/join", {"token": token}).status_code == 200
    for slug in ("leads-private", world["other_deck"]):
        assert lead("GET", f"/api/v1/cards/{_first_card(engine, slug)}").status_code == 200
        r = lead("PUT", f"/api/v1/teams/{t}/assignments/{slug}", {})
        assert r.status_code == 404, (slug, r.get_json())
    assigned = lead("GET", f"/api/v1/teams/{t}/assignments").get_json()["assignments"]
    assert [a["deck"] for a in assigned] == []
    ana_decks = world["api"]["ana"]("GET", "/api/v1/decks").get_json()["decks"]
    assert {d["slug"] for d in ana_decks} & {"leads-private", world["other_deck"]} == set()


def _first_card(engine: Engine, slug: str) -> int:
    with transaction(engine) as s:
        return s.scalars(select(Card.id).join(Deck).where(Deck.slug == slug)).first() or 0


def test_a_manager_cannot_do_what_only_the_owner_may(world: dict[str, Any]) -> None:
    lead, ben, t = world["api"]["lead"], world["api"]["ben"], world["team"]
    ana_id = world["ids"]["ana"]
    ben_id = world["ids"]["ben"]
    r = lead("PATCH", f"/api/v1/teams/{t}/members/{ben_id}", {"role": "manager"})
    assert r.status_code == 200 and r.get_json()["role"] == "manager"
    for method, url, body in [
        ("DELETE", f"/api/v1/teams/{t}", None),
        ("PATCH", f"/api/v1/teams/{t}/members/{ana_id}", {"role": "manager"}),
        ("POST", f"/api/v1/teams/{t}/transfer", {"user_id": ben_id}),
    ]:
        r = ben(method, url, body)
        assert r.status_code == 403, (method, url, r.status_code)
        assert r.mimetype == "application/problem+json"
    # What a manager may do, they can: the refusals above are about the role.
    assert ben("GET", f"/api/v1/teams/{t}/members").status_code == 200
    members = {
        m["user_id"]: m["role"]
        for m in lead("GET", f"/api/v1/teams/{t}/members").get_json()["members"]
    }
    assert members[ana_id] == "member" and members[world["ids"]["lead"]] == "owner"


def test_joining_through_the_api_with_a_revoked_link_is_404(world: dict[str, Any]) -> None:
    lead, eve, t = world["api"]["lead"], world["api"]["eve"], world["team"]
    link = lead("POST", f"/api/v1/teams/{t}/invitations").get_json()
    assert lead("DELETE", f"/api/v1/teams/{t}/invitations/{link['id']}").status_code == 204
    r = eve("POST", "/api/v1/teams/join", {"token": link["token"]})
    assert r.status_code == 404 and "revoked" in r.get_json()["detail"]
    assert eve("GET", f"/api/v1/teams/{t}").status_code == 404


def test_a_due_date_in_the_past_is_refused(world: dict[str, Any]) -> None:
    lead, t = world["api"]["lead"], world["team"]
    url = f"/api/v1/teams/{t}/assignments/eks-model-training"
    r = lead("PUT", url, {"due_date": "2020-01-01"})
    assert r.status_code == 422 and r.mimetype == "application/problem+json"
    assert r.get_json()["field"] == "due_date"
    assert lead("GET", f"/api/v1/teams/{t}/assignments").get_json()["assignments"] == []
    today = study_date(utcnow(), "UTC", 4).isoformat()  # the lead's study day
    assert lead("PUT", url, {"due_date": today}).status_code == 201
    assert lead("PUT", url, {"due_date": "2020-01-01"}).status_code == 422
    assigned = lead("GET", f"/api/v1/teams/{t}/assignments").get_json()["assignments"]
    assert [a["due_date"] for a in assigned] == [today]
