# Two entry points do all their own set-up on a fresh machine:
#   make demo   - the main job end to end on the data shipped in this repository
#   make test   - the test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench clean

$(STAMP): requirements.txt requirements-test.txt setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-test.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q tests

demo: $(STAMP)
	PY=$(PY) bash demo/run_demo.sh $(if $(SENTENCE),"$(SENTENCE)")

clean:
	rm -rf $(VENV) build *.egg-info
