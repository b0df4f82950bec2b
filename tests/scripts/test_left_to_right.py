"""The scripts take a left-to-right model (`"causal": true`) and use it left to right, with
the paper's "+ BiLSTM" on top where asked (`--bilstm`).

run_classifier.py and extract_features.py refused it (exit 2) before. The fine-tuned model's
folder keeps the mark, so what later runs and exports build from it is left to right too
(tests/tasks/test_left_to_right.py holds every family's model to the mask).
"""

import json

import numpy as np
import pytest

from bert_tf.modeling.bilstm import bilstm_of
from bert_tf.serving import sources
from tasks.task_runs import glue_subset
from tests_shared import run_script, write_tiny_release


@pytest.fixture(scope="module")
def causal_release(tmp_path_factory, uncased_vocab_file):
    """A tiny pretrained left-to-right model's release folder (1 layer, H=32)."""
    return write_tiny_release(tmp_path_factory.mktemp("ltr"), uncased_vocab_file,
                              num_hidden_layers=1, causal=True)


def test_run_classifier_fine_tunes_it_left_to_right_plus_bilstm(causal_release, tmp_path):
    """With the paper's "+ BiLSTM" (--bilstm, by default H/2 units per direction): run.json
    records it, the release folder saves it, and what a later run or export builds from the
    folder has it, over an encoder with the same mask."""
    out = tmp_path / "out"
    result = run_script("run_classifier.py", "--task_name=MRPC",
                        f"--data_dir={glue_subset(tmp_path, 'MRPC', 8)}", f"--output_dir={out}",
                        "--max_seq_length=16", f"--init_checkpoint={causal_release}",
                        "--do_train", "--train_batch_size=8", "--num_train_epochs=1",
                        "--bilstm")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "step 1/1 loss=" in result.stderr
    assert json.loads((out / "bert_config.json").read_text())["causal"] is True
    assert json.loads((out / "run.json").read_text())["model"]["bilstm_units"] == 16
    served = sources.classifier_from(sources.read_source(out, needs_labels=True))
    assert sources.find_encoder(served).causal and bilstm_of(served).lstm_units == 16


def test_extract_features_gives_each_token_its_left_context_only(causal_release, tmp_path):
    """A line and the same line with more words: the tokens they share get the same
    features, as they do in pretraining (attending both ways, none would)."""
    input_file, output = tmp_path / "input.txt", tmp_path / "features.jsonl"
    input_file.write_text("the cat sat\nthe cat sat on the mat\n")
    result = run_script("extract_features.py", f"--input_file={input_file}",
                        f"--output_file={output}", f"--init_checkpoint={causal_release}",
                        "--layers=-1", "--max_seq_length=16")
    assert result.returncode == 0, result.stderr[-3000:]
    short, long = [json.loads(line)["features"] for line in output.read_text().splitlines()]
    assert [f["token"] for f in long[:4]] == ["[CLS]", "the", "cat", "sat"]

    def values(features):
        return np.array([f["layers"][0]["values"] for f in features])

    np.testing.assert_allclose(values(short[:4]), values(long[:4]), atol=2e-6)  # 6 decimals
    assert np.abs(values(short[4:5]) - values(long[4:5])).max() > 1e-3  # [SEP] vs "on"


@pytest.mark.parametrize("script, args, message", [
    ("run_squad.py", ["--max_seq_length=128", "--bilstm_units=8"],
     "--bilstm_units applies only with --bilstm"),
    ("run_ner.py", ["--mode=feature_based", "--bilstm"],
     "--bilstm applies only with --mode=fine_tune: the feature_based mode trains a BiLSTM "
     "of its own (--lstm_units) on the frozen features"),
])
def test_bilstm_flags_that_would_change_nothing_are_refused(causal_release, tmp_path, script,
                                                            args, message):
    result = run_script(script, f"--output_dir={tmp_path / 'out'}", "--do_train",
                        f"--init_checkpoint={causal_release}", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr[-2000:]
    assert not (tmp_path / "out").exists()
