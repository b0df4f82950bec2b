# Two entry points do all their own set-up on a fresh machine:
#   make demo   - the main job end to end on the data shipped in this repository
#                 (installs only the runtime requirements)
#   make test   - the test suite (also installs the test-only references:
#                 transformers, torch, scikit-learn, ...)
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

test: $(TESTING)
	$(PY) -m pytest -q

demo: $(RUNTIME)
	PY=$(PY) bash demo/run_demo.sh $(if $(SENTENCE),"$(SENTENCE)")

clean:
	rm -rf $(VENV) build *.egg-info
