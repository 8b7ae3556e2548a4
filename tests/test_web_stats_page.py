"""The stats page: what each part says while empty, values on every bar, the year's heatmap."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from babel.dates import format_date
from flask.testing import FlaskClient
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from flashcards.storage.models import Card, Deck, User

from .factories import answer
from .web_helpers import sign_up, subscribe

EMPTY_PARTS = ("states-empty", "heatmap-empty", "chart-1-empty", "chart-2-empty", "hardest-empty")


def test_an_empty_stats_page_says_what_will_appear_in_each_part(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client)
    page = client.get("/stats").get_data(as_text=True)
    assert "<svg" not in page  # no blank frames
    for part in (*EMPTY_PARTS, "chart-3-empty"):
        assert f'id="{part}"' in page, part
    assert "once you answer them" in page  # why the retention chart is empty
    assert 'href="/"' in page  # the way to a deck


def test_charts_carry_their_values_and_the_heatmap_counts_days_in_the_persons_zone(
    client: FlaskClient, loaded_engine: Engine
) -> None:
    sign_up(client, timezone="Asia/Seoul")
    subscribe(client, "en")
    # 20:00 UTC three days ago is 05:00 the next day in Seoul, after the 04:00 day start.
    utc_day = (datetime.now(UTC) - timedelta(days=3)).date()
    at = datetime(utc_day.year, utc_day.month, utc_day.day, 20, tzinfo=UTC)
    with Session(loaded_engine) as s:
        uid = s.scalars(select(User.id)).one()
        card = s.scalars(
            select(Card.id)
            .join(Deck)
            .where(Deck.slug == "eks-model-training")
            .order_by(Card.position)
        ).first()
        assert card is not None
        answer(s, uid, card, "good", now=at)
        s.commit()
    page = client.get("/stats").get_data(as_text=True)
    seoul_day = utc_day + timedelta(days=1)
    labels = {
        label: level
        for level, label in re.findall(
            r'<rect class="day level-(\d)"[^>]* aria-label="([^"]+)"', page
        )
    }
    assert labels[f"{format_date(seoul_day, 'full', locale='en')}: 1 answer"] == "4"
    assert labels[f"{format_date(utc_day, 'full', locale='en')}: 0 answers"] == "0"
    assert len(labels) == 365
    # One stop in the tab order per chart: the latest day (or bar); the others by arrow keys.
    assert len(re.findall(r'class="day[^"]*"[^>]*tabindex="0"', page)) == 1
    # Each bar is labelled with its value, as a tooltip too; the retention chart says why
    # it is empty (an answer to a new card is no review).
    bars = re.findall(r'<g class="point" role="img" aria-label="([^"]+)"', page)
    assert len(bars) == 90 + 30
    assert re.search(r"<title>[^<]+: 1</title>", page)
    # The tab stop is today's bar: the last of the past days, the first of the forecast.
    reviews, forecast = (
        re.findall(r'<g class="point"[^>]*tabindex="(-?\d)"', svg)
        for svg in page.split('class="bars"')[1:3]
    )
    assert reviews.index("0") == 89 and forecast.index("0") == 0
    assert reviews.count("0") == forecast.count("0") == 1
    assert 'id="chart-3-empty"' in page and "None of your answers in the last 12 weeks" in page
    for part in ("heatmap-empty", "chart-1-empty", "chart-2-empty", "states-empty"):
        assert f'id="{part}"' not in page, part


def test_the_join_page_says_what_to_paste(client: FlaskClient, loaded_engine: Engine) -> None:
    sign_up(client, language="es")
    page = client.get("/join").get_data(as_text=True)
    assert 'id="join-explained"' in page and "pega abajo el enlace completo" in page
    assert 'aria-describedby="invitation-hint"' in page
    assert re.search(r'id="invitation-hint">[^<]*http://localhost/join#', page)
