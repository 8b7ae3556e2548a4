"""Anki's sync protocol (version 11), so that Anki desktop, AnkiDroid and AnkiMobile sync with
the service as they do with AnkiWeb, our database being the source of truth.

`wire` reads and writes the protocol's envelope (the `anki-sync` header, zstd bodies, the
error answers), `devices` the host keys a device signs in with, `meta` and `sessions` what a
sync knows between its requests, `download` the collection a new device gets. `routes` is the
edge: the only module here that knows Flask, serving `/sync/...` and `/msync/...` at the root.
"""
