# IncidentDesk: `make run` serves the app, `make test` runs every test.
# Both build .venv with Python 3.12 and install what is missing first.

PYTHON ?= python3.12
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
# Wait for another apt run (a second checkout installing the same package) instead of failing.
APT_WAIT := -o DPkg::Lock::Timeout=600

.DEFAULT_GOAL := help
.PHONY: help install run test lint format bench clean stop chromium tesseract

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(STAMP): requirements.txt requirements-dev.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 12), "Python 3.12+ is needed (Django 6)"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP) ## Create .venv and install the pinned dependencies

run: install tesseract ## Set up everything (DB, Redis, migrations, demo data) and serve on :8000
	$(PY) manage.py serve

test: install chromium tesseract ## Run the whole test suite on the embedded PostgreSQL and Redis
	$(PY) -m pytest

chromium: ## Install Debian's Chromium for the browser tests when it is missing (never `playwright install`)
	@test -x /usr/bin/chromium || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get $(APT_WAIT) update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get $(APT_WAIT) install -y -qq chromium; }

tesseract: ## Install Debian's tesseract-ocr (reads intake screenshots offline) when it is missing
	@command -v tesseract >/dev/null || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get $(APT_WAIT) update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get $(APT_WAIT) install -y -qq tesseract-ocr; }

lint: install ## ruff format --check, ruff check, mypy
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

format: install ## Format and autofix with ruff
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: install ## Run the benchmarks (they print figures)
	$(PY) bench/import_bench.py
	$(PY) bench/search_bench.py
	$(PY) bench/chat_bench.py
	$(PY) bench/ws_bench.py

stop: install ## Stop embedded services left running by a killed process
	$(PY) -c 'from incidentdesk import embedded as e; e.stop_redis(); e.stop_postgres()'

clean: stop ## Delete var/ (database, Redis socket, uploads) and .venv
	rm -rf var $(VENV)
