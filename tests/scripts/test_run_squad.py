"""run_squad.py with the original README's command lines, then the scoring command.

A tiny randomly initialised BERT (1 layer, H=32, 512 positions) exported as
an original release folder stands in for BERT-Base (no assertion here depends
on its depth); the SQuAD files are the first questions of the real ones.
"""

import gzip
import json
import re

from absl import flags

from bert_tf import evaluate_squad
from bert_tf.checkpoints import export_original
from bert_tf.config import BertConfig
from bert_tf.modeling import BertEncoder, build_span_model
from tests_shared import load_script, run_script, shared_path, write_tiny_bert_config


def release_folder(tmp_path, build=BertEncoder):
    """A tiny model laid out like uncased_L-12_H-768_A-12/ (checkpoint, config, vocab);
    `build=build_span_model`: a SQuAD model's, span head included."""
    config = BertConfig.from_json_file(write_tiny_bert_config(
        tmp_path / "c.json", max_position_embeddings=512, num_hidden_layers=1))
    folder = tmp_path / "uncased_tiny"
    export_original(build(config), config,
                    str(shared_path("vocab", "bert-base-uncased-vocab.txt")), str(folder))
    return folder


def first_questions(tmp_path, name, count):
    with gzip.open(shared_path("squad", f"{name}.json.gz"), "rt", encoding="utf-8") as f:
        content = json.load(f)
    paragraph = dict(content["data"][0]["paragraphs"][0])
    paragraph["qas"] = paragraph["qas"][:count]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(dict(content, data=[dict(content["data"][0],
                                                        paragraphs=[paragraph])])))
    return path


def test_readme_squad_1_1_command_then_official_scoring(tmp_path, capsys):
    bert_base_dir = release_folder(tmp_path)
    train = first_questions(tmp_path, "train-v1.1", 6)
    dev = first_questions(tmp_path, "dev-v1.1", 5)
    out = tmp_path / "squad_base"
    result = run_script(
        "run_squad.py", f"--vocab_file={bert_base_dir}/vocab.txt",
        f"--bert_config_file={bert_base_dir}/bert_config.json",
        f"--init_checkpoint={bert_base_dir}/bert_model.ckpt", "--do_train=True",
        f"--train_file={train}", "--do_predict=True", f"--predict_file={dev}",
        "--train_batch_size=12", "--learning_rate=3e-5", "--num_train_epochs=2.0",
        "--max_seq_length=384", "--doc_stride=128", f"--output_dir={out}/")
    assert result.returncode == 0, result.stderr[-3000:]
    predictions = json.loads((out / "predictions.json").read_text())
    assert len(predictions) == 5
    assert len(json.loads((out / "nbest_predictions.json").read_text())) == 5
    capsys.readouterr()
    evaluate_squad.main([str(dev), str(out / "predictions.json")])
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"exact_match", "f1"} and 0 <= report["exact_match"] <= report["f1"]

    # Predicting with another model's config from that folder: refused before any
    # checkpoint is read, naming what differs from the run recorded there.
    wider = write_tiny_bert_config(tmp_path / "wider.json", max_position_embeddings=512,
                                   num_hidden_layers=1, intermediate_size=96)
    result = run_script("run_squad.py", f"--vocab_file={bert_base_dir}/vocab.txt",
                        f"--bert_config_file={wider}", "--do_predict=True",
                        f"--predict_file={dev}", f"--output_dir={out}")
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"run_squad: error: --output_dir={out} holds a model trained "
                           "otherwise") and "model.bert_config.intermediate_size: 64 in the "\
        "recorded run, 96 now" in last, result.stderr[-3000:]


def test_readme_squad_2_0_predict_with_threshold_and_errors(tmp_path):
    bert_base_dir = release_folder(tmp_path, build_span_model)
    dev = first_questions(tmp_path, "dev-v2.0", 6)
    common = [f"--vocab_file={bert_base_dir}/vocab.txt",
              f"--bert_config_file={bert_base_dir}/bert_config.json",
              f"--init_checkpoint={bert_base_dir}/bert_model.ckpt", f"--predict_file={dev}",
              "--max_seq_length=128", "--doc_stride=64", "--version_2_with_negative=True"]
    out = tmp_path / "squad_v2"
    result = run_script("run_squad.py", *common, "--do_train=False", "--do_predict=True",
                        "--do_eval=True", "--null_score_diff_threshold=-1.0",
                        f"--output_dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    # Evaluated and predicted, the one --predict_file went through the model once.
    assert len(re.findall(r"(evaluating|predicting): \d+ batches in ", result.stderr)) == 1
    null_odds = json.loads((out / "null_odds.json").read_text())
    predictions = json.loads((out / "predictions.json").read_text())
    assert all((predictions[k] == "") == (null_odds[k] > -1.0) for k in predictions)
    results = dict(line.split(" = ") for line in
                   (out / "eval_results.txt").read_text().splitlines())
    assert {"exact", "f1", "HasAns_exact", "NoAns_exact", "best_f1"} <= set(results)
    bad = run_script("run_squad.py", *common, "--do_predict=True", "--max_query_length=125",
                     f"--output_dir={tmp_path / 'bad'}")
    assert bad.returncode == 2
    assert "max_seq_length (128) must be greater than max_query_length (125) + 3" in bad.stderr
    v1 = [flag for flag in common if flag != "--version_2_with_negative=True"]
    ignored = run_script("run_squad.py", *v1, "--do_predict=True",
                         "--null_score_diff_threshold=1.0", f"--output_dir={tmp_path / 'v1'}")
    assert ignored.returncode == 2 and ("--null_score_diff_threshold applies only with "
                                        "--version_2_with_negative") in ignored.stderr


ORIGINAL_FLAGS = {
    "bert_config_file": None, "vocab_file": None, "output_dir": None, "train_file": None,
    "predict_file": None, "init_checkpoint": None, "do_lower_case": True,
    "max_seq_length": 384, "doc_stride": 128, "max_query_length": 64, "do_train": False,
    "do_predict": False, "train_batch_size": 32, "predict_batch_size": 8,
    "learning_rate": 5e-5, "num_train_epochs": 3.0, "warmup_proportion": 0.1,
    "save_checkpoints_steps": 1000, "iterations_per_loop": 1000, "n_best_size": 20,
    "max_answer_length": 30, "use_tpu": False, "tpu_name": None, "tpu_zone": None,
    "gcp_project": None, "master": None, "num_tpu_cores": 8, "verbose_logging": False,
    "version_2_with_negative": False, "null_score_diff_threshold": 0.0}


def test_data_dir_is_no_flag_of_run_squad(tmp_path):
    result = run_script("run_squad.py", "--data_dir=squad", "--do_predict",
                        f"--output_dir={tmp_path / 'out'}")
    # As in the original, which has no such flag: it would be ignored.
    assert result.returncode == 2
    assert "run_squad: error: Unknown command line flag 'data_dir'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_predict_file_that_is_a_folder_is_named_in_one_line(tmp_path):
    """Python's "[Errno 21] Is a directory: 'PATH'", told with the flag and what to do."""
    result = run_script("run_squad.py", "--do_predict", f"--predict_file={tmp_path}",
                        f"--bert_config_file={write_tiny_bert_config(tmp_path / 'c.json')}",
                        f"--vocab_file={shared_path('vocab', 'bert-base-uncased-vocab.txt')}",
                        f"--output_dir={tmp_path / 'out'}", "--max_seq_length=128")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (f"run_squad: error: --predict_file={tmp_path}: "
                                              "a folder; name the SQuAD JSON file in it")


def test_every_original_flag_with_its_default():
    load_script("run_squad.py")
    defaults = {name: flags.FLAGS[name].default for name in flags.FLAGS}
    assert len(ORIGINAL_FLAGS) == 30
    assert {name: defaults.get(name, "missing") for name in ORIGINAL_FLAGS} == ORIGINAL_FLAGS
    assert defaults["do_eval"] is False
