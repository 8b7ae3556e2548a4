"""Benchmark: a 10,000-card deck with 100,000 reviews through our `.apkg` code and Anki's.

Not collected by default; run with
    .venv/bin/python -m pytest tests/bench -s -o addopts=""
Ours: export with scheduling, import with scheduling. Anki (the `anki` package, same run):
import of our package, export of the same collection (legacy and anki21b).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from anki.collection import (
    Collection,
    ExportAnkiPackageOptions,
    ImportAnkiPackageOptions,
    ImportAnkiPackageRequest,
)
from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler
from sqlalchemy import Engine, insert

from flashcards.anki import export_deck, import_package
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, DeckText, ReviewLog, ReviewState
from flashcards.storage.schema import utcnow

from ..factories import make_user

CARDS = 10_000
REVIEWS_PER_CARD = 10
# A steady learner's answers: 8 % Again, 7 % Hard, 80 % Good, 5 % Easy (as bench_load_balance).
RATINGS = [Rating.Again, Rating.Hard, Rating.Good, Rating.Easy]
WEIGHTS = [8, 7, 80, 5]
T = TypeVar("T")


def timed(label: str, fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    print(f"  {label:<40} {elapsed:8.2f} s")
    return result, elapsed


def build_deck(engine: Engine, now: datetime) -> tuple[int, int]:
    """Deck, cards and a py-fsrs history per card, written with bulk inserts."""
    scheduler = Scheduler(enable_fuzzing=False)
    with transaction(engine) as s:
        user_id = make_user(s, "bench@example.com", now=now - timedelta(days=400))
        deck = Deck(slug="bench", default_locale="en", created_at=now, updated_at=now)
        s.add(deck)
        s.flush()
        s.add(DeckText(deck_id=deck.id, locale="en", title="Bench"))
        card_ids = list(
            s.scalars(
                insert(Card).returning(Card.id, sort_by_parameter_order=True),
                [
                    {
                        "deck_id": deck.id,
                        "key": f"c{i}",
                        "position": i,
                        "created_at": now,
                        "updated_at": now,
                    }
                    for i in range(CARDS)
                ],
            )
        )
        s.execute(
            insert(CardText),
            [
                {
                    "card_id": c,
                    "locale": "en",
                    "question": f"Question {i} <?>",
                    "answer": f"Answer {i} & more",
                    "explanation": "Because.",
                    "updated_at": now,
                }
                for i, c in enumerate(card_ids)
            ],
        )
        states: list[dict[str, Any]] = []
        logs: list[dict[str, Any]] = []
        for i, cid in enumerate(card_ids):
            # Each card a history of its own, as a person's are: answers drawn as a steady
            # learner gives them, each given some time after it fell due (a learning step's
            # minutes later, a review's days later), from a generator seeded by the card.
            chance = random.Random(i)
            when = now - timedelta(days=365, minutes=i % 600)
            card = FsrsCard(card_id=cid, due=when)
            lapses = 0
            first = when
            for n in range(REVIEWS_PER_CARD):
                rating = chance.choices(RATINGS, WEIGHTS)[0]
                after, _ = scheduler.review_card(card, rating, when)
                lapses_before = lapses
                lapses += 1 if (n and card.state == 2 and rating == Rating.Again) else 0
                logs.append(
                    {
                        "review_id": f"{cid}-{n}",
                        "user_id": user_id,
                        "card_id": cid,
                        "deck_id": deck.id,
                        "rating": int(rating),
                        "reviewed_at": when,
                        "duration_ms": 4000,
                        "state_before": int(card.state) if n else None,
                        "step_before": card.step if n else None,
                        "stability_before": card.stability,
                        "difficulty_before": card.difficulty,
                        "due_before": card.due if n else None,
                        "last_review_before": card.last_review,
                        "reps_before": n,
                        "lapses_before": lapses_before,
                        "introduced_at_before": first if n else None,
                        "state": int(after.state),
                        "step": after.step,
                        "stability": after.stability,
                        "difficulty": after.difficulty,
                        "due": after.due,
                        "reps": n + 1,
                        "lapses": lapses,
                    }
                )
                card = after
                # Overdue answers are spread over the last hours, as real ones would be.
                latest = now - timedelta(seconds=60 + (i * REVIEWS_PER_CARD + n) % 7200)
                interval = after.due - when
                late = timedelta(minutes=chance.randrange(1, 240))
                if interval >= timedelta(days=1):
                    late += timedelta(days=chance.randrange(0, 1 + interval.days // 3))
                when = min(max(after.due + late, when + timedelta(minutes=1)), latest)
            states.append(
                {
                    "user_id": user_id,
                    "card_id": cid,
                    "deck_id": deck.id,
                    "state": int(card.state),
                    "step": card.step,
                    "stability": card.stability,
                    "difficulty": card.difficulty,
                    "due": card.due,
                    "last_review": card.last_review,
                    "reps": REVIEWS_PER_CARD,
                    "lapses": lapses,
                    "introduced_at": first,
                    "version": 1,
                }
            )
        s.execute(insert(ReviewState), states)
        for start in range(0, len(logs), 20_000):
            s.execute(insert(ReviewLog), logs[start : start + 20_000])
    return user_id, deck.id


def test_bench_apkg(engine: Engine, tmp_path: Path) -> None:
    now = utcnow().replace(microsecond=0)
    print(f"\nBuilding {CARDS} cards with {CARDS * REVIEWS_PER_CARD} reviews...")
    user_id, deck_id = build_deck(engine, now)

    def our_export() -> bytes:
        with transaction(engine) as s:
            return export_deck(
                s, deck_id, locales=["en"], user_id=user_id, with_scheduling=True, now=now
            ).data

    print("ours:")
    package, ours_export = timed("export with scheduling", our_export)
    (tmp_path / "ours.apkg").write_bytes(package)

    print("anki:")
    col = Collection(str(tmp_path / "anki.anki2"))
    try:
        options = ImportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True)
        request = ImportAnkiPackageRequest(
            package_path=str(tmp_path / "ours.apkg"), options=options
        )
        response, anki_import = timed(
            "import of our package", lambda: col.import_anki_package(request)
        )
        assert len(response.log.new) == CARDS
        assert col.db.scalar("select count() from revlog") == CARDS * REVIEWS_PER_CARD

        def anki_export(legacy: bool) -> bytes:
            path = tmp_path / f"anki-{legacy}.apkg"
            opts = ExportAnkiPackageOptions(
                with_scheduling=True, with_deck_configs=True, with_media=False, legacy=legacy
            )
            col.export_anki_package(out_path=str(path), options=opts, limit=None)
            return path.read_bytes()

        legacy_pkg, anki_export_legacy = timed("export (legacy)", lambda: anki_export(True))
        modern_pkg, anki_export_modern = timed("export (anki21b)", lambda: anki_export(False))
    finally:
        col.close()

    def our_import(data: bytes) -> Callable[[], Any]:
        def run() -> Any:
            with transaction(engine) as s:
                return import_package(
                    s, data, owner_user_id=user_id, with_scheduling=True, now=now,
                    max_bytes=1 << 30,
                )  # fmt: skip

        return run

    print("ours:")
    report, ours_import_legacy = timed("import of Anki's legacy export", our_import(legacy_pkg))
    assert report.cards == CARDS and report.review_logs == CARDS * REVIEWS_PER_CARD
    report, ours_import_modern = timed("import of Anki's anki21b export", our_import(modern_pkg))
    assert report.cards == CARDS and report.review_states == CARDS

    print("ratios (ours / anki):")
    print(f"  export: {ours_export:.2f} s / {anki_export_legacy:.2f} s (legacy) = "
          f"{ours_export / anki_export_legacy:.1f}x")  # fmt: skip
    print(f"  import: {ours_import_legacy:.2f} s / {anki_import:.2f} s = "
          f"{ours_import_legacy / anki_import:.1f}x")  # fmt: skip
    print(f"  (anki21b: export {anki_export_modern:.2f} s, our import {ours_import_modern:.2f} s)")
