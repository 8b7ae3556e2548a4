"""The library lists subdecks under their parents, as Anki's deck list does."""

from __future__ import annotations

from html.parser import HTMLParser

from flask.testing import FlaskClient

from flashcards.decks.deck_tree import Node, path_of, tree

from .web_helpers import csrf, sign_up


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


def test_a_path_is_cut_at_its_separators_and_trimmed() -> None:
    assert path_of(" Kitchen :: Tools ") == ("Kitchen", "Tools")
    assert path_of("::Tools") == ("::Tools",)
    assert path_of("Plain") == ("Plain",)


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
        if tag in ("h2", "h3") and self.li_stack:
            self.heading = f"{'  ' * (self.depth - 1)}{tag}:"

    def handle_data(self, data: str) -> None:
        if self.heading is not None and data.strip():
            self.heading += data.strip()

    def handle_endtag(self, tag: str) -> None:
        if not self.inside:
            return
        if tag in ("h2", "h3") and self.heading is not None:
            self.lines.append(self.heading)
            self.heading = None
        if tag == "li" and self.li_stack:
            self.depth -= self.li_stack.pop()
        if tag == "ul" and not self.li_stack:
            self.inside = False


def new_deck(client: FlaskClient, title: str) -> None:
    form = {"csrf_token": csrf(client, "/decks/new"), "title": title, "locale": "en"}
    assert client.post("/decks/new", data=form).status_code in (302, 303)


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
        "    h3:Week 1",
        "    h3:Week 2",
    ]
    assert page.count('<details class="subdecks" open>') == 3
    assert "2 subdecks" in page and "1 subdeck<" in page
