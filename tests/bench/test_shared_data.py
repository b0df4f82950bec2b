"""A bench whose real data is not there says so in one line, before any work.

The benches read `../shared/data` (`BERT_TF_SHARED_DATA`). Where it was
missing, or a flag named a wrong path, they stopped in a traceback after
seconds of set-up (`ValueError: input pattern ... matches no file` from
`gpu_training_step.py`, on a rented GPU), or minutes into the run.
"""

import re
import sys

import pytest
from absl import flags

from tests_shared import load_bench

EXPECTED = "the benches' real data is expected in "


@pytest.mark.parametrize("bench, flag", [
    ("gpu_training_step", "--records=/nonexistent/records.tfrecord"),
    ("gpu_forward", "--records=/nonexistent/records.tfrecord"),
    ("finetune_step", "--data_dir=/nonexistent/MRPC"),
    ("serving_throughput", "--model_dir=/nonexistent/all-MiniLM-L6-v2"),
])
def test_a_path_flag_naming_nothing_stops_the_flag_parsing(bench, flag):
    load_bench(bench)
    try:
        with pytest.raises(flags.IllegalFlagValueError,
                           match=re.escape(f"flag {flag}: not found; {EXPECTED}")):
            flags.FLAGS([f"{bench}.py", flag])
    finally:
        flags.FLAGS.unparse_flags()


def test_an_argparse_path_naming_nothing_is_the_option_s_error(monkeypatch, capsys):
    bench = load_bench("pretraining_data_profile")
    monkeypatch.setattr(sys, "argv", ["pretraining_data_profile.py",
                                      "--vocab_file=/nonexistent/vocab.txt"])
    with pytest.raises(SystemExit) as stop:
        bench.main()  # before its imports of TensorFlow
    assert stop.value.code == 2
    assert (f"error: argument --vocab_file: /nonexistent/vocab.txt not found; {EXPECTED}"
            in capsys.readouterr().err)


def test_a_fixed_path_that_is_missing_stops_main_first(monkeypatch, tmp_path):
    bench = load_bench("pretraining_sample_text")
    missing = tmp_path / "sample_text.tfrecord"
    monkeypatch.setattr(bench, "GOLDEN_RECORDS", missing)
    with pytest.raises(SystemExit, match=re.escape(f"{missing} not found; {EXPECTED}")):
        bench.main([])  # its flags unparsed: reading one would fail otherwise
