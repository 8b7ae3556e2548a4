"""How secrets handed out (API tokens, browser session ids, Anki host keys, invitation and
reset links) are stored: as their SHA-256, so a copy of the database opens nothing."""

from __future__ import annotations

import hashlib


def token_hash(token: str) -> str:
    # surrogatepass: a presented token is untrusted text, and hashing it must not raise.
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
