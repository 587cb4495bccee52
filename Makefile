# Two commands on a fresh machine:
#   make demo   set up .venv and record, export and verify a sample run
#   make test   set up .venv (and the system parts the tests use) and run every test
VENV   ?= .venv
PYTHON ?= python3
PY     := $(VENV)/bin/python

.PHONY: setup demo test bench lint system-deps clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

setup: $(VENV)/.installed

system-deps:
	bash scripts/system-deps.sh

demo: setup
	$(VENV)/bin/bitexact demo

test: setup system-deps
	$(PY) -m pytest

lint: setup
	$(PY) -m pip install --quiet -e '.[dev,test]'
	$(VENV)/bin/ruff check --select F,E9 src tests
	$(VENV)/bin/mypy src/bitexact

BENCHMARKS = benchmarks/canon_bench.py benchmarks/store_append.py benchmarks/verify_jsonl.py \
	benchmarks/sdk_overhead.py benchmarks/capture_scan.py benchmarks/capture_keys.py \
	benchmarks/capture_verdict.py benchmarks/sessions_parse.py benchmarks/sessions_unify.py \
	benchmarks/json_depth.py benchmarks/fragment_walk.py benchmarks/copilot_arrays.py benchmarks/malformed_arrays.py \
	benchmarks/capture_hostile.py benchmarks/show_verify_stored.py benchmarks/sdk_instructions.py

bench: setup
	for b in $(BENCHMARKS); do \
	  [ -f "$$b" ] && echo "== $$b" && $(PY) "$$b" || true; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
