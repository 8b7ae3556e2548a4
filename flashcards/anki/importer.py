"""An `.apkg` in as new decks owned by the importing person (one per Anki deck, subdecks and
all), optionally with their progress.

The package is read and checked completely (limits, layout, notetypes) and every row is
planned before the first write, so a refused package leaves nothing behind even before the
caller rolls back.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from ..decks.quizfile import slugify
from ..errors import DeckNameTaken, InvalidInput, NotFound
from ..people import media_folder
from ..srs.days import study_date
from ..srs.marks import LEECH_TAG
from ..storage.models import (
    CardMark,
    Deck,
    ReviewState,
    SchedulerSettings,
    User,
)
from . import import_media, reimport
from .errors import AnkiPackageError
from .gc_pause import gc_paused
from .import_decks import MAX_DECKS, apart_from, by_target, note_groups
from .import_report import ImportedDeck, ImportReport, english_messages, skip_messages
from .import_rows import already_logged, cards_with, new_deck_rows, title_of, write_progress
from .names import check_names, free_slug
from .planning import PlannedCard, Progress, complete_language, plan_cards
from .reader import Collection, read_package
from .scheduling_in import Answer, ImportTiming, Replay, convert_card, convert_revlog
from .tables import large_page_cache, table

DEFAULT_MAX_BYTES = 100 << 20
DEFAULT_MAX_NOTES = 50_000
__all__ = ["check_names"]  # where the edges have it from
QUEUE_SUSPENDED = -1
QUEUE_BURIED = (-2, -3)  # by a sibling, by hand


def read_for_import(
    source: bytes | Path,
    *,
    with_scheduling: bool,
    max_notes: int = DEFAULT_MAX_NOTES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_unpacked_bytes: int | None = None,
    with_media: bool = False,
) -> Collection:
    """The package read, before any database work: an edge calls it outside its write
    transaction, so that on SQLite other writers do not wait while an upload is parsed.
    `with_media`: its media files are read too, for an import into a person's own deck."""
    return read_package(
        source,
        max_bytes=max_bytes,
        max_unpacked_bytes=max_unpacked_bytes or 10 * max_bytes,
        max_notes=max_notes,
        with_revlog=with_scheduling,
        with_media=with_media,
    )


def import_package(
    session: Session,
    source: bytes | Path | Collection,
    *,
    owner_user_id: int | None,
    slug: str | None = None,
    locale: str | None = None,
    with_scheduling: bool = False,
    now: datetime,
    max_notes: int = DEFAULT_MAX_NOTES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_unpacked_bytes: int | None = None,
    progress: Progress | None = None,
    untitled: str = "Imported from Anki",
    update_existing: bool = False,
    media_quota_mb: int | None = None,
) -> ImportReport:
    """New decks from the package's Basic-like notes (first field front, second back): one
    for each Anki deck with cards, subdecks named as in Anki, parents first; with `slug`,
    one deck of that slug. The report's deck is the first (`ImportReport.decks`: all).

    `untitled` names a deck whose package names none (Anki's "Default"): the edges pass it
    in the importer's language.

    The deck belongs to `owner_user_id` (None: a shared deck, as the shipped ones are).

    Packages we exported come back with their card keys, languages and explanations. With
    scheduling, the owner's review state and log are rebuilt from Anki's cards and revlog.
    `source` is the package, or what `read_for_import` read of it (with the same
    `with_scheduling`: the review log is read only for it).

    With `update_existing` (and no `slug`), a package whose notes came from one of the
    owner's decks updates that deck instead (`reimport`): the report says `updated`.

    With `media_quota_mb` (and an owner), the images and sounds the cards use go to the
    owner's media folder (`import_media`), within that quota; without it cards are text
    only. `source` read by `read_for_import` needs `with_media` for them.
    """
    # A hundred thousand answers replayed: their states and logs are kept until written, and
    # collections would walk them again and again (`gc_pause`).
    with large_page_cache(session), gc_paused():
        return _import_package(
            session, source, owner_user_id=owner_user_id, slug=slug, locale=locale,
            with_scheduling=with_scheduling, now=now, max_notes=max_notes, max_bytes=max_bytes,
            max_unpacked_bytes=max_unpacked_bytes, progress=progress, untitled=untitled,
            update_existing=update_existing, media_quota_mb=media_quota_mb,
        )  # fmt: skip


def _import_package(
    session: Session,
    source: bytes | Path | Collection,
    *,
    owner_user_id: int | None,
    slug: str | None,
    locale: str | None,
    with_scheduling: bool,
    now: datetime,
    max_notes: int,
    max_bytes: int,
    max_unpacked_bytes: int | None,
    progress: Progress | None,
    untitled: str,
    update_existing: bool,
    media_quota_mb: int | None,
) -> ImportReport:
    user = session.get(User, owner_user_id) if owner_user_id is not None else None
    if owner_user_id is not None and user is None:
        raise NotFound("no such user")
    if with_scheduling and user is None:
        raise InvalidInput("importing learning progress needs a user", field="user")
    user_locale = user.locale if user is not None else "en"
    prefix = check_names(owner_user_id, slug, locale)
    coll = source
    if not isinstance(coll, Collection):
        coll = read_for_import(
            coll,
            with_scheduling=with_scheduling,
            max_notes=max_notes,
            max_bytes=max_bytes,
            max_unpacked_bytes=max_unpacked_bytes,
            with_media=media_quota_mb is not None,
        )
    finder = None
    if update_existing and slug is None and owner_user_id is not None:
        tags = {tag for note in coll.notes for tag in note.tags}
        finder = reimport.DeckFinder.of(session, owner_user_id, tags)
    # A slug asked for names one deck; else each Anki deck becomes one, subdecks and all.
    groups = note_groups(coll, one=slug is not None, untitled=untitled)
    if len(groups) > MAX_DECKS:
        raise AnkiPackageError(
            f"the package's cards are in {len(groups)} decks; at most {MAX_DECKS} can be imported",
            kind="too_many_decks",
            count=len(groups),
            limit=MAX_DECKS,
        )
    # Each Anki deck updates the deck it came from, or becomes a new one.
    groups = by_target(groups, finder)
    skipped: Counter[str] = Counter()
    first_locale = None
    formatted = cloze_notes = made = notes_done = 0
    for group in groups:
        target = group.target
        notes_locale = locale or (target.default_locale if target is not None else user_locale)
        try:
            planner = plan_cards(
                group.collection(coll, whole=len(groups) == 1), notes_locale, skipped,
                max_notes - made, _offset(progress, notes_done, len(coll.notes)),
            )  # fmt: skip
        except AnkiPackageError as exc:
            if exc.kind != "too_many_cards":
                raise
            # Said of the whole package, not of the deck where the limit ran out.
            raise AnkiPackageError(
                f"the package's notes make at least {made + exc.count} cards (a Cloze note one"
                f" per deletion number), over the limit of {max_notes}",
                kind="too_many_cards",
                count=made + exc.count,
                limit=max_notes,
            ) from None
        notes_done += len(group.notes)
        group.planned = list(planner.planned.values())
        made += len(group.planned) + planner.unplanned
        first_locale = first_locale or planner.first_locale
        formatted += planner.formatted
        cloze_notes += planner.cloze_notes
    # Before anything is written, and before an image alone makes a question non-empty.
    media = None
    if media_quota_mb is not None and owner_user_id is not None:
        every = [p for group in groups for p in group.planned]
        media = import_media.plan(session, owner_user_id, coll, every, quota_mb=media_quota_mb)
    else:
        for group in groups:
            skipped["empty_front"] += import_media.text_only(group.planned)
    groups = [group for group in groups if group.planned]
    planned = [p for group in groups for p in group.planned]
    if not groups:
        detail = " ".join(skip_messages(skipped)) or "the package has no notes."
        raise AnkiPackageError(f"nothing to import: {detail}", kind="nothing_to_import")
    if owner_user_id is not None:
        apart_from(groups, reimport.titles_near(session, owner_user_id))
    # Each new deck's language is one every one of its cards has text in: refused, if none,
    # before anything is written.
    preferred = [first_locale or user_locale, user_locale]
    languages = [
        complete_language(group.planned, locale, preferred)
        if group.target is None
        else group.target.default_locale
        for group in groups
    ]
    history = None
    if with_scheduling and user is not None:
        history = _History.of(session, coll, user, now)
    imported = [
        _import_deck(
            session, group.planned, target=group.target, user=user,
            owner_user_id=owner_user_id, slug=prefix + slug if slug is not None else None,
            title=group.title, default_locale=default_locale, prefix=prefix, now=now,
            history=history,
        )
        for group, default_locale in zip(groups, languages, strict=True)
    ]  # fmt: skip
    if media is not None and media.changes:
        assert owner_user_id is not None and media_quota_mb is not None
        media_folder.apply_changes(
            session, owner_user_id, media.changes, quota_mb=media_quota_mb, now=now
        )
    for deck in imported:
        skipped["missing_language"] += deck.missing_language
        skipped["not_owned_new"] += deck.not_owned_new
        skipped["not_owned_edited"] += deck.not_owned_edited
    # A card's Anki cards are its copies in several languages: one still active means the
    # card was being studied, so only a card kept out of study altogether comes back as a
    # surprise. With progress they stay suspended (`marks_of`).
    suspended = 0 if with_scheduling else sum(1 for p in planned if _suspended(p))
    main = imported[0]
    report = ImportReport(
        deck_id=main.deck_id, slug=main.slug, title=main.title,
        default_locale=main.default_locale, decks=imported,
        cards=sum(d.cards for d in imported), texts=sum(d.texts for d in imported),
        review_states=sum(d.review_states for d in imported),
        review_logs=sum(d.review_logs for d in imported),
        updated=all(d.updated for d in imported),
        added=sum(d.added for d in imported), changed=sum(d.changed for d in imported),
        media_left_out=coll.media_files if media is None else 0,
        media_added=len(media.changes) if media is not None else 0,
        media_unused=media.unused if media is not None else 0,
        media_missing=media.missing if media is not None else [],
        media_not_shown=media.not_shown if media is not None else 0,
        formatting_simplified=formatted, suspended_made_active=suspended,
        cloze_notes=cloze_notes,
        tags={p.key: card_tags(p) for p in planned if card_tags(p)},
        tagged=sum(1 for p in planned if card_tags(p)),
        skipped={reason: n for reason, n in skipped.items() if n},
    )  # fmt: skip
    report.messages = english_messages(report)
    if progress is not None:
        progress(len(coll.notes), len(coll.notes))
    return report


def _import_deck(
    session: Session,
    planned: list[PlannedCard],
    *,
    target: Deck | None,
    user: User | None,
    owner_user_id: int | None,
    slug: str | None,
    title: str,
    default_locale: str,
    prefix: str,
    now: datetime,
    history: _History | None,
) -> ImportedDeck:
    """The planned cards of one Anki deck into a new deck of `title`, or into `target`, the
    deck they came from; with `history`, the owner's progress on them."""
    if target is None:
        if slug is not None:
            if session.scalar(select(Deck.id).where(Deck.slug == slug)) is not None:
                raise DeckNameTaken(f"the deck name '{slug}' is already taken", field="slug")
        else:
            slug = free_slug(session, prefix + slugify(title))

    # Per planned card with progress (by index): its state row and its replayed answers.
    progress_of: dict[int, tuple[dict[str, Any], list[Answer]]] = {}
    if history is not None:
        for index, p in enumerate(planned):
            replayed = history.progress(p)
            if replayed is not None:
                progress_of[index] = replayed

    added = changed = missing_language = not_owned_new = not_owned_edited = 0
    if target is None:
        deck = Deck(
            slug=slug, default_locale=default_locale, owner_user_id=owner_user_id,
            created_at=now, updated_at=now,
        )  # fmt: skip
        session.add(deck)
        session.flush()
        card_ids: list[int | None] = list(
            new_deck_rows(session, deck, planned, title, now, card_tags, _note_key)
        )
    else:
        deck = target
        slug = deck.slug

        def tags_of(p: PlannedCard) -> list[str]:
            # Our export tags each note with its deck's slug: no news to the deck itself.
            return [t for t in card_tags(p) if t != slug]

        matched = reimport.match(session, deck, planned, tags_of, now)
        assert owner_user_id is not None  # only a person's own or studied decks are updated
        if deck.owner_user_id == owner_user_id:
            applied = reimport.apply(session, deck, planned, matched, tags_of, _note_key, now)
            card_ids = applied.card_ids
            added, changed = applied.added, applied.changed
            missing_language = applied.missing_language
        else:
            # A shipped or team deck they study: its cards and texts are its makers'. What
            # Anki added or edited is said, not applied; their progress comes in below.
            card_ids = matched.card_ids
            not_owned_new = sum(card_id is None for card_id in card_ids)
            not_owned_edited = len(
                {row["card_id"] for row in [*matched.changed_texts, *matched.added_texts]}
            )
        title = title_of(session, deck)
        # The person's progress on the deck's cards is kept: only cards they have not
        # studied here take the package's (and only cards they have not marked, its marks).
        studied_here = cards_with(session, ReviewState, owner_user_id, deck.id)
        progress_of = {
            i: found for i, found in progress_of.items() if card_ids[i] not in studied_here
        }
        # A card new here whose Anki card's answers the deck has already (a deck imported
        # before siblings were, whose one card carries them) starts without progress: its
        # answers are the other card's, and a second copy of them could not be stored.
        logged = already_logged(session, owner_user_id, deck.id, progress_of)
        progress_of = {i: found for i, found in progress_of.items() if i not in logged}
    progress_of = {i: found for i, found in progress_of.items() if card_ids[i] is not None}
    if history is not None and user is not None:
        today = study_date(now, user.timezone, user.day_start_hour)
        marks = []
        marked = cards_with(session, CardMark, user.id, deck.id) if target is not None else set()
        for card_id, p in zip(card_ids, planned, strict=True):
            found = marks_of(p, today)
            if found is not None and card_id is not None and card_id not in marked:
                marks.append({"user_id": user.id, "card_id": card_id, "deck_id": deck.id, **found})
        if marks:
            session.execute(insert(table(CardMark)), marks)
    review_logs = write_progress(session, owner_user_id or 0, deck.id, card_ids, progress_of)
    assert slug is not None  # the deck's, or the new deck's
    return ImportedDeck(
        deck_id=deck.id, slug=slug, title=title, default_locale=default_locale,
        updated=target is not None, added=added, changed=changed,
        missing_language=missing_language, not_owned_new=not_owned_new,
        not_owned_edited=not_owned_edited,
        cards=sum(c is not None for c in card_ids),
        texts=sum(len(p.texts) for p, c in zip(planned, card_ids, strict=True) if c is not None),
        review_states=len(progress_of), review_logs=review_logs,
    )  # fmt: skip


@dataclass
class _History:
    """The owner's answers in the package, replayed card by card into their progress."""

    timing: ImportTiming
    settings: SchedulerSettings | None
    replay: Replay
    revlog_by_card: dict[int, list[Any]]

    @classmethod
    def of(cls, session: Session, coll: Collection, user: User, now: datetime) -> _History:
        timing = ImportTiming.from_collection(coll, user, now)
        settings = session.get(SchedulerSettings, user.id)
        revlog_by_card: dict[int, list[Any]] = {}
        for r in coll.revlog:
            revlog_by_card.setdefault(r.cid, []).append(r)
        return cls(timing, settings, Replay.of(settings, timing), revlog_by_card)

    def progress(self, p: PlannedCard) -> tuple[dict[str, Any], list[Answer]] | None:
        """The card's state row and replayed answers, from its most studied Anki card."""
        studied = [c for c in p.anki_cards if c.type != 0] or p.anki_cards[:1]
        if not studied:
            return None
        source_card = max(studied, key=lambda c: (c.reps, -c.ord))
        card_logs = convert_revlog(self.revlog_by_card.get(source_card.id, []), self.replay)
        state = convert_card(source_card, card_logs, self.settings, self.timing)
        return (state, card_logs) if state is not None else None


def _offset(progress: Progress | None, done: int, total: int) -> Progress | None:
    """`progress` for a part of the notes, `done` of `total` before it."""
    if progress is None:
        return None
    return lambda part_done, _part_total: progress(done + part_done, total)


def _note_key(p: PlannedCard) -> str | None:
    return p.note_key or _note_of_key(p.key)


# The key a Cloze deletion's card gets (`planning`), which our exports keep: a package of ours
# brings its siblings back by it.
_CLOZE_KEY = re.compile(r"(anki-\d+)-c\d+")


def _note_of_key(key: str) -> str | None:
    match = _CLOZE_KEY.fullmatch(key)
    return match.group(1) if match else None


def card_tags(p: PlannedCard) -> list[str]:
    """The note's tags but `leech`, which is a person's (their lapses), not the card's."""
    return [t for t in p.tags if t.lower() != LEECH_TAG]


def _suspended(p: PlannedCard) -> bool:
    # One language's copy still active means the card was being studied: only a card kept
    # out of study altogether stays out.
    return bool(p.anki_cards) and all(c.queue == QUEUE_SUSPENDED for c in p.anki_cards)


def marks_of(p: PlannedCard, today: date) -> dict[str, Any] | None:
    """The importer's marks on the card from its Anki cards and note, or None for none."""
    marks: dict[str, Any] = {
        "suspended": _suspended(p),
        # Anki unburies at its next day: buried until the next study day here.
        "buried_until": (
            today + timedelta(days=1) if any(c.queue in QUEUE_BURIED for c in p.anki_cards)
            else None
        ),
        "flag": max((c.flags for c in p.anki_cards), default=0),
        "leech": any(t.lower() == LEECH_TAG for t in p.tags),
        "tags": [],
    }  # fmt: skip
    if marks["suspended"] or marks["buried_until"] or marks["flag"] or marks["leech"]:
        return marks
    return None
