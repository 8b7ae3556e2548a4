"""Which parts of an answer fill the blanks of its question, so the pages can show them as
Anki shows a Cloze card's answer: the deletion asked for stands out. No Flask.

A Cloze card's question is its note's text with the asked deletion shown as a blank, "[...]"
or "[hint]" (`cloze`), and its answer is the whole text: the answer is the question
with each blank filled. Any card whose texts are so related is taken alike (a card written
here as "The capital of France is [...]." with the answer "The capital of France is
Paris.", say); for any other card there is nothing to mark. Media tokens are not blanks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .media_refs import TOKEN_RE

# A bracketed run without brackets or line breaks: Anki's "[...]" and a hint's "[hint]".
_BLANK = re.compile(r"\[[^\[\]\n]*\]")


@dataclass(frozen=True)
class Part:
    text: str
    blank: bool  # a blank of the question, or what fills it in the answer


def _blanks(question: str) -> list[re.Match[str]]:
    return [m for m in _BLANK.finditer(question) if not TOKEN_RE.fullmatch(m.group(0))]


def filled(question: str, answer: str) -> tuple[list[Part], list[Part]] | None:
    """The question and the answer cut into parts, blanks and what fills them marked, when
    the answer is the question with every blank filled (none empty); else None.

    The text between blanks is found left to right, at its first place after at least one
    character of fill: linear in the texts, whatever a note holds, and where a fill holds
    that same text the cut found still spells the answer exactly.
    """
    blanks = _blanks(question)
    if not blanks:
        return None
    pieces, start = [], 0
    for m in blanks:
        pieces.append(question[start : m.start()])
        start = m.end()
    last = question[start:]
    if not answer.startswith(pieces[0]):
        return None
    question_parts: list[Part] = []
    answer_parts: list[Part] = []
    at = len(pieces[0])
    for i, m in enumerate(blanks):
        if i + 1 < len(pieces):
            end = answer.find(pieces[i + 1], at + 1)
        else:
            end = len(answer) - len(last)
            if end <= at or not answer.endswith(last):
                return None
        if end <= at:
            return None
        fill = answer[at:end]
        # Brackets the answer keeps as they are ("the list [1, 2]") are text, not a blank; a
        # fill that holds its blank ("[city] Paris") is an answer written after the question.
        blank = fill != m.group(0)
        if blank and m.group(0) in fill:
            return None
        question_parts += [Part(pieces[i], False), Part(m.group(0), blank)]
        answer_parts += [Part(pieces[i], False), Part(fill, blank)]
        at = end + (len(pieces[i + 1]) if i + 1 < len(pieces) else 0)
    # Only a blank (a question "[ˈæpəl]" answered "apple") is a question, not a gap in a text.
    if not any(p.blank for p in question_parts) or not ("".join(pieces) + last).strip():
        return None
    question_parts.append(Part(last, False))
    answer_parts.append(Part(last, False))
    return [p for p in question_parts if p.text], [p for p in answer_parts if p.text]
