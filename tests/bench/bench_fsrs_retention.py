"""Benchmark: the desired-retention view's simulation (`optimizer.retention.simulate`).

Not collected by default; run with
    .venv/bin/python -m pytest tests/bench/bench_fsrs_retention.py -s -o addopts=""
Timed: the 28 retentions (0.70-0.97) of the largest collection simulated as is
(`SIMULATED_CARDS` cards, 20 new a day, a year), uncached, against a baseline measured in the
same run: one `fsrs_rs_python.simulate` of that collection at 0.90. The view costs about 28
baselines once per parameter set and collection, then a cache lookup.
"""

from __future__ import annotations

import os
import time

from flashcards.optimizer import retention
from flashcards.optimizer.fit import DEFAULTS, load_optimizer

TARGET_SECONDS = 2.0  # the first view of a page, on 2 shared cores
ENFORCE = os.environ.get("BENCH_ENFORCE") == "1"


def test_retention_view_cost() -> None:
    optimizer = load_optimizer()
    config = optimizer.default_simulator_config()
    config.deck_size = retention.SIMULATED_CARDS
    config.learn_limit = 20
    config.learn_span = retention.SIMULATED_DAYS
    config.max_cost_perday = 1e9
    start = time.perf_counter()
    optimizer.simulate(list(DEFAULTS), 0.9, config, retention.SEED)
    baseline = time.perf_counter() - start

    retention.simulate.cache_clear()
    start = time.perf_counter()
    retention.simulate(DEFAULTS, retention.SIMULATED_CARDS, 20)
    uncached = time.perf_counter() - start
    start = time.perf_counter()
    retention.simulate(DEFAULTS, retention.SIMULATED_CARDS, 20)
    cached = time.perf_counter() - start
    verdict = "met" if uncached <= TARGET_SECONDS else "MISSED"
    print(
        f"\nretention view: one simulate {baseline * 1000:.0f} ms (baseline); "
        f"{len(retention.RETENTIONS)} retentions uncached {uncached:.2f} s "
        f"({uncached / baseline:.1f}x baseline; target <= {TARGET_SECONDS:.0f} s: {verdict}); "
        f"cached {cached * 1e6:.1f} us"
    )
    if ENFORCE:
        assert uncached <= TARGET_SECONDS
