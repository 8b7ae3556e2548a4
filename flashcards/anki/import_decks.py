"""Which deck each note of a package goes into: one deck per Anki deck, as Anki imports them.

Notes are grouped before they are planned, so that each group is planned as a deck of its
own: card keys are unique within a deck only (every deck of ours has a "c001"), and a
package may hold several of our decks, a parent and its subdecks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ..decks.deck_tree import SEPARATOR, name_key, path_of
from ..decks.locales import is_known_locale
from ..storage.models import Deck
from .export import language_name
from .names import deck_path, deck_title, home_deck, shorten, subdeck_groups
from .planning import LANG_TAG, PlannedCard
from .reader import AnkiCard, Collection, Note
from .reimport import DeckFinder

MAX_DECKS = 1_000  # decks one package may make: Anki's largest shared decks have hundreds


@dataclass
class NoteGroup:
    """The notes of one Anki deck (or, for a deck here they all came from, of several)."""

    notes: list[Note]
    cards: list[AnkiCard]
    title: str  # of a new deck
    target: Deck | None = None  # the person's deck the notes came from, updated
    planned: list[PlannedCard] = field(default_factory=list)

    def collection(self, coll: Collection, whole: bool) -> Collection:
        """`coll` with only these notes and their cards (`whole`: they are all of them)."""
        return coll if whole else replace(coll, notes=self.notes, cards=self.cards)


def note_groups(coll: Collection, *, one: bool, untitled: str) -> list[NoteGroup]:
    """The package's notes by the Anki deck their cards are in, parents before subdecks;
    `one`: all in one deck, named after the decks' shared part."""
    cards: dict[int, list[AnkiCard]] = {}
    for card in coll.cards:
        cards.setdefault(card.nid, []).append(card)
    languages = language_subdecks(coll, cards)
    names = [[coll.decks.get(home_deck(c), "") for c in cards.get(n.id, [])] for n in coll.notes]
    groups = [((), list(range(len(names))))] if one else subdeck_groups(names, languages)
    out = []
    for path, indices in groups:
        if path:
            title = shorten(SEPARATOR.join(path))
        else:  # one deck: named after the part of its decks' names they share
            title = deck_title((name for i in indices for name in names[i]), untitled, languages)
        notes = [coll.notes[i] for i in indices]
        out.append(NoteGroup(notes, [c for n in notes for c in cards.get(n.id, [])], title))
    return out


def language_subdecks(coll: Collection, cards: dict[int, list[AnkiCard]]) -> set[str]:
    """The names of our export's subdecks of a language ("Deck::Español"), when every note
    tagged with a language sits in its language's subdeck, as our export of every language
    writes them; else none (a deck may well be titled "Spanish::Español")."""
    found: set[str] = set()
    for note in coll.notes:
        code = next((t[len(LANG_TAG) :] for t in note.tags if t.startswith(LANG_TAG)), None)
        if code is None:
            continue
        if not is_known_locale(code):
            return set()
        name = language_name(code)
        for card in cards.get(note.id, []):
            parts = deck_path(coll.decks.get(home_deck(card), ""))
            if len(parts) < 2 or parts[-1] != name:
                return set()
        found.add(name)
    return found


def by_target(groups: list[NoteGroup], finder: DeckFinder | None) -> list[NoteGroup]:
    """Each group with the person's deck its notes came from; groups that came from one
    deck (imported before subdecks were kept apart) joined, to update it together."""
    if finder is None:
        return groups
    joined: dict[object, NoteGroup] = {}
    for number, group in enumerate(groups):
        guids = {n.guid for n in group.notes if n.guid}
        group.target = finder.find(guids, {t for n in group.notes for t in n.tags})
        key = group.target.id if group.target is not None else number
        if key in joined:
            joined[key].notes.extend(group.notes)
            joined[key].cards.extend(group.cards)
        else:
            joined[key] = group
    return list(joined.values())


def apart_from(groups: list[NoteGroup], titles: Iterable[str]) -> None:
    """New decks named as decks the person has (`titles`: a package imported again as a
    copy, say) come in under a new top deck, "Biology (2)", with their subdecks: names are
    the tree, and the two trees would otherwise share their subdecks."""
    taken = {name_key(title) for title in titles}
    new = [group for group in groups if group.target is None]
    for root in dict.fromkeys(path_of(group.title)[0] for group in new):
        tree = [group for group in new if path_of(group.title)[0] == root]
        if not any(name_key(group.title) in taken for group in tree):
            continue
        number = 2
        while any(name_key(_under(group.title, f"{root} ({number})")) in taken for group in tree):
            number += 1
        for group in tree:
            group.title = _under(group.title, f"{root} ({number})")


def _under(title: str, root: str) -> str:
    return shorten(SEPARATOR.join((root, *path_of(title)[1:])))
