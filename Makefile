# Three entry points do all their own set-up on a fresh machine:
#   make demo   - the main job end to end on the data shipped in this repository
#                 (installs only the runtime requirements)
#   make test   - the test suite (also installs the test-only references:
#                 transformers, torch, scikit-learn, ...)
#   make bench  - the quick version of every timing benchmark against its peers
#                 (the test requirements hold them); MG_PYTHON=<python of a venv
#                 with tf-models-official> adds TF Model Garden to the data bench
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUNTIME := $(VENV)/.installed-runtime
TESTING := $(VENV)/.installed-test

.PHONY: test demo bench clean

$(RUNTIME): requirements.txt constraints.txt setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(RUNTIME)

$(TESTING): $(RUNTIME) requirements-test.txt
	$(PY) -m pip install --quiet -r requirements-test.txt
	touch $(TESTING)

# Two workers, each taking whole files (a file's module fixtures are built once;
# the serving session fixture's tests are all in one file for the same reason),
# the longest files first (tests/conftest.py's LONGEST_FIRST; pytest-xdist's own
# order, by number of tests, left the longest for last): the tests keep about one
# core busy each, and the suite takes about half the minutes of one process. On the
# 2-core AVX2 machine of 2026-12-07 it took 12.7 min (760 s; 831 s before that
# day's XLA setting and order), 6.0 on a 2-core AVX-512 AMD machine on 2026-11-26.
# A plain `pytest` runs it in one process.
test: $(TESTING)
	$(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

# Each line is one benchmark's quick version (1-3 minutes on 2 quiet cores).
# The bfloat16 ones run only on CPUs with bfloat16 instructions: elsewhere
# TensorFlow emulates them, and one ran for over 15 minutes on the AVX2 machine.
BENCH := TF_CPP_MIN_LOG_LEVEL=2 $(PY) bench
# Elsewhere a bfloat16 line's command is printed as skipped instead of run.
BF16_CPU := $(shell grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo 2>/dev/null && echo yes)
SKIP_WITHOUT_BF16 := $(if $(BF16_CPU),,@echo "skipped, no avx512_bf16 or amx_bf16 in /proc/cpuinfo:")
bench: $(TESTING)
	$(BENCH)/encoder_forward.py --sizes=mini,small,base --iterations=3 --warmup=1
	$(SKIP_WITHOUT_BF16) $(BENCH)/encoder_forward.py --sizes=mini,small,base --iterations=3 --warmup=1 --mixed_precision=mixed_bfloat16
	$(BENCH)/matmul_ceiling.py --iterations=3
	$(BENCH)/matmul_ceiling.py --work=pretraining --sizes=mini,small --iterations=3
	$(BENCH)/pretraining_speed.py --sizes=mini,small --iterations=3 --warmup=1
	$(BENCH)/finetune_step.py --iterations=3 --warmup=1
	$(SKIP_WITHOUT_BF16) $(BENCH)/finetune_step.py --iterations=3 --warmup=1 --mixed_precision=mixed_bfloat16
	$(BENCH)/tokenizer_speed.py --lines=10000 --iterations=3 --warmup=1
	$(BENCH)/vocab_learning_speed.py --iterations=3
	$(BENCH)/pretraining_data_speed.py --repeats=3 $(if $(MG_PYTHON),--peer_python=$(MG_PYTHON))

demo: $(RUNTIME)
	PY=$(PY) bash demo/run_demo.sh $(if $(SENTENCE),"$(SENTENCE)")

clean:
	rm -rf $(VENV) build *.egg-info
