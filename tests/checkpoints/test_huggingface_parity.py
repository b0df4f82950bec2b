"""Our encoder with real pretrained weights equals HuggingFace's BertModel (PyTorch).

The weights are all-MiniLM-L6-v2 (a real BERT-architecture model, 6 layers,
H=384, exact-erf GELU) imported from safetensors; the inputs are 128 real
MRPC dev examples, pairs and single sentences, padded to mixed lengths.
"""

import csv
import hashlib

import numpy as np
import pytest
import torch

from tests_shared import shared_path

NUM_EXAMPLES = 128
BATCH = 32


def mrpc_texts():
    with open(shared_path("glue", "MRPC", "dev.tsv"), encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    rows = rows[:NUM_EXAMPLES]
    # Every third example is a single sentence, the rest are pairs.
    return [(r[3], None if i % 3 == 0 else r[4]) for i, r in enumerate(rows)]


def batches(minilm_dir):
    import transformers
    tokenizer = transformers.BertTokenizer(str(minilm_dir / "vocab.txt"))
    texts = mrpc_texts()
    for start in range(0, len(texts), BATCH):
        chunk = texts[start:start + BATCH]
        singles = [a for a, b in chunk if b is None]
        pairs = [(a, b) for a, b in chunk if b is not None]
        for encoded in (tokenizer(singles, padding=True, return_tensors="np"),
                        tokenizer([a for a, _ in pairs], [b for _, b in pairs],
                                  padding=True, return_tensors="np")):
            yield {"input_ids": encoded["input_ids"].astype("int32"),
                   "input_mask": encoded["attention_mask"].astype("int32"),
                   "segment_ids": encoded["token_type_ids"].astype("int32")}


def test_every_layer_matches_huggingface(minilm_encoder, hf_minilm, minilm_dir):
    compared, worst = 0, 0.0
    for inputs in batches(minilm_dir):
        ours = minilm_encoder(inputs)
        with torch.no_grad():
            theirs = hf_minilm(
                input_ids=torch.from_numpy(inputs["input_ids"]).long(),
                attention_mask=torch.from_numpy(inputs["input_mask"]).long(),
                token_type_ids=torch.from_numpy(inputs["segment_ids"]).long(),
                output_hidden_states=True)
        mask = inputs["input_mask"].astype(bool)
        ours_layers = [ours["embedding_output"]] + list(ours["encoder_outputs"])
        assert len(ours_layers) == len(theirs.hidden_states) == 7
        for a, b in zip(ours_layers, theirs.hidden_states):
            diff = np.abs(np.asarray(a)[mask] - b.numpy()[mask]).max()
            worst = max(worst, diff)
            assert diff < 1e-4
        pooled_diff = np.abs(np.asarray(ours["pooled_output"]) - theirs.pooler_output.numpy()).max()
        assert pooled_diff < 1e-4
        compared += len(mask)
        assert mask.sum(axis=1).min() < mask.shape[1]  # every batch has padding
    assert compared == NUM_EXAMPLES
    print(f"compared {compared} real inputs, worst abs diff {worst:.2e}")


def test_refuses_pickled_weights(tmp_path, tiny_config):
    from bert_tf.checkpoints import CheckpointError, restore
    from bert_tf.modeling import BertEncoder
    (tmp_path / "pytorch_model.bin").write_bytes(b"not really a pickle")
    with pytest.raises(CheckpointError, match="refusing to unpickle"):
        restore(BertEncoder(tiny_config), str(tmp_path))


def test_shape_mismatch_lists_names(minilm_dir, tiny_config, caplog):
    from bert_tf.checkpoints import CheckpointError, restore
    from bert_tf.modeling import BertEncoder
    with caplog.at_level("INFO", logger="absl"), pytest.raises(CheckpointError) as error:
        restore(BertEncoder(tiny_config), str(minilm_dir))
    message = str(error.value)
    assert ("model.safetensors: checkpoint does not fit the model (vocab_size: checkpoint "
            "30522, model 99, hidden_size: checkpoint 384, model 32; is this the right "
            "bert_config.json?): 39 weights differ") in message
    assert ("bert/encoder/layer_0/attention/self/query/kernel: checkpoint (384, 384), "
            "model (32, 32)") in caplog.text


def test_a_sharded_save_loads_as_the_single_file_does(tmp_path, hf_minilm, minilm_encoder,
                                                      minilm_dir):
    """`save_pretrained(max_shard_size=...)` writes shards and an index; every weight reads."""
    from bert_tf.checkpoints import CheckpointError, config_beside, restore, weights_identity
    from bert_tf.modeling import BertEncoder
    hf_minilm.save_pretrained(tmp_path, max_shard_size="20MB")
    shards = sorted(path.name for path in tmp_path.glob("model-*.safetensors"))
    assert len(shards) > 2 and (tmp_path / "model.safetensors.index.json").exists()
    encoder = BertEncoder(config_beside(str(tmp_path)))
    report = restore(encoder, str(tmp_path))
    assert len(report.restored) == len(minilm_encoder.weights) and not report.unused
    for ours, theirs in zip(encoder.weights, minilm_encoder.weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=ours.path)
    assert weights_identity(str(tmp_path)) == "safetensors sha256 " + " ".join(
        hashlib.sha256((tmp_path / shard).read_bytes()).hexdigest() for shard in shards)
    (tmp_path / shards[1]).unlink()
    with pytest.raises(CheckpointError, match=rf"model.safetensors.index.json: its shards are "
                                              rf"not all beside it \(missing: {shards[1]}\)"):
        restore(encoder, str(tmp_path))


def test_a_question_answering_save_without_pooler_scores_as_huggingface_does(tmp_path, caplog):
    """BertForQuestionAnswering (like ...ForMaskedLM, ...ForTokenClassification) saves no
    pooler: its span head loads and scores as HuggingFace's; only the pooler starts anew."""
    import transformers

    from bert_tf.checkpoints import config_beside, restore
    from bert_tf.errors import UsageError
    from bert_tf.modeling.span_model import build_span_model
    from bert_tf.tasks.scored_model_checks import check_scored_weights
    torch.manual_seed(0)
    hf = transformers.BertForQuestionAnswering(transformers.BertConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=37, max_position_embeddings=64)).eval()
    hf.save_pretrained(tmp_path)
    model = build_span_model(config_beside(str(tmp_path)))
    with caplog.at_level("WARNING", logger="absl"):
        report = restore(model, str(tmp_path))
    assert report.not_in_checkpoint == ["bert/pooler/dense/bias", "bert/pooler/dense/kernel"]
    assert "model.safetensors: has no pooler (bert/pooler/dense/*" in caplog.text
    ids = np.array([[2, 17, 40, 3, 55, 61, 3, 0]], "int32")
    segments = np.array([[0, 0, 0, 0, 1, 1, 1, 0]], "int32")
    ours = model({"input_ids": ids, "input_mask": np.int32(ids > 0), "segment_ids": segments})
    with torch.no_grad():
        theirs = hf(input_ids=torch.from_numpy(ids).long(),
                    attention_mask=torch.from_numpy(np.int32(ids > 0)).long(),
                    token_type_ids=torch.from_numpy(segments).long())
    for name in ("start_logits", "end_logits"):
        np.testing.assert_allclose(np.asarray(ours[name])[0, :7],
                                   getattr(theirs, name).numpy()[0, :7], atol=1e-5)
    check_scored_weights("squad", str(tmp_path), report, reads_pooled_output=False)
    with pytest.raises(UsageError, match=r"has no bert/pooler/dense/bias nor 1 more"):
        check_scored_weights("classifier", str(tmp_path), report)


def _tiny_hf_config(**overrides):
    import transformers
    return transformers.BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                   num_attention_heads=4, intermediate_size=37,
                                   max_position_embeddings=64, **overrides)


def test_a_decoder_config_attends_left_to_right_as_huggingface_does(tmp_path):
    """`"is_decoder": true` was ignored: both ways where HF attends left to right."""
    import transformers

    from bert_tf.checkpoints import config_beside, restore
    from bert_tf.modeling import BertEncoder
    torch.manual_seed(0)
    hf = transformers.BertModel(_tiny_hf_config(is_decoder=True)).eval()
    hf.save_pretrained(tmp_path)
    encoder = BertEncoder(config_beside(str(tmp_path)))
    restore(encoder, str(tmp_path))
    ids = np.array([[2, 17, 40, 3, 55, 61, 3, 0]], "int32")
    ours = encoder({"input_ids": ids, "input_mask": np.int32(ids > 0),
                    "segment_ids": np.zeros_like(ids)})["sequence_output"]
    with torch.no_grad():
        theirs = hf(input_ids=torch.from_numpy(ids).long(),
                    attention_mask=torch.from_numpy(np.int32(ids > 0)).long())
    np.testing.assert_allclose(np.asarray(ours)[0, :7], theirs.last_hidden_state[0, :7].numpy(),
                               atol=1e-5)


def test_an_output_layer_of_its_own_is_refused_for_a_masked_lm(tmp_path):
    """`tie_word_embeddings: false`: its decoder was dropped, logits 0.49 off HF's."""
    import transformers

    from bert_tf.checkpoints import CheckpointError, config_beside, restore
    from bert_tf.modeling import BertEncoder, BertPretrainer
    torch.manual_seed(0)
    hf = transformers.BertForPreTraining(_tiny_hf_config(tie_word_embeddings=False))
    hf.save_pretrained(tmp_path)
    config = config_beside(str(tmp_path))
    with pytest.raises(CheckpointError, match=r"cls.predictions.decoder.weight: a masked-LM "
                                              r"output layer of its own"):
        restore(BertPretrainer(config), str(tmp_path))
    restore(BertEncoder(config), str(tmp_path))  # the encoder alone reads it
