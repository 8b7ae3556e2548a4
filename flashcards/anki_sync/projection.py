"""The person's collection as a device gets it (a full download's file, a normal sync's
objects), built from their data with the package exporter's pieces (`anki.export.deck_rows`,
`anki.scheduling_out`). No Flask.

Every deck they study goes in, in the language they study it in, with their FSRS state, due
days in their study days and their whole log; each deck gets its own options group with
their settings and the deck's overrides (retention, limits, a team's pace), and their FSRS
parameters in force (an adopted fit's, else the defaults). Ids are derived from ours, so the
same card, note and deck have the same id in every download (and for a later normal sync).
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..anki import scheduling_out, schema
from ..anki.collection_file import Collection
from ..anki.export import collection_conf, deck_rows
from ..anki.export_notes import note_id
from ..anki.import_rows import title_of
from ..anki.names import deck_title
from ..anki.scheduling_out import SchedulingContext, revlog_rows
from ..anki.tables import table
from ..anki.timing import CRT
from ..errors import NotFound
from ..srs.marks import Marks, marks_from_row
from ..srs.queue import new_allowance
from ..srs.settings import scheduler_defaults
from ..storage.models import (
    Card,
    CardMark,
    Deck,
    ReviewLog,
    ReviewState,
    SchedulerSettings,
    Subscription,
    User,
)
from . import adopted, kept, sessions, snapshot
from .ids import deck_id_base

SERVER_USN = 0
# Ending with the columns `revlog_rows` reads, in its order.
LOG_COLUMNS = ("id", "card_id", "deck_id", *scheduling_out.LOG_COLUMNS)


def options_id(deck_id: int) -> int:
    """Options group ids: 1 is the Default deck's (the person's own settings), 1 + our deck
    id each deck's own."""
    return schema.DECK_CONFIG_ID + deck_id


def _effective(own: SchedulerSettings, sub: Subscription) -> SchedulerSettings:
    """The person's settings with the subscription's overrides on top (not stored)."""

    def pick(name: str) -> Any:
        override = getattr(sub, name)
        return override if override is not None else getattr(own, name)

    return SchedulerSettings(
        user_id=own.user_id,
        desired_retention=pick("desired_retention"),
        learning_steps=pick("learning_steps"),
        relearning_steps=pick("relearning_steps"),
        maximum_interval=pick("maximum_interval"),
        new_per_day=new_allowance(pick("new_per_day"), sub.paced_new_per_day),
        reviews_per_day=pick("reviews_per_day"),
        parameters=own.parameters,
    )


def _options(settings: SchedulerSettings, sched: SchedulingContext, mod_ms: int, *,
             config_id: int, name: str) -> dict[str, Any]:  # fmt: skip
    return schema.deck_config(
        mod_ms,
        learning_steps=settings.learning_steps,
        relearning_steps=settings.relearning_steps,
        maximum_interval=settings.maximum_interval,
        new_per_day=settings.new_per_day,
        reviews_per_day=settings.reviews_per_day,
        desired_retention=settings.desired_retention,
        parameters=sched.parameters,
        config_id=config_id,
        name=name,
    )


def _retitle(decks: list[dict[str, Any]], titles: dict[int, str], mod: int) -> None:
    """A device's deck studied here is named as it is here (renamed on the web or on a
    device: `adopted.retitle`)."""
    for i, d in enumerate(decks):
        title = titles.get(d["id"])
        name = d.get("name")
        # A name our titles write otherwise ("A :: B", one past 200 characters) is the same.
        same = isinstance(name, str) and deck_title([name], name.strip()) == title
        if title is not None and not same:
            decks[i] = {**d, "name": title, "mod": mod}


def _retired_answers(
    retired: list[tuple[int, int | None]], deck_logs: dict[int, Any], sched: SchedulingContext
) -> tuple[list[tuple[Any, ...]], dict[int, int]]:
    """The revlog rows of a deck's retired cards (`retired`: our id and Anki id of each),
    under the ids their cards had: Anki keeps the answers to a card it deletes, so a device
    downloading the collection keeps them too (a person's stats and FSRS fit count them).
    And our card of each such id."""
    rows: list[tuple[Any, ...]] = []
    card_of: dict[int, int] = {}
    for card_id, anki_card_id in retired:
        if card_id in deck_logs:
            cid = anki_card_id if anki_card_id is not None else note_id(card_id)
            rows.extend(revlog_rows(sched, card_id, cid))
            card_of[cid] = card_id
    return rows, card_of


@dataclass
class Projection:
    """The person's collection built from our data, with the review-log row behind each of
    its first revlog rows (`log_ids[i]` for `collection.revlog[i]`; the rows after those are
    kept answers, `kept`)."""

    collection: Collection
    log_ids: list[int]


def _add_kept(
    found: kept.Kept,
    notetypes: list[dict[str, Any]],
    decks: list[dict[str, Any]],
    dconf: list[dict[str, Any]],
    notes: list[tuple[Any, ...]],
    cards: list[tuple[Any, ...]],
    revlog: list[tuple[Any, ...]],
) -> None:
    """What devices made and we keep as they sent it (`kept`), with our usn. A card whose
    deck is gone (a kept one in a deck of ours the person left, one of ours in a device's
    deck no longer kept) goes to the Default deck, as Anki's own check puts it; a kept
    answer whose id one of ours took is left out."""
    notetypes.extend(found.notetypes)
    # A note with no card left (a deck studied here that they deleted or left) goes: Anki's
    # own check deletes such notes.
    with_cards = {c[1] for c in cards} | {c[1] for c in found.cards}
    replaced = {d["id"] for d in found.decks}  # the Default deck, as a device changed it
    decks[:] = [*(d for d in decks if d["id"] not in replaced), *found.decks]
    dconf.extend(found.dconf)
    notes.extend(
        tuple([*n[: snapshot.NOTE_USN], SERVER_USN, *n[snapshot.NOTE_USN + 1 :]])
        for n in found.notes
        if n[0] in with_cards
    )
    deck_ids = {d["id"] for d in decks}
    # Ours in a device's deck that is no longer kept (deleted before a sync said so) too.
    cards[:] = [c if c[2] in deck_ids else (*c[:2], schema.DEFAULT_DECK_ID, *c[3:]) for c in cards]
    for c in found.cards:
        did = c[2] if c[2] in deck_ids else schema.DEFAULT_DECK_ID
        cards.append(tuple([*c[:2], did, *c[3 : snapshot.CARD_USN], SERVER_USN,
                            *c[snapshot.CARD_USN + 1 :]]))  # fmt: skip
    taken = {r[0] for r in revlog}
    revlog.extend(tuple([*r[:2], SERVER_USN, *r[3:]]) for r in found.revlog if r[0] not in taken)


def build(
    session: Session,
    user_id: int,
    *,
    now: datetime,
    mod_ms: int,
    usn: int,
    only: Set[int] | None = None,
    taken: dict[int, int] | None = None,
) -> Projection:
    """The person's collection as a device gets it, stamped `mod_ms` and `usn`. With `only`,
    the rows of those cards alone, their revlog ids free of the ids `taken` (see
    `SchedulingContext.next_free`)."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("no such user")
    own = session.get(SchedulerSettings, user_id) or SchedulerSettings(
        user_id=user_id, **scheduler_defaults()
    )
    subs = session.execute(
        select(Subscription, Deck)
        .join(Deck, Deck.id == Subscription.deck_id)
        .where(Subscription.user_id == user_id)
        .order_by(Deck.slug)
    ).all()
    states_t, logs_t = table(ReviewState), table(ReviewLog)
    # Plain rows, read once for every deck: a person's log can have hundreds of thousands.
    of_states, of_logs = [states_t.c.user_id == user_id], [logs_t.c.user_id == user_id]
    if only is not None:
        of_states.append(states_t.c.card_id.in_(only))
        of_logs.append(logs_t.c.card_id.in_(only))
    states: dict[int, dict[int, Any]] = {}
    for row in session.execute(select(states_t).where(*of_states)):
        states.setdefault(row.deck_id, {})[row.card_id] = row
    logs: dict[int, dict[int, list[Any]]] = {}
    logs_by_card: dict[int, list[Any]] = {}
    for log in session.execute(
        # The columns a revlog row is made of: a log has seven timestamps, each a conversion.
        select(*(logs_t.c[name] for name in LOG_COLUMNS))
        .where(*of_logs)
        .order_by(logs_t.c.card_id, logs_t.c.reviewed_at, logs_t.c.id)
    ):
        card_logs = logs.setdefault(log.deck_id, {}).setdefault(log.card_id, [])
        card_logs.append(log)
        logs_by_card[log.card_id] = card_logs

    marks_t = table(CardMark)
    of_marks = [marks_t.c.user_id == user_id]
    if only is not None:
        of_marks.append(marks_t.c.card_id.in_(only))
    marks: dict[int, dict[int, Marks]] = {}
    for row in session.execute(select(marks_t).where(*of_marks)):
        marks.setdefault(row.deck_id, {})[row.card_id] = marks_from_row(row)

    # The retired cards with answers, of every deck at once (a whole build only).
    retired: dict[int, list[tuple[int, int | None]]] = {}
    if only is None and logs:
        for card_id, deck_id, anki_card_id in session.execute(
            select(Card.id, Card.deck_id, Card.anki_card_id).where(
                Card.deck_id.in_(list(logs)), Card.retired_at.is_not(None)
            )
        ):
            retired.setdefault(deck_id, []).append((card_id, anki_card_id))
    taken_revlog_ids = {} if taken is None else taken  # unique across the collection
    stamps = sessions.collection(session, user_id, now)
    crt = CRT if stamps.crt is None else stamps.crt
    shift = (crt - CRT) // 86_400  # `timing.crt_of`
    default_sched = SchedulingContext(user, own, user.locale, {}, {}, now, day_shift=shift)
    decks = [schema.deck(schema.DEFAULT_DECK_ID, "Default", mod_ms // 1000)]
    dconf = [_options(own, default_sched, mod_ms, config_id=schema.DECK_CONFIG_ID, name="Default")]
    notes: list[tuple[Any, ...]] = []
    cards: list[tuple[Any, ...]] = []
    revlog: list[tuple[Any, ...]] = []
    card_of: dict[int, int] = {}
    card_count = 0
    adopted_titles: dict[int, str] = {}
    for sub, deck in subs:
        settings = _effective(own, sub)

        def scheduling(chosen: list[str], deck: Deck = deck, settings: Any = settings) -> Any:
            return SchedulingContext(
                user=user,
                settings=settings,
                locale=chosen[0],
                states=states.get(deck.id, {}),
                logs=logs.get(deck.id, {}),
                now=now,
                marks=marks.get(deck.id, {}),
                next_free=taken_revlog_ids,
                usn=SERVER_USN,
                day_shift=shift,
            )

        if deck.id in retired:
            retired_answers, of_retired = _retired_answers(
                retired[deck.id], logs.get(deck.id, {}), scheduling([sub.locale])
            )
            revlog.extend(retired_answers)
            card_of.update(of_retired)
        if deck.anki_deck_id is not None:
            # A deck a device made: its deck, options and notes are kept as it sent them.
            sched = scheduling([sub.locale])
            made, answers, of_ours = adopted.card_rows(
                session, deck, sched, usn=SERVER_USN, only=only
            )
            cards.extend(made)
            revlog.extend(answers)
            card_of.update(of_ours)
            card_count += len(made)
            adopted_titles[deck.anki_deck_id] = title_of(session, deck)
            added = adopted.added_here(session, deck, only)
            if not added:
                continue
            # Cards added here go out as notes of ours, in the device's deck.
        rows = deck_rows(
            session,
            deck,
            locales=[sub.locale],
            scheduling=scheduling,
            mod_ms=mod_ms,
            deck_id_base=(
                deck_id_base(deck.id) if deck.anki_deck_id is None else deck.anki_deck_id - 1
            ),
            conf_id=options_id(deck.id),
            usn=SERVER_USN,
            only=only if deck.anki_deck_id is None else added,
        )
        assert rows.sched is not None
        notes.extend(rows.notes)
        cards.extend(rows.cards)
        revlog.extend(rows.revlog)
        card_of.update(rows.card_of)
        card_count += rows.card_count
        if deck.anki_deck_id is not None:
            continue
        decks.extend(rows.decks)
        dconf.append(
            _options(settings, rows.sched, mod_ms, config_id=options_id(deck.id),
                     name=rows.decks[0]["name"])
        )  # fmt: skip
    notetypes = [schema.notetype(mod_ms // 1000)]
    log_count = len(revlog)
    if only is None:
        _add_kept(kept.load(session, user_id), notetypes, decks, dconf, notes, cards, revlog)
        _retitle(decks, adopted_titles, mod_ms // 1000)
    conf = collection_conf(card_count, default_sched)
    # Anki's v3 scheduler, the only one current clients study with (a v2 collection is
    # refused by their scheduler until upgraded).
    conf["sched2021"] = True
    built = Collection(conf, decks, dconf, mod_ms, notes, cards, revlog, stamps.scm, usn,
                       notetypes, crt)  # fmt: skip
    # Each card's revlog rows follow its log in order (`revlog_rows`), so they pair up.
    next_of_card: dict[int, int] = {}
    log_ids = []
    for entry in revlog[:log_count]:
        card_id = card_of[entry[1]]
        i = next_of_card.get(card_id, 0)
        next_of_card[card_id] = i + 1
        log_ids.append(logs_by_card[card_id][i].id)
    return Projection(built, log_ids)
