"""An `.apkg` in as a new deck owned by the importing person, optionally with their progress.

The package is read and checked completely (limits, layout, notetypes) and every row is
planned before the first write, so a refused package leaves nothing behind even before the
caller rolls back.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from ..decks.deckfile import KEY_RE, LOCALE_RE, SLUG_RE
from ..decks.quizfile import slugify
from ..errors import Conflict, InvalidInput, NotFound
from ..models import Card, CardText, Deck, DeckText, ReviewLog, ReviewState, SchedulerSettings, User
from . import schema
from .errors import AnkiPackageError
from .reader import CLOZE, AnkiCard, Collection, Note, read_package
from .sanitize import clean_html, has_formatting, html_to_text
from .scheduling_in import ImportTiming, convert_card, convert_revlog
from .tables import table

DEFAULT_MAX_BYTES = 100 << 20
DEFAULT_MAX_NOTES = 50_000
MAX_GUID = 64  # Anki's own are 10 characters; a longer one is not kept (nor trusted)
REVIEW_ID_NAMESPACE = uuid.UUID("4b9e5f0e-6a36-4f8e-9a55-2d8f3e0c1a7b")
LANG_TAG = "lang::"
EXPLANATION_RE = re.compile(
    rf'<div class="{schema.EXPLANATION_CLASS}">(.*)</div>\s*$', re.DOTALL | re.IGNORECASE
)
Progress = Callable[[int, int], None]
QUEUE_SUSPENDED = -1


@dataclass
class ImportReport:
    deck_id: int
    slug: str
    title: str
    default_locale: str
    cards: int = 0
    texts: int = 0
    review_states: int = 0
    review_logs: int = 0
    media_left_out: int = 0
    formatting_simplified: int = 0
    # Cards whose every Anki card was suspended: there is no suspending here, so they are
    # studied like any other.
    suspended_made_active: int = 0
    # Anki tags per card key, as stored on the cards.
    tags: dict[str, list[str]] = field(default_factory=dict)
    # Notes left out, by reason (a key of SKIP_REASONS).
    skipped: dict[str, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)


SKIP_REASONS = {
    "no_notetype": "have no notetype",
    "cloze": "are Cloze notes, which we do not support (convert them to Basic in Anki)",
    "empty_front": "have an empty first field",
    "duplicate": "repeat a card and language already imported",
}


@dataclass
class _PlannedCard:
    key: str
    texts: dict[str, tuple[str, str, str]]  # locale -> question, answer, explanation
    anki_cards: list[AnkiCard]
    tags: list[str]
    guids: dict[str, str] = field(default_factory=dict)  # locale -> its Anki note's guid


def review_uuid(user_id: int, deck_id: int, revlog_id: int) -> str:
    """Deterministic per answer; user and deck in the name keep two imports from colliding."""
    return str(uuid.uuid5(REVIEW_ID_NAMESPACE, f"{user_id}:{deck_id}:{revlog_id}"))


def _split_back(note_back: str, ours: bool) -> tuple[str, str]:
    if ours:
        match = EXPLANATION_RE.search(note_back)
        if match:
            return note_back[: match.start()], match.group(1)
    return note_back, ""


def _is_ours(fields: list[str]) -> bool:
    return tuple(fields[:3]) == schema.FIELDS


def _plan_cards(
    coll: Collection,
    default_locale: str,
    skipped: Counter[str],
    progress: Progress | None = None,
) -> tuple[list[_PlannedCard], int, str | None]:
    cards_by_note: dict[int, list[AnkiCard]] = {}
    for c in coll.cards:
        cards_by_note.setdefault(c.nid, []).append(c)
    planned: dict[str, _PlannedCard] = {}
    formatted = 0
    first_locale: str | None = None
    for done, note in enumerate(coll.notes, 1):
        if progress is not None and done % 100 == 0:
            progress(done, len(coll.notes))
        nt = coll.notetypes.get(note.mid)
        if nt is None:
            skipped["no_notetype"] += 1
            continue
        if nt.kind == CLOZE:
            skipped["cloze"] += 1
            continue
        ours = _is_ours(nt.fields)
        locale = _note_locale(note, default_locale) if ours else default_locale
        if first_locale is None and ours:
            first_locale = locale
        front_html = note.fields[0] if note.fields else ""
        back_html, explanation_html = _split_back(
            note.fields[1] if len(note.fields) > 1 else "", ours
        )
        clean = [clean_html(h) for h in (front_html, back_html, explanation_html)]
        front, back, explanation = (html_to_text(c, already_clean=True) for c in clean)
        if not front:
            skipped["empty_front"] += 1
            continue
        if any(has_formatting(c) for c in clean):
            formatted += 1
        key = _note_key(note, ours, planned, locale)
        entry = planned.get(key)
        if entry is None:
            tags = [t for t in note.tags if not t.startswith(LANG_TAG)]
            entry = planned[key] = _PlannedCard(key, {}, [], tags)
        if locale in entry.texts:
            skipped["duplicate"] += 1
            continue
        entry.texts[locale] = (front, back, explanation)
        if 0 < len(note.guid) <= MAX_GUID:
            entry.guids[locale] = note.guid
        entry.anki_cards.extend(sorted(cards_by_note.get(note.id, []), key=lambda c: c.ord))
    return list(planned.values()), formatted, first_locale


def _complete_language(planned: list[_PlannedCard], asked: str | None, preferred: list[str]) -> str:
    """The deck's default language: one with a text for every card, since a person whose
    own language lacks a card is shown it in this one. `asked`, the caller's, or else the
    first of `preferred` that is complete, or else any."""
    have = Counter(loc for p in planned for loc in p.texts)
    complete = sorted(loc for loc, n in have.items() if n == len(planned))
    if asked is not None:
        if asked in complete:
            return asked
        raise InvalidInput(
            f"the package has a text in '{asked}' for {have[asked]} of its {len(planned)}"
            " cards, and the deck's language needs one for every card (languages with every"
            f" card: {', '.join(complete) or 'none'})",
            field="locale",
        )
    for loc in (*preferred, *complete):
        if loc in complete:
            return loc
    raise AnkiPackageError(
        "no language in the package has a text for every card, so the deck would have no"
        f" language to show them in ({', '.join(f'{loc}: {n}' for loc, n in sorted(have.items()))}"
        f" of {len(planned)} cards)",
        kind="no_complete_language",
    )


def _note_locale(note: Note, default_locale: str) -> str:
    for tag in note.tags:
        if tag.startswith(LANG_TAG) and LOCALE_RE.match(tag[len(LANG_TAG) :]):
            return tag[len(LANG_TAG) :]
    return default_locale


def _note_key(note: Note, ours: bool, planned: dict[str, _PlannedCard], locale: str) -> str:
    if ours and len(note.fields) > 2:
        key = html_to_text(note.fields[2])
        if KEY_RE.match(key) and (key not in planned or locale not in planned[key].texts):
            return key
    key = f"anki-{note.id}"
    while key in planned:
        key += "-x"
    return key


def _home_deck(card: AnkiCard) -> int:
    # A card in a filtered deck (custom study, "Cram") is only visiting: `odid` is its own.
    return card.odid or card.did


def _deck_title(coll: Collection, planned: list[_PlannedCard], untitled: str) -> str:
    names = Counter(
        coll.decks.get(_home_deck(c), "").split("::")[0]
        for p in planned
        for c in p.anki_cards[:1]
        if coll.decks.get(_home_deck(c))
    )
    for name, _ in names.most_common():
        if name and name != "Default":
            return name[:200]
    return untitled


def _free_slug(session: Session, wanted: str) -> str:
    taken = set(session.scalars(select(Deck.slug).where(Deck.slug.like(f"{wanted[:60]}%"))))
    slug, n = wanted[:60], 2
    while slug in taken:
        slug = f"{wanted[:56]}-{n}"
        n += 1
    return slug


def import_package(
    session: Session,
    source: bytes | Path,
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
) -> ImportReport:
    """A new deck from the package's Basic-like notes (first field front, second back).

    `untitled` names a deck whose package names none (Anki's "Default"): the edges pass it
    in the importer's language.

    The deck belongs to `owner_user_id` (None: a shared deck, as the shipped ones are).

    Packages we exported come back with their card keys, languages and explanations. With
    scheduling, the owner's review state and log are rebuilt from Anki's cards and revlog.
    """
    user = session.get(User, owner_user_id) if owner_user_id is not None else None
    if owner_user_id is not None and user is None:
        raise NotFound("no such user")
    if with_scheduling and user is None:
        raise InvalidInput("importing learning progress needs a user", field="user")
    user_locale = user.locale if user is not None else "en"
    # A user's decks are named in a space of their own, as a team's are ("team<id>-"): a
    # name another user's private deck holds can then be neither refused nor renamed around,
    # which would tell that the deck exists.
    prefix = "" if owner_user_id is None else f"user{owner_user_id}-"
    longest = 100 - len(prefix)
    if slug is not None and not (SLUG_RE.match(slug) and len(slug) <= longest):
        raise InvalidInput(
            f"a deck slug is lower-case letters, digits, '-' and '_' (at most {longest})",
            field="slug",
        )
    if locale is not None and not LOCALE_RE.match(locale):
        raise InvalidInput(f"'{locale}' is not a locale name (e.g. es, ko)", field="locale")
    coll = read_package(
        source,
        max_bytes=max_bytes,
        max_unpacked_bytes=max_unpacked_bytes or 10 * max_bytes,
        max_notes=max_notes,
        with_revlog=with_scheduling,
    )
    skipped: Counter[str] = Counter()
    planned, formatted, first_locale = _plan_cards(coll, locale or user_locale, skipped, progress)
    messages = [
        f"{count} note(s) left out: they {SKIP_REASONS[reason]}."
        for reason, count in skipped.items()
    ]
    if not planned:
        detail = " ".join(messages) or "the package has no notes."
        raise AnkiPackageError(f"nothing to import: {detail}", kind="nothing_to_import")
    default_locale = _complete_language(planned, locale, [first_locale or user_locale, user_locale])
    title = _deck_title(coll, planned, untitled)
    if slug is not None:
        slug = prefix + slug
        if session.scalar(select(Deck.id).where(Deck.slug == slug)) is not None:
            raise Conflict(f"the deck name '{slug}' is already taken", field="slug")
    else:
        slug = _free_slug(session, prefix + slugify(title))

    states: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []
    if with_scheduling and user is not None:
        timing = ImportTiming.from_collection(coll, user, now)
        settings = session.get(SchedulerSettings, user.id)
        revlog_by_card: dict[int, list[Any]] = {}
        for r in coll.revlog:
            revlog_by_card.setdefault(r.cid, []).append(r)
        for index, p in enumerate(planned):
            studied = [c for c in p.anki_cards if c.type != 0] or p.anki_cards[:1]
            if not studied:
                continue
            source_card = max(studied, key=lambda c: (c.reps, -c.ord))
            card_logs = convert_revlog(revlog_by_card.get(source_card.id, []), settings, timing)
            state = convert_card(source_card, card_logs, settings, timing)
            if state is not None:
                states.append({"_index": index, **state})
                logs.extend({"_index": index, **log} for log in card_logs)

    deck = Deck(
        slug=slug, default_locale=default_locale, owner_user_id=owner_user_id,
        created_at=now, updated_at=now,
    )  # fmt: skip
    session.add(deck)
    session.flush()
    locales = sorted({loc for p in planned for loc in p.texts})
    session.add_all(DeckText(deck_id=deck.id, locale=loc, title=title) for loc in locales)
    card_ids = list(
        session.scalars(
            insert(Card).returning(Card.id, sort_by_parameter_order=True),
            [
                {
                    "deck_id": deck.id,
                    "key": p.key,
                    "position": i,
                    "tags": p.tags,
                    "created_at": now,
                    "updated_at": now,
                }
                for i, p in enumerate(planned)
            ],
        )
    )
    text_rows = [
        {
            "card_id": card_id,
            "locale": loc,
            "question": q,
            "answer": a,
            "explanation": e,
            "updated_at": now,
            "anki_guid": p.guids.get(loc),
        }
        for card_id, p in zip(card_ids, planned, strict=True)
        for loc, (q, a, e) in p.texts.items()
    ]
    session.execute(insert(table(CardText)), text_rows)
    for row in states:
        row.update(user_id=owner_user_id, card_id=card_ids[row.pop("_index")], deck_id=deck.id)
    for row in logs:
        card_id = card_ids[row.pop("_index")]
        revlog_id = row.pop("revlog_id")
        row.update(
            user_id=owner_user_id, card_id=card_id, deck_id=deck.id,
            review_id=review_uuid(owner_user_id or 0, deck.id, revlog_id),
        )  # fmt: skip
    # Core inserts: the ORM's bulk path drops None values from each row, which splits rows
    # with and without a "before" state into separate statements (one per row, in effect).
    if states:
        session.execute(insert(table(ReviewState)), states)
    if logs:
        session.execute(insert(table(ReviewLog)), logs)

    if coll.media_files:
        messages.append(
            f"{coll.media_files} media file(s) (images, sounds) were left out: "
            "cards here are text only."
        )
    if formatted:
        messages.append(
            f"{formatted} note(s) had formatting (bold, lists, links) that was reduced to "
            "plain text."
        )
    # One side of a reversed note still active means the card was being studied: only a card
    # kept out of study altogether comes back as a surprise.
    suspended = sum(
        1 for p in planned if p.anki_cards and all(c.queue == QUEUE_SUSPENDED for c in p.anki_cards)
    )
    if suspended:
        messages.append(
            f"{suspended} card(s) suspended in Anki were imported as active: cards here "
            "cannot be suspended."
        )
    report = ImportReport(
        deck_id=deck.id, slug=slug, title=title, default_locale=default_locale,
        cards=len(planned), texts=len(text_rows), review_states=len(states),
        review_logs=len(logs), media_left_out=coll.media_files,
        formatting_simplified=formatted, suspended_made_active=suspended, messages=messages,
        tags={p.key: p.tags for p in planned if p.tags}, skipped=dict(skipped),
    )  # fmt: skip
    if progress is not None:
        progress(len(coll.notes), len(coll.notes))
    return report
