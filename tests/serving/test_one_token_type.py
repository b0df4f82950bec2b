"""Exports of a model with one token type (`type_vocab_size: 1`): no `pairs` signature (it
read segment id 1 as row 0 without a word), span QA and multiple choice refused, and
classify_text's --text_b refused before any export."""

import pytest
import tensorflow as tf

from bert_tf import serving
from bert_tf.checkpoints import export_original
from bert_tf.config import BertConfig, ConfigError
from bert_tf.modeling import BertEncoder, build_span_model
from bert_tf.modeling.classifier import build_classifier
from bert_tf.serving.encoder_export import EncoderServing
from bert_tf.serving.multiple_choice_export import MultipleChoiceServing
from bert_tf.serving.span_qa_export import SpanQAServing
from tests_shared import run_script

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "!"]
REFUSED = (r"type_vocab_size=1, so the model has no token-type embedding for the second text "
           r"of a pair \(segment id 1\), but {pairs} pairs two texts")


def _config(vocab_size=len(VOCAB)):
    return BertConfig(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=24, max_position_embeddings=32,
                      type_vocab_size=1)


def test_an_encoder_export_answers_single_texts_without_a_pairs_signature(tmp_path):
    module = EncoderServing(BertEncoder(_config()), VOCAB, str(tmp_path), max_seq_length=16)
    signatures = module.signatures()
    assert sorted(signatures) == ["metadata", "serving_default"]
    assert signatures["serving_default"](tf.constant(["hello world!"]))[
        "pooled_output"].shape == (1, 16)
    with pytest.raises(ConfigError, match=REFUSED.format(pairs="text_a and text_b")):
        module.serve_pairs(tf.constant(["hello"]), tf.constant(["world"]))


@pytest.mark.parametrize("serving_class, build, options, pairs", [
    (SpanQAServing, build_span_model, {"max_query_length": 4},
     r"a span_qa export \(a question and its context\)"),
    (MultipleChoiceServing, lambda config: build_classifier(config, 1), {},
     r"a multiple_choice export \(a context and each ending\)"),
])
def test_kinds_that_always_pair_refuse_the_model(tmp_path, serving_class, build, options, pairs):
    with pytest.raises(ConfigError, match=r"^the model's config: " + REFUSED.format(pairs=pairs)):
        serving_class(build(_config()), VOCAB, str(tmp_path), max_seq_length=16, **options)


def test_a_span_qa_export_of_a_folder_is_refused_before_loading(tmp_path, uncased_vocab_file):
    folder = tmp_path / "model"
    config = _config(vocab_size=30522)
    export_original(build_span_model(config), config, uncased_vocab_file, str(folder))
    (folder / "bert_model.ckpt.data-00000-of-00001").write_bytes(b"")  # never read
    with pytest.raises(ConfigError, match=rf"^{folder}: " + REFUSED.format(
            pairs=r"a span_qa export \(a question and its context\)")):
        serving.export("span_qa", folder, tmp_path / "served", max_seq_length=16)
    assert not (tmp_path / "served").exists()


def test_classify_text_refuses_text_b_before_exporting(tmp_path, uncased_vocab_file):
    folder = tmp_path / "model"
    config = _config(vocab_size=30522)
    export_original(build_classifier(config, 2), config, uncased_vocab_file, str(folder))
    (folder / "labels.txt").write_text("0\n1\n")
    result = run_script("classify_text.py", f"--model_dir={folder}", "--text=a cat",
                        "--text_b=a dog")
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last == (f"classify_text: error: --model_dir={folder}: type_vocab_size=1, so the "
                    "model has no token-type embedding for the second text of a pair (segment "
                    "id 1), but --text_b pairs two texts; use a model with type_vocab_size >= 2 "
                    "(single texts need only one)")
    assert not (folder / "saved_model").exists()
