"""`decks.blanks`: what of an answer fills its question's blanks."""

from __future__ import annotations

import time

from flask import Flask

from flashcards.decks.blanks import Part, filled
from flashcards.decks.cloze import Cloze


def marked(parts: list[Part]) -> str:
    return "".join(f"<{p.text}>" if p.blank else p.text for p in parts)


def test_a_cloze_cards_blank_and_what_fills_it() -> None:
    note = Cloze("{{c1::Ribosomes}} make {{c2::proteins::what?}} in the {{c1::cytoplasm}}.")
    found = filled(note.question(1), note.answer())
    assert found is not None
    assert marked(found[0]) == "<[...]> make proteins in the <[...]>."
    assert marked(found[1]) == "<Ribosomes> make proteins in the <cytoplasm>."
    found = filled(note.question(2), note.answer())
    assert found is not None
    assert marked(found[0]) == "Ribosomes make <[what?]> in the cytoplasm."
    assert marked(found[1]) == "Ribosomes make <proteins> in the cytoplasm."


def test_a_card_written_with_a_blank_is_marked_alike() -> None:
    found = filled("The capital of France is [...].", "The capital of France is Paris.")
    assert found is not None and marked(found[1]) == "The capital of France is <Paris>."


def test_cards_whose_answer_does_not_fill_the_question_are_not_marked() -> None:
    assert filled("What is a cell?", "The unit of life") is None
    assert filled("Name [...] here", "Something else entirely") is None
    assert filled("A [...] B", "A  B") is None  # an empty fill is no fill
    assert filled("A [...] B", "A x B and more") is None  # the answer runs past the question
    assert filled("A [...]", "A") is None
    # A media token is no blank, whatever the answer.
    assert filled("See [image:cell.png]", "See [image:cell.png] here") is None


def test_brackets_an_answer_keeps_are_text_and_a_lone_blank_is_a_question() -> None:
    found = filled("The array [1, 2] has [...] items", "The array [1, 2] has 2 items")
    assert found is not None
    assert marked(found[0]) == "The array [1, 2] has <[...]> items"
    assert marked(found[1]) == "The array [1, 2] has <2> items"
    assert filled("Spell [1, 2]", "Spell [1, 2]") is None  # nothing is filled
    assert filled("[ˈæpəl]", "apple") is None  # a question that is all blank
    assert filled("Capital? [city]", "Capital? [city] Paris") is None  # an answer after it


def test_a_fill_holding_the_text_after_its_blank_still_spells_the_answer() -> None:
    found = filled("[...] and [...] end", "x and y and z end")
    assert found is not None
    assert "".join(p.text for p in found[1]) == "x and y and z end"
    assert marked(found[1]) == "<x> and <y and z> end"


def test_a_long_note_with_many_blanks_is_cut_in_linear_time() -> None:
    # An imported note is untrusted: thousands of blanks must not cost quadratic work.
    text = " ".join(f"{{{{c1::w{i}}}}} x" for i in range(20_000))
    note = Cloze(text)
    question, answer = note.question(1), note.answer()
    start = time.perf_counter()
    found = filled(question, answer)
    assert found is not None and sum(p.blank for p in found[1]) == 20_000
    assert time.perf_counter() - start < 2
    # No match found deep in the text is as quick: every piece found once.
    assert filled(question, answer[:-1]) is None


def test_markup_in_a_blank_or_in_what_fills_it_is_shown_as_text(app: Flask) -> None:
    question, answer = "<b>Run</b> [<i>what?</i>] now", "<b>Run</b> <script>alert(1)</script> now"
    with app.test_request_context():
        shown_question = app.jinja_env.filters["question_text"](question, answer)
        shown_answer = app.jinja_env.filters["answer_text"](answer, question)
    assert '<mark class="blank">[&lt;i&gt;what?&lt;/i&gt;]</mark>' in shown_question
    assert '<mark class="blank">&lt;script&gt;alert(1)&lt;/script&gt;</mark>' in shown_answer
    assert "<b>" not in shown_question + shown_answer
    assert "<script>" not in shown_answer
