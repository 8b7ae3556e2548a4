"""Locale choice: profile (written by the switcher) > visitor cookie > Accept-Language > en."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine

from flashcards.web.charts import bar_chart
from flashcards.web.i18n import difficulty, interval, lang_tag, when

from .web_helpers import CSRF_RE, answer_shown_card, csrf, sign_up, subscribe


def test_accept_language_then_english(client: FlaskClient) -> None:
    assert '<html lang="es">' in client.get(
        "/signin", headers={"Accept-Language": "es-MX,es;q=0.9"}
    ).get_data(as_text=True)
    assert '<html lang="ko">' in client.get(
        "/signin", headers={"Accept-Language": "ko-KR"}
    ).get_data(as_text=True)
    page = client.get("/signin", headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert '<html lang="en">' in page and "Sign in" in page


def test_visitor_switcher_sets_a_cookie_that_beats_accept_language(client: FlaskClient) -> None:
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "es"
    r = client.post(
        "/language", data={"csrf_token": csrf(client), "locale": "ko", "next": "/signin"}
    )
    assert r.status_code == 302 and r.location == "/signin"
    page = client.get("/signin").get_data(as_text=True)
    assert '<html lang="ko">' in page and "로그인" in page


def test_switcher_writes_the_profile_which_beats_everything(client: FlaskClient) -> None:
    sign_up(client, "go@example.com", language="es")
    assert "Tus mazos" in client.get("/").get_data(as_text=True)
    client.post("/language", data={"csrf_token": csrf(client, "/"), "locale": "ko", "next": "/"})
    client.delete_cookie("lang")
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "es"
    page = client.get("/").get_data(as_text=True)
    assert '<html lang="ko">' in page and "내 덱" in page


def test_unknown_locale_and_foreign_next_are_ignored(client: FlaskClient) -> None:
    r = client.post(
        "/language",
        data={"csrf_token": csrf(client), "locale": "xx", "next": "https://evil.example/"},
    )
    assert r.status_code == 302 and r.location == "/"
    assert "lang=" not in r.headers.get("Set-Cookie", "")


def test_error_pages_outside_any_route_are_the_sites_own_in_the_visitors_language(
    client: FlaskClient,
) -> None:
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "es"
    # A method the page does not take: refused by the CSRF check before routing is done.
    expired = client.put("/settings")
    assert expired.status_code == 400
    assert '<html lang="es">' in expired.get_data(as_text=True)
    assert "El formulario ha caducado" in expired.get_data(as_text=True)
    token = CSRF_RE.search(client.get("/signin").get_data(as_text=True))
    assert token is not None
    wrong_method = client.delete("/signin", headers={"X-CSRF-Token": token[1]})
    assert wrong_method.status_code == 405
    assert '<html lang="es">' in wrong_method.get_data(as_text=True)
    assert "405" in wrong_method.get_data(as_text=True)
    # The API keeps its problem documents.
    api = client.put("/api/v1/tokens", json={})
    assert api.status_code == 405 and api.mimetype == "application/problem+json"
    assert "POST" in api.headers["Allow"]


def test_a_moment_in_another_year_is_shown_with_its_year(app: Flask) -> None:
    now = datetime.now(UTC)
    with app.test_request_context(headers={"Accept-Language": "es"}):
        soon = when(now)
        later = when(now.replace(year=now.year + 1))
    assert str(now.year) not in soon
    assert str(now.year + 1) in later


def test_an_interval_from_days_reads_as_the_study_buttons_read_it(app: Flask) -> None:
    # The browser shows a card's interval in days: a minute is 60 / 86400 of one.
    with app.test_request_context(headers={"Accept-Language": "en"}):
        assert interval((60 / 86400) * 86400) == interval(60) == "1 minute"
        assert interval(0.0006944444 * 86400) == "1 minute"
        assert interval(3599.9999) == "1 hour" and interval(10 * 86400) == "10 days"


def test_difficulty_reads_as_a_share_of_the_scale_as_in_anki(app: Flask) -> None:
    with app.test_request_context(headers={"Accept-Language": "en"}):
        assert [difficulty(d) for d in (1.0, 5.5, 10.0)] == ["0%", "50%", "100%"]
    with app.test_request_context(headers={"Accept-Language": "es"}):
        assert difficulty(5.5) == "50\xa0%"


def test_chart_counts_are_written_as_the_pages_language_writes_numbers(app: Flask) -> None:
    # Ticks at 0, 12,000 and 24,000, and each bar's tooltip; Python's "{:g}" wrote "12000"
    # everywhere and "1.2e+06" for a million.
    expected = {"en": "12,000", "es": "12.000", "ko": "12,000"}
    for language, twelve_thousand in expected.items():
        with app.test_request_context(headers={"Accept-Language": language}):
            chart = bar_chart("t", "d", ["a", "b"], [24_000, 1_200_000 // 100])
        assert [label for _y, label in chart.ticks][1] == twelve_thousand
        assert chart.bars[1].label == f"b: {twelve_thousand}"
    with app.test_request_context(headers={"Accept-Language": "en"}):
        million = bar_chart("t", "d", ["a"], [1_000_000])
    assert [label for _y, label in million.ticks] == ["0", "500,000", "1,000,000"]
    # Small counts: whole, evenly spaced ticks, none written twice.
    small: list[tuple[list[float], list[str]]] = [
        ([3, 1], ["0", "2", "4"]), ([2.4], ["0", "2", "4"]), ([2], ["0", "1", "2"]),
        ([1, 0], ["0", "1"]), ([0], ["0", "1"]),
    ]  # fmt: skip
    for values, ticks in small:
        with app.test_request_context(headers={"Accept-Language": "en"}):
            chart = bar_chart("t", "d", ["a"] * len(values), values)
        assert [label for _y, label in chart.ticks] == ticks, values


def test_deck_and_card_texts_are_marked_with_their_own_language(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    # The interface in English, the deck studied in Korean: screen readers and fonts must
    # treat the Korean texts as Korean, wherever they appear.
    sign_up(client, "ko@example.com", language="en")
    subscribe(client, "ko")
    library = client.get("/").get_data(as_text=True)
    assert '<html lang="en">' in library
    title = re.search(r'<a href="/decks/eks-model-training" lang="ko">([^<]+)</a>', library)
    assert title and re.search(r"[가-힣]", title[1]), library
    deck = client.get("/decks/eks-model-training").get_data(as_text=True)
    assert re.search(r'<h1 lang="ko">[^<]*[가-힣]', deck)
    answer_shown_card(client, "1")
    stats = client.get("/stats").get_data(as_text=True)
    question = re.search(r'<td lang="ko">([^<]+)</td>', stats)
    assert question and re.search(r"[가-힣]", question[1]), stats


def test_deck_languages_with_a_region_are_html_language_tags() -> None:
    assert [lang_tag(code) for code in ("ko", "pt_BR", "zh_Hant_TW")] == [
        "ko",
        "pt-BR",
        "zh-Hant-TW",
    ]
