"""A simulated learner whose memory follows FSRS with known parameters that are not the defaults.

The service schedules them with its own parameters (the defaults, until fitted); whether they
recall a card is drawn, from a seeded generator, with the probability the true parameters'
forgetting curve gives at that moment. Answers go through `study.answer` with past times, so
the review log is the one the service writes.
"""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State
from sqlalchemy import insert
from sqlalchemy.orm import Session

from flashcards.srs import study
from flashcards.srs.settings import apply_user_settings
from flashcards.storage.models import Card, CardText, Deck, ReviewLog, ReviewState

from .factories import card_ids, make_deck, subscribe

# A learner who forgets much faster than the defaults expect, above all in the first days.
TRUE_PARAMETERS = (
    0.05, 0.15, 0.4, 1.5, 7.0, 0.6, 2.2, 0.02, 0.9, 0.25, 1.1,
    2.1, 0.08, 0.35, 1.7, 0.3, 2.5, 0.6, 0.1, 0.05, 0.2,
)  # fmt: skip


def simulate_learner(
    session: Session,
    user_id: int,
    start: datetime,
    *,
    days: int = 90,
    new_per_day: int = 3,
    parameters: tuple[float, ...] = TRUE_PARAMETERS,
    seed: int = 7,
    deck: Deck | None = None,
) -> int:
    """Study a deck (by default a fresh one) once a day for `days` days from `start`; the
    deck's id. A given deck needs `days * new_per_day` cards."""
    if deck is None:
        deck = make_deck(session, f"sim{uuid.uuid4().hex[:8]}", days * new_per_day, now=start)
    subscribe(session, user_id, deck, now=start)
    # Intervals as FSRS and the seeded fuzz give them: the load balancer's picks depend on
    # what else is due, which would tie the optimizer's figures to the balancer's.
    apply_user_settings(session, user_id, {"load_balancing": False})
    waiting = card_ids(session, deck.id)
    truth = Scheduler(parameters=parameters, enable_fuzzing=False)
    rng = random.Random(seed)
    due: dict[int, datetime] = {}
    memory: dict[int, FsrsCard] = {}
    for day in range(days):
        at = start + timedelta(days=day)
        for card_id in waiting[:new_per_day]:
            due[card_id] = at
            memory[card_id] = FsrsCard(card_id=card_id, due=at)
        del waiting[:new_per_day]
        # Several passes through the day's session, so learning steps come back the same day.
        for _ in range(6):
            for card_id in [c for c, when in due.items() if when <= at]:
                rating = _rating(rng, truth, memory[card_id], at)
                result = study.answer(session, user_id, card_id, rating, str(uuid.uuid4()), now=at)
                due[card_id] = result.state.due
                memory[card_id], _ = truth.review_card(memory[card_id], rating, at)
                at += timedelta(seconds=20)
            at += timedelta(minutes=15)
    session.flush()
    return deck.id


def _rating(rng: random.Random, truth: Scheduler, card: FsrsCard, at: datetime) -> Rating:
    if card.last_review is None:
        return rng.choices(list(Rating), weights=(2, 1, 6, 1))[0]
    if rng.random() < truth.get_card_retrievability(card, at):
        return rng.choices((Rating.Hard, Rating.Good, Rating.Easy), weights=(1, 7, 1))[0]
    return Rating.Again


def bulk_history(
    session: Session,
    user_id: int,
    start: datetime,
    *,
    cards: int,
    answers_per_card: int,
    seed: int = 11,
) -> int:
    """A long history written straight to the tables (answering through `study` would take
    minutes): each card answered `answers_per_card` times, a day or more apart, the recall
    drawn from the true parameters. States and log rows are as an answer writes them, but for
    memory values, which no fit reads. Returns the number of log rows."""
    deck = make_deck(session, f"bulk{uuid.uuid4().hex[:8]}", 0, now=start)
    session.execute(
        insert(Card),
        [
            {"deck_id": deck.id, "key": f"c{n}", "position": n, "created_at": start}
            for n in range(1, cards + 1)
        ],
    )
    session.execute(
        insert(CardText),
        [
            {"card_id": card_id, "locale": "en", "question": f"q{card_id}", "answer": "a"}
            for card_id in card_ids(session, deck.id)
        ],
    )
    subscribe(session, user_id, deck, now=start)
    truth = Scheduler(parameters=TRUE_PARAMETERS, enable_fuzzing=False)
    rng = random.Random(seed)
    states, logs = [], []
    for index, card_id in enumerate(card_ids(session, deck.id)):
        at = start + timedelta(minutes=index)
        memory = FsrsCard(card_id=card_id, due=at)
        last = at
        for rep in range(answers_per_card):
            rating = _rating(rng, truth, memory, at)
            memory, _ = truth.review_card(memory, rating, at)
            logs.append(
                {
                    "review_id": str(uuid.uuid4()), "user_id": user_id, "card_id": card_id,
                    "deck_id": deck.id, "rating": int(rating), "reviewed_at": at,
                    "state_before": None if rep == 0 else int(State.Review),
                    "reps_before": rep, "lapses_before": 0, "state": int(State.Review),
                    "stability": memory.stability, "difficulty": memory.difficulty,
                    "due": memory.due, "reps": rep + 1, "lapses": 0,
                }
            )  # fmt: skip
            last, at = at, max(memory.due, at + timedelta(days=1))
        states.append(
            {
                "user_id": user_id, "card_id": card_id, "deck_id": deck.id,
                "state": int(State.Review), "step": None, "stability": memory.stability,
                "difficulty": memory.difficulty, "due": memory.due, "last_review": last,
                "reps": answers_per_card, "lapses": 0, "introduced_at": start, "version": 1,
            }
        )  # fmt: skip
    session.execute(insert(ReviewState), states)
    session.execute(insert(ReviewLog), logs)
    session.flush()
    return len(logs)
