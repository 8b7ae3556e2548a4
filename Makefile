# The two commands of the README: `make run` and `make test`. Everything else here serves them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 5000

# axe-core, the accessibility engine the browser tests load into each page: from the npm
# registry into a git-ignored cache, once; the tests read it from there and never fetch it.
AXE_VERSION := 4.14.1
AXE := .cache/npm/node_modules/axe-core/axe.min.js

.PHONY: run test lint typecheck pytest translations-extract translations-update translations-compile bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stamp files make `pip install` run only when the packaging changes.
$(VENV)/.run-stamp: pyproject.toml setup.py | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[optimizer]'
	touch $@

$(VENV)/.test-stamp: pyproject.toml setup.py | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.run-stamp

# Without npm the accessibility tests skip, saying so (and fail in CI, which installs npm).
$(AXE):
	@if command -v npm >/dev/null 2>&1; then \
		npm install --prefix .cache/npm --no-save --no-audit --no-fund --loglevel=error \
			axe-core@$(AXE_VERSION) && test -f $@; \
	else echo "npm not found: the browser tests' axe-core checks will be skipped"; fi

translations-compile: $(VENV)/.run-stamp
	@if ls translations/*/LC_MESSAGES/messages.po >/dev/null 2>&1; then \
		$(BIN)/pybabel compile -d translations --statistics; fi

translations-extract: $(VENV)/.run-stamp
	$(BIN)/pybabel extract -F babel.cfg -k _l -k lazy_gettext -k ngettext:1,2 -k lazy_ngettext:1,2 \
		--no-location --sort-output --project=flashcards -o translations/messages.pot flashcards

# New strings arrive untranslated (never fuzzy); tests/test_i18n.py fails until they are filled.
TRANSLATION_LOCALES := es ko
translations-update: translations-extract
	@for locale in $(TRANSLATION_LOCALES); do \
		if [ -f translations/$$locale/LC_MESSAGES/messages.po ]; then \
			$(BIN)/pybabel update -i translations/messages.pot -d translations -l $$locale \
				--no-fuzzy-matching --ignore-obsolete; \
		else \
			$(BIN)/pybabel init -i translations/messages.pot -d translations -l $$locale; \
		fi; \
	done

run: $(VENV)/.run-stamp translations-compile
	$(BIN)/flashcards db upgrade
	$(BIN)/flashcards decks sync decks
	$(BIN)/flashcards serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.test-stamp
	$(BIN)/ruff check flashcards tests migrations setup.py
	$(BIN)/ruff format --check flashcards tests migrations setup.py

typecheck: $(VENV)/.test-stamp
	$(BIN)/mypy

# The suite runs on every core and one worker more (pytest-xdist): its tests wait on servers,
# browsers and PostgreSQL a good part of the time, which a worker per core leaves idle (on two
# cores, three workers ran it in 14 min 42 s). Tests that share an outside resource (Redis)
# carry one `xdist_group` and run on one worker. PYTEST_WORKERS=0 runs it in this process.
PYTEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')
pytest: $(VENV)/.test-stamp $(AXE) translations-compile
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

test: lint typecheck pytest

bench: $(VENV)/.test-stamp translations-compile
	$(BIN)/python -m pytest tests/bench -s -p no:cacheprovider -o addopts="" $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
