"""A 5,000-card team deck's page (issue 21): server time and weight, next to a 50-card deck's.

Both decks are made through the upload form (a CSV in two languages), in one team. Each page
is fetched with the Flask test client (the server's time: routing, the queries, the
template), interleaved, BENCH_PAGE_RUNS times (default 30) after a warm-up, as the lead (who
gets the forms) and as a member. Printed: the median time and the size of each, and the
ratio of the large deck's median to the small one's (a 50-card deck is a single page, so a
ratio near 1 says the page's cost no longer grows with the deck). Targets: the 5,000-card
page under 300 ms and under 200 KB; BENCH_ENFORCE=1 makes a miss a failure.
"""

from __future__ import annotations

import os
import re
import statistics
import time

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy.engine import Engine

from tests.bench.conftest import report
from tests.web_helpers import csrf, sign_up

ENFORCE = os.environ.get("BENCH_ENFORCE") == "1"
RUNS = int(os.environ.get("BENCH_PAGE_RUNS", "30"))
LARGE, SMALL = 5000, 50
TARGET_MS, TARGET_BYTES = 300, 200_000


def _post(client: FlaskClient, path: str, data: dict[str, str], page: str):  # type: ignore[no-untyped-def]
    return client.post(path, data={"csrf_token": csrf(client, page), **data})


def _deck(lead: FlaskClient, team: int, cards: int) -> str:
    rows = "front,back,key,explanation,locale\n"
    for locale, word in (("en", "Question"), ("es", "Pregunta")):
        rows += "".join(
            f"{word} {i}: what does this term mean in training?,Answer {i},c{i},"
            f"An explanation of a sentence or two for card {i}.,{locale}\n"
            for i in range(1, cards + 1)
        )
    decks = f"/teams/{team}/decks"
    form = {"format": "csv", "title": f"Deck of {cards}", "locale": "en", "content": rows}
    response = _post(lead, decks, form, decks)
    assert response.status_code == 303, response.get_data(as_text=True)[-2000:]
    return str(response.headers["Location"])


def _time(client: FlaskClient, path: str) -> tuple[float, int]:
    started = time.perf_counter()
    response = client.get(path)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200
    return elapsed, len(response.get_data())


def test_team_deck_page(app: Flask, engine: Engine, database_url: str) -> None:
    lead, member = app.test_client(), app.test_client()
    sign_up(lead, "lead@example.com")
    sign_up(member, "member@example.com", language="es")
    team_page = _post(lead, "/teams", {"name": "Bench"}, "/teams").headers["Location"]
    team = int(team_page.rsplit("/", 1)[-1])
    link = _post(lead, f"/teams/{team}/invitations", {"days": "7"}, f"/teams/{team}")
    token = re.search(r"/join#([A-Za-z0-9_-]+)", link.get_data(as_text=True))
    assert token
    _post(member, "/join", {"invitation": f"http://localhost/join#{token[1]}"}, "/join")
    _post(member, "/join/confirm", {"token": token[1]}, "/join")
    started = time.perf_counter()
    large = _deck(lead, team, LARGE)
    upload_seconds = time.perf_counter() - started
    small = _deck(lead, team, SMALL)

    lines = [f"{LARGE}-card CSV upload (two languages): {upload_seconds:.2f} s"]
    verdicts = []
    for who, client in (("lead", lead), ("member", member)):
        for path in (small, large, f"{large}?q=term+mean&page=40"):
            _time(client, path)  # warm-up
        times: dict[str, list[float]] = {"small": [], "large": [], "search": []}
        sizes: dict[str, int] = {}
        for _ in range(RUNS):
            for name, path in (
                ("small", small),
                ("large", large),
                ("search", f"{large}?q=term+mean&page=40"),
            ):
                elapsed, size = _time(client, path)
                times[name].append(elapsed)
                sizes[name] = size
        med = {name: statistics.median(values) * 1000 for name, values in times.items()}
        lines.append(
            f"{who}: {SMALL}-card page {med['small']:.1f} ms, {sizes['small'] / 1000:.1f} KB; "
            f"{LARGE}-card page {med['large']:.1f} ms, {sizes['large'] / 1000:.1f} KB "
            f"(x{med['large'] / med['small']:.2f} the small one's time); "
            f"searched, page 40: {med['search']:.1f} ms, {sizes['search'] / 1000:.1f} KB"
        )
        met = med["large"] < TARGET_MS and sizes["large"] < TARGET_BYTES
        verdicts.append(met)
        lines.append(
            f"  target {TARGET_MS} ms and {TARGET_BYTES // 1000} KB: {'met' if met else 'MISSED'}"
        )
    report(f"team deck page, {database_url.split(':', 1)[0]}, median of {RUNS}", lines)
    if ENFORCE:
        assert all(verdicts)
