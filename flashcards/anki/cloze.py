"""Anki's Cloze notes as question-and-answer cards: one card per deletion number.

A Cloze note's text holds deletions `{{c1::answer}}` or `{{c1::answer::hint}}`; Anki makes a
card for each number, hiding that number's deletions ("[...]", or "[hint]") and showing the
others. Here that card's question is the text so hidden, and its answer the whole text with
every deletion shown, as Anki's answer side shows it. Deletions may nest (Anki 2.1.56 and
later): they are resolved from the innermost out, so hiding an outer deletion hides what it
holds.
"""

from __future__ import annotations

import re

# A deletion with no other deletion inside it: resolving these first handles nesting.
_INNERMOST = re.compile(
    r"\{\{c(\d+)::((?:(?!\{\{c\d+::).)*?)(?:::((?:(?!\{\{c\d+::).)*?))?\}\}", re.DOTALL
)
_NUMBER = re.compile(r"\{\{c(\d+)::")


def numbers(text: str) -> list[int]:
    """The deletion numbers a text has, each once, in order: one card for each."""
    return sorted({int(n) for n in _NUMBER.findall(text) if int(n) > 0})


def question(text: str, number: int) -> str:
    """The text with deletion `number` hidden and the others shown."""
    return _resolve(text, number)


def answer(text: str) -> str:
    """The text with every deletion shown."""
    return _resolve(text, None)


def _resolve(text: str, hidden: int | None) -> str:
    def one(match: re.Match[str]) -> str:
        if hidden is not None and int(match.group(1)) == hidden:
            return f"[{match.group(3) or '...'}]"
        return match.group(2)

    while True:
        resolved = _INNERMOST.sub(one, text)
        if resolved == text:
            return resolved
        text = resolved
