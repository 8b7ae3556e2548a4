"""The build step pyproject.toml cannot declare: a built package carries what it reads.

A wheel gets the compiled catalogs (`flashcards/translations/*/LC_MESSAGES/messages.mo`,
gitignored in the checkout) and the migrations (`flashcards/migrations/`), so an installed
`flashcards` serves every language and migrates its database without a source checkout or
`make`. An editable install runs from the checkout, where the catalogs are compiled beside
their `.po` files and the migrations are read in place.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def compile_catalogs(source: Path, target: Path) -> None:
    """Each `<locale>/LC_MESSAGES/messages.po` under `source` to a `.mo` under `target`."""
    for po in sorted(source.glob("*/LC_MESSAGES/messages.po")):
        mo = target / po.relative_to(source).with_suffix(".mo")
        mo.parent.mkdir(parents=True, exist_ok=True)
        with po.open("rb") as handle:
            catalog = read_po(handle, locale=po.parent.parent.name)
        with mo.open("wb") as handle:
            write_mo(handle, catalog)  # fuzzy entries left out, as `pybabel compile` does


class BuildPyWithCatalogs(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            compile_catalogs(ROOT / "translations", ROOT / "translations")
            return
        package = Path(self.build_lib) / "flashcards"
        compile_catalogs(ROOT / "translations", package / "translations")
        shutil.copytree(
            ROOT / "migrations",
            package / "migrations",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            dirs_exist_ok=True,
        )


setup(cmdclass={"build_py": BuildPyWithCatalogs})
