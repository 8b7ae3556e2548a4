"""Storage: the schema's base and column types, the engine, SQLite's writer queue and
checkpointer, and the retry policy. No Flask here: the CLI and the tests use it too."""
