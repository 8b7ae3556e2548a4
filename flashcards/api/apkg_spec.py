"""OpenAPI description of the Anki package endpoints of `apkg.py` (merged by `openapi.py`)."""

from __future__ import annotations

from typing import Any

from .openapi import json_content, problems, ref

_BINARY = {"type": "string", "format": "binary"}
_COUNT = {"type": "integer", "minimum": 0}
_FLAG = {"type": "boolean", "default": False}

SCHEMAS: dict[str, Any] = {
    "ImportReport": {
        "type": "object",
        "description": "What an .apkg import created: a new deck owned by the caller, who is "
        "subscribed to it.",
        "required": [
            "deck",
            "cards",
            "texts",
            "review_states",
            "review_logs",
            "media_left_out",
            "formatting_simplified",
            "suspended_made_active",
            "cloze_notes",
            "skipped",
            "tags",
            "messages",
        ],
        "properties": {
            "deck": {
                "type": "object",
                "required": ["slug", "title", "default_locale"],
                "properties": {
                    "slug": {"type": "string"},
                    "title": {"type": "string"},
                    "default_locale": {"type": "string"},
                },
            },
            "cards": {**_COUNT, "description": "Cards created (a card has one text per language)."},
            "texts": {**_COUNT, "description": "Notes imported: one per card and language."},
            "review_states": {**_COUNT, "description": "Cards with progress (with_scheduling)."},
            "review_logs": {**_COUNT, "description": "Answers taken from Anki's review log."},
            "media_left_out": {**_COUNT, "description": "Media files not imported."},
            "formatting_simplified": {
                **_COUNT,
                "description": "Notes whose HTML formatting was reduced to plain text.",
            },
            "suspended_made_active": {
                **_COUNT,
                "description": "Cards suspended in Anki, imported as active (cards here "
                "cannot be suspended).",
            },
            "cloze_notes": {
                **_COUNT,
                "description": "Cloze notes, each made into a question-and-answer card per "
                "deletion number.",
            },
            "skipped": {
                "type": "object",
                "additionalProperties": _COUNT,
                "description": "Notes left out, by reason: empty_front, duplicate, no_notetype, "
                "too_many_deletions, too_long.",
            },
            "tags": {**_COUNT, "description": "Cards that kept tags from their Anki notes."},
            "messages": {
                "type": "array",
                "items": {"type": "string"},
                "description": "What was left out or changed, e.g. notes skipped and why.",
            },
        },
    },
}


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema,
    }


_COUNT_HEADER = {"schema": {"type": "integer", "minimum": 0}}

PATHS: dict[str, Any] = {
    "/api/v1/decks/{slug}/export.apkg": {
        "get": {
            "operationId": "exportDeckApkg",
            "summary": "A deck as an Anki package (.apkg), optionally with the caller's progress.",
            "description": "One language (`locale`; default: the one the caller studies the deck "
            "in, else their UI language if the deck has it, else the deck's default) as "
            "one Anki deck, or "
            "every language (`all_locales=true`) as one subdeck each. With "
            "`with_scheduling=true` the caller's own review state and log go along; import "
            "it in Anki with 'Import any learning progress'.",
            "parameters": [
                {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}},
                _query("locale", {"type": "string"}, "One of the deck's locales."),
                _query("all_locales", _FLAG, "Every language, one subdeck each."),
                _query("with_scheduling", _FLAG, "Include the caller's progress."),
            ],
            "responses": {
                "200": {
                    "description": "The package, as an attachment.",
                    "headers": {
                        "Content-Disposition": {"schema": {"type": "string"}},
                        "X-Notes": {**_COUNT_HEADER, "description": "Notes in the package."},
                        "X-Reviews": {**_COUNT_HEADER, "description": "Review log rows in it."},
                    },
                    "content": {"application/octet-stream": {"schema": _BINARY}},
                },
                **problems(401, 404, 422),
            },
        }
    },
    "/api/v1/imports": {
        "post": {
            "operationId": "importApkg",
            "summary": "Create a deck from an Anki package (.apkg, old or new format).",
            "description": "The package is the raw request body, or the field `file` of a "
            "multipart form; its size limit is the server's FLASHCARDS_APKG_MAX_BYTES (64 MiB "
            "by default), not the limit of JSON bodies. The new deck is owned by the caller, "
            "who is subscribed to it. A package that cannot be read is refused with 422 and "
            "nothing is written.",
            "parameters": [
                _query(
                    "slug",
                    {"type": "string"},
                    "The new deck's name in URLs, after the caller's own prefix `user<id>-` "
                    "(default: from its Anki name).",
                ),
                _query("locale", {"type": "string"}, "Language of the notes (default: yours)."),
                _query("with_scheduling", _FLAG, "Keep Anki's progress as the caller's."),
            ],
            "requestBody": {
                "required": True,
                "content": {
                    "application/octet-stream": {"schema": _BINARY},
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "required": ["file"],
                            "properties": {"file": _BINARY},
                        },
                        "encoding": {"file": {"contentType": "application/octet-stream"}},
                    },
                },
            },
            "responses": {
                "201": {"description": "Imported.", "content": json_content(ref("ImportReport"))},
                **problems(401, 404, 409, 413, 415, 422),
            },
        }
    },
}
