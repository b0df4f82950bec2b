"""A left-to-right model (`"causal": true`, run_pretraining.py --causal) is fine-tuned left to
right, as the paper's "LTR & No NSP" row was: each runner used to refuse it. Every family's
model now attends to earlier positions only; the sentence-level ones classify from the last
real token, the one position that has seen the whole text."""

import dataclasses
import json

import numpy as np
import pytest

from bert_tf.errors import UsageError
from bert_tf.serving import export
from bert_tf.serving.sources import find_encoder, read_source
from bert_tf.tasks import token_features
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.glue_data import get_task
from bert_tf.tasks.model_files import resolve_model_files
from bert_tf.tasks.multiple_choice import SwagTask
from bert_tf.tasks.ner import NerTask
from bert_tf.tasks.output_dir_checks import check_run_record
from bert_tf.tasks.pretraining import PretrainingTask
from bert_tf.tasks.run_record import run_record
from bert_tf.tasks.squad import SquadTask
from tasks.task_runs import (LENGTH, REAL, changed_words, differs, model_outputs, padded_inputs,
                             quick_options)
from tests_shared import write_tiny_release

LATER = 6  # positions from LATER on are changed; the real text ends at REAL


@pytest.fixture(scope="module")
def causal_release(tmp_path_factory, uncased_vocab_file):
    """An original release folder of a tiny left-to-right encoder (1 layer, H=32)."""
    return write_tiny_release(tmp_path_factory.mktemp("ltr"), uncased_vocab_file,
                              num_hidden_layers=1, causal=True)


def _files(folder):
    """What every runner resolves from its flags (`runner_flags.model_files`)."""
    return resolve_model_files(init_checkpoint=str(folder), max_seq_length=LENGTH)


def _assert_same(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-7)


def _assert_left_to_right(model, shape):
    """The model's encoder: earlier positions do not see later ones."""
    encoder = find_encoder(model)
    inputs = padded_inputs((int(np.prod(shape[:-1])), LENGTH))  # multiple choice: one per ending
    before = np.asarray(encoder(inputs)["sequence_output"])
    after = np.asarray(encoder(changed_words(inputs, slice(LATER, REAL)))["sequence_output"])
    _assert_same(before[:, :LATER], after[:, :LATER])
    assert differs(before[:, LATER:REAL], after[:, LATER:REAL])


@pytest.mark.parametrize("family", ["squad", "ner"])
def test_token_level_families_tag_each_position_from_its_left_context(causal_release, family,
                                                                      tmp_path):
    files = _files(causal_release)
    task = (SquadTask(files) if family == "squad" else
            NerTask(str(tmp_path), files, LENGTH, do_lower_case=True))
    model = task.build_model()
    _assert_left_to_right(model, (2, LENGTH))
    inputs = padded_inputs((2, LENGTH))
    before = model_outputs(model, inputs)
    after = model_outputs(model, changed_words(inputs, slice(LATER, REAL)))
    _assert_same(before[:, :LATER], after[:, :LATER])
    assert differs(before[:, LATER:REAL], after[:, LATER:REAL])


@pytest.mark.parametrize("family", ["classifier", "swag"])
def test_sentence_level_families_classify_from_the_last_real_token(causal_release, family):
    """[CLS] sees only itself left to right; the last real token has seen the whole text."""
    files = _files(causal_release)
    if family == "classifier":
        task, shape = ClassificationTask(get_task("MRPC"), None, files, LENGTH), (2, LENGTH)
    else:
        task, shape = SwagTask(None, files, LENGTH), (2, 4, LENGTH)
    model = task.build_model()
    _assert_left_to_right(model, shape)
    inputs = padded_inputs(shape)
    logits = model_outputs(model, inputs)
    assert differs(model_outputs(model, changed_words(inputs, 1)), logits)  # the first word
    assert differs(model_outputs(model, changed_words(inputs, REAL - 1)), logits)  # the last
    _assert_same(model_outputs(model, changed_words(inputs, slice(REAL, None))), logits)  # padding


def test_feature_based_ner_reads_left_to_right_features_cached_as_such(causal_release,
                                                                       tmp_path):
    task = NerTask(str(tmp_path), _files(causal_release), LENGTH, do_lower_case=True,
                   mode="feature_based", feature_layers="last", cache_dir=str(tmp_path))
    assert task.encoder().causal
    columns = {name: value for name, value in padded_inputs((2, LENGTH)).items()}
    config = task.model_files.config
    left_to_right = token_features.fingerprint(str(causal_release), "last", columns, config)
    assert left_to_right["bert_config"]["causal"] is True
    both_ways = dataclasses.replace(config, extra={})
    # The mark removed: another key, so the features are computed anew.
    assert token_features.fingerprint(str(causal_release), "last", columns,
                                      both_ways) != left_to_right


def test_exports_keep_the_mark_and_masked_lm_is_refused(causal_release, tmp_path):
    source = read_source(causal_release)
    assert source.config.extra == {"causal": True}
    with pytest.raises(ValueError, match=r'^\S+: a left-to-right model \("causal": true, from '
                                         r"run_pretraining\.py --causal\), which predicts the "
                                         r"token after each position, not the \[MASK\] a "
                                         r"masked-LM export is asked to fill in; remove the "
                                         r"key from its bert_config\.json to use it with "
                                         r"attention both ways$"):
        export("masked_lm", causal_release, tmp_path / "served")
    assert not (tmp_path / "served").exists()


def test_pretraining_it_both_ways_is_refused(causal_release):
    files = _files(causal_release)
    with pytest.raises(UsageError, match=rf'^--init_checkpoint={causal_release}: a '
                                         r'left-to-right model \("causal": true, .*\), which '
                                         r"pretraining without --causal would train with "
                                         r"attention both ways \(pass --causal to go on left "
                                         r"to right\); remove the key"):
        PretrainingTask(files, "records.tfrecord", nsp=False)
    assert PretrainingTask(files, "records.tfrecord", causal=True).causal


def test_a_run_trained_both_ways_does_not_resume_left_to_right(causal_release, tmp_path):
    """A fine-tuning run recorded without the mark (the key removed) trained its model both
    ways: given the mark back, it must not go on left to right from those weights."""
    task = SquadTask(_files(causal_release))
    options = quick_options(tmp_path, do_train=True, num_train_steps=4, random_seed=None)

    def check():
        check_run_record(str(tmp_path), run_record(task, options, 4), options)

    check()
    (tmp_path / "ckpt-2.index").write_bytes(b"")  # a checkpoint to resume from
    check()  # the same run: resumes
    record = json.loads((tmp_path / "run.json").read_text())
    del record["model"]["bert_config"]["causal"]
    (tmp_path / "run.json").write_text(json.dumps(record))
    with pytest.raises(UsageError, match=r"model\.bert_config\.causal: None in the recorded "
                                         r"run, True now"):
        check()
