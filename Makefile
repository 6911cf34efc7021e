# Two entry points on a fresh Debian 12 machine, as root:
#   make demo   install what is missing, start the local stack, ingest and draft the demo footage,
#               run a Celery worker and the web server on http://127.0.0.1:8000 (Ctrl-C stops all)
#   make test   install what is missing (and chromium), start the local stack, run the test suite
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test bench system system-test venv stack stop migrate footage bench-agreement

demo: system venv footage
	scripts/demo.sh

test: system-test venv footage datasets216 lmms-eval
	scripts/test.sh $(PYTEST_ARGS)

system:
	scripts/install_system.sh

system-test:
	scripts/install_system.sh --test

venv: $(VENV)/.installed

# requirements-test.txt includes requirements-semantic.txt, which includes requirements.txt: the local venv
# gets all three (a Docker image the first, and the second for the scores and models roles).
$(VENV)/.installed: requirements.txt requirements-semantic.txt requirements-test.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements-test.txt
	touch $@

# Hugging Face datasets 2.16 (the line lmms-eval pins) apart from the venv, for the export tests (issue 11):
# they load exports with it in a subprocess with PYTHONPATH=.local/datasets216.
DATASETS216 := .local/datasets216
.PHONY: datasets216
datasets216: $(DATASETS216)/.installed

# Order-only on the venv (its pip is used): a venv reinstall does not reinstall this.
$(DATASETS216)/.installed: requirements-datasets216.txt | $(VENV)/.installed
	rm -rf $(DATASETS216)
	$(VENV)/bin/pip install -q --disable-pip-version-check --target $(DATASETS216) -r requirements-datasets216.txt
	touch $@

# lmms-eval 0.7.3 apart from the venv, for the export tests (issue 18): the package alone (--no-deps: its
# torch, transformers and the rest stay out), read by the tests from .local/lmms-eval.
LMMS_EVAL := .local/lmms-eval
.PHONY: lmms-eval
lmms-eval: $(LMMS_EVAL)/.installed

$(LMMS_EVAL)/.installed: requirements-lmms-eval.txt | $(VENV)/.installed
	rm -rf $(LMMS_EVAL)
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps --target $(LMMS_EVAL) -r requirements-lmms-eval.txt
	touch $@

stack:
	scripts/stack.sh start
	$(PY) manage.py migrate --noinput -v0

stop:
	scripts/stack.sh stop

migrate: stack

footage: venv
	PYTHON=$(PY) scripts/fetch_footage.sh

# Every benchmark at its full size (hours): figures into bench/results.json, and the tables of docs/benchmarks.md and the README from it.
bench: system-test venv
	scripts/stack.sh start
	$(PY) bench/all.py

.PHONY: bench-queue
bench-queue: venv
	scripts/stack.sh start
	$(PY) bench/queue.py

# Scoring 100k trials of every study kind, in memory and end to end in a scratch database (issue 8).
.PHONY: bench-scoring
bench-scoring: venv
	scripts/stack.sh start
	$(PY) bench/scoring.py

# Agreement metrics on 100k items x 5 raters with 1,000-resample intervals, and semantic agreement (issue 9).
# Pure Python: no stack needed.
.PHONY: bench-agreement
bench-agreement: venv
	$(PY) bench/agreement.py

# The benchmark report (issue 18): 100k trials + 100k predictions by 3 split fields with 1,000-resample paired
# intervals and permutation tests (target < 5 s). Pure Python: no stack needed. BENCH_REPORT_ARGS adds options.
.PHONY: bench-report
bench-report: venv
	$(PY) bench/report.py $(BENCH_REPORT_ARGS)

# Panel participants through a study link (issue 19): 500 simulated anonymous participants, 20 at a time, from the
# link to the completion code against gunicorn on loopback, in a scratch database of its own; prints answers/s,
# p50/p95/max per endpoint and lost answers (target: p95 under 100 ms, 0 lost). BENCH_PARTICIPANTS_ARGS adds options.
.PHONY: bench-participants
bench-participants: venv
	scripts/stack.sh start
	$(PY) bench/participants.py $(BENCH_PARTICIPANTS_ARGS)

# The units list for admins at a million units (issue 20): p50/p95 of each filter's page. BENCH_UNITS_ARGS adds options.
.PHONY: bench-units
bench-units: venv
	scripts/stack.sh start
	$(PY) bench/units_page.py $(BENCH_UNITS_ARGS)

# Response-time fidelity of the study page (issue 8): a scripted participant in headless Chromium.
.PHONY: bench-rt
bench-rt: system-test venv
	scripts/stack.sh start
	$(PY) bench/rt_fidelity.py

# Drafting (issue 10): 8 videos through every egonight stage against a loopback server taking 500 ms a call,
# at concurrency 8 and 4, against the ideal (calls x 0.5 s / C). BENCH_DRAFTING_ARGS adds options (--profile).
.PHONY: bench-drafting
bench-drafting: venv
	scripts/stack.sh start
	$(PY) bench/drafting.py --concurrency 8 $(BENCH_DRAFTING_ARGS)
	$(PY) bench/drafting.py --concurrency 4 $(BENCH_DRAFTING_ARGS)

# Export speed (issue 11): seeds 1M verified QA pairs by COPY into a scratch database and writes them as
# JSONL and Parquet, printing rows/s and peak RSS at 100k and 1M. BENCH_EXPORT_ARGS adds options (--sizes).
.PHONY: bench-export
bench-export: venv
	scripts/stack.sh start
	$(PY) bench/export.py $(BENCH_EXPORT_ARGS)

# Seeking in a 2-hour video (issue 11): the tests' looped demo footage, transcoded (MP4, HLS, thumbnails) into a
# scratch database kept between runs, played in headless Chromium through hls.js and as MP4: time to first
# frame, bytes before it, seek latency. BENCH_SEEK_ARGS adds options (--runs, --seeks, --width, --fresh).
.PHONY: bench-seek
bench-seek: venv
	scripts/stack.sh start
	$(PY) bench/seek.py $(BENCH_SEEK_ARGS)
