"""The scripts refuse sentence pairs for a model with one token type (`type_vocab_size: 1`),
in one line before any work: exit 2 for a task that always pairs, 1 for pairs found in the
data. Without it, extract_features wrote features of segment id 1 read as 0 (exit 0)."""

import pytest

from tests_shared import run_script, write_tiny_release

REFUSED = ("type_vocab_size=1, so the model has no token-type embedding for the second text "
           "of a pair (segment id 1), but {pairs} pairs two texts; use a model with "
           "type_vocab_size >= 2 (single texts need only one)")


@pytest.fixture(scope="module")
def one_type_release(tmp_path_factory, uncased_vocab_file):
    """An original release folder of a tiny encoder with `type_vocab_size: 1`."""
    return write_tiny_release(tmp_path_factory.mktemp("one_type"), uncased_vocab_file,
                              type_vocab_size=1)


def _last_line(result):
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result.stderr.strip().splitlines()[-1]


def _extract(folder, input_file, output):
    return run_script("extract_features.py", f"--input_file={input_file}",
                      f"--output_file={output}", f"--init_checkpoint={folder}", "--layers=-1",
                      "--max_seq_length=16")


def test_extract_features_refuses_a_pair_line(one_type_release, tmp_path):
    input_file = tmp_path / "input.txt"
    input_file.write_text("the cat sat\nthe cat sat ||| on the mat\n")
    result = _extract(one_type_release, input_file, tmp_path / "features.jsonl")
    assert result.returncode == 1
    assert _last_line(result) == (
        f"extract_features: error: --init_checkpoint={one_type_release}: " + REFUSED.format(
            pairs=f"--input_file={input_file}:2 (`A ||| B`)"))
    assert not (tmp_path / "features.jsonl").exists()


def test_extract_features_of_single_sentences_runs(one_type_release, tmp_path):
    input_file = tmp_path / "input.txt"
    input_file.write_text("the cat sat\non the mat\n")
    result = _extract(one_type_release, input_file, tmp_path / "features.jsonl")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len((tmp_path / "features.jsonl").read_text().splitlines()) == 2


def test_run_squad_is_a_usage_error(one_type_release, tmp_path):
    result = run_script("run_squad.py", f"--init_checkpoint={one_type_release}",
                        "--do_predict", f"--predict_file={tmp_path / 'dev.json'}",
                        "--max_seq_length=96", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 2
    assert _last_line(result) == (
        f"run_squad: error: --init_checkpoint={one_type_release}: " + REFUSED.format(
            pairs="task squad (a question and its context)"))
    assert not (tmp_path / "out").exists()
