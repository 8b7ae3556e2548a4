"""Anki's Cloze notes as question-and-answer cards: one card per deletion number.

A Cloze note's text holds deletions `{{c1::answer}}` or `{{c1::answer::hint}}`; Anki makes a
card for each number, hiding that number's deletions ("[...]", or "[hint]") and showing the
others. Here that card's question is the text so hidden, and its answer the whole text with
every deletion shown, as Anki's answer side shows it.

The text is parsed once into a tree, as Anki's own renderer does, so deletions may nest
(Anki 2.1.56 and later) and a card costs one pass over the text: a package is untrusted, and
re-scanning the text for every level of nesting would let one note take minutes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import NoClozeDeletion, TooManyDeletions

MAX_CLOZE_CARDS = 100  # per note; Anki's own editor offers far fewer
# Deeper openings are taken as plain text: no real note nests this far, and rendering
# recurses once per level.
MAX_DEPTH = 50
# Numbers past 999 are text: Anki makes no card for them either.
_TOKEN = re.compile(r"\{\{c(\d{1,3})::|\}\}|::")


@dataclass
class _Deletion:
    number: int
    opening: str  # as written, to give an unclosed deletion back as text
    parts: list[str | _Deletion] = field(default_factory=list)
    hint: list[str | _Deletion] | None = None
    # As in Anki, a hint is text only: a deletion opened after "::" ends it, and the rest
    # is the answer's again.
    hint_ended: bool = False
    hint_at: int = 0  # how many parts came before the hint

    def as_text(self) -> list[str | _Deletion]:
        if self.hint is None:
            return [self.opening, *self.parts]
        before, after = self.parts[: self.hint_at], self.parts[self.hint_at :]
        return [self.opening, *before, "::", *self.hint, *after]


class Cloze:
    """One Cloze note's text, parsed."""

    def __init__(self, text: str) -> None:
        self._nodes, unclosed = _parse(text)
        # Anki shows an unclosed deletion as text; an upload names it instead, as a typo.
        self.unclosed: tuple[int, ...] = unclosed

    def numbers(self) -> list[int]:
        """The deletion numbers, each once, in order: one card for each (Anki skips c0)."""
        found: set[int] = set()
        pending: list[str | _Deletion] = list(self._nodes)
        while pending:
            node = pending.pop()
            if isinstance(node, _Deletion):
                found.add(node.number)
                pending.extend(node.parts)
        return sorted(n for n in found if n > 0)

    def card_numbers(self) -> list[int]:
        """`numbers`, for a text that is to make cards: one at least, and no more than a
        note makes."""
        numbers = self.numbers()
        if not numbers:
            raise NoClozeDeletion(
                "a Cloze text needs a deletion, such as {{c1::Paris}}", field="front"
            )
        if len(numbers) > MAX_CLOZE_CARDS:
            raise TooManyDeletions(
                f"a Cloze text makes a card for each deletion number, at most {MAX_CLOZE_CARDS}",
                field="front",
            )
        return numbers

    def question(self, number: int) -> str:
        """The text with deletion `number` hidden and the others shown."""
        return _render(self._nodes, number)

    def answer(self) -> str:
        """The text with every deletion shown."""
        return _render(self._nodes, None)


def back_extra(back: str, explanation: str) -> str:
    """What a Cloze text's cards show besides the text (Anki's "Back Extra"): what was written
    as the back, where a plain card has its answer, and the explanation, both kept."""
    return "\n\n".join(text.strip() for text in (back, explanation) if text.strip())


def _parse(text: str) -> tuple[list[str | _Deletion], tuple[int, ...]]:
    """The text's tree, and the numbers of the deletions left unclosed, outermost first."""
    root: list[str | _Deletion] = []
    open_: list[_Deletion] = []

    def current() -> list[str | _Deletion]:
        if not open_:
            return root
        top = open_[-1]
        return top.parts if top.hint is None or top.hint_ended else top.hint

    position = 0
    for match in _TOKEN.finditer(text):
        current().append(text[position : match.start()])
        position = match.end()
        token = match.group(0)
        if match.group(1) is not None and len(open_) < MAX_DEPTH:
            if open_ and open_[-1].hint is not None:
                open_[-1].hint_ended = True
            open_.append(_Deletion(int(match.group(1)), token))
        elif token == "}}" and open_:
            deletion = open_.pop()
            current().append(deletion)
        elif token == "::" and open_ and open_[-1].hint is None:
            open_[-1].hint = []
            open_[-1].hint_at = len(open_[-1].parts)
        else:
            current().append(token)
    current().append(text[position:])
    unclosed = tuple(deletion.number for deletion in open_)
    while open_:  # unclosed: plain text after all
        deletion = open_.pop()
        current().extend(deletion.as_text())
    return root, unclosed


def _render(nodes: list[str | _Deletion], hidden: int | None) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif node.number == hidden:
            out.append(f"[{_render(node.hint or [], None) or '...'}]")
        else:
            out.append(_render(node.parts, hidden))
    return "".join(out)
