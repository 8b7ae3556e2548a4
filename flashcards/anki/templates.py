"""Anki card templates rendered to a card's question and answer, as far as plain text needs.

A note type with several templates (Anki's "Basic (and reversed card)", or one a person made)
gives each of its cards its own sides: `{{Field}}` replacements, filters (`{{text:Field}}`,
`{{hint:Field}}`, `{{type:Field}}`...), and sections shown only when a field is filled
(`{{#Field}}...{{/Field}}`) or empty (`{{^Field}}...{{/Field}}`). The answer side's
`{{FrontSide}}` and everything up to Anki's `<hr id=answer>` are the question again, which
our card shows by itself, so the answer is what follows them.

Templates come from an untrusted package: they are parsed once, nesting and their number of
tags are capped, a tag that is not closed is taken as text, and rendering stops once a side
passes a length (a template of thousands of `{{Field}}` would otherwise make megabytes of
every note): `TooLarge` then.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .sanitize import html_to_text

MAX_DEPTH = 50  # sections deeper than this are text; no real template nests so far
MAX_TAGS = 500  # per side; Anki's own templates have a handful, elaborate ones dozens
_TAG = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
ANSWER_RULE = re.compile(r"<hr\s+id\s*=\s*[\"']?answer[\"']?\s*/?>", re.IGNORECASE)
# Filters that show nothing as text: speech, and the typing box of the question side.
_SILENT_FILTERS = {"tts", "tts-voices"}


@dataclass
class _Section:
    name: str
    inverted: bool
    opening: str
    parts: list[str | _Field | _Section] = field(default_factory=list)


@dataclass(frozen=True)
class _Field:
    name: str
    filters: tuple[str, ...]


Node = str | _Field | _Section


class TooLarge(Exception):
    """A template with more than MAX_TAGS tags, or a side longer than its limit."""


class Template:
    """One side's format, parsed."""

    def __init__(self, text: str) -> None:
        if text.count("{{") > MAX_TAGS:
            raise TooLarge
        self._nodes = _parse(text)

    def render(self, fields: dict[str, str], *, answer_side: bool, limit: int) -> str:
        out = _Output(limit)
        _render(self._nodes, fields, answer_side, out)
        return "".join(out.parts)


@lru_cache(maxsize=64)
def _parsed(text: str) -> Template:
    # A note type's templates render every one of its notes: parsed once for all.
    return Template(text)


def render_card(
    question_format: str, answer_format: str, fields: dict[str, str], *, limit: int
) -> tuple[str, str]:
    """A card's question and answer HTML from its template and its note's fields; TooLarge
    for a template with too many tags or a side of more than `limit` characters."""
    question = _parsed(question_format).render(fields, answer_side=False, limit=limit)
    answer = _parsed(answer_format).render(
        {**fields, "FrontSide": ""}, answer_side=True, limit=limit
    )
    rule = ANSWER_RULE.search(answer)
    if rule is not None:
        answer = answer[rule.end() :]
    return question, answer


def _parse(text: str) -> list[Node]:
    root: list[Node] = []
    stack: list[_Section] = []

    def current() -> list[Node]:
        return stack[-1].parts if stack else root

    position = 0
    for match in _TAG.finditer(text):
        current().append(text[position : match.start()])
        position = match.end()
        inner = match.group(1).strip()
        if inner[:1] in ("#", "^") and len(stack) < MAX_DEPTH:
            stack.append(_Section(inner[1:].strip(), inner[0] == "^", match.group(0)))
        elif inner[:1] == "/" and stack and stack[-1].name == inner[1:].strip():
            section = stack.pop()
            current().append(section)
        elif inner[:1] in ("#", "^", "/", "!"):
            current().append(match.group(0) if inner[:1] != "!" else "")
        else:
            *filters, name = inner.split(":")
            current().append(_Field(name.strip(), tuple(f.strip() for f in filters)))
    current().append(text[position:])
    while stack:  # unclosed: text after all
        section = stack.pop()
        current().extend([section.opening, *section.parts])
    return root


def _filled(value: str) -> bool:
    return bool(html_to_text(value).strip())


@dataclass
class _Output:
    limit: int
    size: int = 0
    parts: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.size += len(text)
        if self.size > self.limit:
            raise TooLarge
        self.parts.append(text)


def _render(nodes: list[Node], fields: dict[str, str], answer_side: bool, out: _Output) -> None:
    for node in nodes:
        if isinstance(node, str):
            out.add(node)
        elif isinstance(node, _Field):
            out.add(_field(node, fields, answer_side))
        elif _filled(fields.get(node.name, "")) != node.inverted:
            _render(node.parts, fields, answer_side, out)


def _field(node: _Field, fields: dict[str, str], answer_side: bool) -> str:
    value = fields.get(node.name, "")
    for name in node.filters:
        base = name.split(" ")[0]
        if base in _SILENT_FILTERS:
            return ""
        if base == "type":
            # The question side's typing box; the answer side shows the expected answer.
            return value if answer_side else ""
        if base == "text":
            value = html_to_text(value)
    return value
