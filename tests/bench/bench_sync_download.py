"""Benchmark: a new device's full download of 10,000 cards with 100,000 reviews, from
`flashcards serve` and from Anki's own server (`python -m anki.syncserver`) holding the same
collection, by the same client (the `anki` package), on the same machine, in the same run.

Not collected by default; run with
    .venv/bin/python -m pytest tests/bench/bench_sync_download.py -s -o addopts=""
The official server gets the collection ours serves, uploaded by the client (a full upload),
so both serve the same cards, notes and log. Each run is a new device (sign-in and meta
aside, the timed call is `full_upload_or_download(download)`), alternating between the two
servers; the figure is the ratio of the medians. Target: at most 2. Ours sends the file it
kept from the last download while nothing changed; so that each of ours builds the
collection, the person answers a card (as on the web) before it: that figure is the one
that counts. The download of the unchanged collection (the kept file) is printed too.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from anki.collection import Collection
from anki.sync_pb2 import SyncAuth
from fsrs import Rating
from sqlalchemy import Engine, select

from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, Deck
from flashcards.storage.schema import utcnow

from ..factories import PASSWORD, answer, subscribe
from ..test_servers import Server
from .bench_apkg import CARDS, REVIEWS_PER_CARD, build_deck

RUNS = int(os.environ.get("BENCH_RUNS", "3"))
EMAIL = "bench@example.com"
TARGET = 2.0


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def official_server(base: Path) -> Iterator[str]:
    port = _port()
    env = {
        **os.environ,
        "SYNC_USER1": f"{EMAIL}:{PASSWORD}",
        "SYNC_HOST": "127.0.0.1",
        "SYNC_PORT": str(port),
        "SYNC_BASE": str(base),
    }
    with (base.parent / "official.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "anki.syncserver"], env=env, stdout=log, stderr=log
        )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        process.wait(timeout=15)


def signed_in(col: Collection, endpoint: str) -> SyncAuth:
    auth = col.sync_login(EMAIL, PASSWORD, endpoint)
    auth.endpoint = endpoint
    return auth


def timed_download(folder: Path, endpoint: str) -> tuple[float, int]:
    """A new device's first sync from `endpoint`: seconds of the download, cards got."""
    folder.mkdir()
    col = Collection(str(folder / "collection.anki2"))
    try:
        auth = signed_in(col, endpoint)
        out = col.sync_collection(auth, False)
        col.close_for_full_sync()
        start = time.perf_counter()
        col.full_upload_or_download(auth=auth, server_usn=out.server_media_usn, upload=False)
        elapsed = time.perf_counter() - start
        col.reopen(after_full_sync=True)
        return elapsed, col.card_count()
    finally:
        col.close()


def upload(folder: Path, endpoint: str) -> None:
    """The collection in `folder` (as ours served it) becomes the official server's."""
    col = Collection(str(folder / "collection.anki2"))
    try:
        auth = signed_in(col, endpoint)
        out = col.sync_collection(auth, False)
        col.close_for_full_sync()
        col.full_upload_or_download(auth=auth, server_usn=out.server_media_usn, upload=True)
        col.reopen(after_full_sync=True)
    finally:
        col.close()


def change(engine: Engine, user_id: int, deck_id: int, run: int) -> None:
    """An answer given on the web: the collection changes, so the next download builds it."""
    with transaction(engine) as s:
        card_id = s.scalar(select(Card.id).where(Card.deck_id == deck_id).offset(run).limit(1))
        assert card_id is not None
        answer(s, user_id, card_id, Rating.Good, now=utcnow())


def test_bench_sync_download(database_url: str, engine: Engine, tmp_path: Path) -> None:
    now = utcnow().replace(microsecond=0)
    print(f"\nBuilding {CARDS} cards with {CARDS * REVIEWS_PER_CARD} reviews...")
    user_id, deck_id = build_deck(engine, now)
    with transaction(engine) as s:
        deck = s.get(Deck, deck_id)
        assert deck is not None
        subscribe(s, user_id, deck, "en")

    ours = Server(database_url, tmp_path / "ours.log", workers=1)
    try:
        # The first download builds the collection (cold); it is the one Anki's server holds.
        cold, cards = timed_download(tmp_path / "seed", f"http://127.0.0.1:{ours.port}/")
        assert cards == CARDS
        (tmp_path / "official").mkdir()
        with official_server(tmp_path / "official") as official:
            upload(tmp_path / "seed", official)
            timed_download(tmp_path / "official-warm", official)
            times: dict[str, list[float]] = {"ours": [], "anki": [], "kept": []}
            ours_url = f"http://127.0.0.1:{ours.port}/"
            for run in range(RUNS):
                change(engine, user_id, deck_id, run)
                for name, endpoint in (("ours", ours_url), ("anki", official), ("kept", ours_url)):
                    elapsed, got = timed_download(tmp_path / f"{name}-{run}", endpoint)
                    assert got == CARDS
                    times[name].append(elapsed)
    finally:
        ours.stop()
    size = (tmp_path / "seed" / "collection.anki2").stat().st_size
    medians = {name: statistics.median(values) for name, values in times.items()}
    anki_s = medians["anki"]
    ratio = medians["ours"] / anki_s
    print(f"  collection: {CARDS} cards, {CARDS * REVIEWS_PER_CARD} reviews, {size / 1e6:.1f} MB")
    for name, label in (("ours", "ours, after a change (built)"), ("anki", "anki"),
                        ("kept", "ours, unchanged (kept file)")):  # fmt: skip
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"  {label}: {runs} s (median {medians[name]:.2f}, {medians[name] / anki_s:.2f} x)")
    print(f"  ratio ours after a change / anki: {ratio:.2f} (target <= {TARGET})")
    print(f"  ours, first download of all (built): {cold:.2f} s, {cold / anki_s:.1f} x")
    if os.environ.get("BENCH_ENFORCE") == "1":
        assert ratio <= TARGET
