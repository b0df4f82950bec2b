"""The paper's "+ BiLSTM" row: a randomly initialised BiLSTM between the encoder and the head
(`--bilstm`), for every fine-tuning family, left to right or both ways.

Without it a left-to-right model's earlier positions cannot see later words
(tests/tasks/test_left_to_right.py); with it they do, through the backward
LSTM. Its weights train, are saved and restored, and `run.json` records its
size, so a run is resumed, scored and exported with the same model only.
"""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import export_original, tf1_variable_map
from bert_tf.config_uses import as_causal
from bert_tf.errors import UsageError
from bert_tf.modeling.bilstm import bilstm_of
from bert_tf.serving.multiple_choice_export import choice_scorer
from bert_tf.serving.sources import find_encoder, read_source, span_model_from
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.glue_data import get_task
from bert_tf.tasks.multiple_choice import SwagTask
from bert_tf.tasks.ner import NerTask
from bert_tf.tasks.output_dir_checks import check_run_record
from bert_tf.tasks.scored_model_checks import check_scored_weights
from bert_tf.tasks.run_record import run_record
from bert_tf.tasks.squad import SquadTask, span_objective
from bert_tf.training.init_checkpoint import initialize_from_checkpoint
from bert_tf.training.objective import batch_loss
from tasks.task_runs import (LENGTH, REAL, changed_words, differs, model_outputs,
                             padded_inputs, quick_options, tiny_model_files)

LATER, UNITS = 6, 8  # positions from LATER on are changed
HALF = 16  # the runners' default for the tiny model: hidden size 32 / 2


def _files(causal=False):
    files = tiny_model_files(num_hidden_layers=1)
    if causal:
        files = type(files)(as_causal(files.config), files.vocab_file)
    return files


@pytest.mark.parametrize("family", ["squad", "ner"])
def test_left_to_right_token_logits_see_later_words_through_the_bilstm(family, tmp_path):
    """The encoder stays left to right; the logits of the positions before a changed word
    change too, which only the backward LSTM can make them do."""
    files = _files(causal=True)
    task = (SquadTask(files, bilstm_units=UNITS) if family == "squad" else
            NerTask(str(tmp_path), files, LENGTH, do_lower_case=True, bilstm_units=UNITS))
    model = task.build_model()
    assert find_encoder(model).causal and bilstm_of(model).lstm_units == UNITS
    inputs = padded_inputs((2, LENGTH))
    changed = changed_words(inputs, slice(LATER, REAL))
    encoder = find_encoder(model)
    np.testing.assert_array_equal(
        np.asarray(encoder(inputs)["sequence_output"])[:, :LATER],
        np.asarray(encoder(changed)["sequence_output"])[:, :LATER])
    before, after = model_outputs(model, inputs), model_outputs(model, changed)
    assert differs(before[:, :LATER], after[:, :LATER])
    np.testing.assert_array_equal(model_outputs(model, changed_words(inputs, slice(REAL, None))),
                                  before)  # padding is never read


def _assign(model, name, scale):
    variable = tf1_variable_map(model)[name].variable
    variable.assign(variable.numpy() * scale + 0.05)


@pytest.mark.parametrize("family", ["classifier", "swag"])
def test_sentence_heads_read_the_bilstm_final_states_not_the_pooler(family):
    """Both ways here (the option does not depend on the mark). The pooler, trained on the
    encoder's [CLS] vector, is not read; each LSTM direction's weights are. A served
    multiple-choice model scores each ending through the BiLSTM too."""
    files = _files()
    if family == "classifier":
        task, shape = ClassificationTask(get_task("MRPC"), None, files, LENGTH,
                                         bilstm_units=UNITS), (2, LENGTH)
    else:
        task, shape = SwagTask(None, files, LENGTH, bilstm_units=UNITS), (2, 4, LENGTH)
    assert not task.reads_pooled_output
    model = task.build_model()
    inputs = padded_inputs(shape)
    logits = model_outputs(model, inputs)
    if family == "swag":
        flat = {name: value.reshape(-1, LENGTH) for name, value in inputs.items()}
        np.testing.assert_allclose(np.asarray(choice_scorer(model)(flat)).reshape(2, 4),
                                   logits, atol=1e-6)
    _assign(model, "bert/pooler/dense/kernel", 3.0)
    np.testing.assert_array_equal(model_outputs(model, inputs), logits)
    for direction in ("forward", "backward"):
        _assign(model, f"bilstm_0/{direction}/kernel", 3.0)
        changed = model_outputs(model, inputs)
        assert differs(changed, logits), direction
        logits = changed


def test_bilstm_weights_are_trained_saved_and_restored(tmp_path):
    """Every BiLSTM weight gets a gradient of the span loss; the trainer's checkpoints and
    the release folder hold it (under bilstm_0/), and what they restore computes the same.
    A model without the BiLSTM may not score that folder: it would load the head alone."""
    keras.utils.set_random_seed(0)
    task = SquadTask(_files(causal=True), bilstm_units=HALF)
    model = task.build_model()
    inputs = padded_inputs((2, LENGTH))
    batch = dict(inputs, start_positions=np.array([3, 7]), end_positions=np.array([4, 8]))
    lstm_weights = bilstm_of(model).trainable_weights
    assert len(lstm_weights) == 6 and all(any(w is v for v in model.trainable_weights)
                                          for w in lstm_weights)
    with tf.GradientTape() as tape:
        loss, _ = batch_loss(span_objective(), model(inputs, training=True), batch)
    for weight, gradient in zip(lstm_weights, tape.gradient(loss, lstm_weights)):
        assert gradient is not None and np.abs(np.asarray(gradient)).max() > 0, weight.path
    expected = model_outputs(model, inputs)

    resumed = task.build_model()
    prefix = tf.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    tf.train.Checkpoint(model=resumed).read(prefix).assert_existing_objects_matched()
    np.testing.assert_array_equal(model_outputs(resumed, inputs), expected)

    release = tmp_path / "release"
    export_original(model, task.model_files.config, task.model_files.vocab_file, str(release))
    source = read_source(release)
    assert source.bilstm_units == HALF
    np.testing.assert_array_equal(model_outputs(span_model_from(source), inputs), expected)
    without = SquadTask(_files(causal=True)).build_model()
    loaded = initialize_from_checkpoint(without, str(release))
    with pytest.raises(UsageError, match=r"holds a BiLSTM over its encoder \(a model "
                                         r"fine-tuned with --bilstm\), and this run's model "
                                         r"has none; add --bilstm"):
        check_scored_weights("squad", str(release), loaded, reads_pooled_output=False)


def test_run_json_records_it_and_another_size_does_not_resume_or_score(tmp_path):
    """The size is part of the model a run trains: recorded, and a rerun with another
    size, or none, is refused (resuming or scoring the folder's checkpoint)."""
    def check(units, **phases):
        task = SquadTask(_files(causal=True), bilstm_units=units)
        options = quick_options(tmp_path, num_train_steps=4, random_seed=None, **phases)
        check_run_record(str(tmp_path), run_record(task, options, 4), options)

    check(HALF, do_train=True)
    assert json.loads((tmp_path / "run.json").read_text())["model"]["bilstm_units"] == HALF
    (tmp_path / "ckpt-2.index").write_bytes(b"")  # a checkpoint to resume from
    check(HALF, do_train=True)
    check(HALF, do_eval=True)
    for units, phase in ((0, "do_eval"), (2 * HALF, "do_train"), (0, "do_train")):
        with pytest.raises(UsageError, match=rf"model\.bilstm_units: {HALF} in the recorded "
                                             rf"run, {units or None} now"):
            check(units, **{phase: True})


def test_feature_based_ner_has_a_bilstm_of_its_own(tmp_path):
    with pytest.raises(UsageError, match=r"^--bilstm applies only with --mode=fine_tune: the "
                                         r"feature_based mode trains a BiLSTM of its own"):
        NerTask(str(tmp_path), _files(), LENGTH, True, mode="feature_based",
                cache_dir=str(tmp_path), bilstm_units=UNITS)
