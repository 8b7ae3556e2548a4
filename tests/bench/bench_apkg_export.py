"""Benchmark: the export half of `bench_apkg.py`, repeated, ours against Anki's in turn.

Not collected by default; run with
    .venv/bin/python -m pytest -s -p no:cacheprovider -o addopts="" tests/bench/bench_apkg_export.py
The deck is `bench_apkg`'s (10,000 cards, 100,000 reviews). Each round times our export with
scheduling and then the `anki` package's legacy export of the same collection (our package
imported into it), so that a ratio compares two figures taken on the same machine load. The
CPU-time ratio is steadier on a busy machine; on PostgreSQL it leaves the server's share out.
BENCH_APKG_ROUNDS sets the rounds (default 5); BENCH_APKG_PROFILE=1 prints a cProfile of one
more export of ours, sorted by cumulative time.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from anki.collection import (
    Collection,
    ExportAnkiPackageOptions,
    ImportAnkiPackageOptions,
    ImportAnkiPackageRequest,
)
from sqlalchemy import Engine

from flashcards.anki import export_deck
from flashcards.storage.engine import transaction
from flashcards.storage.schema import utcnow

from .bench_apkg import CARDS, REVIEWS_PER_CARD, build_deck

ROUNDS = int(os.environ.get("BENCH_APKG_ROUNDS", "5"))
PROFILE = os.environ.get("BENCH_APKG_PROFILE") == "1"


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of a call (CPU: this process's; a PostgreSQL server's is not)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - start_cpu


def test_bench_apkg_export(engine: Engine, tmp_path: Path) -> None:
    now = utcnow().replace(microsecond=0)
    print(f"\nBuilding {CARDS} cards with {CARDS * REVIEWS_PER_CARD} reviews...")
    user_id, deck_id = build_deck(engine, now)

    def ours() -> bytes:
        with transaction(engine) as s:
            return export_deck(
                s, deck_id, locales=["en"], user_id=user_id, with_scheduling=True, now=now
            ).data

    (tmp_path / "ours.apkg").write_bytes(ours())
    col = Collection(str(tmp_path / "anki.anki2"))
    try:
        options = ImportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True)
        col.import_anki_package(
            ImportAnkiPackageRequest(package_path=str(tmp_path / "ours.apkg"), options=options)
        )
        assert col.db.scalar("select count() from revlog") == CARDS * REVIEWS_PER_CARD
        legacy = ExportAnkiPackageOptions(
            with_scheduling=True, with_deck_configs=True, with_media=False, legacy=True
        )

        def anki() -> None:
            col.export_anki_package(
                out_path=str(tmp_path / "anki.apkg"), options=legacy, limit=None
            )

        ratios, cpu_ratios, ours_times, anki_times = [], [], [], []
        print(f"{'round':>5} {'ours':>8} {'anki':>8} {'ratio':>6} {'cpu ratio':>9}  load")
        for n in range(1, ROUNDS + 1):
            mine, mine_cpu = timed(ours)
            theirs, theirs_cpu = timed(anki)
            ratios.append(mine / theirs)
            cpu_ratios.append(mine_cpu / theirs_cpu)
            ours_times.append(mine)
            anki_times.append(theirs)
            print(f"{n:>5} {mine:7.2f}s {theirs:7.2f}s {mine / theirs:5.2f}x "
                  f"{mine_cpu / theirs_cpu:8.2f}x  {os.getloadavg()[0]:.2f}")  # fmt: skip
        print(f"median ratio {statistics.median(ratios):.2f}x, best of each "
              f"{min(ours_times):.2f}s / {min(anki_times):.2f}s = "
              f"{min(ours_times) / min(anki_times):.2f}x, median CPU-time ratio "
              f"{statistics.median(cpu_ratios):.2f}x, over {ROUNDS} rounds")  # fmt: skip
    finally:
        col.close()
    if PROFILE:
        profiler = cProfile.Profile()
        profiler.runcall(ours)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
