"""run_ner.py as a user runs it: flags, the casing default, files written, clear errors."""

import json

from tasks.task_runs import conll_subset, read_predictions
from tests_shared import run_script, shared_path, write_tiny_bert_config


def _run_ner(tmp_path, *args):
    """run_ner.py with a tiny one-layer config (nothing here depends on depth)."""
    config = write_tiny_bert_config(tmp_path / "c.json", num_hidden_layers=1)
    return run_script(
        "run_ner.py", f"--bert_config_file={config}",
        f"--vocab_file={shared_path('vocab', 'bert-base-uncased-vocab.txt')}",
        f"--output_dir={tmp_path / 'out'}", "--max_seq_length=32", "--train_batch_size=8",
        "--eval_batch_size=8", "--steps_per_execution=2", *args)


def test_train_and_eval_with_the_vocabulary_casing(tmp_path):
    data = conll_subset(tmp_path, 16)
    result = _run_ner(tmp_path, f"--data_dir={data}", "--do_train", "--do_eval",
                      "--num_train_epochs=1", "--learning_rate=1e-3")
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["task"]["do_lower_case"] is True  # the uncased vocabulary's casing
    assert record["task"]["mode"] == "fine_tune"
    results = dict(line.split(" = ") for line in
                   (tmp_path / "out" / "eval_results.txt").read_text().splitlines())
    assert {"eval_f1", "eval_precision", "eval_recall", "eval_MISC_f1"} <= set(results)
    gold, predicted = read_predictions(tmp_path / "out" / "dev_predictions.txt")
    assert len(gold) == len(predicted) == 16

    # Its head has a classifier's names and shapes: run.json says what it serves as.
    assert record["serving_kind"] == "ner"
    for script, *args in (("classify_text.py", "--text=John lives in Paris"),
                          ("export_savedmodel.py", "--kind=classifier",
                           f"--export_dir={tmp_path / 'served'}")):
        refused = run_script(script, f"--model_dir={tmp_path / 'out'}", *args)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert (f"run.json: the model in {tmp_path / 'out'} was trained for task ner and "
                "serves as a ner SavedModel (export_savedmodel.py --kind=ner) or an encoder, "
                "not as a classifier") in refused.stderr.splitlines()[-1]
    assert not (tmp_path / "out" / "saved_model").exists() and not (tmp_path / "served").exists()
    encoder = run_script("export_savedmodel.py", "--kind=encoder",
                         f"--model_dir={tmp_path / 'out'}", f"--export_dir={tmp_path / 'served'}")
    assert encoder.returncode == 0, encoder.stderr[-3000:]


def test_errors_name_the_flag_or_file(tmp_path):
    data = conll_subset(tmp_path, 4)
    result = _run_ner(tmp_path, f"--data_dir={data}", "--do_eval", "--mode=feature_based")
    assert result.returncode == 2  # a command-line mistake
    assert "--mode=feature_based needs --init_checkpoint" in result.stderr
    assert "Traceback" not in result.stderr
    result = _run_ner(tmp_path, f"--data_dir={data}", "--do_eval", "--mode=feature_based",
                      f"--export_dir={tmp_path / 'served'}")
    assert result.returncode == 2
    assert "--export_dir: only --mode=fine_tune models have a SavedModel" in result.stderr
    result = _run_ner(tmp_path, f"--data_dir={data}", "--do_eval", "--lstm_units=64")
    assert result.returncode == 2
    assert "run_ner: error: --lstm_units applies only with --mode=feature_based" in result.stderr
    (data / "eng.testa").unlink()
    result = _run_ner(tmp_path, f"--data_dir={data}", "--do_eval")
    assert result.returncode == 1
    assert f"--data_dir={data}: no eng.testa or valid.txt for the dev split" in result.stderr
