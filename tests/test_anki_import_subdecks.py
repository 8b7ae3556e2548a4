"""A package of several Anki decks becomes one deck per Anki deck, subdecks named as in Anki,
as Anki's own import keeps them; imported again, each updates its own deck. Packages made
with the real `anki` package, through the domain, the web form and the API."""

from __future__ import annotations

from pathlib import Path

import pytest
from anki.collection import Collection
from click.testing import CliRunner
from flask.testing import FlaskClient
from fsrs import Rating
from sqlalchemy import Engine, select, update

from flashcards.anki import AnkiPackageError, export_deck, import_package, importer
from flashcards.anki.import_rows import title_of
from flashcards.anki.names import subdeck_groups
from flashcards.cli import main
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CardText,
    Deck,
    DeckText,
    ReviewState,
    Subscription,
)

from . import factories as f
from .conftest import T0
from .test_anki_export import anki_import, wall_now
from .test_anki_import import anki_export
from .test_anki_reimport import upload
from .test_api_apkg import OCTET, deck_count
from .test_library_tree import StudiedOutline
from .web_helpers import sign_up

DECKS = {
    "Biology": ["cell theory"],
    "Biology::Cells": ["ribosome", "mitochondrion"],
    "Biology::Genetics::Week 1": ["allele"],
    "Default": ["loose note"],
}


def biology(tmp_path: Path, *, answered: str | None = None) -> bytes:
    """A collection with a note per front in each of DECKS; `answered`: that front's card
    answered Good in Anki."""
    col = Collection(str(tmp_path / "biology.anki2"))
    try:
        for name, fronts in DECKS.items():
            for front in fronts:
                add_note(col, name, front)
        if answered is not None:
            (card_id,) = col.find_cards(f'"front:{answered}"')
            card = col.get_card(card_id)
            card.start_timer()
            col.sched.answerCard(card, 3)
        return anki_export(col, tmp_path / "biology.apkg", legacy=False)
    finally:
        col.close()


def add_note(col: Collection, deck: str, front: str) -> None:
    basic = col.models.by_name("Basic")
    deck_id = col.decks.id(deck)
    assert basic is not None and deck_id is not None
    note = col.new_note(basic)
    note["Front"], note["Back"] = front, f"about {front}"
    col.add_note(note, deck_id)


def with_a_note_added(tmp_path: Path) -> bytes:
    """The collection `biology` made, with a note added to Biology::Cells."""
    col = Collection(str(tmp_path / "biology.anki2"))
    try:
        add_note(col, "Biology::Cells", "golgi")
        return anki_export(col, tmp_path / "again.apkg", legacy=False)
    finally:
        col.close()


def decks_of(engine: Engine, user: int) -> dict[str, list[str]]:
    """The person's decks by title, each with its cards' questions."""
    with transaction(engine) as s:
        rows = s.execute(
            select(Deck.id, CardText.question)
            .join(Card, Card.deck_id == Deck.id)
            .join(CardText, CardText.card_id == Card.id)
            .where(Deck.owner_user_id == user)
            .order_by(Card.position)
        ).all()
        titles = {d.id: title_of(s, d) for d in s.scalars(select(Deck))}
    found: dict[str, list[str]] = {}
    for deck_id, question in rows:
        found.setdefault(titles[deck_id], []).append(question)
    return found


def test_each_anki_deck_becomes_a_deck_parents_first_and_default_joins_the_top() -> None:
    names = [["A::B"], ["A"], ["Default"], ["A::B", "A::B", "C"], ["A::Español"]]
    assert subdeck_groups(names, {"Español"}) == [(("A",), [1, 2, 4]), (("A", "B"), [0, 3])]
    assert subdeck_groups(names) == [
        (("A",), [1, 2]), (("A", "B"), [0, 3]), (("A", "Español"), [4])
    ]  # fmt: skip
    # One deck (with Default's cards, or a language's subdecks of ours): one group.
    assert subdeck_groups([["A::B"], ["Default"], ["A::B::English"]], {"English"}) == [
        ((), [0, 1, 2])
    ]


def test_subdecks_are_kept_and_an_import_again_updates_each(engine: Engine, tmp_path: Path) -> None:
    package = biology(tmp_path, answered="ribosome")
    now = wall_now()
    with transaction(engine) as s:
        user = f.make_user(s)
        report = import_package(s, package, owner_user_id=user, now=now, with_scheduling=True)
    assert [(d.title, d.cards, d.updated) for d in report.decks] == [
        ("Biology", 2, False),
        ("Biology::Cells", 2, False),
        ("Biology::Genetics::Week 1", 1, False),
    ]
    assert (report.title, report.cards, report.review_states) == ("Biology", 5, 1)
    assert decks_of(engine, user) == {
        "Biology": ["cell theory", "loose note"],
        "Biology::Cells": ["ribosome", "mitochondrion"],
        "Biology::Genetics::Week 1": ["allele"],
    }
    with transaction(engine) as s:
        studied = s.scalars(
            select(CardText.question)
            .join(ReviewState, ReviewState.card_id == CardText.card_id)
            .where(ReviewState.user_id == user)
        ).all()
        decks_before = s.scalars(select(Deck.id).where(Deck.owner_user_id == user)).all()
    assert studied == ["ribosome"]

    # Again, with a note added in Anki to one subdeck: each deck updated, no copies.
    again = with_a_note_added(tmp_path)
    with transaction(engine) as s:
        second = import_package(s, again, owner_user_id=user, now=now, update_existing=True)
    assert [(d.title, d.updated, d.added) for d in second.decks] == [
        ("Biology", True, 0),
        ("Biology::Cells", True, 1),
        ("Biology::Genetics::Week 1", True, 0),
    ]
    assert second.updated and second.added == 1
    assert decks_of(engine, user)["Biology::Cells"] == ["ribosome", "mitochondrion", "golgi"]
    with transaction(engine) as s:
        assert s.scalars(select(Deck.id).where(Deck.owner_user_id == user)).all() == decks_before


def test_a_package_of_too_many_decks_is_refused_with_nothing_written(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer, "MAX_DECKS", 2)
    package = biology(tmp_path)
    with transaction(engine) as s:
        user = f.make_user(s)
    before = deck_count(engine)
    with pytest.raises(AnkiPackageError) as raised, transaction(engine) as s:
        import_package(s, package, owner_user_id=user, now=wall_now())
    assert raised.value.kind == "too_many_decks" and raised.value.count == 3
    assert deck_count(engine) == before
    # The card limit is the whole package's, and said of it, not of the deck it ran out in:
    # a Basic note in A, and a Cloze note of three deletions in A::B, against a limit of 3.
    col = Collection(str(tmp_path / "limit.anki2"))
    try:
        add_note(col, "A", "one")
        cloze = col.models.by_name("Cloze")
        deck_id = col.decks.id("A::B")
        assert cloze is not None and deck_id is not None
        note = col.new_note(cloze)
        note["Text"] = "{{c1::a}} {{c2::b}} {{c3::c}}"
        col.add_note(note, deck_id)
        limited = anki_export(col, tmp_path / "limit.apkg", legacy=False)
    finally:
        col.close()
    with pytest.raises(AnkiPackageError) as raised, transaction(engine) as s:
        import_package(s, limited, owner_user_id=user, now=wall_now(), max_notes=3)
    assert raised.value.kind == "too_many_cards"
    assert (raised.value.count, raised.value.limit) == (4, 3)
    assert deck_count(engine) == before
    # A slug asked for names one deck: everything goes into it.
    with transaction(engine) as s:
        one = import_package(s, package, owner_user_id=user, slug="all-of-it", now=wall_now())
    assert [d.title for d in one.decks] == ["Biology"] and one.cards == 5


def test_the_web_form_subscribes_to_every_deck_and_opens_the_parent(
    client: FlaskClient, loaded_engine: Engine, tmp_path: Path
) -> None:
    sign_up(client)
    response = upload(client, biology(tmp_path))
    assert response.status_code == 302, response.get_data(as_text=True)
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert (
        "Imported 5 cards into 3 decks: “Biology”, “Biology::Cells”, and "
        "“Biology::Genetics::Week 1”." in page
    )
    assert "<h1>Biology</h1>" in page or ">Biology</h1>" in page  # the parent's own page
    with transaction(loaded_engine) as s:
        user = s.scalar(select(Deck.owner_user_id).where(Deck.owner_user_id.is_not(None)))
        subscribed = s.scalars(
            select(Deck.slug).join(Subscription).where(Subscription.user_id == user)
        ).all()
    assert len([slug for slug in subscribed if "biology" in slug]) == 3
    # Imported again: the three decks are updated, and said to be.
    again = client.get(upload(client, with_a_note_added(tmp_path)).headers["Location"])
    assert (
        "This package came from “Biology”, “Biology::Cells”, and “Biology::Genetics::Week 1”"
        in (again.get_data(as_text=True))
    )
    # As a copy: a tree of its own, under a top deck of a new name, not mixed into the first.
    (tmp_path / "copy").mkdir()
    copy = client.get(upload(client, biology(tmp_path / "copy"), copy=True).headers["Location"])
    assert (
        "Imported 5 cards into 3 decks: “Biology (2)”, “Biology (2)::Cells”, and "
        "“Biology (2)::Genetics::Week 1”." in copy.get_data(as_text=True)
    )
    library = StudiedOutline()
    library.feed(client.get("/").get_data(as_text=True))
    assert [line for line in library.lines if "Biology" in line or "Cells" in line] == [
        "h2:Biology", "  h3:Cells", "h2:Biology (2)", "  h3:Cells"
    ]  # fmt: skip


def test_the_api_lists_every_deck(client: FlaskClient, engine: Engine, tmp_path: Path) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        headers = {"Authorization": f"Bearer {f.make_token(s, user)}"}
    response = client.post("/api/v1/imports", data=biology(tmp_path), headers={**headers, **OCTET})
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    assert body["deck"]["title"] == "Biology"
    assert [(d["title"], d["cards"], d["updated"]) for d in body["decks"]] == [
        ("Biology", 2, False),
        ("Biology::Cells", 2, False),
        ("Biology::Genetics::Week 1", 1, False),
    ]
    listed = client.get("/api/v1/decks", headers=headers).get_json()["decks"]
    subscribed = {d["title"] for d in listed if d["subscription"] is not None}
    assert subscribed == {"Biology", "Biology::Cells", "Biology::Genetics::Week 1"}


def test_a_parent_goes_out_with_its_subdecks_and_comes_back_as_they_were(
    engine: Engine, tmp_path: Path
) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)
        kitchen = f.make_deck(s, "kitchen", 2, owner_user_id=user)
        tools = f.make_deck(s, "kitchen-tools", 1, owner_user_id=user)
        other = f.make_deck(s, "kitchen-other", 1, owner_user_id=user)  # not studied: stays
        device = f.make_deck(s, "kitchen-device", 1, owner_user_id=user)
        device.anki_deck_id = 1_700_000_000_000  # a device's own: it syncs, it is not exported
        f.subscribe(s, user, device)
        for deck, title in ((kitchen, "Kitchen"), (tools, "Kitchen::Tools"),
                            (other, "Kitchen::Other"), (device, "Kitchen::Phone")):  # fmt: skip
            s.execute(update(DeckText).where(DeckText.deck_id == deck.id).values(title=title))
        f.subscribe(s, user, kitchen)
        f.subscribe(s, user, tools)
        (tool,) = f.card_ids(s, tools.id)
        f.answer(s, user, tool, Rating.Good, now=T0)
        package = export_deck(
            s, kitchen.id, locales=["en"], user_id=user, with_scheduling=True, now=T0
        )
    assert package.notes == 3 and package.reviews == 1
    col, _log = anki_import(tmp_path / "kitchen.anki2", package.data)
    try:
        in_anki = {
            name: sorted(col.get_note(col.get_card(c).nid)["Front"] for c in col.find_cards(
                f'"deck:{name}" -"deck:{name}::*"'))
            for name in ("Kitchen", "Kitchen::Tools")
        }  # fmt: skip
        (studied,) = col.find_cards("-is:new")
        assert col.decks.name(col.get_card(studied).did) == "Kitchen::Tools"
        names = col.decks.all_names()
        assert "Kitchen::Other" not in names and "Kitchen::Phone" not in names
    finally:
        col.close()
    assert in_anki == {
        "Kitchen": ["kitchen q1 en", "kitchen q2 en"],
        "Kitchen::Tools": ["kitchen-tools q1 en"],
    }
    # Our own import of it: the same two decks, the progress on the subdeck's card.
    with transaction(engine) as s:
        other_person = f.make_user(s)
        report = import_package(
            s, package.data, owner_user_id=other_person, now=T0, with_scheduling=True
        )
    assert [(d.title, d.cards, d.review_states) for d in report.decks] == [
        ("Kitchen", 2, 0),
        ("Kitchen::Tools", 1, 1),
    ]


def kitchen_tree(engine: Engine, tools_locales: tuple[str, ...]) -> tuple[int, int]:
    """Kitchen (en, es; cards c01, c02) and Kitchen::Tools (`tools_locales`; card c01), a
    person's own, both studied; (person, Kitchen's id)."""
    with transaction(engine) as s:
        user = f.make_user(s)
        kitchen = f.make_deck(s, "kitchen", 2, owner_user_id=user, locales=("en", "es"))
        tools = f.make_deck(s, "tools", 1, owner_user_id=user, locales=tools_locales)
        for deck, title in ((kitchen, "Kitchen"), (tools, "Kitchen::Tools")):
            s.execute(update(DeckText).where(DeckText.deck_id == deck.id).values(title=title))
            f.subscribe(s, user, deck)
        return user, kitchen.id


def cards_of(engine: Engine, deck_ids: list[int]) -> list[tuple[str, str, list[str]]]:
    """Each deck's title with its cards' keys and their texts' languages."""
    with transaction(engine) as s:
        out = []
        for deck_id in deck_ids:
            deck = s.get_one(Deck, deck_id)
            for card in s.scalars(select(Card).where(Card.deck_id == deck_id)):
                locales = s.scalars(
                    select(CardText.locale).where(CardText.card_id == card.id)
                ).all()
                out.append((title_of(s, deck), card.key, sorted(locales)))
        return sorted(out)


@pytest.mark.parametrize("all_languages", [True, False])
def test_a_tree_of_our_decks_comes_back_deck_by_deck_with_its_keys(
    engine: Engine, all_languages: bool
) -> None:
    user, kitchen = kitchen_tree(engine, ("en", "es"))
    locales = None if all_languages else ["en"]
    with transaction(engine) as s:
        package = export_deck(s, kitchen, locales=locales, user_id=user, now=T0)
        report = import_package(s, package.data, owner_user_id=f.make_user(s), now=T0)
    both = ["en", "es"] if all_languages else ["en"]
    assert cards_of(engine, [d.deck_id for d in report.decks]) == [
        ("Kitchen", "c01", both),
        ("Kitchen", "c02", both),
        ("Kitchen::Tools", "c01", both),
    ]


def test_a_subdeck_in_another_language_comes_back_in_its_own(engine: Engine) -> None:
    user, kitchen = kitchen_tree(engine, ("es",))
    with transaction(engine) as s:
        package = export_deck(s, kitchen, locales=["en"], user_id=user, now=T0)
        report = import_package(s, package.data, owner_user_id=f.make_user(s), now=T0)
    assert [(d.title, d.default_locale) for d in report.decks] == [
        ("Kitchen", "en"),
        ("Kitchen::Tools", "es"),
    ]
    assert cards_of(engine, [d.deck_id for d in report.decks]) == [
        ("Kitchen", "c01", ["en"]),
        ("Kitchen", "c02", ["en"]),
        ("Kitchen::Tools", "c01", ["es"]),
    ]


def test_decks_imported_in_a_language_are_updated_in_it(engine: Engine, tmp_path: Path) -> None:
    with transaction(engine) as s:
        user = f.make_user(s)  # whose own language is English
        first = import_package(s, biology(tmp_path), owner_user_id=user, locale="es", now=T0)
    with transaction(engine) as s:
        again = import_package(
            s, with_a_note_added(tmp_path), owner_user_id=user, now=T0, update_existing=True
        )
    assert [d.deck_id for d in again.decks] == [d.deck_id for d in first.decks]
    assert (again.changed, again.added, again.skipped) == (0, 1, {})
    with transaction(engine) as s:
        locales = set(s.scalars(select(CardText.locale)))
    assert locales == {"es"}


def test_the_cli_names_every_deck_made(
    loaded_engine: Engine, cli: CliRunner, tmp_path: Path
) -> None:
    package = tmp_path / "biology-package.apkg"
    package.write_bytes(biology(tmp_path))
    with transaction(loaded_engine) as s:
        user = f.make_user(s, "learner@example.com")
    result = cli.invoke(main, ["apkg", "import", str(package), "--user", "learner@example.com"])
    assert result.exit_code == 0, result.output
    assert (
        f"Imported 5 cards (5 texts) into 3 new decks: 'user{user}-biology', "
        f"'user{user}-biology-cells', 'user{user}-biology-genetics-week-1'." in result.output
    )
    with transaction(loaded_engine) as s:
        assert len(s.scalars(select(Subscription).where(Subscription.user_id == user)).all()) == 3
