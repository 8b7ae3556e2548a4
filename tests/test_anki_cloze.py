"""Cloze deletions made into question-and-answer cards, as Anki renders each card's sides."""

from __future__ import annotations

from flashcards.anki import cloze


def test_a_card_per_number_hiding_its_deletions_and_showing_the_others() -> None:
    text = "{{c1::Canberra}} is the capital of {{c2::Australia::a country}}; {{c1::it}} grew."
    assert cloze.numbers(text) == [1, 2]
    assert cloze.question(text, 1) == "[...] is the capital of Australia; [...] grew."
    assert cloze.question(text, 2) == "Canberra is the capital of [a country]; it grew."
    assert cloze.answer(text) == "Canberra is the capital of Australia; it grew."


def test_nested_deletions_hide_what_they_hold() -> None:
    text = "{{c1::outer {{c2::inner}} end}} after"
    assert cloze.numbers(text) == [1, 2]
    assert cloze.question(text, 1) == "[...] after"
    assert cloze.question(text, 2) == "outer [...] end after"
    assert cloze.answer(text) == "outer inner end after"


def test_text_without_deletions_or_with_number_zero_makes_no_card() -> None:
    assert cloze.numbers("plain text {{c1:not one}}") == []
    assert cloze.numbers("{{c0::zero}}") == []
    # Markup that is not a deletion is left as it is.
    assert cloze.answer("{{c1:not one}} {c1::x}") == "{{c1:not one}} {c1::x}"


def test_html_inside_a_deletion_is_kept_for_the_sanitizer() -> None:
    text = "<b>{{c1::Mitochondria}}</b> make <i>{{c2::ATP}}</i>"
    assert cloze.question(text, 2) == "<b>Mitochondria</b> make <i>[...]</i>"
