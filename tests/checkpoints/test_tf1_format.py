"""Original TF1 checkpoint format: round trips, an independent reader, clear errors."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch

from bert_tf.checkpoints import (CheckpointError, export_original, load_tf1_checkpoint,
                                 restore, save_tf1_checkpoint, tf1_variable_map)
from bert_tf.config import BertConfig
from bert_tf.modeling import BertEncoder, ClassificationHead, MaskedLMHead, NextSentenceHead, SpanHead
from bert_tf.modeling.classifier import build_classifier
from tests_shared import file_size_limit, random_inputs, weights_by_name

ORIGINAL_ENCODER_NAMES = 5 + 2 + 16 * 2  # embeddings, pooler, 16 tensors per block (2 blocks)


class Pretrainer(keras.layers.Layer):
    """Encoder + MLM + NSP heads, as the original's pretraining graph holds them."""

    def __init__(self, config):
        super().__init__()
        self.encoder = BertEncoder(config)
        self.mlm = MaskedLMHead(self.encoder.embeddings.word_embeddings, config.hidden_act, 0.02)
        self.nsp = NextSentenceHead()

    def call(self, inputs):
        outputs = self.encoder(inputs)
        positions = np.array([[1, 2]] * inputs["input_ids"].shape[0], "int32")
        return (self.mlm(outputs["sequence_output"], positions),
                self.nsp(outputs["pooled_output"]), outputs)


def _pretrainer(config, seed):
    keras.utils.set_random_seed(seed)
    model = Pretrainer(config)
    model(random_inputs(config))
    return model


def test_names_and_shapes_are_the_originals(tiny_config, tmp_path):
    prefix = save_tf1_checkpoint(_pretrainer(tiny_config, 0), str(tmp_path / "bert_model.ckpt"))
    shapes = dict(tf.train.list_variables(prefix))
    assert len([n for n in shapes if n.startswith("bert/")]) == ORIGINAL_ENCODER_NAMES
    assert shapes["bert/embeddings/word_embeddings"] == [99, 32]
    assert shapes["bert/encoder/layer_1/intermediate/dense/kernel"] == [32, 37]
    assert shapes["bert/encoder/layer_1/output/dense/kernel"] == [37, 32]
    assert shapes["cls/predictions/output_bias"] == [99]
    assert shapes["cls/seq_relationship/output_weights"] == [2, 32]
    assert not [n for n in shapes if ".tmp" in n]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bert_model.ckpt.data-00000-of-00001", "bert_model.ckpt.index"]


def test_round_trip_is_bit_identical_with_heads(tiny_config, tmp_path):
    source, target = _pretrainer(tiny_config, 1), _pretrainer(tiny_config, 2)
    prefix = save_tf1_checkpoint(source, str(tmp_path / "bert_model.ckpt"))
    report = load_tf1_checkpoint(target, prefix)
    assert report.not_in_checkpoint == [] and report.unused == []
    a, b = weights_by_name(source), weights_by_name(target)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_real_model_to_original_format_and_back(minilm_encoder, tmp_path):
    export_original(minilm_encoder, minilm_encoder.config, _vocab(tmp_path),
                    str(tmp_path / "release"))
    reloaded = BertEncoder(BertConfig.from_json_file(str(tmp_path / "release" / "bert_config.json")))
    restore(reloaded, str(tmp_path / "release"))
    a, b = weights_by_name(minilm_encoder), weights_by_name(reloaded)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def _vocab(tmp_path):
    path = tmp_path / "vocab_src.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n")
    return str(path)


def test_huggingface_tf1_reader_reads_what_we_write(tiny_config, tmp_path):
    """transformers' own reader of original checkpoints gives the same numbers."""
    import transformers
    ours = _pretrainer(tiny_config, 3)
    prefix = save_tf1_checkpoint(ours, str(tmp_path / "bert_model.ckpt"))
    # The original's "gelu" is HuggingFace's "gelu_new" (tanh approximation).
    hf_config = transformers.BertConfig(**{**tiny_config.to_dict(), "hidden_act": "gelu_new"})
    theirs = transformers.BertForPreTraining(hf_config).eval()
    transformers.load_tf_weights_in_bert(theirs, hf_config, prefix)
    inputs = random_inputs(tiny_config)
    mlm_logits, nsp_logits, outputs = ours(inputs)
    with torch.no_grad():
        result = theirs(input_ids=torch.from_numpy(inputs["input_ids"]).long(),
                        attention_mask=torch.from_numpy(inputs["input_mask"]).long(),
                        token_type_ids=torch.from_numpy(inputs["segment_ids"]).long(),
                        output_hidden_states=True)
    mask = inputs["input_mask"].astype(bool)
    np.testing.assert_allclose(np.asarray(outputs["sequence_output"])[mask],
                               result.hidden_states[-1].numpy()[mask], atol=1e-5)
    np.testing.assert_allclose(np.asarray(nsp_logits), result.seq_relationship_logits.numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(mlm_logits), result.prediction_logits.numpy()[:, 1:3],
                               atol=1e-5)


def test_task_heads_use_original_names(tiny_config):
    encoder = BertEncoder(tiny_config)
    classifier, span = ClassificationHead(3), SpanHead()
    classifier(np.zeros((1, 32), "float32"))
    span(np.zeros((1, 4, 32), "float32"))
    names = {**tf1_variable_map(classifier), **tf1_variable_map(span)}
    assert names["output_weights"].original_shape == (3, 32)
    assert names["cls/squad/output_weights"].original_shape == (2, 32)
    assert "bert/pooler/dense/kernel" in tf1_variable_map(encoder)


def test_new_head_keeps_initial_values_and_is_reported(tiny_config, tmp_path):
    prefix = save_tf1_checkpoint(BertEncoder(tiny_config), str(tmp_path / "bert_model.ckpt"))
    model = _pretrainer(tiny_config, 4)
    bias_before = model.mlm.output_bias.numpy().copy()
    report = load_tf1_checkpoint(model, str(tmp_path))  # a folder works too
    assert "cls/predictions/output_bias" in report.not_in_checkpoint
    np.testing.assert_array_equal(model.mlm.output_bias.numpy(), bias_before)


def test_optimizer_slots_are_not_reported_unused(tiny_config, tmp_path):
    encoder = BertEncoder(tiny_config)
    names = sorted(tf1_variable_map(encoder))
    slot = np.zeros((99, 32), "float32")
    tensors = [tf1_variable_map(encoder)[n].variable.numpy() for n in names]
    extra = ["bert/embeddings/word_embeddings/adam_m", "global_step", "something/else"]
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "ckpt"), tensor_names=names + extra,
                      shape_and_slices=[""] * (len(names) + 3),
                      tensors=tensors + [slot, np.int64(7), np.float32(1)])
    report = load_tf1_checkpoint(encoder, str(tmp_path / "ckpt"))
    assert report.unused == ["something/else"]


def test_checkpoint_of_another_size_names_file_and_variables(tiny_config, tmp_path, caplog):
    prefix = save_tf1_checkpoint(BertEncoder(tiny_config), str(tmp_path / "bert_model.ckpt"))
    bigger = BertEncoder(BertConfig(**{**tiny_config.to_dict(), "vocab_size": 120,
                                       "num_hidden_layers": 3}))
    with caplog.at_level("INFO", logger="absl"), pytest.raises(CheckpointError) as error:
        load_tf1_checkpoint(bigger, prefix)
    message = str(error.value)
    # One line: the file, the config sizes that differ, a count and the first few.
    assert "\n" not in message
    assert message.startswith(f"{prefix}: checkpoint does not fit the model (vocab_size: "
                              "checkpoint 99, model 120; is this the right bert_config.json?): "
                              "17 weights differ: ")
    assert "bert/embeddings/word_embeddings: checkpoint (99, 32), model (120, 32)" in message
    assert message.endswith("; and 14 more")
    # The log has them all.
    assert "bert/encoder/layer_2/output/dense/kernel: missing from the checkpoint" in caplog.text


def test_a_bilstm_of_another_size_is_named_with_both_sizes(tiny_config, tmp_path):
    """A `--bilstm` model scored with another `--bilstm_units`: the line says both sizes."""
    prefix = save_tf1_checkpoint(build_classifier(tiny_config, 2, bilstm_units=6),
                                 str(tmp_path / "model.ckpt"))
    with pytest.raises(CheckpointError) as error:
        load_tf1_checkpoint(build_classifier(tiny_config, 2, bilstm_units=4), prefix)
    assert str(error.value).startswith(
        f"{prefix}: checkpoint does not fit the model (its BiLSTM has 6 units per direction, "
        "the model's 4: is it the --bilstm_units it was trained with?): ")
    assert "7 weights differ: bilstm_0/backward/bias: checkpoint (24,), model (16,); " \
        in str(error.value)
    # Scored without --bilstm, where its head's width is not the encoder's: it named the
    # head's shape alone ("output_weights: checkpoint (2, 12), model (2, 32)").
    with pytest.raises(CheckpointError, match=r"checkpoint does not fit the model \(it holds a "
                                              r"BiLSTM over its encoder, of 6 units per "
                                              r"direction, and the model none: add --bilstm"):
        load_tf1_checkpoint(build_classifier(tiny_config, 2), prefix)


def test_a_head_of_another_label_count_is_named_as_the_head(tiny_config, tmp_path):
    """A fine-tuned model of 3 labels as the start of a 2-label one: only shapes were named."""
    prefix = save_tf1_checkpoint(build_classifier(tiny_config, 3), str(tmp_path / "model.ckpt"))
    with pytest.raises(CheckpointError, match=r"checkpoint does not fit the model \(its task "
                                              r"head has other shapes: a model fine-tuned for "
                                              r"another task or label count"):
        load_tf1_checkpoint(build_classifier(tiny_config, 2), prefix)


def test_missing_checkpoint_names_path(tiny_config, tmp_path):
    with pytest.raises(CheckpointError, match="nothing.ckpt: no checkpoint found"):
        load_tf1_checkpoint(BertEncoder(tiny_config), str(tmp_path / "nothing.ckpt"))
    with pytest.raises(CheckpointError, match="folder holds no bert_model.ckpt.index"):
        load_tf1_checkpoint(BertEncoder(tiny_config), str(tmp_path))


def test_a_release_folder_takes_its_vocabulary_whole_and_never_over_itself(tiny_config,
                                                                           tmp_path):
    folder = tmp_path / "release"
    folder.mkdir()
    vocab = folder / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n")
    (tmp_path / "link.txt").symlink_to(vocab)  # the same file under another name
    export_original(BertEncoder(tiny_config), tiny_config, str(tmp_path / "link.txt"),
                    str(folder))
    assert vocab.read_text() == "[PAD]\n[UNK]\n"
    other = tmp_path / "other"
    export_original(BertEncoder(tiny_config), tiny_config, str(vocab), str(other))
    assert (other / "vocab.txt").read_text() == "[PAD]\n[UNK]\n"
    assert sorted(p.name for p in other.iterdir()) == [
        "bert_config.json", "bert_model.ckpt.data-00000-of-00001", "bert_model.ckpt.index",
        "vocab.txt"]


def test_a_release_folder_leaves_the_config_it_was_given(tiny_config, tmp_path):
    """`--bert_config_file` in `--output_dir`: the run's input, not written over."""
    folder = tmp_path / "run"
    folder.mkdir()
    users = json.dumps(tiny_config.to_dict(), indent=4)  # the user's own layout
    (folder / "bert_config.json").write_text(users)
    export_original(BertEncoder(tiny_config), tiny_config, None, str(folder))
    assert (folder / "bert_config.json").read_text() == users
    other = BertConfig(**{**tiny_config.to_dict(), "hidden_dropout_prob": 0.3})
    export_original(BertEncoder(other), other, None, str(folder))
    assert BertConfig.from_json_file(str(folder / "bert_config.json")) == other


def test_an_export_is_replaced_all_or_none(tiny_config, tmp_path):
    """The disk fills at the vocabulary: the earlier weights, vocabulary and labels stay
    together, never new weights beside another model's vocabulary."""
    folder = tmp_path / "export"
    (tmp_path / "small_vocab.txt").write_text("[PAD]\n[UNK]\n")
    encoder = BertEncoder(tiny_config)
    export_original(encoder, tiny_config, str(tmp_path / "small_vocab.txt"), str(folder),
                    labels=("neg", "pos"))
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert sorted(before) == ["bert_config.json", "bert_model.ckpt.data-00000-of-00001",
                              "bert_model.ckpt.index", "labels.txt", "vocab.txt"]
    big_vocab = tmp_path / "big_vocab.txt"
    big_vocab.write_text("".join(f"token{i}\n" for i in range(30000)))  # ~300 KB
    limit = 2 * len(before["bert_model.ckpt.data-00000-of-00001"])  # the weights fit
    assert big_vocab.stat().st_size > limit
    encoder.weights[0].assign(encoder.weights[0] + 1.0)  # another model's weights
    with file_size_limit(limit), pytest.raises(
            OSError, match=rf"^cannot copy {big_vocab} to {folder}/vocab.txt: File too large$"):
        export_original(encoder, tiny_config, str(big_vocab), str(folder),
                        labels=("a", "b", "c"))
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
