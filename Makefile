# The two commands of the README: `make run` and `make test`. Everything else here serves them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: run test lint typecheck pytest translations-extract translations-update translations-compile bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stamp files make `pip install` run only when pyproject.toml changes.
$(VENV)/.run-stamp: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.test-stamp: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.run-stamp

translations-compile: $(VENV)/.run-stamp
	@if ls translations/*/LC_MESSAGES/messages.po >/dev/null 2>&1; then \
		$(BIN)/pybabel compile -d translations --statistics; fi

translations-extract: $(VENV)/.run-stamp
	$(BIN)/pybabel extract -F babel.cfg -k _l -k lazy_gettext -k ngettext:1,2 -k lazy_ngettext:1,2 \
		--no-location --sort-output --project=flashcards -o translations/messages.pot flashcards

translations-update: translations-extract
	$(BIN)/pybabel update -i translations/messages.pot -d translations --no-fuzzy-matching --ignore-obsolete

run: $(VENV)/.run-stamp translations-compile
	$(BIN)/flashcards db upgrade
	$(BIN)/flashcards decks sync decks
	$(BIN)/flashcards serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.test-stamp
	$(BIN)/ruff check flashcards tests migrations
	$(BIN)/ruff format --check flashcards tests migrations

typecheck: $(VENV)/.test-stamp
	$(BIN)/mypy

pytest: $(VENV)/.test-stamp translations-compile
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint typecheck pytest

bench: $(VENV)/.test-stamp translations-compile
	$(BIN)/python -m pytest tests/bench -s -p no:cacheprovider -o addopts="" $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
