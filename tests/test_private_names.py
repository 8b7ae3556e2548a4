"""No private names of a dependency: a minor release of SQLAlchemy, psycopg, Flask or werkzeug
may change or drop them without notice. Our own modules' names are ours to use.

Walks `flashcards/**/*.py` and fails on importing a `_`-prefixed module or name from any
other package, and on reading `x._name` off anything but `self` or `cls`, except the few
names documented as public despite their underscore.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "flashcards"

# Documented as public: namedtuple's methods (the underscore keeps them apart from field
# names), and SQLAlchemy's Row, which follows namedtuple's convention.
PUBLIC_DESPITE_UNDERSCORE = frozenset(
    {"_make", "_asdict", "_fields", "_replace", "_field_defaults", "_mapping", "_t", "_tuple"}
)
# Typeshed's stub-only module, for annotations: it exists for type checkers, never at run time.
TYPING_ONLY_MODULES = frozenset({"_typeshed"})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(source: str) -> list[tuple[int, str]]:
    """(line, name) of each private name of another package that `source` uses."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] == "flashcards" or parts[0] in TYPING_ONLY_MODULES:
                continue
            found += [(node.lineno, part) for part in parts if _private(part)]
            found += [(node.lineno, a.name) for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] != "flashcards" and parts[0] not in TYPING_ONLY_MODULES:
                    found += [(node.lineno, part) for part in parts if _private(part)]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if node.attr not in PUBLIC_DESPITE_UNDERSCORE:
                found.append((node.lineno, node.attr))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            and node.args[1].value not in PUBLIC_DESPITE_UNDERSCORE
        ):
            found.append((node.lineno, node.args[1].value))  # the same read, spelt otherwise
    return sorted(found)


def _uses_in_package() -> dict[tuple[str, str], list[int]]:
    uses: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for line, name in private_uses(path.read_text(encoding="utf-8")):
            uses.setdefault((relative, name), []).append(line)
    return uses


def test_the_service_uses_no_private_name_of_a_dependency() -> None:
    uses = _uses_in_package()
    offending = sorted(
        f"flashcards/{file}:{lines[0]}: {name}" for (file, name), lines in uses.items()
    )
    assert offending == []


def test_the_check_catches_each_kind_of_private_use() -> None:
    # What `libpq.py` imported before it used psycopg's public API only.
    assert private_uses("from psycopg._queries import PostgresQuery") == [(1, "_queries")]
    assert private_uses("import sqlalchemy.engine._row") == [(1, "_row")]
    assert private_uses("from flask.globals import _cv_app") == [(1, "_cv_app")]
    assert private_uses("pool._invalidate(conn, error, _checkin=False)") == [(1, "_invalidate")]
    assert private_uses("cast(Any, request)._get_current_object()") == [(1, "_get_current_object")]
    assert private_uses("g._db_session = session") == [(1, "_db_session")]
    assert private_uses("getattr(pool, '_invalidate')") == [(1, "_invalidate")]


def test_the_check_lets_through_what_is_ours_or_documented() -> None:
    allowed = """
from __future__ import annotations
from flashcards._private import helper
from ._sibling import thing
from _typeshed.wsgi import StartResponse
self._cache = {}
cls._registry = {}
row._mapping["id"], point._asdict(), Row._make(values), Row._fields
obj.__class__, obj.__dict__
"""
    assert private_uses(allowed) == []
