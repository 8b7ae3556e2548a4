"""The seed quiz format: both seeds parse to 15 pairs; malformed input names the line."""

from __future__ import annotations

import pytest

from flashcards.decks.deckfile import parse_locale_file, render_locale_file
from flashcards.decks.quizfile import parse_quiz, quiz_to_locale, slugify, split_answer
from flashcards.errors import DeckFileError
from tests.conftest import SEEDS

SPANISH = SEEDS / "000_2a59eba2e9ee1c24.txt"
KOREAN = SEEDS / "004_3c77d9b94ee3fd70.txt"


def test_spanish_seed_gives_15_pairs() -> None:
    quiz = parse_quiz(SPANISH.read_text(encoding="utf-8"), path=str(SPANISH))
    assert quiz.title == "Cuestionario sobre entrenamiento de modelos en EKS"
    assert quiz.subtitle.endswith("los launchers y los límites de recuperación.")
    assert [item.number for item in quiz.items] == list(range(1, 16))
    assert quiz.items[0].question == (
        "¿Qué particiona el paralelismo de tensores (tensor parallelism)?"
    )
    assert quiz.items[0].answer.startswith("Las operaciones de tensores y los pesos")
    assert quiz.items[0].line == 3
    assert quiz.items[-1].question == (
        "¿Qué significan la colocación de EFA en la misma AZ y los disruption budgets de Karpenter?"
    )
    assert quiz.items[-1].answer.endswith("ni la terminación forzada.")
    assert all(item.answer and "Respuesta" not in item.answer for item in quiz.items)


def test_korean_seed_gives_15_pairs() -> None:
    quiz = parse_quiz(KOREAN.read_text(encoding="utf-8"), path=str(KOREAN))
    assert quiz.title == "EKS 모델 훈련 퀴즈"
    assert len(quiz.items) == 15
    assert quiz.items[0].question == "텐서 병렬화는 무엇을 분할하나요?"
    assert (
        quiz.items[-1].question
        == "EFA용 단일 AZ와 Karpenter disruption budget의 의미는 무엇인가요?"
    )
    assert all("정답 및 설명" not in item.answer for item in quiz.items)


def test_both_seeds_have_the_same_shape() -> None:
    es = parse_quiz(SPANISH.read_text(encoding="utf-8"))
    ko = parse_quiz(KOREAN.read_text(encoding="utf-8"))
    assert [i.line for i in es.items] == [i.line for i in ko.items]


def test_split_answer_takes_the_first_sentence() -> None:
    short, rest = split_answer("No. Se necesitan interfaces EFA. Verifica el transporte.")
    assert short == "No."
    assert rest == "Se necesitan interfaces EFA. Verifica el transporte."
    assert split_answer("Una sola frase sin más.") == ("Una sola frase sin más.", "")


def test_split_answer_does_not_split_inside_a_version() -> None:
    short, rest = split_answer("Slinky 1.2.2 usa NodeSet v1beta1. El kind no es SlurmNodeSet.")
    assert short == "Slinky 1.2.2 usa NodeSet v1beta1."
    assert rest == "El kind no es SlurmNodeSet."
    assert split_answer("Operator 0.8.2의 API입니다. 설명.")[0] == "Operator 0.8.2의 API입니다."


def test_a_version_at_the_start_of_an_answer_line_is_not_a_question() -> None:
    text = "Quiz\nSub\n1. Which release?\nAnswer\n1.2.2 is the one. Older ones differ.\n"
    quiz = parse_quiz(text)
    assert len(quiz.items) == 1
    assert quiz.items[0].answer == "1.2.2 is the one. Older ones differ."


def test_answer_lines_are_joined_and_marker_variants_accepted() -> None:
    text = (
        "\ufeffQuiz\r\n1. First?\r\nRespuesta y explicación:\r\nLine one.\r\n\r\n"
        "Line two.\r\n2) Second?\r\nANSWER\r\nYes.\r\n"
    )
    quiz = parse_quiz(text)
    assert quiz.subtitle == ""
    assert [(i.question, i.answer) for i in quiz.items] == [
        ("First?", "Line one. Line two."),
        ("Second?", "Yes."),
    ]


def test_decomposed_accents_in_the_marker_are_accepted() -> None:
    marker = "Respuesta y explicacio\u0301n"  # NFD, as some editors save it
    quiz = parse_quiz(f"Quiz\n1. Q?\n{marker}\nA.\n")
    assert quiz.items[0].answer == "A."


def _error(text: str) -> DeckFileError:
    with pytest.raises(DeckFileError) as info:
        parse_quiz(text, path="quiz.txt")
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("", None, "empty"),
        ("\n  \n\n", None, "empty"),
        ("Title\n1. Q?\nThe answer without a marker.\n", 3, "answer marker"),
        ("Title\n1. Q?\n", 2, "answer marker"),
        ("Title\n1. Q?\nRespuesta\n", 3, "question 1 has no answer"),
        ("Title\n1. Q?\nRespuesta\n\n2. Q2?\nRespuesta\nA2.\n", 3, "question 1 has no answer"),
        ("Title\n2. Q?\nRespuesta\nA.\n", 2, "question number 2 where 1 was expected"),
        (
            "Title\n1. Q?\nRespuesta\nA.\n3. Q3?\nRespuesta\nA3.\n",
            5,
            "question number 3 where 2 was expected",
        ),
        ("Title\n1. Q?\nRespuesta\nA.\n1. Again?\nRespuesta\nB.\n", 5, "number 1 where 2"),
        ("Title\nSubtitle\nAnother line\n1. Q?\nRespuesta\nA.\n", 3, "title and subtitle"),
        ("Title\nSubtitle\nno questions at all\n", 3, "title and subtitle"),
        ("Title\nSubtitle\n", 2, "no numbered questions"),
        ("1. Q?\nRespuesta\nA.\n", 1, "title"),
        ("Title\nRespuesta\nA.\n", 2, "marker line before question 1"),
        ("Title\n1. Q?\nRespuesta\nA.\nRespuesta\nB.\n", 5, "second answer marker"),
    ],
)
def test_malformed_quiz_names_line_and_problem(text: str, line: int | None, problem: str) -> None:
    error = _error(text)
    assert error.line == line
    assert problem in error.problem
    where = f"quiz.txt:{line}" if line is not None else "quiz.txt"
    assert str(error).startswith(f"{where}: ")


def test_line_numbers_count_blank_lines() -> None:
    error = _error("Title\n\n\n1. Q?\n\nRespuesta\n\nA.\n\n2. Q2?\nnot a marker\n")
    assert error.line == 11


def test_quiz_to_locale_splits_short_answer_and_makes_keys() -> None:
    quiz = parse_quiz(SPANISH.read_text(encoding="utf-8"))
    source = quiz_to_locale(quiz, "es")
    assert [c.key for c in source.cards] == [f"q{n:02d}" for n in range(1, 16)]
    first = source.cards[0]
    assert first.answer == "Las operaciones de tensores y los pesos dentro de las capas."
    assert first.explanation.startswith("DP particiona los datos")
    # The rendered deck file reads back to the same cards.
    again = parse_locale_file(render_locale_file(source), locale="es")
    assert [(c.key, c.question, c.answer, c.explanation) for c in again.cards] == [
        (c.key, c.question, c.answer, c.explanation) for c in source.cards
    ]
    assert again.title == quiz.title


def test_quiz_to_locale_reuses_keys_and_checks_their_count() -> None:
    quiz = parse_quiz("Quiz\n1. A?\nAnswer\nA.\n2. B?\nAnswer\nB.\n")
    source = quiz_to_locale(quiz, "ko", ["alpha", "beta"])
    assert [c.key for c in source.cards] == ["alpha", "beta"]
    with pytest.raises(DeckFileError, match="2 questions but the deck has 3 cards"):
        quiz_to_locale(quiz, "ko", ["a", "b", "c"], path="q.txt")


def test_slugify() -> None:
    assert slugify("Cuestionario sobre entrenamiento de modelos en EKS") == (
        "cuestionario-sobre-entrenamiento-de-modelos-en-eks"
    )
    assert slugify("EKS 모델 훈련 퀴즈") == "eks"
    assert slugify("퀴즈") == "deck"
    assert len(slugify("x" * 500)) <= 60
