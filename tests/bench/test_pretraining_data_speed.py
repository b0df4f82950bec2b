"""bench/pretraining_data_speed.py refuses a Model Garden python that cannot run the peer, at once.

It stopped with a FileNotFoundError traceback when it came to the peer's
first round (`make bench MG_PYTHON=...` with a mistyped path), and with
the peer's own traceback there where that python had no Model Garden.
"""

import sys

import pytest

from tests_shared import load_bench


def test_a_peer_python_that_is_not_there_is_named(monkeypatch, capsys):
    bench = load_bench("pretraining_data_speed")
    monkeypatch.setattr(sys, "argv", ["pretraining_data_speed.py",
                                      "--peer_python=/nonexistent/mg_venv/bin/python"])
    with pytest.raises(SystemExit) as stop:
        bench.main()
    assert stop.value.code == 2
    assert ("error: --peer_python=/nonexistent/mg_venv/bin/python: no such program (the python "
            "of a venv set up as this script's docstring says)") in capsys.readouterr().err


def test_a_peer_python_without_model_garden_is_named(monkeypatch, capsys):
    bench = load_bench("pretraining_data_speed")
    monkeypatch.setattr(sys, "argv", ["pretraining_data_speed.py",
                                      f"--peer_python={sys.executable}"])  # the test venv's
    with pytest.raises(SystemExit) as stop:
        bench.main()
    assert stop.value.code == 2
    assert (f"error: --peer_python={sys.executable}: has no TF Model Garden (no module "
            "'official'); install tf-models-official there as this script's docstring says"
            ) in capsys.readouterr().err
