"""The shipped EKS deck: the seeds' 15 questions as gradable cards, alike in every language."""

from __future__ import annotations

import re

import pytest

from flashcards.decks.deckfile import CardSource, DeckSource, LocaleSource, load_decks
from flashcards.decks.quizfile import parse_quiz
from tests.conftest import DECKS, SEEDS

SEED_FILES = {"es": "000_2a59eba2e9ee1c24.txt", "ko": "004_3c77d9b94ee3fd70.txt"}
LOCALES = ["en", "es", "ko"]
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
# What each seed question is about, in every language: the deck's question N must be the
# seeds' question N. Names are the same everywhere; where a card has none, per locale.
TOPICS: dict[str, tuple[str, ...]] = {
    "planning-200b-model": ("200",),
    "slurmctld-vs-slurmdbd": ("slurmctld", "slurmdbd"),
    "slinky-compute-group-api": ("Slinky", "1.2.2"),
    "nccl-over-efa": ("FI_PROVIDER=efa", "NCCL"),
    "bionemo-3-checks": ("BioNeMo", "3.0.0"),
    "optimum-neuron-trainer": ("Optimum Neuron", "Trainer", "HF"),
    "fsx-s3-integration": ("FSx", "S3"),
    "volcano-min-available": ("Volcano", "minAvailable", "4"),
    "bf16-vs-fp16": ("BF16", "FP16"),
    "zero-stage-3-offload": ("ZeRO", "3", "CPU"),
    "mpijob-slots-per-worker": ("MPIJob", "slotsPerWorker"),
    "efa-az-karpenter-budgets": ("EFA", "AZ", "Karpenter"),
}
LOCAL_TOPICS: dict[str, dict[str, str]] = {
    "tensor-parallelism": {
        "en": "tensor parallelism",
        "es": "paralelismo de tensores",
        "ko": "텐서 병렬화",
    },
    "activation-vs-recovery-checkpoints": {
        "en": "recovery checkpoints",
        "es": "checkpoints de recuperación",
        "ko": "복구",
    },
    "checkpoint-frequency-recovery": {
        "en": "checkpoint frequency",
        "es": "frecuencia de",
        "ko": "체크포인트 주기",
    },
}
# Names (a capital or digit inside a word, an underscore) and numbers: what a card reveals.
NAMES_RE = re.compile(r"[A-Za-z][A-Za-z0-9_=]*[A-Z0-9_=][A-Za-z0-9_=]*|[0-9]+")
BARE_ANSWERS = {"no", "sí", "si", "yes", "아닙니다", "아니요", "예", "네"}


def _deck() -> DeckSource:
    (deck,) = load_decks(DECKS)
    return deck


def _texts(source: LocaleSource) -> list[str]:
    return [source.title, source.description] + [
        text for card in source.cards for text in (card.question, card.answer, card.explanation)
    ]


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _card(locale: str, key: str) -> CardSource:
    return next(card for card in _deck().locales[locale].cards if card.key == key)


def _names(text: str) -> set[str]:
    return set(NAMES_RE.findall(text))


def test_same_fifteen_keys_in_the_same_order() -> None:
    deck = _deck()
    assert deck.default_locale == "en"
    assert sorted(deck.locales) == LOCALES
    keys = deck.keys
    assert len(keys) == 15 == len(set(keys))
    assert set(TOPICS) | set(LOCAL_TOPICS) == set(keys)
    for source in deck.locales.values():
        assert [card.key for card in source.cards] == keys
        assert all(card.question and card.answer and card.explanation for card in source.cards)


@pytest.mark.parametrize("locale", LOCALES)
def test_the_questions_are_the_seeds_questions_in_order(locale: str) -> None:
    seeds = {
        loc: parse_quiz((SEEDS / name).read_text(encoding="utf-8")).items
        for loc, name in SEED_FILES.items()
    }
    source = _deck().locales[locale]
    assert len(source.cards) == 15 == len(seeds["es"]) == len(seeds["ko"])
    for i, card in enumerate(source.cards):
        shared = TOPICS.get(card.key, ())
        local = LOCAL_TOPICS.get(card.key, {})
        assert shared or local, card.key
        for topic in shared + tuple(filter(None, [local.get(locale)])):
            assert _squeeze(topic) in _squeeze(card.question), (card.key, topic)
        # The seed in the same language has the same topic at the same position.
        for seed_locale, items in seeds.items():
            for topic in shared + tuple(filter(None, [local.get(seed_locale)])):
                assert _squeeze(topic) in _squeeze(items[i].question), (card.key, topic)


def test_each_deck_file_says_which_seed_it_was_written_from() -> None:
    folder = DECKS / "eks-model-training"
    sources = {loc: f"source/{name}" for loc, name in SEED_FILES.items()}
    for locale, expected in [("en", list(sources.values())), ("es", [sources["es"]]),
                             ("ko", [sources["ko"]])]:  # fmt: skip
        first = (folder / f"{locale}.deck").read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# ")
        for path in expected:
            assert path in first, (locale, path)


@pytest.mark.parametrize("locale", LOCALES)
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


@pytest.mark.parametrize("locale", LOCALES)
def test_an_answer_carries_the_fact_not_only_yes_or_no(locale: str) -> None:
    verdicts = 0
    for card in _deck().locales[locale].cards:
        assert card.answer.strip(" .:;,").lower() not in BARE_ANSWERS, card.key
        verdict = re.match(r"(\w+)[.:;,]", card.answer)
        if verdict and verdict[1].lower() in BARE_ANSWERS:
            verdicts += 1
            # "No: <the fact>" (in Korean "아닙니다. <the fact>"): a real clause follows.
            assert verdict[0][-1] == (":" if locale != "ko" else "."), card.key
            assert len(card.answer[verdict.end() :].strip()) >= 30, card.key
    # The yes/no questions: FI_PROVIDER, Optimum Neuron, minAvailable, ZeRO.
    assert verdicts == 4


def test_every_language_reveals_the_same_names_and_numbers_in_the_answer() -> None:
    """The cards split at the same point: progress is shared, so the answer is too."""
    deck = _deck()
    for i, key in enumerate(deck.keys):
        cards = {loc: src.cards[i] for loc, src in deck.locales.items()}
        answers = {loc: _names(card.answer) for loc, card in cards.items()}
        explanations = {loc: _names(card.explanation) for loc, card in cards.items()}
        assert answers["en"] == answers["es"] == answers["ko"], (key, answers)
        assert explanations["en"] == explanations["es"] == explanations["ko"], (key, explanations)


def test_a_question_on_a_difference_answers_with_both_sides() -> None:
    sides = {
        "slurmctld-vs-slurmdbd": ("slurmctld", "slurmdbd"),
        "bf16-vs-fp16": ("BF16", "FP16"),
        "efa-az-karpenter-budgets": ("AZ", "0"),
    }
    for locale in LOCALES:
        for key, names in sides.items():
            answer = _card(locale, key).answer
            assert all(name in answer for name in names), (locale, key)
        both = _card(locale, "activation-vs-recovery-checkpoints").answer
        assert {"en": "recovery checkpoint", "es": "checkpoint de recuperación",
                "ko": "복구용 체크포인트"}[locale] in both  # fmt: skip


def test_the_facts_the_issue_corrects() -> None:
    deck = _deck()
    for locale, source in deck.locales.items():
        joined = "\n".join(_texts(source))
        # The YAML spelling, and a claim that will age.
        assert "minAvailable:4" not in joined
        assert "minAvailable: 4" in _card(locale, "volcano-min-available").question
        assert not re.search(r"\b(current|currently|actuales?|actualmente)\b|현재", joined), locale
        # The learner never sees "the guide": the card states the test itself.
        assert not re.search(r"\b(guide|guía)\b|본문", joined), locale
        # DRA is spelled out where it is used.
        fsx = _card(locale, "fsx-s3-integration").answer
        assert "(DRA)" in fsx and "FSx for Lustre" in fsx
        assert {"en": "data repository association", "es": "asociación de repositorios de datos",
                "ko": "데이터 리포지토리 연결"}[locale] in fsx  # fmt: skip
        # A NodeSet has a Controller reference and a Pod template, not one or the other.
        slinky = _card(locale, "slinky-compute-group-api").answer
        assert "NodeSet" in slinky and "Controller" in slinky
        assert {"en": "Controller reference and a Pod template",
                "es": "referencia a un Controller y una plantilla de Pod",
                "ko": "Controller 참조와 파드 템플릿"}[locale] in slinky  # fmt: skip
    es = "\n".join(_texts(deck.locales["es"]))
    # "200B" in Spanish reads as billones (10¹²); the space is a no-break one.
    assert "200B" not in es and "billones" not in es
    assert "200\u00a0000 millones de parámetros" in _card("es", "planning-200b-model").question
    assert "o plantilla" not in es


def test_one_term_per_concept() -> None:
    deck = _deck()
    es = "\n".join(_texts(deck.locales["es"]))
    for english in ("devices", "manifests", "security groups", "reclamación", "disrupción"):
        assert english not in es
    for spanish in ("dispositivos", "manifiestos", "grupos de seguridad"):
        assert spanish in es
    assert "interrupción de instancias Spot" in _card("es", "efa-az-karpenter-budgets").answer
    ko = "\n".join(_texts(deck.locales["ko"]))
    # 훈련 for training; Korean words where a Korean writer uses them, English for names.
    assert "학습" not in ko and "훈련" in ko
    for english in (r"(?i)checkpoint", r"(?i)memory", r"\bnode\b", r"\bstate\b", r"\bPods?\b"):
        assert not re.search(english, ko), english
    for korean in ("체크포인트", "메모리", "노드", "파드"):
        assert korean in ko


def test_korean_statements_are_in_the_hamnida_style() -> None:
    for card in _deck().locales["ko"].cards:
        assert card.question.endswith("?"), card.key
        for text in (card.answer, card.explanation):
            for sentence in re.split(r"(?<=\.) ", text):
                assert sentence.endswith("니다."), (card.key, sentence)
