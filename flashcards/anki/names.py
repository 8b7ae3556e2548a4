"""An imported deck's title and slug: the Anki deck its cards live in, subdecks and all.

"Work::Onboarding::EKS::Week 1" stays that title (not "Work"). Each Anki deck of a package
becomes a deck of its own (`subdeck_groups`); cards put in one deck from several subdecks
take the part of the names they share. A name longer than a title may be is shortened where
it shows ("…"), never in the middle of a character as a reader sees it (an accent, an emoji
made of several code points, a flag, a Hangul syllable in jamo).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..decks.deck_tree import SEPARATOR
from ..decks.deckfile import SLUG_RE
from ..decks.locales import check_locale
from ..errors import InvalidInput
from ..storage.models import Deck
from .reader import AnkiCard
from .sanitize import CONTROL_RE

MAX_TITLE = 200  # DeckText.title
ELLIPSIS = "…"
_ZWJ = "\u200d"


def home_deck(card: AnkiCard) -> int:
    # A card in a filtered deck (custom study, "Cram") is only visiting: `odid` is its own.
    return card.odid or card.did


def deck_path(name: str, languages: Collection[str] = frozenset()) -> tuple[str, ...]:
    """An Anki deck name's parts; empty for Anki's "Default" (a deck nobody named). A last
    subdeck named in `languages` is our export's subdeck of a language, no part of it."""
    # Control characters (a NUL, which PostgreSQL cannot store) are no part of a title.
    parts = tuple(p.strip() for p in CONTROL_RE.sub("", name).split(SEPARATOR))
    parts = tuple(p for p in parts if p)
    if len(parts) > 1 and parts[-1] in languages:
        parts = parts[:-1]
    return () if parts == ("Default",) else parts


def deck_title(
    names: Iterable[str], untitled: str, languages: Collection[str] = frozenset()
) -> str:
    """The title for cards living in Anki decks `names` (one per card): their deck's name,
    or the part of the names their decks share (`deck_path`)."""
    counted = Counter(parts for name in names if (parts := deck_path(name, languages)))
    if not counted:
        return untitled
    shared = _common_prefix(list(counted))
    if not shared:
        # Decks with nothing in common: the top-level deck most cards are in.
        tops = Counter[str]()
        for parts, n in counted.items():
            tops[parts[0]] += n
        shared = (tops.most_common(1)[0][0],)
    return shorten(SEPARATOR.join(shared))


def subdeck_groups(
    names: Sequence[Iterable[str]], languages: Collection[str] = frozenset()
) -> list[tuple[tuple[str, ...], list[int]]]:
    """Each Anki deck's path with its notes (by index), given the decks each note's cards
    are in (`names`), parents before their subdecks, as Anki lists them. A note goes with
    the deck most of its cards are in; notes in no named deck (Anki's "Default") join the
    topmost deck. One deck, or none named: one group, of path ()."""
    paths: list[tuple[str, ...]] = []
    for note_names in names:
        counted = Counter(parts for name in note_names if (parts := deck_path(name, languages)))
        paths.append(counted.most_common(1)[0][0] if counted else ())
    # Anki compares names without case; the name itself breaks a tie.
    distinct = sorted({p for p in paths if p}, key=lambda p: (tuple(x.casefold() for x in p), p))
    if len(distinct) <= 1:
        return [((), list(range(len(paths))))]
    top = min(distinct, key=len)
    groups: dict[tuple[str, ...], list[int]] = {p: [] for p in distinct}
    for index, path in enumerate(paths):
        groups[path or top].append(index)
    return list(groups.items())


def _common_prefix(names: list[tuple[str, ...]]) -> tuple[str, ...]:
    first = names[0]
    size = len(first)
    for other in names[1:]:
        size = min(size, len(other))
        for i in range(size):
            if other[i] != first[i]:
                size = i
                break
    return first[:size]


def shorten(name: str, limit: int = MAX_TITLE) -> str:
    """`name` within `limit` characters: middle subdecks left out ("A::…::Z"), else cut at a
    character's edge, with "…" where something was left out."""
    if len(name) <= limit:
        return name
    parts = name.split(SEPARATOR)
    if len(parts) > 2:
        # The top deck and as many of the innermost subdecks as fit.
        for keep in range(len(parts) - 2, 0, -1):
            shorter = SEPARATOR.join([parts[0], ELLIPSIS, *parts[-keep:]])
            if len(shorter) <= limit:
                return shorter
    cut = limit - len(ELLIPSIS)
    while cut > 0 and not _edge(name, cut):
        cut -= 1
    return name[:cut].rstrip() + ELLIPSIS


def _joins_previous(ch: str) -> bool:
    """Whether `ch` belongs to the character before it (a reader sees one)."""
    code = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")  # accents and other marks
        or ch == _ZWJ
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0100 <= code <= 0xE01EF
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0020 <= code <= 0xE007F  # tag characters (subdivision flags)
        or 0x1160 <= code <= 0x11FF  # Hangul vowel and final jamo
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _edge(text: str, i: int) -> bool:
    """Whether cutting `text` before index `i` leaves every character whole."""
    if _joins_previous(text[i]) or text[i - 1] == _ZWJ:
        return False
    if _regional(text[i]) and _regional(text[i - 1]):
        # Flags are pairs: cut between pairs only.
        run = 0
        while i - 1 - run >= 0 and _regional(text[i - 1 - run]):
            run += 1
        return run % 2 == 0
    return True


def free_slug(session: Session, wanted: str) -> str:
    # Every candidate starts with the stem: "<stem>...", then "<stem>-2", "<stem>-3"...
    stem = wanted[:56]
    taken = set(session.scalars(select(Deck.slug).where(Deck.slug.like(f"{stem}%"))))
    slug, n = wanted[:60], 2
    while slug in taken:
        slug = f"{stem}-{n}"
        n += 1
    return slug


def check_names(owner_user_id: int | None, slug: str | None, locale: str | None) -> str:
    """Refuse a malformed deck slug or locale (an edge may ask before reading a package);
    the prefix of the owner's slugs."""
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
    if locale is not None:
        check_locale(locale)
    return prefix
