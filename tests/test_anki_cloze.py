"""Cloze deletions made into question-and-answer cards, as Anki renders each card's sides."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flashcards.decks.cloze import Cloze


def test_a_card_per_number_hiding_its_deletions_and_showing_the_others() -> None:
    note = Cloze("{{c1::Canberra}} is the capital of {{c2::Australia::a country}}; {{c1::it}} ran.")
    assert note.numbers() == [1, 2]
    assert note.question(1) == "[...] is the capital of Australia; [...] ran."
    assert note.question(2) == "Canberra is the capital of [a country]; it ran."
    assert note.answer() == "Canberra is the capital of Australia; it ran."


def test_nested_deletions_hide_what_they_hold() -> None:
    note = Cloze("{{c1::outer {{c2::inner}} end}} after")
    assert note.numbers() == [1, 2]
    assert note.question(1) == "[...] after"
    assert note.question(2) == "outer [...] end after"
    assert note.answer() == "outer inner end after"


def test_text_without_deletions_or_with_number_zero_makes_no_card() -> None:
    assert Cloze("plain text {{c1:not one}}").numbers() == []
    assert Cloze("{{c0::zero}}").numbers() == []
    # Markup that is not a deletion, or a deletion never closed, is left as it is.
    for text in ["{{c1:not one}} {c1::x} std::vector }}", "{{c1::open {{c2::a::b", "a::b}}"]:
        assert Cloze(text).answer() == text
        assert Cloze(text).numbers() == []


def test_html_inside_a_deletion_is_kept_for_the_sanitizer() -> None:
    note = Cloze("<b>{{c1::Mitochondria}}</b> make <i>{{c2::ATP}}</i>")
    assert note.question(2) == "<b>Mitochondria</b> make <i>[...]</i>"


def test_a_hint_keeps_later_separators_and_an_unclosed_deletion_inside_is_text() -> None:
    note = Cloze("{{c1::std::vector::a C++ type::really}} {{c2::x {{c3::y}}")
    assert note.numbers() == [1, 3]
    assert note.question(1) == "[vector::a C++ type::really] {{c2::x y"
    assert note.answer() == "std {{c2::x y"


def test_a_hostile_text_costs_one_pass_per_card() -> None:
    # 20,000 levels of nesting, then 20,000 deletions: parsed once, nothing quadratic.
    deep = Cloze("{{c1::" * 20_000 + "x" + "}}" * 20_000)
    assert deep.numbers() == [1] and deep.question(1) == "[...]" + "}}" * (20_000 - 50)
    wide = Cloze("".join(f"{{{{c{n % 999 + 1}::w}}}} " for n in range(20_000)))
    assert len(wide.numbers()) == 999


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["{{c1::", "{{c2::", "{{c0::", "::", "}}", "{", "}", "a", "<b>"])))
def test_any_text_gives_cards_and_keeps_all_but_markup_and_hints(pieces: list[str]) -> None:
    text = "".join(pieces)
    note = Cloze(text)
    whole = note.answer()
    kept = [c for c in whole if c in "a<b>"]
    assert len(kept) <= len([c for c in text if c in "a<b>"])
    if "::" not in pieces:  # no hints: only markup is taken out, the rest stays in order
        assert kept == [c for c in text if c in "a<b>"]
    for number in note.numbers():
        assert "[" in note.question(number)


def test_a_deletion_after_the_hint_separator_ends_the_hint_as_in_anki() -> None:
    # Anki 26.09: two cards, and the answer "stdvector"; the hint is the text before it.
    note = Cloze("{{c1::std::{{c2::vector}}}}")
    assert note.numbers() == [1, 2]
    assert (note.question(1), note.question(2), note.answer()) == ("[...]", "std[...]", "stdvector")
    note = Cloze("{{c1::a::h{{c2::b}} c}} {{c1::open::hint{{c2::x}} y")
    assert note.question(1) == "[h] {{c1::open::hintx y"
    assert note.answer() == "ab c {{c1::open::hintx y"


def test_numbers_past_999_are_text() -> None:
    note = Cloze("{{c1000::x}} {{c999::y}} " + "{{c" + "9" * 5000 + "::z}}")
    assert note.numbers() == [999]
    assert note.answer().startswith("{{c1000::x}} y {{c999")
