"""The deck file format: round trip, and `file:line: problem` for every kind of mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from flashcards.decks.deckfile import (
    CardSource,
    LocaleSource,
    load_deck_dir,
    load_decks,
    parse_locale_file,
    read_text,
    render_locale_file,
)
from flashcards.errors import DeckFileError
from tests.conftest import DECKS

GOOD = """# a comment
title: A deck
description: Two cards.

== first
Question one?
--
Answer one.
--
Explanation one,
on two lines.

== second
Question two?
--
Answer two.
"""


def test_parse_a_locale_file() -> None:
    source = parse_locale_file(GOOD, locale="en", path="en.deck")
    assert (source.title, source.description, source.path) == ("A deck", "Two cards.", "en.deck")
    assert source.cards == (
        CardSource("first", "Question one?", "Answer one.", "Explanation one,\non two lines.", 5),
        CardSource("second", "Question two?", "Answer two.", "", 13),
    )


def test_render_then_parse_is_identity() -> None:
    source = LocaleSource(
        "es",
        "Título",
        "Descripción",
        (CardSource("a", "¿P?", "R.", "Más.", 0), CardSource("b", "¿P2?", "R2.")),
    )
    again = parse_locale_file(render_locale_file(source, "made by a test"), locale="es")
    assert (again.title, again.description) == ("Título", "Descripción")
    assert [(c.key, c.question, c.answer, c.explanation) for c in again.cards] == [
        ("a", "¿P?", "R.", "Más."),
        ("b", "¿P2?", "R2.", ""),
    ]


def test_bom_and_crlf_are_accepted() -> None:
    source = parse_locale_file("\ufeff" + GOOD.replace("\n", "\r\n"), locale="en")
    assert source.title == "A deck"
    assert source.cards[1].line == 13


def _error(text: str) -> DeckFileError:
    with pytest.raises(DeckFileError) as info:
        parse_locale_file(text, locale="en", path="x/en.deck")
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (GOOD.replace("== second", "== first"), 13, "duplicate card key 'first' (first on line 5)"),
        (GOOD.replace("== second", "== Second Card"), 13, "invalid card key 'Second Card'"),
        (GOOD.replace("== second", "=="), 13, "invalid card key ''"),
        (GOOD.replace("title: A deck\n", ""), 1, "missing 'title: ...' header"),
        (GOOD.replace("title: A deck", "title:"), 2, "the title is empty"),
        (GOOD.replace("title: A deck", "title: " + "x" * 201), 2, "longer than 200"),
        (GOOD.replace("description: Two cards.", "title: again"), 3, "'title' is given twice"),
        (GOOD.replace("description:", "summary:"), 3, "expected 'title: ...'"),
        (GOOD.replace("Question two?\n--\n", "Question two?\n"), 13, "needs a '--' line"),
        (GOOD.replace("Question two?\n--\nAnswer two.", "Question two?\n--\n"), 13, "empty answer"),
        (GOOD.replace("== second\nQuestion two?", "== second\n"), 13, "empty question"),
        (GOOD + "--\nextra\n--\nmore\n", 19, "third '--' line"),
        ("title: Empty\n", 1, "no cards"),
        ("# only a comment\n\ntitle: Empty\n\n", 3, "no cards"),
        (GOOD.replace("Answer two.", "x" * 20_001), 13, "longer than 20000"),
    ],
)
def test_errors_name_file_line_and_problem(text: str, line: int, problem: str) -> None:
    error = _error(text)
    assert (error.path, error.line) == ("x/en.deck", line)
    assert problem in error.problem
    assert str(error) == f"x/en.deck:{line}: {error.problem}"


def _deck(folder: Path, files: dict[str, str | bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        else:
            (folder / name).write_text(content, encoding="utf-8")
    return folder


ES = "title: Un mazo\n\n== second\n¿Pregunta dos?\n--\nRespuesta dos.\n"


def test_load_deck_dir(tmp_path: Path) -> None:
    folder = _deck(
        tmp_path / "my-deck",
        {"deck.toml": 'default_locale = "en"\n', "en.deck": GOOD, "es.deck": ES},
    )
    deck = load_deck_dir(folder)
    assert (deck.slug, deck.default_locale) == ("my-deck", "en")
    assert deck.keys == ["first", "second"]
    assert sorted(deck.locales) == ["en", "es"]
    assert [c.key for c in deck.locales["es"].cards] == ["second"]
    assert deck.locales["es"].path == str(folder / "es.deck")
    assert [d.slug for d in load_decks(tmp_path)] == ["my-deck"]
    assert [d.slug for d in load_decks(folder)] == ["my-deck"]


def test_extra_card_in_a_non_default_locale(tmp_path: Path) -> None:
    extra = ES + "\n== third\n¿Tres?\n--\nTres.\n"
    folder = _deck(
        tmp_path / "d", {"deck.toml": 'default_locale = "en"\n', "en.deck": GOOD, "es.deck": extra}
    )
    with pytest.raises(DeckFileError) as info:
        load_deck_dir(folder)
    assert str(info.value) == (
        f"{folder / 'es.deck'}:8: card 'third' is not in en.deck, the default locale"
    )


@pytest.mark.parametrize(
    ("toml", "line", "problem"),
    [
        ('default_locale = "en"\ndefault_locale = "es"\n', 2, "invalid TOML"),
        ("# ok\n\ndefault_locale = en\n", 3, "invalid TOML"),
        ("", None, 'needs default_locale = "<locale>"'),
        ("default_locale = 3\n", None, 'needs default_locale = "<locale>"'),
        ('default_locale = "english"\n', None, 'needs default_locale = "<locale>"'),
    ],
)
def test_bad_deck_toml(tmp_path: Path, toml: str, line: int | None, problem: str) -> None:
    folder = _deck(tmp_path / "d", {"deck.toml": toml, "en.deck": GOOD})
    with pytest.raises(DeckFileError) as info:
        load_deck_dir(folder)
    assert info.value.path == str(folder / "deck.toml")
    assert info.value.line == line
    assert problem in info.value.problem


def test_missing_deck_toml_default_file_and_bad_names(tmp_path: Path) -> None:
    with pytest.raises(DeckFileError, match=r"deck\.toml: No such file"):
        load_deck_dir(_deck(tmp_path / "a", {"en.deck": GOOD}))
    with pytest.raises(DeckFileError, match=r"no en\.deck for the default locale"):
        load_deck_dir(_deck(tmp_path / "b", {"deck.toml": 'default_locale = "en"', "es.deck": ES}))
    with pytest.raises(DeckFileError, match=r"'English' is not a language code we know"):
        load_deck_dir(
            _deck(tmp_path / "c", {"deck.toml": 'default_locale = "en"', "English.deck": GOOD})
        )
    with pytest.raises(DeckFileError, match="must be a slug"):
        load_deck_dir(_deck(tmp_path / "Bad Name", {"deck.toml": 'default_locale = "en"'}))
    with pytest.raises(DeckFileError, match="no such folder"):
        load_decks(tmp_path / "missing")


def test_non_utf8_file_names_file_and_line(tmp_path: Path) -> None:
    latin1 = GOOD.replace("Answer two.", "Respuesta número dos.").encode("latin-1")
    folder = _deck(tmp_path / "d", {"deck.toml": 'default_locale = "en"\n', "en.deck": latin1})
    with pytest.raises(DeckFileError) as info:
        load_deck_dir(folder)
    assert info.value.path == str(folder / "en.deck")
    assert info.value.line == 16
    assert "not UTF-8" in info.value.problem
    with pytest.raises(DeckFileError, match="not UTF-8"):
        read_text(folder / "en.deck")


def test_shipped_deck_loads() -> None:
    (deck,) = load_decks(DECKS)
    assert deck.slug == "eks-model-training"
    assert deck.default_locale == "en"
    assert sorted(deck.locales) == ["en", "es", "ko"]
    assert all(len(source.cards) == 15 for source in deck.locales.values())
