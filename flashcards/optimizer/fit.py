"""Fit FSRS parameters to training items and judge them on answers they did not train on.

The fitting and scoring are fsrs-rs's (the Rust FSRS that Anki's optimizer uses), through the
optional `fsrs-rs-python` package, imported on first use: without it the service runs and
`OptimizerUnavailable` says why nothing can be fitted.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from fsrs.scheduler import DEFAULT_PARAMETERS

from ..errors import NotEnoughHistory, OptimizerUnavailable
from .items import TrainingItem, cards_of

# Set to "off" to run as a server without the optimizer would (its tests use it too).
OPTIMIZER_SWITCH = "FLASHCARDS_OPTIMIZER"
OPTIMIZER_PACKAGE = "fsrs_rs_python"
# The later share of the answers, in time, that a fit is judged on and never trained on.
HELD_OUT_SHARE = 0.25
DEFAULTS: tuple[float, ...] = tuple(DEFAULT_PARAMETERS)
# Differences in a score below this are rounding (fsrs-rs computes in 32-bit floats).
NOISE = 1e-6


@dataclass(frozen=True)
class HistoryMinimum:
    """Below this, a fit would follow the noise of a few cards rather than the person."""

    answers: int = 400  # training items: answers on a later day than the card's previous one
    cards: int = 50


MINIMUM = HistoryMinimum()


@dataclass(frozen=True)
class Scores:
    """How well a parameter set predicts answers: lower is better for both."""

    log_loss: float
    rmse_bins: float


@dataclass(frozen=True)
class FitOutcome:
    parameters: tuple[float, ...]
    answers: int
    cards: int
    scores: Scores  # of `parameters`, on the held-out answers
    previous: Scores  # of the parameters in force, on the same answers
    defaults: Scores  # of py-fsrs's defaults, on the same answers
    adopt: bool


def load_optimizer(package: str = OPTIMIZER_PACKAGE) -> ModuleType:
    """The optimizer's package, or OptimizerUnavailable saying how to install it."""
    if os.environ.get(OPTIMIZER_SWITCH, "").lower() == "off":
        raise OptimizerUnavailable(
            f"the optimizer is switched off on this server ({OPTIMIZER_SWITCH}=off)"
        )
    try:
        return importlib.import_module(package)
    except ImportError:
        raise OptimizerUnavailable(
            "the optimizer is not installed on this server; "
            "install it with: pip install 'flashcards[optimizer]'"
        ) from None


def optimizer_available() -> bool:
    try:
        load_optimizer()
    except OptimizerUnavailable:
        return False
    return True


def split_in_time(
    items: Sequence[TrainingItem], held_out_share: float = HELD_OUT_SHARE
) -> tuple[list[TrainingItem], list[TrainingItem]]:
    """The earlier answers to train on and the later ones to judge on (items are in time order)."""
    cut = len(items) - max(1, round(len(items) * held_out_share))
    return list(items[:cut]), list(items[cut:])


def fit(items: Sequence[TrainingItem]) -> tuple[float, ...]:
    """Parameters fitted to the items, starting from the defaults."""
    optimizer = load_optimizer()
    fsrs = optimizer.FSRS(list(DEFAULTS))
    fitted = fsrs.compute_parameters(_fsrs_items(optimizer, items))
    return tuple(float(value) for value in fitted)


def score(parameters: Sequence[float], items: Sequence[TrainingItem]) -> Scores:
    optimizer = load_optimizer()
    evaluation = optimizer.FSRS(list(parameters)).evaluate(_fsrs_items(optimizer, items))
    return Scores(log_loss=float(evaluation.log_loss), rmse_bins=float(evaluation.rmse_bins))


def judge(candidate: Scores, current: Scores) -> bool:
    """Adopt only a set that predicts better: lower log loss, and RMSE(bins) no worse.

    Lower by more than `NOISE`: the scores are computed in single precision, and a set fitted
    again to the same history scores the same but for rounding, which is no reason to switch.
    """
    return (
        candidate.log_loss < current.log_loss - NOISE
        and candidate.rmse_bins <= current.rmse_bins + NOISE
    )


def fit_and_judge(
    items: Sequence[TrainingItem],
    current: Sequence[float] | None,
    minimum: HistoryMinimum = MINIMUM,
    rivals: Sequence[Sequence[float]] = (),
) -> FitOutcome:
    """Fit on the earlier answers, score the fit, the parameters in force (None: defaults)
    and the defaults on the later ones, and say whether the fit is to be adopted: it must
    beat the parameters in force and each of the `rivals` (sets the person's cards are also
    scheduled with: their team decks')."""
    load_optimizer()  # before the history is judged: a missing package is the first thing to say
    cards = cards_of(items)
    if len(items) < minimum.answers or cards < minimum.cards:
        raise NotEnoughHistory(
            f"need at least {minimum.answers} answers on {minimum.cards} cards, "
            f"each on a later day than the card's previous answer; "
            f"there are {len(items)} on {cards}"
        )
    train, held_out = split_in_time(items)
    parameters = fit(train)
    scores = score(parameters, held_out)
    defaults = score(DEFAULTS, held_out)
    previous = defaults if current is None else score(current, held_out)
    return FitOutcome(
        parameters=parameters,
        answers=len(items),
        cards=cards,
        scores=scores,
        previous=previous,
        defaults=defaults,
        adopt=judge(scores, previous)
        and all(judge(scores, score(rival, held_out)) for rival in rivals),
    )


def _fsrs_items(optimizer: ModuleType, items: Sequence[TrainingItem]) -> list[object]:
    review = optimizer.FSRSReview
    item = optimizer.FSRSItem
    return [item([review(rating, days) for rating, days in entry.reviews]) for entry in items]
