"""The quiz text format of the seeds: title, subtitle, numbered questions, a marker line, answer.

::

    Cuestionario sobre entrenamiento de modelos en EKS
    15 preguntas sobre ...
    1. ¿Qué particiona el paralelismo de tensores?
    Respuesta y explicación
    Las operaciones de tensores ... DP particiona ...
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..errors import DeckFileError, QuestionCountMismatch
from .deckfile import CardSource, LocaleSource, refuse_nul

ANSWER_MARKERS = frozenset(
    {
        "respuesta y explicación",
        "respuesta",
        "정답 및 설명",
        "정답",
        "answer and explanation",
        "answer",
    }
)
# "1. text" or "1) text"; the space may be lost in extraction, but "1.2.2 ..." is not question 1.
QUESTION_RE = re.compile(r"^(\d{1,4})[.)](?!\d)\s*(\S.*)$")
LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
# A sentence ends at . ! ? or 。 followed by white space; "1.2.2" has no space after its dots.
SENTENCE_END_RE = re.compile(r"(?<=[.!?。])\s+")


@dataclass(frozen=True)
class QuizItem:
    number: int
    question: str
    answer: str
    line: int


@dataclass(frozen=True)
class Quiz:
    title: str
    subtitle: str
    items: tuple[QuizItem, ...]


def split_answer(answer: str) -> tuple[str, str]:
    """The short answer (first sentence) and the explanation (the rest)."""
    parts = SENTENCE_END_RE.split(answer.strip(), maxsplit=1)
    return (parts[0], parts[1].strip()) if len(parts) == 2 else (parts[0], "")


def parse_quiz(text: str, *, path: str = "<quiz>") -> Quiz:
    refuse_nul(text, path)
    # Only real line breaks count, so line numbers match what an editor shows (str.splitlines
    # would also break on \x0b, \u2028 ...); NFC so a decomposed "ó" still matches the marker.
    lines = [
        unicodedata.normalize("NFC", line).strip()
        for line in LINE_BREAK_RE.split(text.lstrip("\ufeff"))
    ]
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line]
    if not numbered:
        raise DeckFileError(path, None, "the file is empty", reason="empty")

    header: list[str] = []
    index = 0
    while index < len(numbered) and not _is_question_start(numbered, index, 1):
        line_no, line = numbered[index]
        if _is_marker(line):
            raise DeckFileError(
                path, line_no, "answer marker line before question 1", reason="marker-first"
            )
        header.append(line)
        index += 1
        if len(header) > 2:
            raise DeckFileError(
                path,
                line_no,
                "expected '1. question' after the title and subtitle",
                reason="no-question-one",
            )
    if not header:
        raise DeckFileError(
            path, numbered[0][0], "expected the quiz title before question 1", reason="no-title"
        )
    if index >= len(numbered):
        raise DeckFileError(
            path, numbered[-1][0], "no numbered questions ('1. ...') found", reason="no-questions"
        )

    items: list[QuizItem] = []
    while index < len(numbered):
        line_no, line = numbered[index]
        match = QUESTION_RE.match(line)
        expected = len(items) + 1
        if not match:
            raise DeckFileError(
                path,
                line_no,
                f"expected question {expected} ('{expected}. ...')",
                reason="expected-question",
                facts={"expected": expected},
            )
        if int(match.group(1)) != expected:
            raise DeckFileError(
                path,
                line_no,
                f"question number {match.group(1)} where {expected} was expected",
                reason="question-number",
                facts={"found": int(match.group(1)), "expected": expected},
            )
        if index + 1 >= len(numbered) or not _is_marker(numbered[index + 1][1]):
            where = numbered[index + 1][0] if index + 1 < len(numbered) else line_no
            raise DeckFileError(
                path,
                where,
                f"expected the answer marker line (e.g. 'Respuesta y explicación') "
                f"after question {expected}",
                reason="no-marker",
                facts={"question": expected},
            )
        marker_line = numbered[index + 1][0]
        answer_lines: list[str] = []
        index += 2
        while index < len(numbered) and not _is_question_start(numbered, index, expected + 1):
            answer_no, answer_line = numbered[index]
            if _is_marker(answer_line):
                # Two markers in a row, or a question line lost: either way not an answer.
                raise DeckFileError(
                    path,
                    answer_no,
                    f"a second answer marker line in question {expected}",
                    reason="second-marker",
                    facts={"question": expected},
                )
            answer_lines.append(answer_line)
            index += 1
        if not answer_lines:
            raise DeckFileError(
                path,
                marker_line,
                f"question {expected} has no answer",
                reason="no-answer",
                facts={"question": expected},
            )
        items.append(QuizItem(expected, match.group(2).strip(), " ".join(answer_lines), line_no))

    return Quiz(header[0], header[1] if len(header) > 1 else "", tuple(items))


def _is_marker(line: str) -> bool:
    return line.rstrip(":： ").lower() in ANSWER_MARKERS


def _is_question_start(
    numbered: list[tuple[int, str]], index: int, number: int | None = None
) -> bool:
    """A numbered line followed by a marker line (whatever its number, so that a skipped
    number is reported rather than swallowed into the previous answer), or the next number."""
    match = QUESTION_RE.match(numbered[index][1])
    if not match:
        return False
    if number is not None and int(match.group(1)) == number:
        return True
    return index + 1 < len(numbered) and _is_marker(numbered[index + 1][1])


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:60].strip("-") or "deck"


def quiz_to_locale(
    quiz: Quiz, locale: str, keys: list[str] | None = None, *, path: str = "<quiz>"
) -> LocaleSource:
    """Deck-file content for a quiz; `keys` reuses another locale's keys, question by question."""
    if keys is not None and len(keys) != len(quiz.items):
        raise QuestionCountMismatch(path, len(quiz.items), len(keys))
    cards = []
    for i, item in enumerate(quiz.items):
        short, explanation = split_answer(item.answer)
        key = keys[i] if keys is not None else f"q{item.number:02d}"
        cards.append(CardSource(key, item.question, short, explanation, item.line))
    return LocaleSource(locale, quiz.title, quiz.subtitle, tuple(cards))
