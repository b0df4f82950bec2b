"""run_swag.py on small files in SWAG's CSV layout, and the multiple-choice model's shape."""

import csv

import numpy as np

from bert_tf.config import BertConfig
from bert_tf.tasks.multiple_choice import build_multiple_choice_model
from bert_tf.tasks.swag_data import read_swag
from tests_shared import run_script, shared_path, write_tiny_bert_config

HEADER = ["video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source",
          "ending0", "ending1", "ending2", "ending3", "label"]
SCENES = [
    ("Someone opens the door.", "He", ["walks inside.", "eats the door.", "flies away.",
                                       "sings to a fish."], 0),
    ("The chef cuts an onion.", "She", ["puts it in the pan.", "throws the pan at the sky.",
                                        "reads the onion.", "drives the knife home."], 0),
    ("A boy kicks the ball.", "The ball", ["rolls into the goal.", "starts to talk.",
                                           "melts.", "turns into a bird."], 0),
    ("The dog sees a cat.", "It", ["barks loudly.", "writes a letter.", "becomes a tree.",
                                   "files taxes."], 0),
]


def _write(path, rows, labelled=True):
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(HEADER if labelled else HEADER[:-1])
        for i, (sent1, sent2, endings, label) in enumerate(rows):
            row = [f"v{i}", str(i), f"{sent1} {sent2}", sent1, sent2, "gold", *endings]
            writer.writerow(row + [str(label)] if labelled else row)


def test_reader_pairs_context_with_each_continuation(tmp_path):
    _write(tmp_path / "val.csv", SCENES)
    examples = read_swag(str(tmp_path / "val.csv"))
    assert examples[0].context == "Someone opens the door."
    assert examples[0].endings[1] == "He eats the door."
    assert [e.label for e in examples] == [0, 0, 0, 0]


def test_reader_errors_name_file_and_line(tmp_path):
    _write(tmp_path / "val.csv", SCENES)
    with open(tmp_path / "val.csv", "a", encoding="utf-8") as f:
        f.write("x,1,a,b,c,gold,e0,e1,e2,e3,5\n")
    import pytest
    with pytest.raises(ValueError, match=r"val.csv:6: label '5' is not 0-3"):
        read_swag(str(tmp_path / "val.csv"))


def test_model_scores_each_choice(tiny_config):
    model = build_multiple_choice_model(tiny_config, num_choices=4, seq_length=8)
    ids = np.ones((2, 4, 8), "int32")
    logits = model({"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids})
    assert logits.shape == (2, 4)
    # The same sequence in every choice gets the same score.
    np.testing.assert_allclose(np.asarray(logits)[:, 0:1] * np.ones((1, 4)), logits, atol=1e-6)


def test_run_swag_end_to_end(tmp_path):
    # Shuffle endings so the gold index varies.
    rows = [(s1, s2, endings[i:] + endings[:i], (4 - i) % 4)
            for i, (s1, s2, endings, _) in enumerate(SCENES * 2)]
    for name in ("train.csv", "val.csv"):
        _write(tmp_path / name, rows)
    _write(tmp_path / "test.csv", rows, labelled=False)
    result = run_script(
        "run_swag.py", f"--bert_config_file={write_tiny_bert_config(tmp_path / 'c.json')}",
        f"--vocab_file={shared_path('vocab', 'bert-base-uncased-vocab.txt')}",
        f"--data_dir={tmp_path}", f"--output_dir={tmp_path / 'out'}", "--max_seq_length=24",
        "--train_batch_size=4", "--eval_batch_size=4", "--predict_batch_size=4",
        "--num_train_epochs=1", "--do_train", "--do_eval", "--do_predict",
        "--steps_per_execution=1")
    assert result.returncode == 0, result.stderr[-3000:]
    text = (tmp_path / "out" / "eval_results.txt").read_text()
    assert "eval_accuracy = " in text and "global_step = 2" in text
    rows = (tmp_path / "out" / "test_results.tsv").read_text().splitlines()
    assert len(rows) == 8 and all(len(r.split("\t")) == 4 for r in rows)
