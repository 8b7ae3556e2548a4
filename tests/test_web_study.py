"""The study session through plain forms (no JavaScript), in the learner's language."""

from __future__ import annotations

import re

import pytest
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from flashcards.storage.models import ReviewLog, ReviewState

from .web_helpers import CARD_ID_RE, REVIEW_ID_RE, csrf, settings_form, sign_up, subscribe

INTERVAL_RE = re.compile(r'class="rate-interval">([^<]+)<')


def _answer_form(client: FlaskClient, path: str = "/study") -> dict[str, str]:
    page = client.get(path).get_data(as_text=True)
    card = CARD_ID_RE.search(page)
    review = REVIEW_ID_RE.search(page)
    assert card and review, page
    return {"csrf_token": csrf(client, path), "card_id": card[1], "review_id": review[1]}


def _logs(engine: Engine) -> int:
    with Session(engine) as s:
        return s.scalar(select(func.count()).select_from(ReviewLog)) or 0


@pytest.mark.parametrize(
    ("language", "question", "labels", "intervals"),
    [
        ("ko", "텐서 병렬화", ["다시", "어려움", "알맞음", "쉬움"], ["1분", "6분", "10분", "7일"]),
        (
            "es",
            "paralelismo de tensores",
            ["Otra vez", "Difícil", "Bien", "Fácil"],
            ["1 minuto", "6 minutos", "10 minutos", "7 días"],
        ),
    ],
)
def test_study_page_is_in_the_learners_language(
    client: FlaskClient,
    loaded_engine: Engine,
    language: str,
    question: str,
    labels: list[str],
    intervals: list[str],
) -> None:
    sign_up(client, language=language)
    subscribe(client, language)
    front = client.get("/study").get_data(as_text=True)
    assert f'<html lang="{language}">' in front
    assert question in front.lower() or question in front
    assert re.search(r'<div id="answer"[^>]*hidden', front), "the back is hidden at first"
    reveal = re.search(r'id="reveal"[^>]* href="([^"]+)"', front)
    assert reveal, front
    back = client.get(reveal[1].replace("&amp;", "&")).get_data(as_text=True)
    assert not re.search(r'<div id="answer"[^>]*hidden', back)
    for label in labels:
        assert f'<span class="rate-label">{label}</span>' in back
    assert INTERVAL_RE.findall(back) == intervals


def test_answer_is_applied_once_however_often_it_is_sent(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    form = _answer_form(client)
    # A second tab showing the same card carries the same review id.
    assert _answer_form(client)["review_id"] == form["review_id"]
    r = client.post("/study/answer", data={**form, "rating": "3"})
    assert r.status_code == 303 and r.location == "/study"
    # Said of the card just answered, above the next one.
    page = client.get("/study").get_data(as_text=True)
    assert "Previous card: Good, next review in 10 minutes." in page
    for rating in ("3", "1"):  # double click, back button, the other tab
        assert client.post("/study/answer", data={**form, "rating": rating}).status_code == 303
    assert _logs(loaded_engine) == 1
    counts = re.findall(r'class="num">(\d+)<', client.get("/study").get_data(as_text=True))
    assert counts[:3] == ["14", "1", "0"]


def test_undo_restores_the_card(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client)
    subscribe(client, "en")
    first = _answer_form(client)
    client.post("/study/answer", data={**first, "rating": "4"})
    assert _answer_form(client)["card_id"] != first["card_id"]
    r = client.post("/study/undo", data={"csrf_token": first["csrf_token"]})
    assert r.status_code == 303
    page = client.get("/study").get_data(as_text=True)
    assert "Undone" in page
    assert CARD_ID_RE.search(page)[1] == first["card_id"]  # type: ignore[index]
    assert _logs(loaded_engine) == 0
    with Session(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(ReviewState)) == 0
    r = client.post("/study/undo", data={"csrf_token": first["csrf_token"]})
    assert "nothing to undo" in client.get("/study").get_data(as_text=True)


def test_bad_answers_never_fail_with_a_server_error(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    form = _answer_form(client)
    for bad in (
        {"rating": "5"},
        {"rating": "x"},
        {"rating": "3", "review_id": "not-a-uuid"},
        {"rating": "3", "card_id": "999999"},
        {"rating": "3", "card_id": str(2**40)},
        {"rating": "3", "card_id": "-1"},
        {"rating": "3", "card_id": ""},
    ):
        r = client.post("/study/answer", data={**form, **bad})
        assert r.status_code == 303, bad
    assert _logs(loaded_engine) == 0
    assert client.get("/study?deck=nope").status_code == 404


def test_finished_screen_says_when_the_next_card_is_due(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, language="es")
    subscribe(client, "es")
    settings = client.get("/settings").get_data(as_text=True)
    assert "Ajustes" in settings
    r = client.post(
        "/settings",
        data=settings_form(client, timezone="Europe/Madrid", new_per_day="1"),
    )
    assert r.status_code == 302
    client.post("/study/answer", data={**_answer_form(client), "rating": "4"})
    page = client.get("/study").get_data(as_text=True)
    assert 'id="next-due"' in page and "La próxima tarjeta estará lista dentro de" in page


def test_settings_reject_out_of_range_values_naming_the_field(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    base = settings_form(client, display_name="Ana")
    for field, value, label in (
        ("desired_retention", "0.5", "Desired retention"),
        ("day_start_hour", "24", "New day starts at"),
        ("timezone", "Mars/Olympus", "Time zone"),
        ("learning_steps", "one", "Learning steps"),
        ("learning_steps", "inf", "Learning steps"),
        ("relearning_steps", "1e400", "Relearning steps"),
        ("learning_steps", "nan", "Learning steps"),
        ("new_per_day", "lots", "New cards per day"),
        ("new_per_day", "²", "New cards per day"),
        ("reviews_per_day", "9" * 5000, "Reviews per day"),
        ("locale", "fr", "Language"),  # a select: its message is shown by it too
    ):
        r = client.post("/settings", data={**base, field: value})
        assert r.status_code == 422, field
        assert f"Check “{label}" in r.get_data(as_text=True), field  # the field's message
    # A number's message says what it may be, as the page's language writes numbers.
    r = client.post("/settings", data={**base, "desired_retention": "0.5"})
    assert "Check “Desired retention”: give a number from 0.7 to 0.99." in r.get_data(as_text=True)
    r = client.post("/settings", data={**base, "reviews_per_day": "100000"})
    assert "give a number from 0 to 99,999." in r.get_data(as_text=True)
    r = client.post("/settings", data={**base, "learning_steps": "1 2 3 4 5 6 7 8 9 10 11"})
    assert (
        "give at most 10 steps, separated by spaces, such as 1m 10m (a number alone is "
        "minutes), each at most 1d." in r.get_data(as_text=True)
    )
    assert client.post("/settings", data=base).status_code == 302
    # Switching the language says so in the new one, on the page that follows.
    r = client.post("/settings", data={**base, "locale": "ko"}, follow_redirects=True)
    assert '<html lang="ko">' in r.get_data(as_text=True)
    assert "설정을 저장했습니다." in r.get_data(as_text=True)


def test_steps_are_read_and_shown_with_the_languages_decimal_mark(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, language="es")
    # One step of a minute and a half, then ten minutes; shown back as Anki writes steps.
    form = settings_form(client, learning_steps="1,5 10", relearning_steps="1440")
    assert client.post("/settings", data=form).status_code == 302
    me = client.get("/settings").get_data(as_text=True)
    assert 'value="90s 10m"' in me and 'value="1d"' in me  # no "1.440" to misread
    # In English a comma separates steps, as a space does.
    assert client.post("/settings", data={**form, "locale": "en"}).status_code == 302
    assert client.post("/settings", data={**form, "locale": "en"}).status_code == 302
    assert 'value="1m 5m 10m"' in client.get("/settings").get_data(as_text=True)
    # Anki's own way of writing them, units and all, and back as it was typed.
    steps = {"learning_steps": "30s 1m 10M 1h", "relearning_steps": "1d"}
    assert client.post("/settings", data={**form, **steps}).status_code == 302
    me = client.get("/settings").get_data(as_text=True)
    assert 'value="30s 1m 10m 1h"' in me and 'value="1d"' in me
    # A comma between steps separates them in Spanish too; between digits it is a decimal.
    spanish = {"locale": "es", "learning_steps": "1m, 1,5m, 10m", "relearning_steps": "10"}
    assert client.post("/settings", data={**form, **spanish}).status_code == 302
    assert 'value="1m 90s 10m"' in client.get("/settings").get_data(as_text=True)
    assert client.post("/settings", data={**form, **steps}).status_code == 302
    for bad in ("2d", "1w", "m", "1m10m", "0s"):
        r = client.post("/settings", data={**form, "learning_steps": bad})
        assert r.status_code == 422, bad
    assert 'value="30s 1m 10m 1h"' in client.get("/settings").get_data(as_text=True)


@pytest.mark.parametrize(
    ("language", "counts", "states"),
    [
        (
            "ko",
            ["새 카드 15", "학습 중 0", "복습 예정 0"],
            ["새 카드 15", "학습 중 0", "복습 단계 0", "재학습 중 0"],
        ),
        (
            "es",
            ["15 nuevas", "0 en aprendizaje", "0 por repasar"],
            ["15 nuevas", "0 en aprendizaje", "0 en repaso", "0 en reaprendizaje"],
        ),
        (
            "en",
            ["15 new", "0 learning", "0 to review"],
            ["15 new", "0 learning", "0 in review", "0 relearning"],
        ),
    ],
)
def test_counts_put_the_number_where_the_language_puts_it(
    client: FlaskClient, loaded_engine: Engine, language: str, counts: list[str], states: list[str]
) -> None:
    # Korean names the thing first ("새 카드 15"); a number glued before a label gave "15 새 카드".
    sign_up(client, language=language)
    subscribe(client, language)
    pages = {"/study": counts, "/": counts, "/decks/eks-model-training": counts, "/stats": states}
    for path, expected in pages.items():
        page = client.get(path).get_data(as_text=True)
        items = re.search(r'<ul class="(?:counts|states)"[^>]*>(.*?)</ul>', page, re.S)
        assert items, f"{path}: no counts"
        shown = [
            re.sub(r"<[^>]+>", "", li).strip() for li in re.findall(r"<li.*?</li>", items[1], re.S)
        ]
        assert shown == expected, f"{path}: {shown}"
        assert '<span class="num">15</span>' in items[1], "the number keeps its own element"


def test_counts_agree_with_their_number(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client, language="es")
    subscribe(client, "es")
    page = client.get("/study").get_data(as_text=True)
    assert '<span class="num">15</span> nuevas' in page
    r = client.post(
        "/decks/eks-model-training/settings",
        data={"csrf_token": csrf(client, "/decks/eks-model-training"), "new_per_day": "1"},
    )
    assert r.status_code in (302, 303)
    page = client.get("/study").get_data(as_text=True)
    assert '<span class="num">1</span> nueva</li>' in page
    # The deck's defaults, shown as hints, are written as Spanish writes numbers.
    page = client.get("/decks/eks-model-training").get_data(as_text=True)
    assert 'placeholder="0,9"' in page and 'placeholder="36500"' in page


def test_deck_page_and_unsubscribe(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client)
    page = client.get("/decks/eks-model-training").get_data(as_text=True)
    assert "Subscribe" in page and "15 cards" in page
    subscribe(client, "ko")
    page = client.get("/decks/eks-model-training").get_data(as_text=True)
    assert "EKS 모델 훈련 퀴즈" in page and "Study this deck" in page
    r = client.post("/decks/eks-model-training/unsubscribe", data={"csrf_token": csrf(client, "/")})
    assert r.status_code == 302
    assert client.get("/decks/nope").status_code == 404


def test_deck_settings_override_the_users_limits(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    subscribe(client, "en")
    page = client.get("/decks/eks-model-training").get_data(as_text=True)
    assert "Settings for this deck" in page
    token = csrf(client, "/decks/eks-model-training")
    r = client.post(
        "/decks/eks-model-training/settings",
        data={"csrf_token": token, "new_per_day": "2", "desired_retention": ""},
    )
    assert r.status_code == 302
    counts = re.findall(r'class="num">(\d+)<', client.get("/study").get_data(as_text=True))
    assert counts[:3] == ["2", "0", "0"]
    r = client.post(
        "/decks/eks-model-training/settings",
        data={"csrf_token": token, "desired_retention": "1.5"},
    )
    page = client.get("/decks/eks-model-training").get_data(as_text=True)
    assert "Check “Desired retention”: give a number from 0.7 to 0.99." in page
    for odd in ("٣", "1_0", "²"):  # digits int() would take, or not: ASCII digits only
        client.post(
            "/decks/eks-model-training/settings", data={"csrf_token": token, "new_per_day": odd}
        )
        page = client.get("/decks/eks-model-training").get_data(as_text=True)
        assert "Check “New cards per day”: give a number from 0 to 9,999." in page, odd
    client.post("/decks/eks-model-training/settings", data={"csrf_token": token})
    counts = re.findall(r'class="num">(\d+)<', client.get("/study").get_data(as_text=True))
    assert counts[:3] == ["15", "0", "0"]


UNDO_ID_RE = re.compile(r'<form id="undo-form".*?name="review_id" value="([0-9a-f-]{36})"', re.S)


def test_undo_form_names_the_answer_it_undoes(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client)
    subscribe(client, "en")
    assert 'id="undo-form"' not in client.get("/study").get_data(as_text=True)  # nothing yet
    first = _answer_form(client)
    client.post("/study/answer", data={**first, "rating": "3"})
    page = client.get("/study").get_data(as_text=True)
    shown = UNDO_ID_RE.search(page)
    assert shown is not None and shown[1] == first["review_id"]
    assert ">Undo answer <kbd" in page  # what it undoes: an answer, not an action on a card
    undo = {"csrf_token": first["csrf_token"], "review_id": shown[1]}
    second = _answer_form(client)
    client.post("/study/answer", data={**second, "rating": "3"})
    # A page shown before the second answer (another tab, the back button) names the first:
    # it must not undo the second.
    client.post("/study/undo", data=undo)
    page = client.get("/study").get_data(as_text=True)
    assert "Only your latest answer of today can be undone." in page and _logs(loaded_engine) == 2
    latest = UNDO_ID_RE.search(page)
    assert latest is not None and latest[1] == second["review_id"]
    undo["review_id"] = latest[1]
    for _ in range(2):  # a double click sends the form twice: one answer is undone
        assert client.post("/study/undo", data=undo).status_code == 303
    page = client.get("/study").get_data(as_text=True)
    assert "already been undone" in page and _logs(loaded_engine) == 1
    assert UNDO_ID_RE.search(page)[1] == first["review_id"]  # type: ignore[index]
    client.post("/study/undo", data={**undo, "review_id": "not-a-uuid"})
    assert "could not be read" in client.get("/study").get_data(as_text=True)
    assert _logs(loaded_engine) == 1


def test_only_the_cards_own_text_is_marked_with_its_language(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, language="ko")
    subscribe(client, "es")  # Korean pages, a Spanish deck
    page = client.get("/study?show=1").get_data(as_text=True)
    article = page[page.index('<article class="card"') : page.index("</article>")]
    # A screen reader reads the Korean labels with a Korean voice and the card in Spanish.
    assert article.startswith('<article class="card">')
    assert re.search(r'<h1 id="question"[^>]* lang="es"', article)
    assert re.search(r'<p class="answer-text" lang="es"', article)
    assert re.search(r'<p class="kind">새 카드</p>', article)
