"""The hot paths' SQL, in one home: the few statements an answer, the next card and an API
token's lookup run, each behind a typed function.

They are Core statements, built once (constructing one costs more than running it),
compiled once per dialect and run by `rawsql`'s executor on a direct connection, or on a
session's connection for every other caller. Everything else uses the ORM.

- `answers`: the answer's one read (its caller found by their token's hash if need be, and on
  PostgreSQL the balancer's due counts with it), and its writes (and undo's restore).
- `next_card`: the queue's plans and its first due, learning or new card.
- `tokens`: the API token's owner, and what the queue needs of them.
- `pacing`: the team assignments that pace a person's new cards.
- `health`: the health check's round trip.
"""
