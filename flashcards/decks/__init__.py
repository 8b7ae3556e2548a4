"""Deck content: the deck file format, the seed quiz format, and syncing files into the database."""
