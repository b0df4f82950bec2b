"""Frozen-encoder features: the six layer choices vs HF hidden states, the cache, the dataset."""

import dataclasses
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import torch

from bert_tf.checkpoints import save_tf1_checkpoint
from bert_tf.config import BertConfig
from bert_tf.modeling import BertEncoder
from bert_tf.tasks import conll_data, tagging_features, token_features
from bert_tf.tokenization import FullTokenizer
from tests_shared import REPO, file_size_limit, shared_path

LABELS = conll_data.bio_labels()


def _columns(vocab_file, sentences=40, max_seq_length=24):
    dev = conll_data.read_conll(shared_path("conll2003", "eng.testa"))[:sentences]
    windows = tagging_features.tagging_windows(dev, FullTokenizer(str(vocab_file)), LABELS,
                                               max_seq_length, doc_stride=8)
    return tagging_features.window_columns(windows, max_seq_length)


def _hf_combination(hidden_states, feature_layers):
    """The paper's feature choices from HF's (embeddings, layer 1, ..., layer L) tuple."""
    layers = [h.numpy() for h in hidden_states]
    return {"embeddings": layers[0], "second_to_last": layers[-2], "last": layers[-1],
            "sum_last_four": sum(layers[-4:]),
            "concat_last_four": np.concatenate(layers[-4:], axis=-1),
            "sum_all": sum(layers[1:])}[feature_layers]


def test_every_feature_choice_matches_hf_hidden_states(minilm_encoder, hf_minilm, minilm_dir,
                                                       tmp_path):
    columns = _columns(minilm_dir / "vocab.txt")
    mask = columns["input_mask"].astype(bool)
    assert len(mask) > 40 and mask.sum(axis=1).min() < mask.shape[1]
    with torch.no_grad():
        hidden = hf_minilm(input_ids=torch.from_numpy(columns["input_ids"]).long(),
                           attention_mask=torch.from_numpy(columns["input_mask"]).long(),
                           token_type_ids=torch.from_numpy(columns["segment_ids"]).long(),
                           output_hidden_states=True).hidden_states
    for feature_layers in token_features.FEATURE_LAYERS:
        extractor = token_features.feature_extractor(minilm_encoder, feature_layers)
        key = token_features.fingerprint(None, feature_layers, columns, minilm_encoder.config)
        # One batch of every window: one trace (and XLA compilation) per
        # choice; the cache test below runs a split's shorter last batch.
        rows = token_features.cached_features(str(tmp_path / f"{feature_layers}.npy"),
                                              lambda: token_features.feature_function(extractor),
                                              columns, len(mask), key)
        expected = _hf_combination(hidden, feature_layers)[mask]  # real tokens, window order
        assert rows.shape == (mask.sum(), token_features.feature_width(384, feature_layers))
        scale = np.abs(expected).max()
        np.testing.assert_allclose(rows, expected, atol=2e-5 * scale, rtol=0)


def _tiny_encoder(seed):
    config = BertConfig(vocab_size=30522, hidden_size=8, num_hidden_layers=4,
                        num_attention_heads=2, intermediate_size=16,
                        max_position_embeddings=32)
    keras.utils.set_random_seed(seed)
    return BertEncoder(config)


def test_cache_is_reused_only_for_the_same_inputs(uncased_vocab_file, tmp_path):
    columns = _columns(uncased_vocab_file, sentences=12)
    path = str(tmp_path / "dev.npy")
    encoders = (_tiny_encoder(1), _tiny_encoder(2))
    first, second = (token_features.feature_extractor(e, "last") for e in encoders)
    checkpoint = str(tmp_path / "model" / "bert_model.ckpt")
    save_tf1_checkpoint(encoders[0], checkpoint)
    key = token_features.fingerprint(checkpoint, "last", columns, encoders[0].config)
    (tmp_path / "dev.npy.tmp-999999999.npy").write_bytes(b"a killed run's half")
    function = token_features.feature_function(first)
    computed = np.array(token_features.cached_features(path, lambda: function, columns, 5, key))
    # A second split through the same function: no new trace (12 windows: 5, 5 and 2).
    token_features.cached_features(str(tmp_path / "test.npy"), lambda: function, columns, 5,
                                   key)
    assert function.tracing_count() == 1  # one trace for any batch
    # Same fingerprint: the file is read back, no encoder is even asked for.
    reused = token_features.cached_features(
        path, lambda: pytest.fail("recomputed a cached split"), columns, 5, key)
    np.testing.assert_array_equal(reused, computed)
    # The same weights under another config (another activation): another key (the cache
    # of the gelu encoder was reused).
    relu = dataclasses.replace(encoders[0].config, hidden_act="relu")
    assert token_features.fingerprint(checkpoint, "last", columns, relu) != key
    # Other weights at the same path: recomputed with the second encoder.
    save_tf1_checkpoint(encoders[1], checkpoint)
    other_key = token_features.fingerprint(checkpoint, "last", columns, encoders[1].config)
    second_function = token_features.feature_function(second)
    recomputed = np.array(token_features.cached_features(
        path, lambda: second_function, columns, 5, other_key))
    assert not np.allclose(recomputed, computed)
    mask = columns["input_mask"].astype(bool)
    np.testing.assert_allclose(recomputed, np.asarray(second(
        {k: columns[k] for k in token_features.ENCODER_INPUTS}))[mask], atol=1e-5)
    # The killed run's half was removed before computing.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.npy", "dev.npy.json", "model",
                                                          "test.npy", "test.npy.json"]
    # A damaged cache (a cut file, a garbled key) is computed again, not an error.
    for damaged, content in ((path, b"\x93NUMPY"), (path + ".json", b"garbage")):
        os.remove(damaged)  # a new file: the maps read above keep the old one
        with open(damaged, "wb") as f:
            f.write(content)
        again = token_features.cached_features(path, lambda: second_function, columns, 5,
                                               other_key)
        np.testing.assert_array_equal(again, recomputed)
    # A valid `.npy` of another shape or type under the same key: computed again, not read
    # as other windows' rows (an IndexError traceback or features of the wrong tokens).
    for other in (recomputed[:-3], recomputed[:, :4], recomputed.astype(np.float64)):
        os.remove(path)
        np.save(path, other)
        again = token_features.cached_features(path, lambda: second_function, columns, 5,
                                               other_key)
        np.testing.assert_array_equal(again, recomputed)
    with pytest.raises(ValueError, match="--feature_layers='middle'"):
        token_features.feature_extractor(_tiny_encoder(1), "middle")


def test_feature_dataset_pads_each_window_back(uncased_vocab_file, tmp_path):
    columns = _columns(uncased_vocab_file, sentences=12)
    mask = columns["input_mask"]
    windows, length = mask.shape
    rows = np.arange(mask.sum() * 3, dtype=np.float32).reshape(-1, 3)
    batches = list(token_features.feature_dataset(rows, columns, batch_size=4))
    features = np.concatenate([b["features"].numpy() for b in batches])
    assert features.shape == (windows, length, 3)
    np.testing.assert_array_equal(features[mask.astype(bool)], rows)
    assert not features[~mask.astype(bool)].any()
    for name in ("input_mask", "label_ids", "label_weights"):
        np.testing.assert_array_equal(np.concatenate([b[name].numpy() for b in batches]),
                                      columns[name])
    training = token_features.feature_dataset(rows, columns, 4, is_training=True, seed=3)
    seen = [b for _, b in zip(range(windows), training)]
    assert all(b["features"].shape == (4, length, 3) for b in seen)
    firsts = {tuple(b["features"].numpy()[0, 0]) for b in seen}
    assert len(firsts) > 1


def test_a_full_disk_names_the_cache_before_any_feature_is_computed(uncased_vocab_file,
                                                                   tmp_path):
    """The cache's space is taken first: a memory map that finds the disk full dies of SIGBUS."""
    columns = _columns(uncased_vocab_file, sentences=12)
    path = tmp_path / "train.npy"
    with file_size_limit(1024), pytest.raises(
            OSError, match=rf"^cannot write {path}: File too large$"):
        token_features.cached_features(str(path), lambda: token_features.feature_function(
            token_features.feature_extractor(_tiny_encoder(1), "last")), columns, 5, {})
    assert os.listdir(tmp_path) == []


TWO_DEVICES_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from bert_tf.config import BertConfig
    from bert_tf.modeling import BertEncoder
    from bert_tf.serving.model_inference import ModelInference
    from bert_tf.tasks import token_features

    built = []
    def feature_function():  # built at the first split, as NerTask builds its encoder
        if not built:
            encoder = BertEncoder(BertConfig.named("tiny", vocab_size=30))
            extractor = token_features.feature_extractor(encoder, "last")
            built.append(ModelInference(extractor, jit_compile=True))  # as on a GPU
        return built[0]

    rng = np.random.default_rng(0)
    columns = {"input_ids": rng.integers(1, 30, (6, 8), dtype=np.int32),
               "input_mask": np.ones((6, 8), np.int32), "segment_ids": np.zeros((6, 8), np.int32)}
    with tf.device("/CPU:1"):  # the input pipeline's device, around Task.dataset
        train = token_features.cached_features(sys.argv[1] + "/train.npy", feature_function,
                                               columns, 4, {"split": "train"})
    dev = token_features.cached_features(sys.argv[1] + "/dev.npy", feature_function, columns,
                                         4, {"split": "dev"})
    np.testing.assert_array_equal(train, dev)
    print(built[0].model.weights[0].value.device)
""")


def test_features_are_computed_on_the_default_device_not_the_input_pipelines(tmp_path):
    """A GPU run's feature-based tagger built its encoder inside the input pipeline's CPU
    scope (the train split's `Task.dataset`), and the dev split's XLA pass, placed on the
    GPU, could not read those variables. Two logical CPUs stand in for the CPU and the GPU."""
    # `python -c` imports from its working folder; the caller's PYTHONPATH stays.
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([sys.executable, "-c", TWO_DEVICES_SCRIPT, str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1].endswith("/device:CPU:0")
