"""The OpenAPI description of the teams API (flashcards/api/teams.py)."""

from __future__ import annotations

from typing import Any

from .openapi import BODY_PROBLEMS, json_content, json_request, problems, ref
from .teams import MAX_UPLOAD

_STR = {"type": "string"}
_DATE = {"type": ["string", "null"], "format": "date"}
_TEAM_ID = {"name": "team_id", "in": "path", "required": True, "schema": {"type": "integer"}}


def _path_param(name: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": schema or _STR}


def _op(
    operation_id: str,
    summary: str,
    ok: str,
    schema: dict[str, Any] | None,
    *statuses: int,
    body: dict[str, Any] | None = None,
    params: tuple[dict[str, Any], ...] = (_TEAM_ID,),
    optional_body: bool = False,
) -> dict[str, Any]:
    response: dict[str, Any] = {"description": summary}
    if schema is not None:
        response["content"] = json_content(schema)
    all_statuses = {401, *statuses, *(BODY_PROBLEMS if body else ())}
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "tags": ["teams"],
        "parameters": list(params),
        "responses": {ok: response, **problems(*sorted(all_statuses))},
    }
    if body is not None:
        operation["requestBody"] = json_request(body)
        if optional_body:
            operation["requestBody"]["required"] = False
    return operation


def _obj(required: list[str], props: dict[str, Any], closed: bool = True) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "required": required, "properties": props}
    if closed:
        schema["additionalProperties"] = False
    return schema


def _list(key: str, item: str) -> dict[str, Any]:
    return _obj([key], {key: {"type": "array", "items": ref(item)}}, closed=False)


_UPLOAD = _obj(
    ["format", "content", "locale"],
    {
        "format": {"enum": ["quiz", "csv"]},
        "content": {"type": "string", "maxLength": MAX_UPLOAD},
        "locale": {"type": "string", "maxLength": 16},
        "title": {"type": "string", "maxLength": 200},
    },
)
_SLUG = _path_param("slug")
_T = "/api/v1/teams/{team_id}"

SCHEMAS: dict[str, Any] = {
    "Team": _obj(
        ["id", "name", "role", "created_at"],
        {
            "id": {"type": "integer"},
            "name": _STR,
            "role": {"enum": ["owner", "manager", "member"]},
            "created_at": {"type": "string", "format": "date-time"},
        },
        closed=False,
    ),
    "TeamMember": _obj(
        ["user_id", "email", "role", "joined_at", "mixed_script"],
        {
            "user_id": {"type": "integer"},
            "email": _STR,
            "display_name": _STR,
            "mixed_script": {
                "type": "boolean",
                "description": "The name or email has a word mixing scripts (a Latin name "
                "with a Cyrillic letter) or an invisible character: it may imitate another "
                "member's.",
            },
            "role": _STR,
        },
        closed=False,
    ),
    "TeamRemoval": _obj(
        ["user_id", "email", "removed_at"],
        {
            "user_id": {"type": "integer"},
            "email": _STR,
            "display_name": _STR,
            "removed_at": {"type": "string", "format": "date-time"},
        },
        closed=False,
    ),
    "TeamInvitation": _obj(
        ["id", "expires_at", "uses", "state"],
        {
            "id": {"type": "integer"},
            "label": {"type": "string", "description": "The lead's name for the link."},
            "expires_at": {"type": "string", "format": "date-time"},
            "max_uses": {"type": ["integer", "null"]},
            "uses": {"type": "integer"},
            "state": {"enum": ["active", "expired", "used_up", "revoked"]},
            "token": {"type": "string", "description": "Only when created; never stored."},
        },
        closed=False,
    ),
    "TeamAssignment": _obj(
        ["deck", "due_date", "total", "introduced", "status"],
        {
            "deck": _STR,
            "due_date": _DATE,
            "total": {"type": "integer"},
            "introduced": {"type": "integer"},
            "new_per_day": {"type": ["integer", "null"]},
            "status": {"enum": ["done", "no_due_date", "on_track", "behind"]},
        },
        closed=False,
    ),
    "TeamDeck": _obj(["slug", "title", "locales", "card_count"], {}, closed=False),
    "TeamDeckCards": _obj(["slug", "default_locale", "locales"], {}, closed=False),
    "TeamDeckSync": _obj(["deck", "added", "updated", "retired"], {}, closed=False),
    "TeamMemberProgress": _obj(
        ["user_id", "email", "introduced", "total", "in_review", "predicted_recall"],
        {"predicted_recall": {"type": ["number", "null"]}},
        closed=False,
    ),
    "TeamHardCard": _obj(
        ["card_id", "deck", "key", "answers", "again_share", "mean_difficulty"],
        {"again_share": {"type": "number"}, "mean_difficulty": {"type": ["number", "null"]}},
        closed=False,
    ),
}

_NAME = _obj(
    ["name"], {"name": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": "\\S"}}
)
_MEMBER = (_TEAM_ID, _path_param("member_id", {"type": "integer"}))

PATHS: dict[str, Any] = {
    "/api/v1/teams": {
        "get": _op("listTeams", "The caller's teams.", "200", _list("teams", "Team"), params=()),
        "post": _op(
            "createTeam",
            "Create a team; the caller owns it.",
            "201",
            ref("Team"),
            body=_NAME,
            params=(),
        ),
    },
    "/api/v1/teams/join": {
        "post": _op(
            "joinTeam",
            "Join through an invitation token; 403 for someone a lead removed from the team "
            "and has not let back.",
            "200",
            ref("Team"),
            403,
            404,
            body=_obj(["token"], {"token": {"type": "string", "maxLength": 200}}),
            params=(),
        ),
    },
    _T: {
        "get": _op("getTeam", "A team the caller is in.", "200", ref("Team"), 404),
        "patch": _op(
            "renameTeam", "Rename (owner, manager).", "200", ref("Team"), 403, 404, body=_NAME
        ),
        "delete": _op(
            "deleteTeam",
            "Delete the team (owner); shipped-deck history stays.",
            "204",
            None,
            403,
            404,
        ),
    },
    f"{_T}/members": {
        "get": _op(
            "listTeamMembers",
            "Members (owner, manager).",
            "200",
            _list("members", "TeamMember"),
            403,
            404,
        ),
    },
    f"{_T}/members/{{member_id}}": {
        "patch": _op(
            "changeTeamRole",
            "Make a member a manager or back (owner).",
            "200",
            {"type": "object"},
            403,
            404,
            409,
            body=_obj(["role"], {"role": {"enum": ["manager", "member"]}}),
            params=_MEMBER,
        ),
        "delete": _op(
            "removeTeamMember",
            "Remove a member; their history stays.",
            "204",
            None,
            403,
            404,
            409,
            params=_MEMBER,
        ),
    },
    f"{_T}/removals": {
        "get": _op(
            "listTeamRemovals",
            "People removed and not let back yet (owner, manager).",
            "200",
            _list("removals", "TeamRemoval"),
            403,
            404,
        ),
    },
    f"{_T}/removals/{{member_id}}": {
        "delete": _op(
            "allowBackToTeam",
            "Let someone removed join again with a link (owner, manager).",
            "204",
            None,
            403,
            404,
            params=_MEMBER,
        ),
    },
    f"{_T}/membership": {
        "delete": _op("leaveTeam", "Leave the team (not the owner).", "204", None, 404, 409),
    },
    f"{_T}/transfer": {
        "post": _op(
            "transferTeam",
            "Hand ownership to a member (owner).",
            "200",
            {"type": "object"},
            403,
            404,
            409,
            body=_obj(["user_id"], {"user_id": {"type": "integer", "minimum": 1}}),
        ),
    },
    f"{_T}/invitations": {
        "get": _op(
            "listTeamInvitations",
            "Invitation links (owner, manager).",
            "200",
            _list("invitations", "TeamInvitation"),
            403,
            404,
        ),
        "post": _op(
            "createTeamInvitation",
            "A new link; its token is shown once.",
            "201",
            ref("TeamInvitation"),
            403,
            404,
            optional_body=True,
            body=_obj(
                [],
                {
                    "expires_in_hours": {"type": "integer", "minimum": 1, "maximum": 2160},
                    "max_uses": {"type": "integer", "minimum": 1, "maximum": 10000},
                    "label": {"type": "string", "maxLength": 100},
                },
            ),
        ),
    },
    f"{_T}/invitations/{{invitation_id}}": {
        "delete": _op(
            "revokeTeamInvitation",
            "Revoke a link.",
            "204",
            None,
            403,
            404,
            params=(_TEAM_ID, _path_param("invitation_id", {"type": "integer"})),
        ),
    },
    f"{_T}/assignments": {
        "get": _op(
            "listTeamAssignments",
            "Assigned decks with the caller's own progress.",
            "200",
            _list("assignments", "TeamAssignment"),
            404,
        ),
    },
    f"{_T}/assignments/{{slug}}": {
        "put": _op(
            "assignTeamDeck",
            "Assign a deck (owner, manager); members are subscribed.",
            "200",
            {"type": "object"},
            403,
            404,
            optional_body=True,
            body=_obj([], {"due_date": _DATE}),
            params=(_TEAM_ID, _SLUG),
        ),
        "delete": _op(
            "unassignTeamDeck",
            "End an assignment.",
            "204",
            None,
            403,
            404,
            params=(_TEAM_ID, _SLUG),
        ),
    },
    f"{_T}/decks": {
        "get": _op(
            "listTeamDecks", "The team's own decks.", "200", _list("decks", "TeamDeck"), 404
        ),
        "post": _op(
            "createTeamDeck",
            "Upload a quiz text or CSV as a new team deck.",
            "201",
            ref("TeamDeckSync"),
            403,
            404,
            409,
            body=_UPLOAD,
        ),
    },
    f"{_T}/decks/{{slug}}": {
        "get": _op(
            "getTeamDeck",
            "A team deck's cards in every language.",
            "200",
            ref("TeamDeckCards"),
            404,
            params=(_TEAM_ID, _SLUG),
        ),
        "delete": _op(
            "deleteTeamDeck",
            "Delete a team deck and progress on it.",
            "204",
            None,
            403,
            404,
            params=(_TEAM_ID, _SLUG),
        ),
    },
    f"{_T}/decks/{{slug}}/source": {
        "put": _op(
            "uploadTeamDeckLocale",
            "Replace or add one language; progress is kept.",
            "200",
            ref("TeamDeckSync"),
            403,
            404,
            409,
            body=_UPLOAD,
            params=(_TEAM_ID, _SLUG),
        ),
    },
    f"{_T}/decks/{{slug}}/cards/{{key}}": {
        "put": _op(
            "setTeamCard",
            "Edit or add a card; progress is kept. A retired card is not edited (409).",
            "200",
            ref("TeamDeckSync"),
            403,
            404,
            409,
            body=_obj(
                ["locale", "front", "back"],
                {
                    "locale": {"type": "string", "maxLength": 16},
                    "front": {"type": "string", "maxLength": 20000},
                    "back": {"type": "string", "maxLength": 20000},
                    "explanation": {"type": "string", "maxLength": 20000},
                },
            ),
            params=(_TEAM_ID, _SLUG, _path_param("key")),
        ),
        "delete": _op(
            "retireTeamCard",
            "Retire a card (history kept).",
            "204",
            None,
            403,
            404,
            409,
            params=(_TEAM_ID, _SLUG, _path_param("key")),
        ),
    },
    f"{_T}/dashboard": {
        "get": _op(
            "teamDashboard",
            "Each member's progress (owner, manager).",
            "200",
            _list("members", "TeamMemberProgress"),
            403,
            404,
        ),
    },
    f"{_T}/dashboard.csv": {
        "get": {
            **_op("teamDashboardCsv", "The member table as CSV.", "200", None, 403, 404),
        },
    },
    f"{_T}/hardest": {
        "get": _op(
            "teamHardestCards",
            "Cards by share of Again answers, then difficulty.",
            "200",
            _list("cards", "TeamHardCard"),
            403,
            404,
            422,
            params=(
                _TEAM_ID,
                {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                {"name": "deck", "in": "query", "schema": _STR},
            ),
        ),
    },
}
PATHS[f"{_T}/dashboard.csv"]["get"]["responses"]["200"]["content"] = {
    "text/csv": {"schema": {"type": "string"}}
}
_ASSIGN = PATHS[f"{_T}/assignments/{{slug}}"]["put"]["responses"]
_ASSIGN["201"] = {**_ASSIGN["200"], "description": "Assigned for the first time."}
