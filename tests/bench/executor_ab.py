"""Per-call time of the hot path's executor, for comparing two checkouts in one sitting.

    PYTHONPATH=<checkout> python tests/bench/executor_ab.py URL

prints the median microseconds per answer (`prepare_answer` + `store_answer`), per
`queue.next_card` and per API token lookup through a `DirectConnection`, on a database
already at head. Run it from each checkout in turn, several times, interleaved: the
machine's drift then hits both alike.
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from datetime import timedelta

from fsrs import Rating

from flashcards.hot_sql.rawsql import DirectConnection
from flashcards.people import accounts
from flashcards.srs import queue, study
from flashcards.srs.days import Clock
from flashcards.storage.engine import make_engine, transaction
from tests import factories as f
from tests.conftest import T0

CARDS = 200
ROUNDS = 3  # answers per card: the first inserts the state, the others update it
NEXT_CALLS = 1000


def main(url: str) -> None:
    engine = make_engine(url)
    with transaction(engine) as s:
        user = f.make_user(s, f"ab-{uuid.uuid4().hex}@example.com")
        deck = f.make_deck(s, f"ab-{uuid.uuid4().hex[:8]}", CARDS)
        f.subscribe(s, user, deck, new_per_day=9999, reviews_per_day=9999)
        cards = f.card_ids(s, deck.id)
        token = f.make_token(s, user)
    connection = DirectConnection(engine)
    answers: list[float] = []
    now = T0
    for _round in range(ROUNDS):
        for card in cards:
            now += timedelta(seconds=1)
            start = time.perf_counter()
            prepared = study.prepare_answer(
                connection, user, card, Rating.Good, str(uuid.uuid4()), now=now
            )
            assert not isinstance(prepared, study.AnswerResult)
            study.store_answer(connection, prepared)
            answers.append(time.perf_counter() - start)
    clock = Clock("UTC", 4)
    later = now + timedelta(days=60)  # every card due for review
    nexts: list[float] = []
    for _ in range(NEXT_CALLS):
        start = time.perf_counter()
        card_shown, _counts = queue.next_card(connection, user, now=later, clock=clock)
        nexts.append(time.perf_counter() - start)
        assert card_shown is not None
    tokens: list[float] = []
    for _ in range(NEXT_CALLS):
        start = time.perf_counter()
        found = accounts.user_id_for_token(connection, token)
        tokens.append(time.perf_counter() - start)
        assert found == user
    connection.close()
    engine.dispose()
    print(
        f"answer_us={statistics.median(answers) * 1e6:.1f} "
        f"next_us={statistics.median(nexts) * 1e6:.1f} "
        f"token_us={statistics.median(tokens) * 1e6:.1f}"
    )


if __name__ == "__main__":
    main(sys.argv[1])
