"""Benchmark: a full upload of a device's own collection, 10,000 notes with 100,000 reviews, to
`flashcards serve` and to Anki's own server (`python -m anki.syncserver`), by the same client
(the `anki` package), on the same machine, in the same run.

Not collected by default; run with
    .venv/bin/python -m pytest tests/bench/bench_sync_upload.py -s -o addopts=""
Someone moving from AnkiWeb: none of it is the service's decks; its cards become cards of
decks of theirs here, with their answers (`anki_sync.adopted`), its notes and note types kept
as sent (`anki_sync.kept`). Each run uploads the collection to an empty account, then again
(replacing the first: its cards are the service's now), and to Anki's server; the timed call
is `full_upload_or_download(upload)`; the figure is the ratio of the medians of the first
uploads. Target: at most 3 (issue 25's import figure, which holds for
full upload too).
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from pathlib import Path

from anki.collection import Collection
from sqlalchemy import Engine, delete

from flashcards.storage.engine import transaction
from flashcards.storage.models import User

from ..factories import make_user
from ..test_servers import Server
from .bench_apkg import CARDS, REVIEWS_PER_CARD
from .bench_sync_download import EMAIL, official_server, signed_in

RUNS = int(os.environ.get("BENCH_RUNS", "3"))
TARGET = 3.0


def make_collection(path: Path) -> None:
    """CARDS Basic notes in a subdeck, each with REVIEWS_PER_CARD answers in its log."""
    col = Collection(str(path))
    try:
        basic = col.models.by_name("Basic")
        assert basic is not None
        deck = col.decks.id("Bench::Words")
        assert deck is not None
        for i in range(CARDS):
            note = col.new_note(basic)
            note["Front"], note["Back"] = f"question {i}", f"answer {i}"
            note.tags = ["bench"]
            col.add_note(note, deck)
        card_ids = sorted(col.find_cards(""))
        start = int(time.time() * 1000) - CARDS * REVIEWS_PER_CARD * 1000
        rows = [
            (start + (n * REVIEWS_PER_CARD + k) * 1000, cid, -1, 3, k + 1, k, 2500, 4000, 1)
            for n, cid in enumerate(card_ids)
            for k in range(REVIEWS_PER_CARD)
        ]
        col.db.executemany("INSERT INTO revlog VALUES (?,?,?,?,?,?,?,?,?)", rows)
        col.db.execute("UPDATE cards SET type = 2, queue = 2, ivl = 10, due = 30, reps = 10")
    finally:
        col.close(downgrade=False)


def timed_upload(source: Path, folder: Path, endpoint: str) -> float:
    folder.mkdir()
    shutil.copy(source, folder / "collection.anki2")
    col = Collection(str(folder / "collection.anki2"))
    try:
        auth = signed_in(col, endpoint)
        col.sync_collection(auth, False)
        col.close_for_full_sync()
        start = time.perf_counter()
        col.full_upload_or_download(auth=auth, server_usn=None, upload=True)
        elapsed = time.perf_counter() - start
        col.reopen(after_full_sync=True)
        return elapsed
    finally:
        col.close()


def test_bench_sync_upload(database_url: str, engine: Engine, tmp_path: Path) -> None:
    print(f"\nMaking a collection of {CARDS} notes with {CARDS * REVIEWS_PER_CARD} reviews...")
    source = tmp_path / "source.anki2"
    make_collection(source)
    times: dict[str, list[float]] = {"ours": [], "ours again": [], "anki": []}
    ours = Server(database_url, tmp_path / "ours.log", workers=1)
    try:
        (tmp_path / "official").mkdir()
        with official_server(tmp_path / "official") as official:
            ours_url = f"http://127.0.0.1:{ours.port}/"
            for run in range(RUNS):
                # A first upload each run: the account starts empty, as someone's first day.
                with transaction(engine) as s:
                    s.execute(delete(User).where(User.email == EMAIL))
                    make_user(s, EMAIL)
                for name, endpoint in (("ours", ours_url), ("ours again", ours_url),
                                       ("anki", official)):  # fmt: skip
                    folder = tmp_path / f"{name.replace(' ', '-')}-{run}"
                    times[name].append(timed_upload(source, folder, endpoint))
    finally:
        ours.stop()
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"  collection: {source.stat().st_size / 1e6:.1f} MB")
    for name in times:
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"  {name}: {runs} s (median {medians[name]:.2f})")
    ratio = medians["ours"] / medians["anki"]
    print(f"  ratio ours (first upload) / anki: {ratio:.2f} (target <= {TARGET})")
    print(f"  ratio ours (upload again) / anki: {medians['ours again'] / medians['anki']:.2f}")
    if os.environ.get("BENCH_ENFORCE") == "1":
        assert ratio <= TARGET
