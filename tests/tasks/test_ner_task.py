"""The NER family run in-process through the runner flow, both modes, on real CoNLL sentences."""

import keras
import numpy as np
import pytest
import seqeval.metrics
import tensorflow as tf
import torch

from bert_tf.checkpoints import CheckpointError, export_original, restore, save_tf1_checkpoint
from bert_tf.errors import UsageError
from bert_tf.modeling import BertEncoder
from bert_tf.modeling.bilstm import BiLstmTagger
from bert_tf.tasks import runner, token_features
from bert_tf.tasks.entity_metrics import entities
from bert_tf.tasks.model_files import ModelFiles
from bert_tf.tasks.losses import tagging_objective
from bert_tf.tasks.ner import NerTask, build_token_classifier
from bert_tf.tasks.tagging_features import predicted_tags
from bert_tf.training.init_checkpoint import initialize_from_checkpoint
from bert_tf.training.objective import batch_loss
from tasks.task_runs import (conll_subset, quick_options, read_predictions, read_results,
                             tiny_model_files)
from tests_shared import file_size_limit


def _assert_scores_match_seqeval(results, gold, predicted, prefix):
    assert results[f"{prefix}_f1"] == pytest.approx(seqeval.metrics.f1_score(gold, predicted),
                                                    abs=1e-12)
    assert results[f"{prefix}_precision"] == pytest.approx(
        seqeval.metrics.precision_score(gold, predicted), abs=1e-12)
    assert results[f"{prefix}_recall"] == pytest.approx(
        seqeval.metrics.recall_score(gold, predicted), abs=1e-12)


def test_objective_is_cross_entropy_over_first_pieces_only():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 7, 9)).astype("float32")
    labels = rng.integers(0, 9, (3, 7)).astype("int32")
    weights = (rng.random((3, 7)) < 0.5).astype("float32")
    total, _ = batch_loss(tagging_objective(), logits, {"label_ids": labels,
                                                        "label_weights": weights})
    ignored = np.where(weights > 0, labels, -100)
    theirs = torch.nn.functional.cross_entropy(torch.from_numpy(logits).reshape(-1, 9),
                                               torch.from_numpy(ignored).long().reshape(-1))
    assert float(total) == pytest.approx(float(theirs), rel=1e-6)


def test_fine_tune_trains_evaluates_predicts_and_exports(tmp_path):
    data = conll_subset(tmp_path, 24)
    task = NerTask(str(data), tiny_model_files(num_hidden_layers=1), max_seq_length=32,
                   do_lower_case=True, doc_stride=16)
    out = tmp_path / "out"
    results = runner.run(task, quick_options(out, do_train=True, do_eval=True,
                                             do_predict=True, export_dir=str(tmp_path / "served")))
    written = read_results(out / "eval_results.txt")
    assert {"eval_f1", "eval_precision", "eval_recall", "eval_accuracy", "eval_loss",
            "global_step", "eval_PER_f1", "eval_LOC_f1"} <= set(written)
    dev = task.read_split("dev")
    assert results["global_step"] == len(task.read_split("train")) // 8
    gold, predicted = read_predictions(out / "dev_predictions.txt")
    assert gold == [list(s.tags) for s in dev.sentences]
    _assert_scores_match_seqeval(results, gold, predicted, "eval")
    test_gold, test_predicted = read_predictions(out / "test_predictions.txt")
    _assert_scores_match_seqeval({k: float(v) for k, v in
                                  read_results(out / "test_results.txt").items()},
                                 test_gold, test_predicted, "test")
    # The exported folder predicts what was scored, and its loss is torch's.
    model = build_token_classifier(task.model_files.config, len(task.labels))
    restore(model, str(out))
    inputs = {k: dev.columns[k] for k in ("input_ids", "input_mask", "segment_ids")}
    logits = np.asarray(model(inputs, training=False))
    assert [list(t) for t in predicted_tags(dev.windows, logits, dev.sentence_lengths,
                                            task.labels)] == predicted
    labels = np.where(dev.columns["label_weights"] > 0, dev.columns["label_ids"], -100)
    loss = torch.nn.functional.cross_entropy(torch.tensor(logits).reshape(-1, 9),
                                             torch.from_numpy(labels).long().reshape(-1))
    assert results["eval_loss"] == pytest.approx(float(loss), rel=1e-5)
    assert (out / "labels.txt").read_text().split() == list(task.labels)
    _assert_served_entities_match(tmp_path / "served", dev, predicted, task)


def _assert_served_entities_match(export_dir, dev, predicted, task):
    """The `ner` SavedModel finds the entities of dev_predictions.txt in the sentences' text.

    Compared on the sentences that fit one window and whose CoNLL words are
    the basic tokenizer's words (the export's words).
    """
    served = tf.saved_model.load(str(export_dir))
    compared = entity_count = 0
    for sentence, tags in zip(dev.sentences, predicted):
        text = " ".join(sentence.words)
        if (task.tokenizer.basic_tokenizer.tokenize(text) != [w.lower() for w in sentence.words]
                or len(task.tokenizer.tokenize(text)) > task.max_seq_length - 2):
            continue
        starts = np.cumsum([0] + [len(w) + 1 for w in sentence.words])
        expected = [(e.type, int(starts[e.start]), int(starts[e.end] - 1))
                    for e in entities(tags)]
        found = served.signatures["serving_default"](text=tf.constant([text]))
        count = int(found["num_entities"][0])
        assert [(t.decode(), int(s), int(e)) for t, s, e in zip(
            found["entity_type"][0].numpy()[:count], found["entity_start"][0].numpy(),
            found["entity_end"][0].numpy())] == expected, text
        compared, entity_count = compared + 1, entity_count + count
    assert compared >= 8 and entity_count >= 5, (compared, entity_count)


def _init_checkpoint(tmp_path):
    """A random tiny encoder exported as an original release folder (the frozen encoder)."""
    files = tiny_model_files(num_hidden_layers=4)
    keras.utils.set_random_seed(7)
    encoder = BertEncoder(files.config)
    export_original(encoder, files.config, files.vocab_file, str(tmp_path / "init"))
    return ModelFiles(files.config, files.vocab_file,
                      str(tmp_path / "init" / "bert_model.ckpt"))


def test_feature_based_caches_features_and_exports_the_bilstm(tmp_path):
    data = conll_subset(tmp_path, 16)
    files = _init_checkpoint(tmp_path)
    out = tmp_path / "out"

    def task():
        return NerTask(str(data), files, max_seq_length=32, do_lower_case=True, doc_stride=16,
                       mode="feature_based", feature_layers="concat_last_four", lstm_units=8,
                       cache_dir=str(out / "features"))

    options = dict(init_checkpoint=files.init_checkpoint, learning_rate=1e-2)
    trained = runner.run(task(), quick_options(out, do_train=True, do_eval=True, **options))
    caches = sorted(p.name for p in (out / "features").iterdir())
    assert caches == ["dev_concat_last_four.npy", "dev_concat_last_four.npy.json",
                      "train_concat_last_four.npy", "train_concat_last_four.npy.json"]
    stamps = [(out / "features" / name).stat().st_mtime_ns for name in caches]
    # Scoring the folder again: the BiLSTM comes back from the training checkpoint and
    # the features from the cache (not recomputed).
    rescored = runner.run(task(), quick_options(out, do_eval=True, **options))
    assert rescored == trained
    assert [(out / "features" / name).stat().st_mtime_ns for name in caches] == stamps

    # The export holds the unchanged encoder and every tagger variable: rebuilt from it
    # alone, text in, it gives the trained tagger's logits on the cached features.
    reader = tf.train.load_checkpoint(str(out / "bert_model.ckpt"))
    original = tf.train.load_checkpoint(files.init_checkpoint)
    names = reader.get_variable_to_shape_map()
    assert sum(name.startswith("ner/") for name in names) == 14
    for name in original.get_variable_to_shape_map():
        np.testing.assert_array_equal(reader.get_tensor(name), original.get_tensor(name))
    encoder = BertEncoder(files.config)
    selected = token_features.select_layers(encoder(encoder.input), "concat_last_four")
    tagger = BiLstmTagger(9, lstm_units=8)
    pipeline = keras.Model(encoder.input, tagger(selected, encoder.input["input_mask"]))
    restore(pipeline, str(out))
    dev = task().read_split("dev")
    exported = np.asarray(pipeline({k: dev.columns[k] for k in token_features.ENCODER_INPUTS}))
    trained = token_features.build_feature_tagger(4 * 32, 9, 8)
    initialize_from_checkpoint(trained, tf.train.latest_checkpoint(str(out)))
    cached = np.load(out / "features" / "dev_concat_last_four.npy")
    batches = token_features.feature_dataset(cached, dev.columns, batch_size=64)
    logits = np.concatenate([np.asarray(trained({"features": b["features"],
                                                 "input_mask": b["input_mask"]}))
                             for b in batches])
    mask = dev.columns["input_mask"].astype(bool)
    assert np.abs(logits[mask]).max() > 0.05
    np.testing.assert_allclose(exported[mask], logits[mask], atol=1e-5)
    _, predicted = read_predictions(out / "dev_predictions.txt")
    assert [list(t) for t in predicted_tags(dev.windows, logits, dev.sentence_lengths,
                                            task().labels)] == predicted


def test_a_layer_without_an_original_name_is_not_dropped_silently(tmp_path):
    files = tiny_model_files()
    encoder = BertEncoder(files.config)
    extra = keras.layers.Dense(3, name="my_head")
    model = keras.Model(encoder.input, extra(encoder(encoder.input)["sequence_output"]))
    with pytest.raises(CheckpointError, match="my_head/kernel"):
        save_tf1_checkpoint(model, str(tmp_path / "bert_model.ckpt"))
    assert not list(tmp_path.iterdir())


def test_bad_data_fails_before_training_naming_the_line(tmp_path):
    data = conll_subset(tmp_path, 4)
    with open(data / "eng.testa", "a") as f:
        f.write("Paris NNP I-NP I-CITY\n")
    task = NerTask(str(data), tiny_model_files(), max_seq_length=32, do_lower_case=True)
    with pytest.raises(ValueError, match=r"eng.testa:\d+: unknown entity tag 'I-CITY'"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True, do_eval=True))
    assert not (tmp_path / "out").exists()
    # Windows of 4 pieces: a word of more than that, named with its file.
    task = NerTask(str(data), tiny_model_files(), max_seq_length=6, do_lower_case=True)
    with pytest.raises(ValueError, match=rf"^{data / 'eng.train'}: sentence train-\d+ \(line "
                                         r"\d+\): word \d+ has \d+ word pieces, more than "
                                         r"the 4"):
        task.read_split("train")


@pytest.mark.parametrize("feature_layers, fits", [
    ("concat_last_four", False), ("sum_last_four", False), ("second_to_last", True),
    ("sum_all", True)])
def test_feature_layers_a_shallow_encoder_lacks_are_refused(tmp_path, feature_layers, fits):
    # The tiny encoder has 2 layers: "the last four" would silently be two.
    files = tiny_model_files()
    files = ModelFiles(files.config, files.vocab_file, str(tmp_path / "bert_model.ckpt"))

    def task():
        return NerTask(str(tmp_path), files, max_seq_length=32, do_lower_case=True,
                       mode="feature_based", feature_layers=feature_layers,
                       cache_dir=str(tmp_path / "features"))
    if fits:
        assert task().feature_layers == feature_layers
    else:
        with pytest.raises(UsageError, match=f"--feature_layers={feature_layers} needs an "
                                             "encoder of at least 4 layers; this one has 2"):
            task()


def test_test_predictions_and_their_scores_are_replaced_together(tmp_path):
    """A full disk at test_results.txt leaves the earlier pair: never new tags beside the
    earlier scores of other tags."""
    task = NerTask(str(conll_subset(tmp_path, 1)), tiny_model_files(), max_seq_length=32,
                   do_lower_case=True)
    test = task.read_split("test")
    rng = np.random.default_rng(0)
    out = tmp_path / "out"
    out.mkdir()
    shape = test.columns["input_ids"].shape + (len(task.labels),)
    task.write_predictions(rng.normal(size=shape), test, str(out))
    before = {path.name: path.read_text() for path in out.iterdir()}
    assert sorted(before) == ["test_predictions.txt", "test_results.txt"]
    # One sentence: its tags fit under the limit, its scores (a line per type) do not.
    limit = len(before["test_predictions.txt"]) + 40
    assert len(before["test_results.txt"]) > limit + 40
    outputs = rng.normal(size=shape)
    (tmp_path / "new").mkdir()
    task.write_predictions(outputs, test, str(tmp_path / "new"))
    assert (tmp_path / "new" / "test_predictions.txt").read_text() != before[
        "test_predictions.txt"]
    with file_size_limit(limit), pytest.raises(
            OSError, match=rf"^cannot write {out}/test_results.txt: File too large$"):
        task.write_predictions(outputs, test, str(out))
    assert {path.name: path.read_text() for path in out.iterdir()} == before


def test_a_feature_based_tagger_is_scored_only_on_its_own_encoders_features(tmp_path):
    """Its ckpt-N holds the tagger alone: scored with another --init_checkpoint, the dev
    features came from that encoder (F1 0.034 -> 0.0), with a warning that the other
    checkpoint was not what is scored."""
    from bert_tf.tasks.output_dir_checks import check_run_record
    from bert_tf.tasks.run_record import run_record
    files = tiny_model_files()
    starts = []
    for seed in (1, 2):
        keras.utils.set_random_seed(seed)
        starts.append(save_tf1_checkpoint(BertEncoder(files.config),
                                          str(tmp_path / f"start{seed}" / "bert_model.ckpt")))
    out = tmp_path / "out"
    out.mkdir()

    def check(start, **phases):
        task = NerTask(str(tmp_path), ModelFiles(files.config, files.vocab_file, start),
                       max_seq_length=32, do_lower_case=True, mode="feature_based",
                       feature_layers="second_to_last", cache_dir=str(out / "features"))
        options = quick_options(out, init_checkpoint=start, **phases)
        check_run_record(str(out), run_record(task, options, 2), options)

    check(starts[0], do_train=True)
    (out / "ckpt-2.index").write_bytes(b"")  # its tagger's training checkpoint
    check(starts[0], do_eval=True)
    with pytest.raises(UsageError, match=r"holds a tagger trained on the features of other "
                                         r"start weights \(start_weights: "):
        check(starts[1], do_eval=True)
