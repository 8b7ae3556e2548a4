"""Team pages: create a team, invite by link, join, roles, assignments, dashboard, team decks;
and what a plain member or an outsider gets (403/404 pages, never the data)."""

from __future__ import annotations

import html
import io
import re
from datetime import date, timedelta

from babel.dates import format_date
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Engine, func, select

from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CardText,
    Deck,
    ReviewLog,
    Subscription,
    Team,
    TeamAssignment,
    TeamInvitation,
    TeamMember,
    User,
)
from flashcards.storage.schema import utcnow

from .conftest import SEEDS
from .web_helpers import PASSWORD, answer_shown_card, csrf, sign_up

SLUG = "eks-model-training"
KOREAN_SEED = SEEDS / "004_3c77d9b94ee3fd70.txt"
OPS_CSV = "front,back,key\nWhat is a pod?,The smallest unit,pod\nWhat is a node?,A machine,node\n"
LINK_RE = re.compile(r'<code id="new-link">[^<]*/join#([A-Za-z0-9_-]+)</code>')


def _post(client: FlaskClient, path: str, data: dict[str, str] | None = None, page: str = "/teams"):  # type: ignore[no-untyped-def]
    return client.post(path, data={"csrf_token": csrf(client, page), **(data or {})})


def _open(client: FlaskClient, token: str):  # type: ignore[no-untyped-def]
    """Opens an invitation link as the join page's script does: posts the token, then follows."""
    response = _post(client, "/join", {"invitation": f"http://localhost/join#{token}"}, "/join")
    if response.status_code != 303:
        return response
    assert response.headers["Location"] == "/join"
    return client.get("/join")


def _join(client: FlaskClient, token: str):  # type: ignore[no-untyped-def]
    assert _open(client, token).status_code == 200
    return _post(client, "/join/confirm", {"token": token}, "/join")


def _new_team(client: FlaskClient, name: str = "Platform") -> int:
    response = _post(client, "/teams", {"name": name})
    assert response.status_code == 303
    match = re.search(r"/teams/(\d+)$", response.headers["Location"])
    assert match
    return int(match[1])


def test_an_invitation_link_out_of_range_is_refused(app: Flask, loaded_engine: Engine) -> None:
    lead, _member, _outsider = _people(app)
    team = _new_team(lead)
    for days in ("0", "91", "10000000000", "-10000000000", "seven"):
        response = _post(lead, f"/teams/{team}/invitations", {"days": days}, f"/teams/{team}")
        assert response.status_code == 303, days  # back to the team page with a message
        page = lead.get(f"/teams/{team}").get_data(as_text=True)
        assert "A link lasts 1 to 90 days" in page, days
        assert not LINK_RE.search(page)
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(TeamInvitation)) == 0


def test_an_invitation_link_can_be_labelled(app: Flask, loaded_engine: Engine) -> None:
    lead, _member, _outsider = _people(app)
    team = _new_team(lead)
    response = _post(lead, f"/teams/{team}/invitations", {"days": "7", "label": "<b>March</b>"})
    assert response.status_code == 201
    page = response.get_data(as_text=True)
    assert "<td>&lt;b&gt;March&lt;/b&gt;</td>" in page  # listed, escaped
    response = _post(lead, f"/teams/{team}/invitations", {"days": "7", "label": "x" * 101})
    assert response.status_code == 303
    page = lead.get(f"/teams/{team}").get_data(as_text=True)
    assert "A label may have at most 100 characters and no control characters." in page
    with transaction(loaded_engine) as s:
        assert s.scalars(select(TeamInvitation.label)).all() == ["<b>March</b>"]


NEXT_RE = re.compile(r'name="next" value="([^"]*)"')


def test_switching_language_on_the_page_a_form_answered_comes_back_to_the_form_page(
    app: Flask, loaded_engine: Engine
) -> None:
    lead, _member, _outsider = _people(app)
    team = _new_team(lead)
    created = lead.post(
        f"/teams/{team}/invitations",
        data={"csrf_token": csrf(lead, f"/teams/{team}"), "days": "7"},
        headers={"Referer": f"http://localhost/teams/{team}"},
    )
    assert created.status_code == 201
    page = created.get_data(as_text=True)
    # Not the POST-only route this page answered, whose GET is a 405.
    assert NEXT_RE.findall(page) == [f"/teams/{team}"]
    switched = lead.post(
        "/language", data={"csrf_token": csrf(lead, "/"), "locale": "es", "next": f"/teams/{team}"}
    )
    assert switched.location == f"/teams/{team}"
    shown = lead.get(switched.location)
    assert shown.status_code == 200 and '<html lang="es">' in shown.get_data(as_text=True)
    # A referrer from elsewhere (or none) is not followed: the library instead.
    elsewhere = lead.post(
        f"/teams/{team}/invitations",
        data={"csrf_token": csrf(lead, f"/teams/{team}"), "days": "7"},
        headers={"Referer": "https://evil.example/teams/1"},
    )
    assert NEXT_RE.findall(elsewhere.get_data(as_text=True)) == ["/"]


def _invite(client: FlaskClient, team: int, **form: str) -> str:
    response = _post(client, f"/teams/{team}/invitations", {"days": "7", **form})
    assert response.status_code == 201
    match = LINK_RE.search(response.get_data(as_text=True))
    assert match
    return match[1]


def _user_id(engine: Engine, email: str) -> int:
    with transaction(engine) as s:
        found = s.scalar(select(User.id).where(User.email == email))
        assert found is not None
        return found


def _people(app: Flask) -> tuple[FlaskClient, FlaskClient, FlaskClient]:
    lead, member, outsider = app.test_client(), app.test_client(), app.test_client()
    sign_up(lead, "lead@example.com")
    sign_up(member, "mia@example.com", language="es")
    sign_up(outsider, "otto@example.com", language="ko")
    return lead, member, outsider


def test_create_invite_join_and_assign(app: Flask, loaded_engine: Engine) -> None:
    lead, member, outsider = _people(app)
    team = _new_team(lead)
    assert "Platform" in lead.get("/teams").get_data(as_text=True)
    token = _invite(lead, team, max_uses="2")

    page = _open(member, token)
    assert page.status_code == 200 and "Platform" in page.get_data(as_text=True)
    response = _post(member, "/join/confirm", {"token": token}, "/join")
    assert response.status_code == 303 and response.headers["Location"].endswith(f"/teams/{team}")
    team_page = member.get(f"/teams/{team}").get_data(as_text=True)
    assert "Platform" in team_page
    # A plain member sees neither the member list nor the invitation links.
    assert "lead@example.com" not in team_page and "/invitations" not in team_page

    due = (utcnow() + timedelta(days=10)).date().isoformat()
    response = _post(
        lead, f"/teams/{team}/assignments", {"deck": SLUG, "due_date": due}, f"/teams/{team}"
    )
    assert response.status_code == 303
    mine = member.get(f"/teams/{team}").get_data(as_text=True)
    assert "Cuestionario sobre entrenamiento" in mine  # the deck's title in her language
    assert "0 de 15" in mine or "0 / 15" in mine or "de 15 tarjetas" in mine
    with transaction(loaded_engine) as s:
        sub = s.scalars(
            select(Subscription).where(
                Subscription.user_id == _user_id(loaded_engine, "mia@example.com")
            )
        ).one()
        assert sub.locale == "es"
        assert sub.paced_new_per_day is not None  # paced by the due date
    # Her library says the deck is the team's assignment, when it is due, and how she is doing.
    library = member.get("/").get_data(as_text=True)
    line = re.search(r'<p class="meta assigned">(.*?)</p>', library, re.S)
    assert line, library
    said = re.sub(r"<[^>]+>", "", line[1])
    day = format_date(date.fromisoformat(due), "medium", locale="es")
    assert " ".join(said.split()) == f"Asignado por Platform, para el {day} · Al día"
    assert f'href="/teams/{team}"' in line[1]
    assert "Platform" not in outsider.get("/").get_data(as_text=True)  # no team of theirs

    lead_page = lead.get(f"/teams/{team}").get_data(as_text=True)
    assert "mia@example.com" in lead_page and "1 of 2" in lead_page
    # Another team's people learn nothing.
    assert outsider.get(f"/teams/{team}").status_code == 404
    assert "Platform" not in outsider.get("/teams").get_data(as_text=True)


def _link_for_a_signed_out_member(app: Flask) -> tuple[FlaskClient, int, str]:
    """Mia, who has an account but is signed out, a team, and its invitation's token."""
    lead, member, _outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team)
    member.post("/signout", data={"csrf_token": csrf(member, "/")})
    return member, team, token


def test_a_link_opened_signed_out_comes_back_after_sign_in(
    app: Flask, loaded_engine: Engine
) -> None:
    member, team, token = _link_for_a_signed_out_member(app)
    response = _post(member, "/join", {"invitation": f"https://x.example/join#{token}"}, "/join")
    assert response.status_code == 303 and response.location == "/signin?next=/join"
    page = member.get(response.location).get_data(as_text=True)
    assert "Inicia sesión o crea una cuenta para unirte a «Platform»." in page
    form = {"csrf_token": csrf(member, "/signin?next=/join"), "next": "/join",
            "email": "mia@example.com", "password": PASSWORD}  # fmt: skip
    response = member.post("/signin", data=form)
    assert response.status_code == 302 and response.location == "/join"
    page = member.get("/join").get_data(as_text=True)
    assert "Platform" in page and f'value="{token}"' in page  # the confirmation
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(TeamMember)) == 1  # asked first
    response = _post(member, "/join/confirm", {"token": token}, "/join")
    assert response.status_code == 303 and response.location == f"/teams/{team}"
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(TeamMember)) == 2
    # Done with: the join page no longer offers it.
    assert "Platform" not in member.get("/join").get_data(as_text=True)


def test_a_dead_link_opened_signed_out_is_not_kept(app: Flask, loaded_engine: Engine) -> None:
    lead, _member, _outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team, max_uses="1")
    visitor = app.test_client()
    for pasted in ("not a link", f"/join#{token}x", "#"):
        response = _post(visitor, "/join", {"invitation": pasted}, "/join")
        assert response.status_code == 404, pasted
        assert "This link does not work" in response.get_data(as_text=True)
    sign_up(visitor, "vic@example.com")
    assert "Platform" not in visitor.get("/join").get_data(as_text=True)
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(TeamMember)) == 1


def test_the_link_opened_last_is_the_one_confirmed(app: Flask, loaded_engine: Engine) -> None:
    lead, member, _outsider = _people(app)
    alpha, beta = _new_team(lead, "Alpha"), _new_team(lead, "Beta")
    alpha_token, beta_token = _invite(lead, alpha), _invite(lead, beta)
    page = _open(member, alpha_token).get_data(as_text=True)
    assert "Alpha" in page and "mia@example.com" in page  # who is about to join
    # The confirmation keeps the form the page's script posts a newly opened link with,
    # folded under the Join button, which is what the page is for.
    assert "data-invitation" in page
    assert page.index('class="other-invitation"') > page.index('action="/join/confirm"')
    page = _open(member, beta_token).get_data(as_text=True)
    assert "Beta" in page and "Alpha" not in page
    response = _post(member, "/join/confirm", {"token": beta_token}, "/join")
    assert response.location == f"/teams/{beta}"
    with transaction(loaded_engine) as s:
        teams = s.scalars(
            select(TeamMember.team_id).where(
                TeamMember.user_id == _user_id(loaded_engine, "mia@example.com")
            )
        ).all()
        assert teams == [beta]


def test_a_members_own_link_asks_nothing(app: Flask, loaded_engine: Engine) -> None:
    lead, member, _outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team, max_uses="1")
    page = _open(lead, token)  # the owner opens their own team's link
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "You are already in this team." in text
    assert 'action="/join/confirm"' not in text and f'href="/teams/{team}"' in text
    assert _join(member, token).status_code == 303  # the one use
    # Used up now, but not for someone in the team already: still no "does not work".
    page = _open(member, token)
    assert page.status_code == 200 and "Ya estás en este equipo." in page.get_data(as_text=True)
    response = _post(member, "/join/confirm", {"token": token}, "/join")
    assert response.status_code == 303
    assert "Ya estás en este equipo." in member.get(response.location).get_data(as_text=True)
    with transaction(loaded_engine) as s:
        assert s.scalar(select(TeamInvitation.uses)) == 1


def test_older_links_and_links_that_stop_working_on_the_way(
    app: Flask, loaded_engine: Engine
) -> None:
    lead, member, _outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team)
    # The form links had before the token moved to the fragment: no route takes the token in
    # its path (access logs keep paths), but pasted into the join page it still works.
    assert member.get(f"/join/{token}").status_code == 404
    assert "Platform" not in member.get("/join").get_data(as_text=True)  # nothing pending
    page = _post(member, "/join", {"invitation": f"http://localhost/join/{token}"}, "/join")
    assert page.status_code == 303 and page.location == "/join"
    assert _open(member, token).status_code == 200
    # Revoked while the confirmation is open: the join page says so, not a bare 404 page.
    page = lead.get(f"/teams/{team}").get_data(as_text=True)
    invitation = re.findall(rf'action="/teams/{team}/invitations/(\d+)/revoke"', page)[0]
    _post(lead, f"/teams/{team}/invitations/{invitation}/revoke", page=f"/teams/{team}")
    response = _post(member, "/join/confirm", {"token": token}, "/join")
    assert response.status_code == 404
    assert "Este enlace no funciona" in response.get_data(as_text=True)
    assert "Platform" not in member.get("/join").get_data(as_text=True)  # nothing pending


def test_signing_in_from_the_menu_still_comes_back_to_the_invitation(
    app: Flask, loaded_engine: Engine
) -> None:
    member, _team, token = _link_for_a_signed_out_member(app)
    _post(member, "/join", {"invitation": token}, "/join")
    form = {"csrf_token": csrf(member, "/signin"), "email": "mia@example.com",
            "password": PASSWORD}  # fmt: skip
    response = member.post("/signin", data=form)  # no next: the plain sign-in page
    assert response.status_code == 302 and response.location == "/join"


def test_revoked_expired_and_used_up_links_do_not_work(app: Flask, loaded_engine: Engine) -> None:
    lead, member, outsider = _people(app)
    team = _new_team(lead)
    once = _invite(lead, team, max_uses="1")
    assert _join(member, once).status_code == 303
    assert _open(outsider, once).status_code == 404
    assert _post(outsider, "/join/confirm", {"token": once}).status_code == 404

    revoked = _invite(lead, team)
    page = lead.get(f"/teams/{team}").get_data(as_text=True)
    ids = re.findall(rf'action="/teams/{team}/invitations/(\d+)/revoke"', page)
    assert len(ids) == 1  # the used-up link has no revoke button
    assert (
        _post(lead, f"/teams/{team}/invitations/{ids[0]}/revoke", page=f"/teams/{team}").status_code
        == 303
    )
    assert _open(outsider, revoked).status_code == 404
    assert _post(outsider, "/join/confirm", {"token": revoked}).status_code == 404
    assert _open(outsider, "not-a-token!").status_code == 404
    with transaction(loaded_engine) as s:
        assert (
            s.scalar(
                select(TeamMember).where(
                    TeamMember.user_id == _user_id(loaded_engine, "otto@example.com")
                )
            )
            is None
        )


def test_member_and_outsider_cannot_manage_or_see_the_dashboard(
    app: Flask, loaded_engine: Engine
) -> None:
    lead, member, outsider, team = _team_with_member(app, loaded_engine)
    lead_id = _user_id(loaded_engine, "lead@example.com")
    member_id = _user_id(loaded_engine, "mia@example.com")
    other_team = _new_team(outsider, "Elsewhere")

    for path in (f"/teams/{team}/dashboard", f"/teams/{team}/dashboard.csv"):
        assert member.get(path).status_code == 403
        # Said as what it is, in her language: not "something went wrong".
        assert "No permitido" in member.get(path).get_data(as_text=True)
        assert outsider.get(path).status_code == 404
        assert b"mia@example.com" not in member.get(path).get_data()
    writes = [
        (f"/teams/{team}/invitations", {"days": "7"}),
        (f"/teams/{team}/members/{lead_id}/remove", {}),
        (f"/teams/{team}/members/{lead_id}/role", {"role": "member"}),
        (f"/teams/{team}/members/{member_id}/owner", {}),
        (f"/teams/{team}/assignments", {"deck": SLUG}),
    ]
    for path, form in writes:
        assert _post(member, path, form).status_code == 403, path
        assert _post(outsider, path, form).status_code == 404, path
    # The lead of one team is an outsider to another, and huge ids are simply unknown.
    assert lead.get(f"/teams/{other_team}").status_code == 404
    assert _post(lead, f"/teams/{other_team}/invitations", {"days": "7"}).status_code == 404
    assert lead.get("/teams/99999999999").status_code == 404
    # Nothing changed.
    with transaction(loaded_engine) as s:
        roles = dict(
            s.execute(
                select(TeamMember.user_id, TeamMember.role).where(TeamMember.team_id == team)
            ).all()
        )
    assert roles == {lead_id: "owner", member_id: "member"}


def test_roles_transfer_and_leave(app: Flask, loaded_engine: Engine) -> None:
    lead, member, _outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team)
    _join(member, token)
    member_id = _user_id(loaded_engine, "mia@example.com")
    page = f"/teams/{team}"

    assert (
        _post(
            lead, f"/teams/{team}/members/{member_id}/role", {"role": "manager"}, page
        ).status_code
        == 303
    )
    manager_page = member.get(page).get_data(as_text=True)
    assert "lead@example.com" in manager_page  # managers see the members
    # Handing over the team, removing someone and leaving are asked once more, behind a
    # disclosure that says what they do.
    owner_page = lead.get(page).get_data(as_text=True)
    for summary, button in (("Make owner…", "Make them the owner"),
                            ("Remove…", "Remove from the team")):  # fmt: skip
        opened = owner_page.index(f'<summary class="danger">{summary}</summary>')
        assert owner_page.index(f">{button}</button>", opened) < owner_page.index(
            "</details>", opened
        )
    assert '<summary class="danger">Salir de este equipo…</summary>' in manager_page  # in Spanish
    assert member.get(f"/teams/{team}/dashboard").status_code == 200
    assert _post(lead, f"/teams/{team}/members/{member_id}/owner", {}, page).status_code == 303
    # The new owner may not leave (she is told why); the old owner, now a manager, may.
    assert _post(member, f"/teams/{team}/leave", {}, page).status_code == 303
    assert "cede el equipo" in member.get(page).get_data(as_text=True)
    with transaction(loaded_engine) as s:
        roles = dict(
            s.execute(
                select(TeamMember.user_id, TeamMember.role).where(TeamMember.team_id == team)
            ).all()
        )
    assert roles[member_id] == "owner"
    assert _post(lead, f"/teams/{team}/leave", {}, page).status_code == 303
    assert lead.get(page).status_code == 404


def test_dashboard_shows_progress_chart_and_csv(app: Flask, loaded_engine: Engine) -> None:
    lead, member, _outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team)
    _join(member, token)
    _post(lead, f"/teams/{team}/assignments", {"deck": SLUG}, f"/teams/{team}")
    answer_shown_card(member, "1")
    answer_shown_card(member, "3")
    page = lead.get(f"/teams/{team}/dashboard")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "mia@example.com" in text and "lead@example.com" in text
    assert text.count('role="group"') == 2 and 'style="' not in text  # two charts
    assert "Hardest questions" in text and "100%" in text  # the Again answer
    # The lead reads English; the questions are shown in her language and marked as such,
    # and the member's assignment title in the Spanish she studies.
    assert re.search(r'<td lang="en">[^<]+</td>', text)
    team_page = member.get(f"/teams/{team}").get_data(as_text=True)
    assert re.search(rf'<a href="/decks/{SLUG}" lang="es">[^<]+</a>', team_page)
    csv = lead.get(f"/teams/{team}/dashboard.csv")
    assert csv.status_code == 200 and csv.mimetype == "text/csv"
    lines = csv.get_data(as_text=True).splitlines()
    assert lines[0].startswith("email,") and len(lines) == 3


def test_team_deck_upload_edit_and_privacy(app: Flask, loaded_engine: Engine) -> None:
    lead, member, outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team)
    _join(member, token)
    decks = f"/teams/{team}/decks"
    bad = _post(
        lead, decks, {"format": "csv", "title": "Ops", "locale": "en", "content": "a,\n"}, decks
    )
    assert bad.status_code == 422 and "Line 1" in bad.get_data(as_text=True)
    response = _post(
        lead,
        decks,
        {"format": "csv", "title": "Ops basics", "locale": "en", "content": OPS_CSV},
        decks,
    )
    assert response.status_code == 303
    deck_page = response.headers["Location"]
    slug = deck_page.rsplit("/", 1)[-1]
    assert "What is a pod?" in member.get(deck_page).get_data(as_text=True)
    assert "<textarea" not in member.get(deck_page).get_data(as_text=True)
    # The member reads Spanish; the deck's title is English and marked so.
    assert '<h1 lang="en">Ops basics</h1>' in member.get(deck_page).get_data(as_text=True)
    assert 'lang="en">Ops basics</a>' in member.get(decks).get_data(as_text=True)
    assert outsider.get(deck_page).status_code == 404
    assert outsider.get(f"/decks/{slug}").status_code == 404

    edit = f"{deck_page}/cards/pod"
    form = {
        "locale": "en",
        "question": "What is a Pod?",
        "answer": "One or more containers",
        "explanation": "",
    }
    assert _post(member, edit, form, decks).status_code == 403
    assert _post(outsider, edit, form).status_code == 404
    assert _post(lead, edit, form, decks).status_code == 303
    assert "One or more containers" in member.get(deck_page).get_data(as_text=True)
    empty = {**form, "answer": " "}
    _post(lead, edit, empty, decks)
    assert "One or more containers" in lead.get(deck_page).get_data(as_text=True)


def test_team_forms_need_the_csrf_token(app: Flask, loaded_engine: Engine) -> None:
    lead, _member, _outsider = _people(app)
    assert lead.post("/teams", data={"name": "No token"}).status_code == 400
    assert "No token" not in lead.get("/teams").get_data(as_text=True)


def test_spanish_team_page(app: Flask, loaded_engine: Engine) -> None:
    client = app.test_client()
    sign_up(client, "es@example.com", language="es")
    team = _new_team(client, "Equipo")
    page = client.get(f"/teams/{team}").get_data(as_text=True)
    assert "Enlaces de invitación" in page and "Propietario" in page


def test_removed_member_loses_the_team_decks_but_keeps_her_history(
    app: Flask, loaded_engine: Engine
) -> None:
    lead, member, _outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team)
    _join(member, token)
    decks = f"/teams/{team}/decks"
    form = {"format": "csv", "title": "Ops basics", "locale": "es", "content": OPS_CSV}
    deck_page = _post(lead, decks, form, decks).headers["Location"]
    slug = deck_page.rsplit("/", 1)[-1]
    _post(lead, f"/teams/{team}/assignments", {"deck": slug}, f"/teams/{team}")
    _post(lead, f"/teams/{team}/assignments", {"deck": SLUG}, f"/teams/{team}")
    answer_shown_card(member, "3")
    member_id = _user_id(loaded_engine, "mia@example.com")

    page = f"/teams/{team}"
    assert _post(lead, f"/teams/{team}/members/{member_id}/remove", {}, page).status_code == 303
    assert member.get(page).status_code == 404
    assert member.get(deck_page).status_code == 404
    assert member.get(f"/decks/{slug}").status_code == 404
    members, _, removed = lead.get(page).get_data(as_text=True).partition("Removed from the team")
    assert "mia@example.com" not in members
    assert "mia@example.com" in removed  # listed apart, with "Allow back"
    with transaction(loaded_engine) as s:
        assert s.scalar(select(ReviewLog.id).where(ReviewLog.user_id == member_id)) is not None


def test_a_team_decks_one_title_is_marked_in_the_language_it_is_written_in(
    app: Flask, loaded_engine: Engine
) -> None:
    lead, member, _outsider, team = _team_with_member(app, loaded_engine)
    decks = f"/teams/{team}/decks"
    content = "front,back,key,locale\n질문 하나,답 하나,q1,ko\nPregunta uno,Respuesta uno,q1,es\n"
    form = {"format": "csv", "title": "한국어 덱", "locale": "ko", "content": content}
    response = _post(lead, decks, form, decks)
    assert response.status_code == 303
    slug = response.headers["Location"].rsplit("/", 1)[-1]
    _post(lead, f"/teams/{team}/assignments", {"deck": slug}, f"/teams/{team}")
    # The member reads Spanish, and the deck has Spanish cards; its one title is Korean.
    page = member.get(f"/decks/{slug}").get_data(as_text=True)
    assert '<h1 lang="ko">한국어 덱</h1>' in page
    assert 'lang="ko">한국어 덱</a>' in member.get("/").get_data(as_text=True)
    assert 'lang="ko">한국어 덱</a>' in member.get(f"/teams/{team}").get_data(as_text=True)


def test_team_deck_from_a_quiz_file(app: Flask, loaded_engine: Engine) -> None:
    lead = app.test_client()
    sign_up(lead, "lead@example.com", language="ko")
    team = _new_team(lead)
    decks = f"/teams/{team}/decks"
    form = {
        "csrf_token": csrf(lead, decks),
        "format": "quiz",
        "locale": "ko",
        "file": (io.BytesIO(KOREAN_SEED.read_bytes()), "quiz.txt"),
    }
    response = lead.post(decks, data=form, content_type="multipart/form-data")
    assert response.status_code == 303, response.get_data(as_text=True)
    page = lead.get(response.headers["Location"]).get_data(as_text=True)
    assert "EKS 모델 훈련 퀴즈" in page and page.count('<li value="') == 15
    listing = lead.get(decks).get_data(as_text=True)
    assert "EKS 모델 훈련 퀴즈" in listing


def _team_with_member(
    app: Flask, engine: Engine
) -> tuple[FlaskClient, FlaskClient, FlaskClient, int]:
    lead, member, outsider = _people(app)
    team = _new_team(lead)
    token = _invite(lead, team)
    _join(member, token)
    return lead, member, outsider, team


def _lead_and_member(
    app: Flask, lead_language: str, member_language: str
) -> tuple[FlaskClient, FlaskClient, int]:
    """A new team's lead and member, each reading the pages in the language given."""
    lead, member = app.test_client(), app.test_client()
    sign_up(lead, "lead@example.com", language=lead_language)
    sign_up(member, "mia@example.com", language=member_language)
    team = _new_team(lead)
    _join(member, _invite(lead, team))
    return lead, member, team


def _team_deck(lead: FlaskClient, team: int, locale: str = "en") -> str:
    decks = f"/teams/{team}/decks"
    form = {"format": "csv", "title": "Ops basics", "locale": locale, "content": OPS_CSV}
    response = _post(lead, decks, form, decks)
    assert response.status_code == 303
    return str(response.headers["Location"])


def _team_names(engine: Engine) -> list[str]:
    with transaction(engine) as s:
        return list(s.scalars(select(Team.name).order_by(Team.id)))


def _cards(engine: Engine, slug: str) -> dict[str, bool]:
    """Each card's key of the deck, and whether it is live (not retired)."""
    with transaction(engine) as s:
        rows = s.execute(
            select(Card.key, Card.retired_at)
            .join(Deck, Deck.id == Card.deck_id)
            .where(Deck.slug == slug)
        ).all()
    return {key: retired is None for key, retired in rows}


def test_rename_and_delete_a_team(app: Flask, loaded_engine: Engine) -> None:
    lead, member, outsider, team = _team_with_member(app, loaded_engine)
    page = f"/teams/{team}"
    text = lead.get(page).get_data(as_text=True)
    assert f'action="/teams/{team}/rename"' in text and f'href="/teams/{team}/delete"' in text
    mine = member.get(page).get_data(as_text=True)
    assert "/rename" not in mine and "/delete" not in mine

    for client, status in ((member, 403), (outsider, 404)):
        assert _post(client, f"{page}/rename", {"name": "Taken over"}).status_code == status
        assert client.get(f"{page}/delete").status_code == status
        assert _post(client, f"{page}/delete").status_code == status
    assert _team_names(loaded_engine) == ["Platform"]

    assert _post(lead, f"{page}/rename", {"name": "  "}, page).status_code == 303
    assert "at most 100 characters" in lead.get(page).get_data(as_text=True)
    response = _post(lead, f"{page}/rename", {"name": "  Platform   team "}, page)
    assert response.status_code == 303 and response.headers["Location"].endswith(page)
    assert _team_names(loaded_engine) == ["Platform team"]
    assert "Platform team" in member.get("/teams").get_data(as_text=True)

    # The member studies a shipped deck the team assigned, and a deck of the team's own.
    deck_page = _team_deck(lead, team)
    slug = deck_page.rsplit("/", 1)[-1]
    _post(lead, f"{page}/assignments", {"deck": SLUG}, page)
    answer_shown_card(member, "3")
    member_id = _user_id(loaded_engine, "mia@example.com")
    with transaction(loaded_engine) as s:
        history = s.scalar(select(func.count(ReviewLog.id)).where(ReviewLog.user_id == member_id))
    assert history

    confirm = lead.get(f"{page}/delete")
    assert confirm.status_code == 200
    text = confirm.get_data(as_text=True)
    assert "Platform team" in text and "2 members" in text and "1 team deck" in text
    assert f'action="/teams/{team}/delete"' in text and "<script>" not in text
    response = _post(lead, f"{page}/delete", page=f"{page}/delete")
    assert response.status_code == 303 and response.headers["Location"].endswith("/teams")
    assert "deleted" in lead.get("/teams").get_data(as_text=True)
    assert _team_names(loaded_engine) == []
    assert lead.get(page).status_code == 404 and member.get(page).status_code == 404
    assert member.get(f"/decks/{slug}").status_code == 404
    with transaction(loaded_engine) as s:
        kept = s.scalar(select(func.count(ReviewLog.id)).where(ReviewLog.user_id == member_id))
        assert s.scalar(select(func.count(Deck.id)).where(Deck.slug == slug)) == 0
    assert kept == history  # her history of the shipped deck is hers


def test_a_manager_may_rename_but_only_the_owner_deletes(app: Flask, loaded_engine: Engine) -> None:
    lead, member, _outsider, team = _team_with_member(app, loaded_engine)
    page = f"/teams/{team}"
    member_id = _user_id(loaded_engine, "mia@example.com")
    _post(lead, f"{page}/members/{member_id}/role", {"role": "manager"}, page)
    text = member.get(page).get_data(as_text=True)
    assert f'action="/teams/{team}/rename"' in text and f'href="/teams/{team}/delete"' not in text
    assert _post(member, f"{page}/rename", {"name": "Ops"}, page).status_code == 303
    assert member.get(f"{page}/delete").status_code == 403
    assert _post(member, f"{page}/delete", page=page).status_code == 403
    assert _team_names(loaded_engine) == ["Ops"]


def test_delete_a_team_deck(app: Flask, loaded_engine: Engine) -> None:
    lead, member, outsider, team = _team_with_member(app, loaded_engine)
    deck_page = _team_deck(lead, team)
    slug = deck_page.rsplit("/", 1)[-1]
    assert f'href="{deck_page}/delete"' in lead.get(deck_page).get_data(as_text=True)
    assert "/delete" not in member.get(deck_page).get_data(as_text=True)
    for client, status in ((member, 403), (outsider, 404)):
        assert client.get(f"{deck_page}/delete").status_code == status
        assert _post(client, f"{deck_page}/delete").status_code == status
    assert _cards(loaded_engine, slug) == {"pod": True, "node": True}

    confirm = lead.get(f"{deck_page}/delete")
    assert confirm.status_code == 200 and "2 cards" in confirm.get_data(as_text=True)
    response = _post(lead, f"{deck_page}/delete", page=f"{deck_page}/delete")
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/teams/{team}/decks")
    assert _cards(loaded_engine, slug) == {}
    assert lead.get(deck_page).status_code == 404
    assert _post(lead, f"{deck_page}/delete", page=f"/teams/{team}").status_code == 404


def test_retire_and_add_team_cards(app: Flask, loaded_engine: Engine) -> None:
    lead, member, outsider, team = _team_with_member(app, loaded_engine)
    deck_page = _team_deck(lead, team)
    slug = deck_page.rsplit("/", 1)[-1]
    card_page = lead.get(f"{deck_page}/cards/pod").get_data(as_text=True)
    assert f'action="{deck_page}/cards/pod/retire"' in card_page
    new = {"question": "What is a namespace?", "answer": "A scope for names", "explanation": ""}
    for client, status in ((member, 403), (outsider, 404)):
        assert _post(client, f"{deck_page}/cards/pod/retire").status_code == status
        assert _post(client, f"{deck_page}/cards", new).status_code == status
    assert _cards(loaded_engine, slug) == {"pod": True, "node": True}

    assert _post(lead, f"{deck_page}/cards/pod/retire", page=deck_page).status_code == 303
    assert _cards(loaded_engine, slug) == {"pod": False, "node": True}
    text = member.get(deck_page).get_data(as_text=True)
    assert "What is a pod?" not in text and "What is a node?" in text
    # Saving the card from a page opened before it was retired does not bring it back.
    stale = {"locale": "en", "question": "What is a pod, again?", "answer": "Containers"}
    assert _post(lead, f"{deck_page}/cards/pod", stale, deck_page).status_code == 303
    assert "no longer be edited" in lead.get(deck_page).get_data(as_text=True)
    unknown = {"locale": "xx", "question": "Q?", "answer": "A"}
    r = _post(lead, f"{deck_page}/cards/node", unknown, deck_page)
    assert r.status_code == 400  # the card's page again, with the reason
    assert "not available in that language" in r.get_data(as_text=True)
    assert _cards(loaded_engine, slug) == {"pod": False, "node": True}
    # The last card stays: the deck is deleted instead.
    assert _post(lead, f"{deck_page}/cards/node/retire", page=deck_page).status_code == 303
    assert "delete the deck instead" in lead.get(deck_page).get_data(as_text=True)
    assert _cards(loaded_engine, slug) == {"pod": False, "node": True}
    assert _post(lead, f"{deck_page}/cards/nope/retire", page=deck_page).status_code == 404

    empty = {**new, "answer": "  "}
    assert _post(lead, f"{deck_page}/cards", empty, deck_page).status_code == 303
    page = lead.get(deck_page).get_data(as_text=True)
    assert "was not added." in page and "must not be empty" in page
    # Each refusal says what was wrong, not always "empty".
    long = {**new, "answer": "x" * 20_001}
    assert _post(lead, f"{deck_page}/cards", long, deck_page).status_code == 303
    page = lead.get(deck_page).get_data(as_text=True)
    assert "at most 20,000 characters" in page and "must not be empty" not in page
    assert _post(lead, f"{deck_page}/cards", new, deck_page).status_code == 303
    cards = _cards(loaded_engine, slug)
    added = set(cards) - {"pod", "node"}
    assert len(added) == 1 and cards[added.pop()]  # a new key: the retired pod stays retired
    assert cards["pod"] is False
    assert "What is a namespace?" in member.get(deck_page).get_data(as_text=True)


QUIZ_ES = """Lo básico de ops
1. ¿Qué es un pod?
Respuesta y explicación
La unidad más pequeña.
2. ¿Qué es un nodo?
Respuesta y explicación
Una máquina.
"""


def test_upload_another_language_to_a_team_deck(app: Flask, loaded_engine: Engine) -> None:
    lead, member, outsider, team = _team_with_member(app, loaded_engine)
    deck_page = _team_deck(lead, team)
    slug = deck_page.rsplit("/", 1)[-1]
    source = f"{deck_page}/source"
    form = {"format": "quiz", "locale": "es", "content": QUIZ_ES}
    for client, status in ((member, 403), (outsider, 404)):
        assert _post(client, source, form).status_code == status
    assert "¿Qué es un nodo?" not in lead.get(deck_page).get_data(as_text=True)

    one_question = {**form, "content": QUIZ_ES.split("\n2.")[0]}
    bad = _post(lead, source, one_question, deck_page)
    assert bad.status_code == 422
    assert "cards in the deck: 2" in bad.get_data(as_text=True)
    assert 'aria-invalid="true"' in bad.get_data(as_text=True)
    response = _post(lead, source, form, deck_page)
    assert response.status_code == 303, response.get_data(as_text=True)
    text = member.get(deck_page).get_data(as_text=True)
    assert "¿Qué es un nodo?" in text and "Una máquina" in text
    assert _cards(loaded_engine, slug) == {"pod": True, "node": True}

    upload = {
        "csrf_token": csrf(lead, deck_page),
        "format": "csv",
        "locale": "en",
        "title": "Ops basics",
        "file": (
            io.BytesIO((OPS_CSV + "What is a service?,A stable address,svc\n").encode()),
            "o.csv",
        ),
    }
    response = lead.post(source, data=upload, content_type="multipart/form-data")
    assert response.status_code == 303
    assert _cards(loaded_engine, slug) == {"pod": True, "node": True, "svc": True}
    assert "A stable address" in member.get(deck_page).get_data(as_text=True)


EKS_ES = "Cuestionario sobre entrenamiento de modelos en EKS"


def test_team_pages_name_decks_by_their_title_in_the_leads_language(
    app: Flask, loaded_engine: Engine
) -> None:
    lead, member, team = _lead_and_member(app, "es", "ko")
    ops = _team_deck(lead, team).rsplit("/", 1)[-1]
    page = f"/teams/{team}"
    # The deck to assign, in her language where the deck has it, else in the deck's own.
    choices = lead.get(page).get_data(as_text=True)
    assert f'<option value="{SLUG}" lang="es">{EKS_ES}</option>' in choices
    assert f'<option value="{ops}" lang="en">Ops basics</option>' in choices
    due = utcnow().date() + timedelta(days=10)
    form = {"deck": SLUG, "due_date": due.isoformat()}
    assert _post(lead, f"/teams/{team}/assignments", form, page).status_code == 303
    answer_shown_card(member, "1")
    assert _post(lead, f"/teams/{team}/assignments", {"deck": ops}, page).status_code == 303

    text = lead.get(f"/teams/{team}/dashboard").get_data(as_text=True)
    assert SLUG not in text and ops not in text
    due_text = format_date(due, "medium", locale="es")
    assert f'<span lang="es">{EKS_ES}</span>:' in text and due_text in text
    assert '<span lang="en">Ops basics</span>:' in text
    assert f'<td lang="es">{EKS_ES}</td>' in text  # the hardest question's deck


def test_hardest_questions_are_shown_in_the_leads_language(
    app: Flask, loaded_engine: Engine
) -> None:
    lead, member, team = _lead_and_member(app, "ko", "es")
    _post(lead, f"/teams/{team}/assignments", {"deck": SLUG}, f"/teams/{team}")
    answer_shown_card(member, "1")  # a Spanish question, the deck has it in Korean too
    text = lead.get(f"/teams/{team}/dashboard").get_data(as_text=True)
    row = re.search(
        r'<tr><td lang="([^"]+)">([^<]+)</td><td lang="ko">EKS 모델 훈련 퀴즈</td>', text
    )
    assert row and row[1] == "ko"
    with transaction(loaded_engine) as s:
        korean = s.scalars(
            select(CardText.question)
            .join(Card)
            .join(Deck)
            .where(Deck.slug == SLUG, CardText.locale == "ko")
        ).all()
    assert html.unescape(row[2]) in korean


def test_team_deck_hints_name_the_language_in_the_readers_language(
    app: Flask, loaded_engine: Engine
) -> None:
    lider, lead = app.test_client(), app.test_client()
    sign_up(lider, "lider@example.com", language="es")
    sign_up(lead, "lead@example.com")
    english = _team_deck(lider, _new_team(lider))
    page = lider.get(english).get_data(as_text=True)
    assert "La tarjeta se añade en inglés;" in page and "en English" not in page
    spanish = _team_deck(lead, _new_team(lead), locale="es")
    page = lead.get(spanish).get_data(as_text=True)
    assert "The card is added in Spanish;" in page
    assert "for a language other than Spanish," in page


def test_a_due_date_in_the_past_is_refused(app: Flask, loaded_engine: Engine) -> None:
    lead, _member, _outsider, team = _team_with_member(app, loaded_engine)
    page = f"/teams/{team}"
    form = {"deck": SLUG, "due_date": "2020-01-01"}
    response = _post(lead, f"/teams/{team}/assignments", form, page)
    assert response.status_code == 303
    assert "A due date cannot be in the past" in lead.get(page).get_data(as_text=True)
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(TeamAssignment)) == 0
        assert s.scalar(select(func.count()).select_from(Subscription)) == 0
    today = utcnow().date().isoformat()  # the lead's timezone is UTC
    form = {"deck": SLUG, "due_date": today}
    assert _post(lead, f"/teams/{team}/assignments", form, page).status_code == 303
    assert "Deck assigned" in lead.get(page).get_data(as_text=True)


def test_a_csv_translation_without_the_decks_keys_says_so(
    app: Flask, loaded_engine: Engine
) -> None:
    lead, _member, _outsider = _people(app)
    team = _new_team(lead)
    decks = f"/teams/{team}/decks"
    form = {"format": "csv", "title": "Ops basics", "locale": "en", "content": OPS_CSV}
    deck_page = _post(lead, decks, form, decks).headers["Location"]
    # Spanish rows without the key column get keys of their own, which the deck lacks.
    spanish = "front,back\n¿Qué es un pod?,La unidad mínima\n¿Qué es un nodo?,Una máquina\n"
    form = {"format": "csv", "locale": "es", "title": "Operaciones", "content": spanish}
    response = _post(lead, f"{deck_page}/source", form, deck_page)
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "The deck has no card “q01”." in page and "“key” column" in page
    with transaction(loaded_engine) as s:
        assert s.scalar(select(func.count()).select_from(CardText)) == 2 + 15 * 3  # unchanged


def test_a_team_name_is_shown_as_text_in_the_library(app: Flask, loaded_engine: Engine) -> None:
    lead, _member, _outsider = _people(app)
    team = _new_team(lead, '<b id="x">Ops</b>')
    _post(lead, f"/teams/{team}/assignments", {"deck": SLUG, "due_date": ""}, f"/teams/{team}")
    library = lead.get("/").get_data(as_text=True)
    assert "Assigned by <a" in library and "&lt;b id=&#34;x&#34;&gt;Ops&lt;/b&gt;" in library
    assert '<b id="x">' not in library
