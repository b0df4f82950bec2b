"""export_savedmodel.py and classify_text.py on the exports, as users run them."""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.tasks.packing import pack_tokens, stack_inputs
from bert_tf.tokenization import FullTokenizer
from serving_support import LABELS
from tests_shared import run_script

TEXT_A, TEXT_B = "A man is playing the guitar.", "Ünïcödé: someone plays music."


def _one_error_line(result, program, expected):
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{program}: error: ") and expected in last, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def test_classify_text_exports_once_and_matches_the_model(classifier_folder, tmp_path,
                                                         uncased_vocab_file):
    folder, model = classifier_folder
    model_dir = tmp_path / "model"
    shutil.copytree(folder, model_dir)
    first = run_script("classify_text.py", f"--model_dir={model_dir}", "--max_seq_length=16",
                       f"--text={TEXT_A}", f"--text_b={TEXT_B}")
    assert first.returncode == 0, first.stderr[-3000:]
    saved = model_dir / "saved_model" / "saved_model.pb"
    made = os.path.getmtime(saved)
    again = run_script("classify_text.py", f"--export_dir={model_dir / 'saved_model'}",
                       f"--text={TEXT_A}", f"--text_b={TEXT_B}")
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout == first.stdout and os.path.getmtime(saved) == made

    # A damaged export: alone, one line naming it; beside its model, made again.
    # Its graph cut short, or its weights (TensorFlow's IndexError: a traceback, and the
    # export beside its model was never made again).
    variables = next((model_dir / "saved_model" / "variables").glob("variables.data-*"))
    for damaged_file, reason in ((saved, "Error parsing message"),
                                 (variables, "Read less bytes than requested")):
        damaged_file.write_bytes(damaged_file.read_bytes()[:100])
        damaged = run_script("classify_text.py", f"--export_dir={model_dir / 'saved_model'}",
                             f"--text={TEXT_A}")
        _one_error_line(damaged, "classify_text", f"--export_dir={model_dir / 'saved_model'}: "
                                                  "not a SavedModel that loads")
        assert reason in damaged.stderr
        remade = run_script("classify_text.py", f"--model_dir={model_dir}",
                            "--max_seq_length=16", f"--text={TEXT_A}", f"--text_b={TEXT_B}")
        assert remade.returncode == 0, remade.stderr[-3000:]
        assert remade.stdout == first.stdout

    tokenizer = FullTokenizer(uncased_vocab_file)
    inputs = stack_inputs([pack_tokens(tokenizer.tokenize(TEXT_A), tokenizer.tokenize(TEXT_B),
                                       tokenizer, 16)])
    expected = tf.nn.softmax(model(inputs, training=False))[0].numpy()
    label, text, text_b = first.stdout.splitlines()[0].split("\t")
    assert (text, text_b) == (TEXT_A, TEXT_B) and label == LABELS[int(np.argmax(expected))]
    printed = dict(pair.split("=") for pair in first.stdout.splitlines()[1].split())
    np.testing.assert_allclose([float(printed[l]) for l in LABELS], expected, atol=1e-3)


def test_export_savedmodel_writes_what_the_flags_say(classifier_folder, tmp_path,
                                                    uncased_vocab_file):
    # Staging folders of earlier exports there: a killed one's goes, a live one's stays.
    (tmp_path / "served.tmp-999999999" / "variables").mkdir(parents=True)
    (tmp_path / "served.tmp-1").mkdir()  # process 1 is always alive
    result = run_script("export_savedmodel.py", "--kind=encoder",
                        f"--model_dir={classifier_folder[0]}/bert_model.ckpt",
                        f"--export_dir={tmp_path / 'served'}", "--max_seq_length=24",
                        "--do_lower_case=false")
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["served", "served.tmp-1"]
    served = tf.saved_model.load(str(tmp_path / "served"))
    metadata = served.signatures["metadata"]()
    assert metadata["kind"].numpy() == b"encoder"
    assert metadata["max_seq_length"].numpy() == 24 and not metadata["do_lower_case"].numpy()
    text = "Unaffable JOHN"
    pieces = {lower: FullTokenizer(uncased_vocab_file, lower).tokenize(text)
              for lower in (True, False)}
    assert len(pieces[True]) != len(pieces[False])
    cased = served.signatures["serving_default"](text=tf.constant([text]))
    assert cased["input_mask"].shape == (1, len(pieces[False]) + 2)
    # classify_text names an export of another kind instead of failing inside it.
    result = run_script("classify_text.py", f"--export_dir={tmp_path / 'served'}", f"--text={text}")
    _one_error_line(result, "classify_text", "the SavedModel there is of kind encoder, not "
                    "classifier")
    # Bytes a shell passed that are not UTF-8 (Python keeps them as surrogates).
    result = run_script("classify_text.py", f"--export_dir={tmp_path / 'served'}",
                        "--text=caf\udce9")
    _one_error_line(result, "classify_text", "--text='caf\\udce9' is not UTF-8 text")
    # A flag of another kind is refused, not ignored.
    result = run_script("export_savedmodel.py", "--kind=encoder", "--top_k=3",
                        f"--model_dir={classifier_folder[0]}/bert_model.ckpt",
                        f"--export_dir={tmp_path / 'other'}")
    assert result.returncode == 2
    _one_error_line(result, "export_savedmodel", "--top_k applies only with --kind=masked_lm")
    assert not (tmp_path / "other").exists()


def test_export_savedmodel_span_qa_flags(tmp_path, uncased_vocab_file):
    from bert_tf.checkpoints import export_original
    from bert_tf.config import BertConfig
    from bert_tf.modeling import build_span_model

    config = BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=16,
                        max_position_embeddings=64)
    export_original(build_span_model(config), config, uncased_vocab_file,
                    str(tmp_path / "squad"))
    result = run_script("export_savedmodel.py", "--kind=span_qa",
                        f"--model_dir={tmp_path / 'squad'}", f"--export_dir={tmp_path / 'served'}",
                        "--max_seq_length=40", "--doc_stride=7", "--max_query_length=9",
                        "--n_best_size=3", "--max_answer_length=4", "--version_2_with_negative",
                        "--null_score_diff_threshold=0.25", "--jit_compile")
    assert result.returncode == 0, result.stderr[-3000:]
    metadata = tf.saved_model.load(str(tmp_path / "served")).signatures["metadata"]()
    assert {key: value.numpy().item() for key, value in metadata.items()
            if key not in ("bert_config", "kind")} == {
        "max_seq_length": 40, "do_lower_case": True, "doc_stride": 7, "max_query_length": 9,
        "n_best_size": 3, "max_answer_length": 4, "version_2_with_negative": True,
        "null_score_diff_threshold": 0.25, "jit_compile": True}


def test_a_folder_without_labels_is_one_error_line(classifier_folder, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(classifier_folder[0], folder, ignore=shutil.ignore_patterns("labels.txt"))
    result = run_script("export_savedmodel.py", "--kind=classifier", f"--model_dir={folder}",
                        f"--export_dir={tmp_path / 'out'}")
    _one_error_line(result, "export_savedmodel", f"{folder}/labels.txt: not found")


def test_a_folder_with_only_training_checkpoints_is_one_error_line(classifier_folder,
                                                                   tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(classifier_folder[0], folder,
                    ignore=shutil.ignore_patterns("bert_model.ckpt*"))
    tf.train.CheckpointManager(tf.train.Checkpoint(model=classifier_folder[1]), str(folder),
                               max_to_keep=1).save(checkpoint_number=3)
    result = run_script("classify_text.py", f"--model_dir={folder}", "--text=hello")
    _one_error_line(result, "classify_text", "ckpt-3: a training checkpoint (for resuming)")


def _metadata(export_dir):
    metadata = tf.saved_model.load(str(export_dir)).signatures["metadata"]()
    return {key: value.numpy().item() for key, value in metadata.items()
            if key not in ("bert_config", "kind", "labels")}


def test_exports_read_text_as_the_model_was_trained(classifier_folder, tmp_path,
                                                    uncased_vocab_file):
    """Flags left out come from run.json; without one, the casing is the vocabulary's."""
    import json

    folder = tmp_path / "cased_run"
    shutil.copytree(classifier_folder[0], folder)
    (folder / "run.json").write_text(json.dumps(
        {"task": {"task": "ner", "do_lower_case": False, "max_seq_length": 24}}))
    result = run_script("export_savedmodel.py", "--kind=encoder", f"--model_dir={folder}",
                        f"--export_dir={tmp_path / 'served'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert _metadata(tmp_path / "served") == {"max_seq_length": 24, "do_lower_case": False,
                                              "jit_compile": False}
    # Against the recorded casing: refused before anything is written.
    result = run_script("classify_text.py", f"--model_dir={folder}", "--do_lower_case=true",
                        "--text=hello")
    assert result.returncode == 2
    _one_error_line(result, "classify_text", "trained with --do_lower_case=False (run.json)")
    assert not (folder / "saved_model").exists()

    # No run.json (an original release folder): a vocabulary with capitals is a cased model's.
    release = tmp_path / "cased_release"
    shutil.copytree(classifier_folder[0], release)
    vocab = (release / "vocab.txt").read_text().splitlines()
    vocab[vocab.index("john")] = "John"
    (release / "vocab.txt").write_text("\n".join(vocab) + "\n")
    result = run_script("classify_text.py", f"--model_dir={release}", "--max_seq_length=16",
                        "--text=hello")
    assert result.returncode == 0, result.stderr[-3000:]
    assert _metadata(release / "saved_model")["do_lower_case"] is False

    # A checkpoint prefix as --model_dir: the export goes beside the checkpoint, not under it.
    result = run_script("classify_text.py", f"--model_dir={release / 'bert_model.ckpt'}",
                        "--max_seq_length=16", "--text=hello")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (release / "bert_model.ckpt.index").is_file() and not (
        release / "bert_model.ckpt").exists()
    # A record that is JSON but not a runner's: one line naming the file.
    (folder / "run.json").write_text("[1, 2]")
    result = run_script("export_savedmodel.py", "--kind=encoder", f"--model_dir={folder}",
                        f"--export_dir={tmp_path / 'other'}")
    _one_error_line(result, "export_savedmodel", "run.json: unreadable run record")
    (folder / "run.json").write_text(json.dumps({"task": {"max_seq_length": "24"}}))
    result = run_script("export_savedmodel.py", "--kind=encoder", f"--model_dir={folder}",
                        f"--export_dir={tmp_path / 'other'}")
    _one_error_line(result, "export_savedmodel", "run.json: max_seq_length='24' is not a int")

    # A SQuAD 2.0 run: its windows and null answers too.
    squad = tmp_path / "squad_run"
    shutil.copytree(classifier_folder[0], squad)
    (squad / "run.json").write_text(json.dumps({"task": {
        "task": "squad", "do_lower_case": True, "max_seq_length": 40, "doc_stride": 7,
        "max_query_length": 9, "version_2_with_negative": True}}))
    from bert_tf.checkpoints import export_original
    from bert_tf.config import BertConfig
    from bert_tf.modeling import build_span_model
    config = BertConfig.from_json_file(str(squad / "bert_config.json"))
    export_original(build_span_model(config), config, uncased_vocab_file, str(squad))
    result = run_script("export_savedmodel.py", "--kind=span_qa", f"--model_dir={squad}",
                        f"--export_dir={tmp_path / 'served_qa'}", "--n_best_size=3")
    assert result.returncode == 0, result.stderr[-3000:]
    assert _metadata(tmp_path / "served_qa") == {
        "max_seq_length": 40, "do_lower_case": True, "doc_stride": 7, "max_query_length": 9,
        "n_best_size": 3, "max_answer_length": 30, "version_2_with_negative": True,
        "null_score_diff_threshold": 0.0, "jit_compile": False}


def test_an_export_dir_an_export_cannot_replace_is_a_usage_error(classifier_folder, tmp_path):
    # As the runners' --export_dir: exit 2, the flag named, nothing exported.
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README").write_text("mine\n")
    result = run_script("export_savedmodel.py", "--kind=classifier",
                        f"--model_dir={classifier_folder[0]}", f"--export_dir={tmp_path / 'notes'}")
    assert result.returncode == 2
    _one_error_line(result, "export_savedmodel", f"--export_dir: {tmp_path / 'notes'}: holds "
                                                 "README, not only a SavedModel")
    result = run_script("classify_text.py", f"--model_dir={classifier_folder[0]}",
                        "--export_dir=gs://bucket/served", "--text=hello")
    assert result.returncode == 2
    _one_error_line(result, "classify_text", "--export_dir: gs://bucket/served: exports are "
                                             "written to a local folder")
    assert os.listdir(tmp_path / "notes") == ["README"]


@pytest.mark.parametrize("script, flag, value, bound", [
    ("export_savedmodel.py", "max_seq_length", 2, "integer >= 3"),
    ("export_savedmodel.py", "top_k", 0, "a positive integer"),
    ("export_savedmodel.py", "doc_stride", 0, "a positive integer"),
    ("export_savedmodel.py", "n_best_size", -1, "a positive integer"),
    ("classify_text.py", "max_seq_length", 0, "integer >= 3")])
def test_a_length_flag_out_of_bounds_is_a_usage_error(tmp_path, script, flag, value, bound):
    # As the runners define them; it was exit 1 after loading the model, with
    # "seq_length must be at least 3, got 2" naming no flag, or for top_k 0,
    # "top_k must be between 1 and the vocabulary size".
    given = {"export_savedmodel.py": "--kind=masked_lm" if flag == "top_k" else "--kind=span_qa",
             "classify_text.py": "--text=hi"}[script]
    result = run_script(script, given, f"--model_dir={tmp_path}",
                        f"--export_dir={tmp_path / 'out'}", f"--{flag}={value}")
    assert result.returncode == 2
    program = script.removesuffix(".py")
    assert result.stderr.startswith(
        f"{program}: error: flag --{flag}={value}: {value} is not {bound} (--help lists the "
        "script's flags)\n"), result.stderr[-2000:]


def test_a_model_without_a_savedmodel_kind_is_refused_in_one_sentence():
    # A feature-based NER run records serving_kind None: only its encoder can be served.
    from bert_tf.errors import UsageError
    from bert_tf.scripts.trained_settings import _check_kind
    _check_kind("ner_out", {"serving_kind": None, "task": {"task": "ner"}}, "encoder")
    with pytest.raises(UsageError) as refused:
        _check_kind("ner_out", {"serving_kind": None, "task": {"task": "ner"}}, "ner")
    assert str(refused.value) == ("ner_out/run.json: the model in ner_out was trained for task "
                                  "ner and has no ner SavedModel, only its encoder's "
                                  "(--kind=encoder)")


def test_classify_text_remakes_its_export_when_a_shard_of_the_weights_changes(tmp_path):
    """A sharded HuggingFace folder: the cache watched the index file, not the shards."""
    import json

    from tests_shared import load_script
    classify_text = load_script("classify_text.py")
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"a": shards[0], "b": shards[1]}}))
    for name in shards:
        (tmp_path / name).write_bytes(b"")
    export = tmp_path / "saved_model"
    export.mkdir()
    (export / "saved_model.pb").write_bytes(b"")
    now = os.path.getmtime(export / "saved_model.pb")
    for name in ["model.safetensors.index.json", *shards]:
        os.utime(tmp_path / name, (now - 10, now - 10))
    assert classify_text._newer_than_sources(str(export), str(tmp_path))
    os.utime(tmp_path / shards[1], (now + 10, now + 10))  # new weights in one shard
    assert not classify_text._newer_than_sources(str(export), str(tmp_path))


def test_classify_text_shows_a_tab_or_line_break_of_a_text_escaped():
    from tests_shared import load_script
    escaped = load_script("classify_text.py")._escaped
    assert escaped("a\tb\nc\r\\d") == "a\\tb\\nc\\r\\\\d"
    assert escaped("plain text") == "plain text"


def test_classify_text_warns_of_pairs_for_a_model_of_single_sentences(tmp_path, caplog):
    import json

    from tests_shared import load_script
    warn = load_script("classify_text.py")._warn_if_trained_on_single_texts
    for task in ("sst-2", "mrpc", "tsv"):
        (tmp_path / "run.json").write_text(json.dumps({"task": {"task": task}}))
        caplog.clear()
        with caplog.at_level("WARNING"):
            warn(str(tmp_path))
        assert ("fine-tuned on single sentences (task sst-2)" in caplog.text) == (task == "sst-2")
