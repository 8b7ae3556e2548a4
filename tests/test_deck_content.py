"""The shipped EKS deck: same cards in every language, the seeds' words, none of their damage."""

from __future__ import annotations

import re

import pytest

from flashcards.decks.deckfile import DeckSource, LocaleSource, load_decks
from flashcards.decks.quizfile import parse_quiz, split_answer
from tests.conftest import DECKS, SEEDS

SEED_FILES = {"es": "000_2a59eba2e9ee1c24.txt", "ko": "004_3c77d9b94ee3fd70.txt"}
# Spaces the extraction dropped; each of these is in a seed and must not be in the deck.
DAMAGE = [
    "15preguntas",
    "de200B",
    "paralelismo3D",
    "Slinky1.2.2",
    "son64ranks",
    "de1×",
    "BioNeMo3.0.0",
    "colectivas;400Gbps",
    "budget de0",
    "확인하는15문항",
    "는64rank",
    "microbatch1×",
    "node가4개",
    "Operator0.8.2",
    ",PP",
    ",expert",
    "같은AZ",
    "budget0",
]
# What a careless "add a space" pass would break.
KEPT = ["slinky.slurm.net/v1beta1", "v2beta1", "TP8×PP4×DP2", "Operator 0.8.2", "Slinky 1.2.2"]


def _deck() -> DeckSource:
    (deck,) = load_decks(DECKS)
    return deck


def _texts(source: LocaleSource) -> list[str]:
    return [source.title, source.description] + [
        text for card in source.cards for text in (card.question, card.answer, card.explanation)
    ]


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_same_fifteen_keys_in_the_same_order() -> None:
    deck = _deck()
    assert deck.default_locale == "en"
    assert sorted(deck.locales) == ["en", "es", "ko"]
    keys = deck.keys
    assert len(keys) == 15 == len(set(keys))
    for source in deck.locales.values():
        assert [card.key for card in source.cards] == keys
        assert all(card.question and card.answer for card in source.cards)


@pytest.mark.parametrize("locale", ["en", "es", "ko"])
def test_no_extraction_damage(locale: str) -> None:
    texts = _texts(_deck().locales[locale])
    joined = "\n".join(texts)
    for damaged in DAMAGE:
        assert damaged not in joined
    for text in texts:
        # A comma or semicolon is followed by a space (there are no thousands separators).
        assert not re.search(r"[,;]\S", text), text
        # A sentence's full stop is followed by a space unless it is inside a name or number.
        assert not re.search(r"[^\W\d_]\.[A-ZÁÉÍÓÚÑ가-힣]", text), text
        assert "  " not in text and text == text.strip()
        # Korean: a number after a word needs a space ("확인하는 15문항", "가 4개").
        assert not re.search(r"[가-힣]\d", text), text
        # A number glued to the word before or after it ("de200B", "64ranks").
        assert not re.search(r"(?<![\w.-])[a-záéíóúñ]{2,}\d", text), text
        assert not re.search(r"(?<![A-Za-z\d.])\d+[a-záéíóúñ]{3,}", text.replace("bit", "")), text


def test_names_versions_and_notation_survive() -> None:
    deck = _deck()
    for locale, source in deck.locales.items():
        joined = "\n".join(_texts(source))
        for kept in KEPT:
            assert kept in joined, (locale, kept)


@pytest.mark.parametrize("locale", ["es", "ko"])
def test_seed_locales_keep_the_seeds_words(locale: str) -> None:
    """Only white space was restored: with it removed, every text is the seed's text."""
    quiz = parse_quiz((SEEDS / SEED_FILES[locale]).read_text(encoding="utf-8"))
    source = _deck().locales[locale]
    assert _squeeze(source.title) == _squeeze(quiz.title)
    assert _squeeze(source.description) == _squeeze(quiz.subtitle)
    assert len(source.cards) == len(quiz.items)
    for card, item in zip(source.cards, quiz.items, strict=True):
        assert _squeeze(card.question) == _squeeze(item.question), card.key
        assert _squeeze(card.answer + card.explanation) == _squeeze(item.answer), card.key
        # The short answer is the seed answer's first sentence, the explanation the rest.
        assert _squeeze(card.answer) == _squeeze(split_answer(item.answer)[0]), card.key


def test_english_has_an_explanation_wherever_the_seeds_do() -> None:
    deck = _deck()
    for i, key in enumerate(deck.keys):
        has = {loc: bool(src.cards[i].explanation) for loc, src in deck.locales.items()}
        assert has["en"] == has["es"] == has["ko"], key
