"""Fitted parameters come close to a simulated learner's true ones.

"Close" is judged where it matters, on the recall the parameters predict, since FSRS's 21
parameters trade off against each other (two sets far apart can predict alike). On the later
answers the fit never trained on, each set predicts the recall of each answer from the card's
history before it: the fitted set's predictions must be much nearer the true set's than the
defaults' are, and its log loss must close most of the defaults' gap to the truth's.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from flashcards.optimizer import store
from flashcards.optimizer.fit import DEFAULTS, fit, load_optimizer, score, split_in_time
from flashcards.optimizer.items import TrainingItem
from flashcards.storage.engine import transaction

from .conftest import T0
from .factories import make_user
from .fsrs_learner import TRUE_PARAMETERS, simulate_learner


def predicted_recall(parameters: Sequence[float], item: TrainingItem) -> float:
    """The recall `parameters` predict for the item's last answer, from the history before it."""
    optimizer = load_optimizer()
    history = [optimizer.FSRSReview(rating, days) for rating, days in item.reviews[:-1]]
    memory = optimizer.FSRS(list(parameters)).memory_state(optimizer.FSRSItem(history), None)
    elapsed = item.reviews[-1][1]
    decay = -parameters[20]
    factor = 0.9 ** (1 / decay) - 1
    return float((1 + factor * elapsed / memory.stability) ** decay)


def test_fitted_parameters_predict_recall_close_to_the_true_ones(engine: Engine) -> None:
    with transaction(engine) as session:
        user = make_user(session)
        simulate_learner(session, user, T0, days=90, new_per_day=4)
    with Session(engine) as session:
        history = store.read_history(session, user)
    train, held_out = split_in_time(history.items)
    fitted = fit(train)

    def distance(parameters: Sequence[float]) -> float:
        return fmean(
            abs(predicted_recall(parameters, item) - predicted_recall(TRUE_PARAMETERS, item))
            for item in held_out
        )

    to_fitted, to_defaults = distance(fitted), distance(DEFAULTS)
    assert to_fitted < 0.5 * to_defaults, (to_fitted, to_defaults)
    assert to_fitted < 0.1  # ten points of recall, on average

    truth, mine, defaults = (
        score(p, held_out).log_loss for p in (TRUE_PARAMETERS, fitted, DEFAULTS)
    )
    assert truth < defaults
    assert mine - truth < 0.5 * (defaults - truth), (truth, mine, defaults)
