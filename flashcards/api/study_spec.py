"""OpenAPI description of the study endpoints of `study.py` (merged by `openapi.py`).

Kept beside the views rather than in them so the views stay a screen long; every schema
matches what the views really return (the schemathesis test checks each response).
"""

from __future__ import annotations

from typing import Any

from ..storage.schema import MAX_ID
from .openapi import BODY_PROBLEMS, json_content, json_request, problems, ref

_NULLABLE_STATE = {"anyOf": [ref("CardState"), {"type": "null"}]}
_COUNT = {"type": "integer", "minimum": 0}
_SECONDS = {"type": "integer", "minimum": 0, "description": "Seconds from now."}

SCHEMAS: dict[str, Any] = {
    "CardState": {
        "type": "object",
        "description": "The caller's FSRS memory state of one card.",
        "required": [
            "state",
            "step",
            "stability",
            "difficulty",
            "due",
            "last_review",
            "reps",
            "lapses",
        ],
        "properties": {
            "state": {"type": "string", "enum": ["learning", "review", "relearning"]},
            "step": {"type": ["integer", "null"], "minimum": 0},
            "stability": {"type": "number"},
            "difficulty": {"type": "number"},
            "due": {"type": "string", "format": "date-time"},
            "last_review": {"type": ["string", "null"], "format": "date-time"},
            "reps": _COUNT,
            "lapses": _COUNT,
        },
    },
    "DeckSummary": {
        "type": "object",
        "required": [
            "slug",
            "title",
            "description",
            "locales",
            "default_locale",
            "card_count",
            "subscription",
        ],
        "properties": {
            "slug": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "locales": {"type": "array", "items": {"type": "string"}},
            "default_locale": {"type": "string"},
            "card_count": _COUNT,
            "subscription": {
                "description": "The caller's subscription, or null.",
                "anyOf": [
                    {
                        "type": "object",
                        "required": ["locale"],
                        "properties": {"locale": {"type": "string"}},
                    },
                    {"type": "null"},
                ],
            },
        },
    },
    "SubscriptionRequest": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "locale": {
                "type": "string",
                "description": "One of the deck's locales. Left out: an existing subscription "
                "keeps its locale; a new one takes the caller's UI locale if the deck has it, "
                "else the deck's default.",
            }
        },
    },
    "Subscription": {
        "type": "object",
        "required": ["deck", "locale"],
        "properties": {"deck": {"type": "string"}, "locale": {"type": "string"}},
    },
    "NextCard": {
        "type": "object",
        "required": ["card", "intervals", "counts"],
        "properties": {
            "card": {
                "type": "object",
                "required": ["id", "deck", "key", "locale", "front", "back", "explanation", "kind"],
                "properties": {
                    "id": {"type": "integer"},
                    "deck": {"type": "string"},
                    "key": {"type": "string"},
                    "locale": {"type": "string"},
                    "front": {"type": "string"},
                    "back": {"type": "string"},
                    "explanation": {"type": "string"},
                    "kind": {"type": "string", "enum": ["new", "learning", "review"]},
                },
            },
            "intervals": {
                "type": "object",
                "description": "When the card comes back for each rating: exactly what is "
                "stored if that rating is sent now.",
                "required": ["again", "hard", "good", "easy"],
                "properties": {r: _SECONDS for r in ("again", "hard", "good", "easy")},
            },
            "counts": {
                "type": "object",
                "required": ["new", "learning", "review"],
                "properties": {k: _COUNT for k in ("new", "learning", "review")},
            },
        },
    },
    "ReviewRequest": {
        "type": "object",
        "required": ["card_id", "rating", "review_id"],
        "additionalProperties": False,
        "properties": {
            "card_id": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
            "rating": {
                "anyOf": [
                    {"type": "integer", "minimum": 1, "maximum": 4},
                    {"type": "string", "enum": ["again", "hard", "good", "easy"]},
                ],
                "description": "1 again, 2 hard, 3 good, 4 easy (names in any case).",
            },
            "review_id": {
                "type": "string",
                "format": "uuid",
                "description": "Chosen by the client; sending the same answer again applies "
                "nothing twice (200). The same id for another card or rating is a 409.",
            },
            "duration_ms": {"type": "integer", "minimum": 0, "maximum": 86_400_000},
            "reviewed_at": {
                "type": "string",
                "format": "date-time",
                "description": "For answers given offline: not in the future, not before the "
                "card's last review. Default: now.",
            },
        },
    },
    "ReviewResult": {
        "type": "object",
        "required": ["review_id", "card_id", "state"],
        "properties": {
            "review_id": {"type": "string", "format": "uuid"},
            "card_id": {"type": "integer"},
            "state": ref("CardState"),
        },
    },
    "UndoRequest": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "review_id": {
                "type": "string",
                "format": "uuid",
                "description": "Undo this answer, and only while it is the latest of today: "
                "a retried request then undoes nothing more (404 once it is undone, 409 once "
                "a later answer came). Without it, the latest answer is undone.",
            },
        },
    },
    "UndoResult": {
        "type": "object",
        "required": ["review_id", "card_id", "state"],
        "properties": {
            "review_id": {"type": "string", "format": "uuid"},
            "card_id": {"type": "integer"},
            "state": {**_NULLABLE_STATE, "description": "null: the card is new again."},
        },
    },
    "CardView": {
        "type": "object",
        "required": ["card", "state"],
        "properties": {
            "card": {
                "type": "object",
                "required": [
                    "id",
                    "deck",
                    "key",
                    "locale",
                    "retired",
                    "front",
                    "back",
                    "explanation",
                    "translations",
                ],
                "properties": {
                    "id": {"type": "integer"},
                    "deck": {"type": "string"},
                    "key": {"type": "string"},
                    "locale": {"type": "string"},
                    "retired": {"type": "boolean"},
                    "front": {"type": "string"},
                    "back": {"type": "string"},
                    "explanation": {"type": "string"},
                    "translations": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "required": ["front", "back", "explanation"],
                            "properties": {
                                "front": {"type": "string"},
                                "back": {"type": "string"},
                                "explanation": {"type": "string"},
                            },
                        },
                    },
                },
            },
            "state": {**_NULLABLE_STATE, "description": "null: the card is new to the caller."},
        },
    },
}

_SLUG = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}


def _ok(description: str, schema: str) -> dict[str, Any]:
    return {"description": description, "content": json_content(ref(schema))}


PATHS: dict[str, Any] = {
    "/api/v1/decks": {
        "get": {
            "operationId": "listDecks",
            "summary": "The decks the caller can see, with their subscription.",
            "responses": {
                "200": {
                    "description": "Decks by slug.",
                    "content": json_content(
                        {
                            "type": "object",
                            "required": ["decks"],
                            "properties": {"decks": {"type": "array", "items": ref("DeckSummary")}},
                        }
                    ),
                },
                **problems(401),
            },
        }
    },
    "/api/v1/decks/{slug}": {
        "delete": {
            "operationId": "deleteDeck",
            "parameters": [_SLUG],
            "summary": "Delete a deck the caller imported, with their progress and history on "
            "it. Shipped decks cannot be deleted, nor a team's here (403).",
            "responses": {"204": {"description": "Deleted."}, **problems(401, 403, 404)},
        },
    },
    "/api/v1/decks/{slug}/subscription": {
        "put": {
            "operationId": "subscribe",
            "parameters": [_SLUG],
            "summary": "Study a deck, or change the language it is studied in.",
            "requestBody": {"required": False, "content": json_content(ref("SubscriptionRequest"))},
            "responses": {
                "200": _ok("The subscription.", "Subscription"),
                **problems(401, 404, *BODY_PROBLEMS),
            },
        },
        "delete": {
            "operationId": "unsubscribe",
            "parameters": [_SLUG],
            "summary": "Stop studying a deck; progress is kept.",
            "responses": {"204": {"description": "Unsubscribed."}, **problems(401, 404)},
        },
    },
    "/api/v1/study/next": {
        "get": {
            "operationId": "nextCard",
            "summary": "The next card due, its interval for each rating, and what is left today.",
            "parameters": [
                {
                    "name": "deck",
                    "in": "query",
                    "required": False,
                    "description": "Only this deck (a slug); 409 if the caller does not study it.",
                    "schema": {"type": "string"},
                }
            ],
            "responses": {
                "200": _ok("The next card.", "NextCard"),
                "204": {"description": "Nothing is due."},
                **problems(401, 404, 409),
            },
        }
    },
    "/api/v1/reviews": {
        "post": {
            "operationId": "postReview",
            "summary": "Answer a card. Idempotent by review_id.",
            "description": "The card's deck must be one the caller studies (subscribed to); "
            "otherwise a 409.",
            "requestBody": json_request(ref("ReviewRequest")),
            "responses": {
                "201": _ok("Answered: the card's new state.", "ReviewResult"),
                "200": _ok("This review_id was already applied: the same result.", "ReviewResult"),
                **problems(401, 404, 409, *BODY_PROBLEMS),
            },
        }
    },
    "/api/v1/reviews/undo": {
        "post": {
            "operationId": "undoReview",
            "summary": "Undo the caller's latest answer of today, restoring the state before it.",
            "requestBody": {"required": False, "content": json_content(ref("UndoRequest"))},
            "responses": {
                "200": _ok("Undone: the card's restored state.", "UndoResult"),
                **problems(401, 404, 409, *BODY_PROBLEMS),
            },
        }
    },
    "/api/v1/cards/{card_id}": {
        "get": {
            "operationId": "getCard",
            "summary": "A card in every language, and the caller's state on it.",
            "parameters": [
                {
                    "name": "card_id",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "integer", "minimum": 1},
                }
            ],
            "responses": {"200": _ok("The card.", "CardView"), **problems(401, 404)},
        }
    },
}
