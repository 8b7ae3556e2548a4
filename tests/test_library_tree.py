"""The library lists subdecks under their parents, as Anki's deck list does."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from flask.testing import FlaskClient
from sqlalchemy import Engine, select

from flashcards.decks.deck_tree import Node, find, path_of, tree, walk
from flashcards.people import accounts
from flashcards.storage.engine import transaction
from flashcards.storage.models import Deck, Subscription, User

from .conftest import T0
from .web_helpers import answer_shown_card, csrf, sign_up


def outline(nodes: list[Node[str]], depth: int = 0) -> list[str]:
    out = []
    for node in nodes:
        out.append("  " * depth + node.name + ("" if node.deck else " (no deck)"))
        out += outline(node.children, depth + 1)
    return out


def test_subdecks_sit_under_their_parents_in_the_order_given() -> None:
    titles = ["Geography", "Languages::Spanish::Week 2", "Languages", "Languages::Korean",
              "Languages::Spanish::Week 1", "Odd::::name", "Geography"]  # fmt: skip
    assert outline(tree(titles, str)) == [
        "Geography",
        "Languages",
        "  Spanish (no deck)",
        "    Week 2",
        "    Week 1",
        "  Korean",
        "Odd::::name",  # an empty part: one deck of that name, not a path
        "Geography",  # two decks of one title stay two
    ]


def test_a_node_holds_its_deck_and_every_deck_under_it_parents_first() -> None:
    forest = tree(["A::B::C", "A", "A::B", "A::D", "E"], str)
    a = find(forest, "A")
    assert a is not None and list(a.decks()) == ["A", "A::B", "A::B::C", "A::D"]
    assert find(forest, "A::B::C") is not None and find(forest, "Z") is None
    assert [n.name for n in walk(forest)] == ["A", "B", "C", "D", "E"]
    # Each deck with the nearest deck above it; a group without a deck is passed through.
    grouped = tree(["X::Y::Z", "X"], str)[0]
    assert list(grouped.under()) == [("X", None), ("X::Y::Z", "X")]


def test_a_path_is_cut_at_its_separators_and_trimmed() -> None:
    assert path_of(" Kitchen :: Tools ") == ("Kitchen", "Tools")
    assert path_of("::Tools") == ("::Tools",)
    assert path_of("Plain") == ("Plain",)


HEADINGS = ("h2", "h3", "h4", "h5", "h6")


class StudiedOutline(HTMLParser):
    """The studied decks' list as the page nests it: each deck's heading, indented by depth."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.depth = 0  # open <li class="deck"> elements
        self.li_stack: list[bool] = []
        self.inside = False  # within the studied decks' list
        self.heading: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "ul" and "studied" in (a.get("class") or "").split():
            self.inside = True
        if not self.inside:
            return
        if tag == "li":
            is_deck = "deck" in (a.get("class") or "").split()
            self.li_stack.append(is_deck)
            self.depth += is_deck
        if tag in HEADINGS and self.li_stack:
            self.heading = f"{'  ' * (self.depth - 1)}{tag}:"

    def handle_data(self, data: str) -> None:
        if self.heading is not None and data.strip():
            self.heading += data.strip()

    def handle_endtag(self, tag: str) -> None:
        if not self.inside:
            return
        if tag in HEADINGS and self.heading is not None:
            self.lines.append(self.heading)
            self.heading = None
        if tag == "li" and self.li_stack:
            self.depth -= self.li_stack.pop()
        if tag == "ul" and not self.li_stack:
            self.inside = False


def new_deck(client: FlaskClient, title: str) -> str:
    """Makes the deck; its slug."""
    form = {"csrf_token": csrf(client, "/decks/new"), "title": title, "locale": "en"}
    response = client.post("/decks/new", data=form)
    assert response.status_code in (302, 303)
    found = re.fullmatch(r"/decks/([^/]+)/cards", response.headers["Location"])
    assert found, response.headers["Location"]
    return found.group(1)


def add_card(client: FlaskClient, slug: str, question: str) -> None:
    form = {"csrf_token": csrf(client, f"/decks/{slug}"), "question": question, "answer": "yes"}
    assert client.post(f"/decks/{slug}/cards", data=form).status_code in (302, 303)


def new_count(page: str, after: str = "") -> int:
    """The first "N new" count on the page, after `after` if given."""
    start = page.index(after) if after else 0
    found = re.search(r'class="count-new"><span class="num">(\d+)<', page[start:])
    assert found, "no counts"
    return int(found.group(1))


def test_the_library_nests_subdecks_under_their_parents(client: FlaskClient) -> None:
    sign_up(client)
    for title in ["Languages::Spanish::Week 1", "Languages", "Languages::Spanish::Week 2",
                  "Kitchen::Tools"]:  # fmt: skip
        new_deck(client, title)
    page = client.get("/").get_data(as_text=True)
    parser = StudiedOutline()
    parser.feed(page)
    assert parser.lines == [
        "h2:Kitchen",  # a parent with no deck here heads its subdecks alone
        "  h3:Tools",
        "h2:Languages",
        "  h3:Spanish",
        "    h4:Week 1",  # a heading a level below its parent's
        "    h4:Week 2",
    ]
    assert page.count('<details class="subdecks" open') == 3
    assert "2 subdecks" in page and "1 subdeck<" in page


def test_studying_a_parent_deck_takes_in_its_subdecks(client: FlaskClient, engine: Engine) -> None:
    sign_up(client)
    parent = new_deck(client, "Training")  # no cards of its own
    child = new_deck(client, "Training::Notes")
    other = new_deck(client, "Other")
    for question in ("What does NCCL do?", "What is a pod?"):
        add_card(client, child, question)
    add_card(client, other, "Unrelated?")

    library = client.get("/").get_data(as_text=True)
    assert new_count(library) == 3
    # The parent's counts and Study button take in its subdeck, as Anki's deck list does.
    assert new_count(library, f'id="deck-{parent}"') == 2
    assert f'href="/study?deck={parent}"' in library
    assert new_count(library, f'id="deck-{other}"') == 1
    assert "0 cards · 2 more in its subdecks · English" in " ".join(library.split())

    studying = client.get(f"/study?deck={parent}").get_data(as_text=True)
    assert "What does NCCL do?" in studying and new_count(studying) == 2
    assert new_count(client.get(f"/study?deck={child}").get_data(as_text=True)) == 2
    deck_page = client.get(f"/decks/{parent}").get_data(as_text=True)
    assert new_count(deck_page) == 2
    assert "0 cards · 2 more in its subdecks · English" in " ".join(deck_page.split())
    # The parent's page lists its subdecks; its delete page says they are kept.
    assert (
        f'<li><a href="/decks/{child}" lang="en"><span class="deck-path">Training › </span>'
        "Notes</a></li>" in deck_page
    )
    assert "subdeck-list" not in client.get(f"/decks/{child}").get_data(as_text=True)
    delete_page = client.get(f"/decks/{parent}/delete").get_data(as_text=True)
    assert "1 subdeck is not deleted: it stays a deck of its own, with its cards." in delete_page
    assert 'id="subdecks-kept"' not in client.get(f"/decks/{other}/delete").get_data(as_text=True)
    assert new_count(client.get(f"/study?deck={other}").get_data(as_text=True)) == 1

    with transaction(engine) as s:
        uid = s.scalars(select(User.id)).one()
        token = accounts.issue_token(s, uid, now=T0)
    bearer = {"Authorization": f"Bearer {token}"}
    api = client.get(f"/api/v1/study/next?deck={parent}", headers=bearer)
    assert api.status_code == 200
    assert api.get_json()["counts"]["new"] == 2 and api.get_json()["card"]["deck"] == child
    alone = client.get(f"/api/v1/study/next?deck={child}", headers=bearer).get_json()
    assert alone["counts"]["new"] == 2

    # Its subdeck's cards answered, the parent's page says when the next one is due.
    answer_shown_card(client, "4")
    answer_shown_card(client, "4")
    done = client.get(f"/study?deck={parent}").get_data(as_text=True)
    assert 'id="next-due"' in done
    assert (
        "Nothing more is due in <strong" in done and ">Training</strong> and its subdecks" in done
    )
    # The other deck still has its card today: the page offers to study everything.
    assert "Your other decks still have 1 card for today." in done
    assert '<a class="button primary" href="/study">Study all</a>' in done
    child_done = client.get(f"/study?deck={child}").get_data(as_text=True)
    assert ">Training::Notes</strong> right now." in child_done
    assert "Unrelated?" in client.get("/study").get_data(as_text=True)

    # A parent the person stopped studying is only itself, on the web and in the API alike.
    form = {"csrf_token": csrf(client, f"/decks/{parent}")}
    assert client.post(f"/decks/{parent}/unsubscribe", data=form).status_code in (302, 303)
    stopped = client.get(f"/study?deck={parent}").get_data(as_text=True)
    assert 'id="next-due"' not in stopped and "What does NCCL do?" not in stopped
    assert client.get(f"/api/v1/study/next?deck={parent}", headers=bearer).status_code == 409


def test_a_parents_own_new_cards_come_before_its_subdecks(client: FlaskClient) -> None:
    sign_up(client)
    child = new_deck(client, "Kitchen::Tools")  # made, and so studied, before its parent
    parent = new_deck(client, "Kitchen")
    add_card(client, child, "What is a whisk?")
    add_card(client, parent, "What is mise en place?")
    assert "What is a whisk?" in client.get("/study").get_data(as_text=True)
    studying = client.get(f"/study?deck={parent}").get_data(as_text=True)
    assert "What is mise en place?" in studying and new_count(studying) == 2


def test_a_parent_whose_limit_is_spent_is_done_and_its_subdecks_are_not_other_decks(
    client: FlaskClient, engine: Engine
) -> None:
    sign_up(client)
    child = new_deck(client, "Kitchen::Tools")
    parent = new_deck(client, "Kitchen")
    for question in ("What is a whisk?", "What is a ladle?"):
        add_card(client, child, question)
    add_card(client, parent, "What is mise en place?")
    with transaction(engine) as s:
        sub = s.scalars(
            select(Subscription)
            .join(Deck, Deck.id == Subscription.deck_id)
            .where(Deck.slug == parent)
        ).one()
        sub.new_per_day = 1  # the parent's limit: one new card a day, subdecks included
    assert new_count(client.get(f"/study?deck={parent}").get_data(as_text=True)) == 1
    answer_shown_card(client, "4")  # the subdeck's first card, from the whole queue
    done = client.get(f"/study?deck={parent}").get_data(as_text=True)
    assert 'id="done-deck"' in done
    # Its subdeck's card left (under the subdeck's own limit) is no other deck's.
    assert 'id="more-elsewhere"' not in done
    assert "What is a ladle?" in client.get(f"/study?deck={child}").get_data(as_text=True)


def test_a_parents_page_counts_its_tree_as_studying_it_does(
    client: FlaskClient, engine: Engine
) -> None:
    sign_up(client)
    slugs = [new_deck(client, title) for title in ("A", "A::B", "A::B::C")]
    for slug in slugs:
        for n in range(3):
            add_card(client, slug, f"{slug} {n}?")
    with transaction(engine) as s:
        middle = s.scalars(
            select(Subscription).join(Deck, Deck.id == Subscription.deck_id)
            .where(Deck.slug == slugs[1])
        ).one()  # fmt: skip
        middle.new_per_day = 2  # A::B's limit holds A::B::C's cards too
    studying = new_count(client.get(f"/study?deck={slugs[0]}").get_data(as_text=True))
    assert studying == new_count(client.get(f"/decks/{slugs[0]}").get_data(as_text=True)) == 5
    library = client.get("/").get_data(as_text=True)
    assert new_count(library, f'id="deck-{slugs[0]}"') == 5
