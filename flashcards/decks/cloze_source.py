"""Siblings back into one Anki note: the Cloze text that the deletions of a Cloze note came from.

An imported Cloze note became a card per deletion number whose question is the text with that
number's deletions hidden ("[...]", or "[hint]") and whose answer is the whole text (`cloze`).
The note's text is not kept, so it is found again from the cards: each question, set against
the answer, shows where its deletions were. What is found is checked by rendering it again; a
text that does not give back every card exactly (edited cards, deletions side by side) is
None, and the caller sends the siblings out as a note of one template per card instead.
"""

from __future__ import annotations

import re

from .cloze import Cloze

_PLACEHOLDER = re.compile(r"\[([^\[\]]*)\]")
_NUMBER = re.compile(r"-c(\d{1,3})$")

Span = tuple[int, int, int, str | None]  # start, end in the answer; number; hint


def cloze_number(key: str) -> int | None:
    """The deletion number a Cloze card's key ends with (`anki-<note>-c<number>`)."""
    match = _NUMBER.search(key)
    return int(match.group(1)) if match and int(match.group(1)) > 0 else None


def sibling_key(stem: str, number: int) -> str:
    """The key of the card a Cloze text keyed `stem` makes for deletion `number`; the
    inverse of `cloze_number`."""
    return f"{stem}-c{number}"


def cloze_source(questions: dict[int, str], answer: str) -> str | None:
    """The Cloze text whose card `number` is `questions[number]` and whose answer is `answer`,
    or None when no text gives exactly these cards."""
    spans: list[Span] = []
    for number, question in questions.items():
        found = _deletions(question, answer)
        if not found:
            return None
        spans.extend((start, end, number, hint) for start, end, hint in found)
    source = _marked(answer, spans)
    if source is None:
        return None
    parsed = Cloze(source)
    if parsed.numbers() != sorted(questions) or parsed.answer() != answer:
        return None
    if any(parsed.question(n) != q for n, q in questions.items()):
        return None
    return source


def _deletions(question: str, answer: str) -> list[tuple[int, int, str | None]] | None:
    """Where the answer's text is hidden in the question: (start, end, hint) in the answer."""
    found: list[tuple[int, int, str | None]] = []
    marks = list(_PLACEHOLDER.finditer(question))
    at = 0  # in the answer
    before = 0  # in the question, the end of the last mark
    for i, mark in enumerate(marks):
        literal = question[before : mark.start()]
        if answer[at : at + len(literal)] != literal:
            return None
        at += len(literal)
        before = mark.end()
        if answer.startswith(mark.group(0), at):
            at += len(mark.group(0))  # brackets that are the text's own
            continue
        following_end = marks[i + 1].start() if i + 1 < len(marks) else len(question)
        following = question[mark.end() : following_end]
        if not following:
            if i + 1 < len(marks):
                return None  # deletions side by side: where one ends is not known
            end = len(answer)
        elif i + 1 == len(marks):
            end = len(answer) - len(following)
        else:
            end = answer.find(following, at + 1)
        if end <= at:
            return None
        hint = mark.group(1)
        found.append((at, end, None if hint == "..." else hint))
        at = end
    if answer[at:] != question[before:]:
        return None
    return found


def _marked(answer: str, spans: list[Span]) -> str | None:
    """The answer with each span as a deletion; None if two spans cross."""
    out: list[str] = []
    at = 0
    open_: list[Span] = []

    def close() -> None:
        nonlocal at
        _start, end, _number, hint = open_.pop()
        out.append(answer[at:end])
        out.append(f"::{hint}}}}}" if hint is not None else "}}")
        at = end

    for span in sorted(spans, key=lambda s: (s[0], -s[1], s[2])):
        while open_ and open_[-1][1] <= span[0]:
            close()
        if open_ and span[1] > open_[-1][1]:
            return None
        out.append(answer[at : span[0]])
        out.append(f"{{{{c{span[2]}::")
        at = span[0]
        open_.append(span)
    while open_:
        close()
    out.append(answer[at:])
    return "".join(out)
