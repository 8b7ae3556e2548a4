"""Spaced repetition for one person: FSRS scheduling, the due queue, answers and undo,
study days, statistics, settings and which decks a person studies. Plain Python, no Flask.
"""
