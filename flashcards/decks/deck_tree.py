"""Decks as Anki lists them: a subdeck ("Languages::Spanish::Week 1") under its parent. No
Flask.

A parent the person has no deck of here (a deck of Anki's that holds only subdecks, say)
still heads its subdecks, as a node without a deck. Siblings keep the order they are given
in; a parent comes where its first deck came.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")
SEPARATOR = "::"  # between a parent deck's name and its subdeck's, as Anki names them


@dataclass
class Node(Generic[T]):
    name: str  # its own part of the path ("Week 1")
    path: tuple[str, ...]
    deck: T | None = None
    children: list[Node[T]] = field(default_factory=list)

    def decks(self) -> Iterator[T]:
        """Its deck and every deck under it, parents before their subdecks."""
        return (deck for deck, _parent in self.under())

    def under(self, parent: T | None = None) -> Iterator[tuple[T, T | None]]:
        """Its deck and every deck under it, each with the nearest deck above it (None for
        the first; a group without a deck is passed through), parents before subdecks."""
        if self.deck is not None:
            yield self.deck, parent
            parent = self.deck
        for child in self.children:
            yield from child.under(parent)


def anki_name(title: str) -> str:
    """The title as Anki names a deck: each part trimmed, empty parts dropped ("A :: ::B" is
    "A::B"); empty when no part has a name."""
    return SEPARATOR.join(part for part in (p.strip() for p in title.split(SEPARATOR)) if part)


def path_of(title: str) -> tuple[str, ...]:
    """The parts of a deck's title; a title with an empty part is one deck of that name."""
    parts = tuple(part.strip() for part in title.split(SEPARATOR))
    return parts if all(parts) else (title,)


def name_key(title: str) -> tuple[str, ...]:
    """What makes two titles one deck's name, as Anki compares names: by part, in any case."""
    return tuple(part.casefold() for part in path_of(title))


def tree(decks: Iterable[T], title: Callable[[T], str]) -> list[Node[T]]:
    """The decks as a forest by their titles' paths. Two decks of one title are two nodes."""
    roots: list[Node[T]] = []
    groups: dict[tuple[str, ...], Node[T]] = {}  # the node of each path, the first of a name

    def node_at(path: tuple[str, ...]) -> Node[T]:
        found = groups.get(path)
        if found is None:
            found = groups[path] = Node(path[-1], path)
            siblings(path).append(found)
        return found

    def siblings(path: tuple[str, ...]) -> list[Node[T]]:
        return roots if len(path) == 1 else node_at(path[:-1]).children

    for deck in decks:
        path = path_of(title(deck))
        existing = groups.get(path)
        if existing is not None and existing.deck is None:
            existing.deck = deck  # a parent named before its own deck came
            continue
        node = Node(path[-1], path, deck)
        siblings(path).append(node)
        groups.setdefault(path, node)
    return roots


def find(nodes: Iterable[Node[T]], deck: T) -> Node[T] | None:
    """The node of `deck` in the forest, or None."""
    for node in nodes:
        if node.deck == deck:
            return node
        found = find(node.children, deck)
        if found is not None:
            return found
    return None


def walk(nodes: Iterable[Node[T]]) -> Iterator[Node[T]]:
    """Every node of the forest, parents before their subdecks."""
    for node in nodes:
        yield node
        yield from walk(node.children)
