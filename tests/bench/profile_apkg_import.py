"""Profile of the `.apkg` import with scheduling, and a check of what it stores.

Not collected (no `bench_` prefix); run one test by naming it:
    .venv/bin/python -m pytest -s -p no:cacheprovider -o addopts="" \
        tests/bench/profile_apkg_import.py
The package (Anki's legacy export of `bench_apkg`'s deck) is made once into
$APKG_PROFILE_DIR (default /tmp/flashcards-apkg-profile) and reused. Each run imports it for
two people (UTC at 4:00; New York at 2:00 with other steps) under cProfile, and writes every
stored review state and log, by card key, to `stored-*.json`; the first such file is kept as
the reference that later runs must match exactly (`APKG_PROFILE_RESET=1` makes it anew).
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from anki.collection import (
    Collection,
    ExportAnkiPackageOptions,
    ImportAnkiPackageOptions,
    ImportAnkiPackageRequest,
)
from sqlalchemy import Engine, select

from flashcards.anki import export_deck, import_package, import_rows, importer
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, ReviewLog, ReviewState

from ..factories import make_user
from .bench_apkg import build_deck

DIR = Path(os.environ.get("APKG_PROFILE_DIR", "/tmp/flashcards-apkg-profile"))
PEOPLE: dict[str, dict[str, Any]] = {
    "utc": {},
    "ny": {
        "timezone": "America/New_York",
        "day_start_hour": 2,
        "learning_steps": [30, 300, 1200],
        "relearning_steps": [300, 900],
        "desired_retention": 0.85,
    },
}


def package(engine: Engine) -> tuple[bytes, datetime]:
    path, stamp = DIR / "legacy.apkg", DIR / "now.txt"
    if path.exists() and stamp.exists():
        return path.read_bytes(), datetime.fromisoformat(stamp.read_text())
    DIR.mkdir(parents=True, exist_ok=True)
    now = datetime.fromisoformat("2026-12-05T12:00:00+00:00")
    user_id, deck_id = build_deck(engine, now)
    with transaction(engine) as s:
        ours = export_deck(
            s, deck_id, locales=["en"], user_id=user_id, with_scheduling=True, now=now
        ).data
    (DIR / "ours.apkg").write_bytes(ours)
    col = Collection(str(DIR / "anki.anki2"))
    try:
        options = ImportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True)
        col.import_anki_package(
            ImportAnkiPackageRequest(package_path=str(DIR / "ours.apkg"), options=options)
        )
        opts = ExportAnkiPackageOptions(
            with_scheduling=True, with_deck_configs=True, with_media=False, legacy=True
        )
        col.export_anki_package(out_path=str(path), options=opts, limit=None)
    finally:
        col.close()
    stamp.write_text(now.isoformat())
    return path.read_bytes(), now


def stored(engine: Engine, deck_id: int) -> dict[str, Any]:
    def plain(value: Any) -> Any:
        return value.isoformat() if isinstance(value, datetime) else value

    with transaction(engine) as s:
        keys = dict(s.execute(select(Card.id, Card.key).where(Card.deck_id == deck_id)).all())
        states = {
            keys[row.card_id]: {
                c.name: plain(getattr(row, c.name))
                for c in ReviewState.__table__.columns
                if c.name not in ("user_id", "card_id", "deck_id")
            }
            for row in s.scalars(select(ReviewState).where(ReviewState.deck_id == deck_id))
        }
        logs: dict[str, list[dict[str, Any]]] = {}
        for row in s.scalars(
            select(ReviewLog).where(ReviewLog.deck_id == deck_id).order_by(ReviewLog.id)
        ):
            logs.setdefault(keys[row.card_id], []).append(
                {
                    c.name: plain(getattr(row, c.name))
                    for c in ReviewLog.__table__.columns
                    if c.name not in ("id", "user_id", "card_id", "deck_id", "review_id")
                }
            )
    return {"states": states, "logs": logs}


def timed_phases(monkeypatch: pytest.MonkeyPatch) -> dict[str, float]:
    """Wall time spent in each phase of the import, without a profiler's overhead
    (`write_progress` includes its `insert_rows`)."""
    spent: dict[str, float] = {}
    for module, name in [(importer, "read_for_import"), (importer, "plan_cards"),
                         (importer, "convert_revlog"), (importer, "convert_card"),
                         (importer, "new_deck_rows"), (import_rows, "insert_rows"),
                         (importer, "write_progress")]:  # fmt: skip
        inner = getattr(module, name)

        def timed(*args: Any, _inner: Any = inner, _name: str = name, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _inner(*args, **kwargs)
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.perf_counter() - start

        monkeypatch.setattr(module, name, timed)
    return spent


def test_phases(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    data, now = package(engine)
    spent = timed_phases(monkeypatch)
    for run in range(2):
        spent.clear()
        with transaction(engine) as s:
            user_id = make_user(s, f"phases{run}@example.com")
        start = time.perf_counter()
        with transaction(engine) as s:
            import_package(
                s, data, owner_user_id=user_id, with_scheduling=True, now=now, max_bytes=1 << 30
            )
            before_commit = time.perf_counter()
        end = time.perf_counter()
        print(f"\n{engine.dialect.name} import {run + 1}: {before_commit - start:.2f} s, "
              f"commit {end - before_commit:.2f} s")  # fmt: skip
        for name, seconds in spent.items():
            print(f"  {name:<16} {seconds:6.2f} s")


def test_profile_import(engine: Engine) -> None:
    data, now = package(engine)
    dialect = engine.dialect.name
    for name, settings in PEOPLE.items():
        with transaction(engine) as s:
            user_id = make_user(s, f"{name}@example.com", **settings)
        profiler = cProfile.Profile()
        start = time.perf_counter()
        with transaction(engine) as s:
            profiler.enable()
            report = import_package(
                s, data, owner_user_id=user_id, with_scheduling=True, now=now, max_bytes=1 << 30
            )
            profiler.disable()
        elapsed = time.perf_counter() - start
        print(f"\n{dialect} {name}: import and commit {elapsed:.2f} s")
        profiler.dump_stats(str(DIR / f"prof-{dialect}-{name}.pstats"))
        if name == "utc":
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(45)
            print(out.getvalue())
        got = stored(engine, report.deck_id)
        reference = DIR / f"stored-{dialect}-{name}.json"
        if os.environ.get("APKG_PROFILE_RESET") or not reference.exists():
            reference.write_text(json.dumps(got, sort_keys=True))
            print(f"reference written: {reference}")
        else:
            want = json.loads(reference.read_text())
            assert got["states"] == want["states"]
            assert got["logs"] == want["logs"]
            print(f"stored rows match {reference}")
