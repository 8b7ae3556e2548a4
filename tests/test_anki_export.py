"""Our `.apkg` export, checked with Anki's own importer (the `anki` package, tests only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from anki.collection import (
    Collection,
    ImportAnkiPackageOptions,
    ImportAnkiPackageRequest,
)
from fsrs import Rating
from sqlalchemy import Engine, delete, select, update
from sqlalchemy.orm import Session

from flashcards.anki import export_deck
from flashcards.anki.schema import NOTETYPE_ID, NOTETYPE_NAME
from flashcards.srs import card_actions
from flashcards.storage.engine import transaction
from flashcards.storage.models import Card, CardText, Deck, ReviewLog, ReviewState
from flashcards.storage.schema import utcnow

from .factories import answer, card_ids, make_deck, make_user, subscribe

SLUG = "eks-model-training"


def anki_import(
    col_path: Path, package: bytes, *, with_scheduling: bool = True
) -> tuple[Collection, Any]:
    """A fresh (or existing) Anki collection with the package imported as desktop Anki does."""
    pkg = col_path.with_suffix(f".{len(list(col_path.parent.iterdir()))}.apkg")
    pkg.write_bytes(package)
    col = Collection(str(col_path))
    options = ImportAnkiPackageOptions(
        with_scheduling=with_scheduling, with_deck_configs=with_scheduling, merge_notetypes=True
    )
    response = col.import_anki_package(
        ImportAnkiPackageRequest(package_path=str(pkg), options=options)
    )
    return col, response.log


def deck_id(session: Session, slug: str = SLUG) -> int:
    found = session.scalar(select(Deck.id).where(Deck.slug == slug))
    assert found is not None
    return found


def card_id(session: Session, key: str, slug: str = SLUG) -> int:
    found = session.scalar(select(Card.id).join(Deck).where(Deck.slug == slug, Card.key == key))
    assert found is not None
    return found


def wall_now() -> datetime:
    # Anki's importer shifts due days by its own clock, so these tests use the real one.
    return utcnow().replace(microsecond=0)


# In the half hour before Anki's 4:00 rollover, answers minutes apart (ours, replayed by
# Anki, or Anki's own learning steps) fall on two of its days: a comparison made then tests
# the wall clock, not the code.
ROLLOVER_MARGIN = timedelta(minutes=30)


def skip_near_anki_rollover(now: datetime, tz: str | None = None) -> None:
    """Skip when `now` is just before 4:00 in `tz` (default: this process's local time)."""
    local = now.astimezone(ZoneInfo(tz)) if tz else now.astimezone()
    rollover = local.replace(hour=4, minute=0, second=0, microsecond=0)
    if rollover - ROLLOVER_MARGIN <= local < rollover:
        pytest.skip(f"{local:%H:%M} in {tz or 'local time'}: just before Anki's 4:00 rollover")


STUDY_PLAN: dict[str, list[tuple[float, Rating]]] = {
    # key: (days before now, rating); produces review, learning and relearning cards.
    "tensor-parallelism": [(30, Rating.Good), (29.99, Rating.Good), (20, Rating.Good)],
    "planning-200b-model": [(12, Rating.Easy), (2, Rating.Hard)],
    "slurmctld-vs-slurmdbd": [(0.01, Rating.Again)],
    "nccl-over-efa": [(25, Rating.Easy), (10, Rating.Again)],
}


def study_eks(engine: Engine, now: datetime, **user: Any) -> int:
    """A user who studied four EKS cards through the study engine; returns the user id."""
    with transaction(engine) as s:
        user_id = make_user(s, "learner@example.com", now=now - timedelta(days=40), **user)
        for key, plan in STUDY_PLAN.items():
            cid = card_id(s, key)
            for days_ago, rating in plan:
                when = now - timedelta(days=days_ago)
                answer(s, user_id, cid, rating, now=when, reviewed_at=when)
    return user_id


def export(engine: Engine, now: datetime, **kwargs: Any) -> bytes:
    with transaction(engine) as s:
        kwargs.setdefault("locales", ["en"])
        return export_deck(s, deck_id(s), now=now, **kwargs).data


def test_one_locale_imports_with_notetype_fields_tags_and_escaping(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    with transaction(loaded_engine) as s:
        cid = card_id(s, "bf16-vs-fp16")
        s.execute(
            update(CardText)
            .where(CardText.card_id == cid, CardText.locale == "es")
            .values(question='¿Es 1 < 2 & "3" > 2?\nSegunda línea', explanation="")
        )
        s.execute(update(Card).where(Card.id == cid).values(tags=["precision", "gpu"]))
    col, log = anki_import(tmp_path / "c.anki2", export(loaded_engine, now, locales=["es"]))
    try:
        assert len(log.new) == 15 and not log.duplicate and not log.conflicting
        names = {d.name for d in col.decks.all_names_and_ids()}
        assert names == {"Default", "Cuestionario sobre entrenamiento de modelos en EKS"}
        notetype = col.models.get(NOTETYPE_ID)
        assert notetype is not None and notetype["name"] == NOTETYPE_NAME
        assert [f["name"] for f in notetype["flds"]] == ["Front", "Back", "Key"]
        notes = [col.get_note(nid) for nid in col.find_notes("")]
        by_key = {dict(n.items())["Key"]: n for n in notes}
        edited = dict(by_key["bf16-vs-fp16"].items())
        assert edited["Front"] == '¿Es 1 &lt; 2 &amp; "3" &gt; 2?<br>Segunda línea'
        assert '<div class="explanation">' not in edited["Back"]
        other = dict(by_key["tensor-parallelism"].items())
        assert '<div class="explanation">' in other["Back"]
        assert sorted(by_key["tensor-parallelism"].tags) == [
            "flashcards::eks-model-training", "lang::es"
        ]  # fmt: skip
        assert sorted(by_key["bf16-vs-fp16"].tags) == [
            "flashcards::eks-model-training",
            "gpu",
            "lang::es",
            "precision",
        ]
        cards = [col.get_card(c) for c in col.find_cards("")]
        assert len(cards) == 15 and all(c.type == 0 and c.queue == 0 and c.ord == 0 for c in cards)
    finally:
        col.close()


def test_all_locales_make_one_subdeck_per_language_with_stable_guids(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    first = export(loaded_engine, now, locales=None)
    col, log = anki_import(tmp_path / "c.anki2", first)
    try:
        assert len(log.new) == 45
        names = {d.name for d in col.decks.all_names_and_ids()}
        assert {"EKS model training quiz::English", "EKS model training quiz::Español",
                "EKS model training quiz::한국어"} <= names  # fmt: skip
        guids = {col.get_note(n).guid for n in col.find_notes("")}
        assert len(guids) == 45
        # Exporting again later changes nothing Anki matches on: all duplicates.
        col.close()
        col, log = anki_import(
            tmp_path / "c.anki2", export(loaded_engine, now + timedelta(hours=1), locales=None)
        )
        assert len(log.duplicate) == 45 and not log.new
        assert {col.get_note(n).guid for n in col.find_notes("")} == guids
    finally:
        col.close()


def test_reexport_after_edit_updates_the_note_instead_of_duplicating(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    col, _ = anki_import(tmp_path / "c.anki2", export(loaded_engine, now))
    col.close()
    with transaction(loaded_engine) as s:
        s.execute(
            update(CardText)
            .where(CardText.card_id == card_id(s, "bf16-vs-fp16"), CardText.locale == "en")
            .values(answer="Edited answer", updated_at=now + timedelta(minutes=5))
        )
    col, log = anki_import(tmp_path / "c.anki2", export(loaded_engine, now + timedelta(minutes=5)))
    try:
        assert len(log.updated) == 1 and len(log.duplicate) == 14 and not log.new
        assert len(col.find_notes("")) == 15
        backs = [col.get_note(n)["Back"] for n in col.find_notes("Key:bf16-vs-fp16")]
        assert len(backs) == 1 and backs[0].startswith("Edited answer")
    finally:
        col.close()


def our_states(engine: Engine, user_id: int) -> dict[str, ReviewState]:
    with transaction(engine) as s:
        rows = s.execute(
            select(Card.key, ReviewState)
            .join(Card, Card.id == ReviewState.card_id)
            .where(ReviewState.user_id == user_id)
        ).all()
        return {key: state for key, state in rows}


def our_ratings(engine: Engine, user_id: int) -> dict[str, list[int]]:
    with transaction(engine) as s:
        out: dict[str, list[int]] = {}
        for key, rating in s.execute(
            select(Card.key, ReviewLog.rating)
            .join(Card, Card.id == ReviewLog.card_id)
            .where(ReviewLog.user_id == user_id)
            .order_by(ReviewLog.reviewed_at)
        ):
            out.setdefault(key, []).append(rating)
        return out


def study_day(when: datetime, tz: str, hour: int) -> Any:
    from flashcards.srs.days import study_date

    return study_date(when, tz, hour)


# Anki runs on the person's own machine, in their timezone, and its Rust core caches the
# zone: so the import runs in a child process whose TZ is the person's.
ANKI_IN_TIMEZONE = """
import json, sys
from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest
package, path = sys.argv[1:3]
col = Collection(path)
options = ImportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True)
log = col.import_anki_package(ImportAnkiPackageRequest(package_path=package, options=options)).log
cards = {}
for nid in col.find_notes(""):
    card = col.get_card(col.find_cards(f"nid:{nid}")[0])
    computed = col.compute_memory_state(card.id) if card.type == 2 else None
    cards[col.get_note(nid)["Key"]] = {
        "id": card.id, "type": card.type, "queue": card.queue, "due": card.due,
        "days_ahead": card.due - col.sched.today, "ivl": card.ivl, "reps": card.reps,
        "lapses": card.lapses, "left": card.left, "lrt": card.last_review_time,
        "s": card.memory_state.stability if card.memory_state else None,
        "d": card.memory_state.difficulty if card.memory_state else None,
        "computed": [computed.stability, computed.difficulty] if computed else None,
    }
revlog = col.db.all("select id, cid, ease, ivl, lastIvl, factor, time, type from revlog")
col.close()
print(json.dumps({"new": len(log.new), "cards": cards, "revlog": revlog}))
"""


def anki_in_timezone(package: bytes, tz: str, tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "tz.apkg"
    path.write_bytes(package)
    result = subprocess.run(
        [sys.executable, "-c", ANKI_IN_TIMEZONE, str(path), str(tmp_path / "tz.anki2")],
        env={**os.environ, "TZ": tz},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    view: dict[str, Any] = json.loads(result.stdout)
    return view


@pytest.mark.parametrize("tz", ["UTC", "Pacific/Kiritimati", "America/Los_Angeles"])
def test_with_scheduling_anki_has_the_same_due_days_intervals_memory_and_revlog(
    loaded_engine: Engine, tmp_path: Path, tz: str
) -> None:
    now = wall_now()
    skip_near_anki_rollover(now, tz)
    user_id = study_eks(loaded_engine, now, timezone=tz, day_start_hour=4)
    states = our_states(loaded_engine, user_id)
    ratings = our_ratings(loaded_engine, user_id)
    view = anki_in_timezone(
        export(loaded_engine, now, user_id=user_id, with_scheduling=True), tz, tmp_path
    )
    assert view["new"] == 15
    today_here = study_day(now, tz, 4)
    revlog = view["revlog"]
    assert len(revlog) == sum(len(r) for r in ratings.values())
    for key, state in states.items():
        card = view["cards"][key]
        assert (card["type"], card["reps"], card["lapses"]) == (
            state.state, state.reps, state.lapses,
        )  # fmt: skip
        assert card["s"] == pytest.approx(state.stability, abs=1e-3)
        assert card["d"] == pytest.approx(state.difficulty, abs=1e-3)
        assert card["lrt"] == int(state.last_review.timestamp())
        if state.state == 2:
            # Same calendar day: as many days from "today" in Anki as here.
            assert card["queue"] == 2
            assert card["days_ahead"] == (study_day(state.due, tz, 4) - today_here).days
            last_day = study_day(state.last_review, tz, 4)
            assert card["ivl"] == (study_day(state.due, tz, 4) - last_day).days
            # Anki's own FSRS, replaying the shipped revlog, agrees with our state.
            stability, difficulty = card["computed"]
            assert stability == pytest.approx(state.stability, rel=0.05)
            assert difficulty == pytest.approx(state.difficulty, rel=0.05)
        else:
            assert card["queue"] == 1 and card["due"] == int(state.due.timestamp())
            assert card["left"] % 1000 >= 1
        eases = [r[2] for r in sorted(revlog) if r[1] == card["id"]]
        assert eases == ratings[key]
    # The first answer to a new card is a learning answer; ids are epoch milliseconds.
    first = min(revlog)
    assert first[7] == 0 and abs(first[0] / 1000 - (now - timedelta(days=30)).timestamp()) < 1


def test_package_has_scheduler_v2_config_and_user_rollover(
    loaded_engine: Engine, tmp_path: Path
) -> None:
    import sqlite3
    import zipfile

    now = wall_now()
    user_id = study_eks(loaded_engine, now, timezone="Asia/Tokyo", day_start_hour=6)
    path = tmp_path / "p.apkg"
    path.write_bytes(export(loaded_engine, now, user_id=user_id, with_scheduling=True))
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["collection.anki2", "media"]
        assert json.loads(z.read("media")) == {}
        z.extract("collection.anki2", tmp_path)
    conn = sqlite3.connect(tmp_path / "collection.anki2")
    try:
        ver, conf, dconf = conn.execute("select ver, conf, dconf from col").fetchone()
        conf = json.loads(conf)
        assert ver == 11 and conf["schedVer"] == 2 and conf["rollover"] == 6
        options = next(iter(json.loads(dconf).values()))
        assert options["new"]["delays"] == [1.0, 10.0] and len(options["fsrsParams6"]) == 21
    finally:
        conn.close()


def test_every_language_export_puts_progress_on_the_copy_a_card_is_studied_in(
    engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    with transaction(engine) as s:
        deck = make_deck(s, "gappy", 2, locales=("en", "es"))
        user_id = make_user(s, locale="es")
        subscribe(s, user_id, deck, "es")
        first, second = card_ids(s, deck.id)
        s.execute(delete(CardText).where(CardText.card_id == second, CardText.locale == "es"))
        answer(s, user_id, first, Rating.Good, now=now - timedelta(days=3))
        answer(s, user_id, second, Rating.Good, now=now - timedelta(days=2))  # in English
        package = export_deck(
            s, deck.id, locales=None, user_id=user_id, with_scheduling=True, now=now
        )
    assert package.notes == 3 and package.reviews == 2
    col, log = anki_import(tmp_path / "c.anki2", package.data)
    try:
        assert len(log.new) == 3  # the English subdeck has the card once, no copy in Spanish
        studied = {
            col.get_note(col.get_card(cid).nid)["Front"] for cid in col.find_cards("-is:new")
        }
        assert studied == {"gappy q1 es", "gappy q2 en"}
        assert col.db.scalar("select count() from revlog") == 2
    finally:
        col.close()


def test_a_forgotten_card_goes_out_new_at_its_place_with_its_counts_and_history(
    engine: Engine, tmp_path: Path
) -> None:
    now = wall_now()
    with transaction(engine) as s:
        deck = make_deck(s, "forgot", 3)
        user_id = make_user(s)
        subscribe(s, user_id, deck)
        first, second, _third = card_ids(s, deck.id)
        for card in (first, second):
            answer(s, user_id, card, Rating.Easy, now=now - timedelta(days=5))
            answer(s, user_id, card, Rating.Again, now=now - timedelta(days=1))
        card_actions.forget(s, user_id, [first], now=now)  # after the deck's cards
        card_actions.forget(s, user_id, [second], now=now, restore_position=True)
        package = export_deck(
            s, deck.id, locales=["en"], user_id=user_id, with_scheduling=True, now=now
        )
    assert package.reviews == 4  # the history goes out with them
    col, _log = anki_import(tmp_path / "c.anki2", package.data)
    try:
        cards = {
            col.get_note(col.get_card(cid).nid)["Key"]: col.get_card(cid)
            for cid in col.find_cards("")
        }
        for key in ("c01", "c02"):
            card = cards[key]
            assert (card.type, card.queue, card.reps, card.lapses) == (0, 0, 2, 1)
            assert card.memory_state is None
        # New cards in Anki's order (its due): the third card, then the one forgotten to the
        # end; the one restored to its place keeps it.
        assert cards["c02"].due == 2 and cards["c03"].due == 3 and cards["c01"].due == 4
        assert col.db.scalar("select count() from revlog") == 4
    finally:
        col.close()


def test_export_refuses_unknown_locale_and_scheduling_without_user(loaded_engine: Engine) -> None:
    from flashcards.errors import InvalidInput

    with transaction(loaded_engine) as s:
        with pytest.raises(InvalidInput, match="no text in fr"):
            export_deck(s, deck_id(s), locales=["fr"], now=wall_now())
        with pytest.raises(InvalidInput, match="needs a user"):
            export_deck(s, deck_id(s), locales=None, with_scheduling=True, now=wall_now())
