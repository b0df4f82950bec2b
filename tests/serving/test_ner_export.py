"""The ner export against the Python path (our token classifier on tagging_features windows).

A tiny token classifier over the real uncased vocabulary (random, perturbed
weights) is written as a run_ner-style folder (`bert_model.ckpt` +
`labels.txt`) and exported. Real CoNLL-2003 dev sentences (as text: words
joined by spaces), hand-made ones with accents (some as combining marks),
CJK and odd whitespace, a sentence longer than a window, and empty texts
are answered by a fresh client that imports only tensorflow and
tensorflow_text (`load_exports.py`).

The Python path splits each text into the basic tokenizer's words, finds
them in the text, tags them with the same model through
`tagging_features` (one window: the words that fit whole) and reads the
entities with `entity_metrics.entities` (the conlleval rules).
"""

import shutil

import numpy as np
import pytest

from bert_tf import serving
from bert_tf.tasks import conll_data, tagging_features
from bert_tf.tasks.entity_metrics import entities
from bert_tf.tokenization import BasicTokenizer, FullTokenizer
from serving_support import (TINY_CONFIG, assert_compiled_answers_equal, perturbed,
                             run_client, saved_model_cli_show)
from tests_shared import shared_path

MAX_SEQ_LENGTH = 40
LABELS = list(conll_data.bio_labels())
HAND_MADE = [
    "Zürich-based Nestlé S.A. hired José Müller in São Paulo, not in 東京 or Ōsaka.",
    "  Angela   Merkel\tmet\n\nEmmanuel Macron in Paris .  ",
    "Ünïcödé café naïve — ΣΊΣΥΦΟΣ 🙂 Dvořák!",
    # Accents written as combining marks, which an uncased model deletes.
    "Jose\u0301 Mu\u0308ller of Bogota\u0301 met Rene\u0301 at Orle\u0301ans Cafe\u0301",
    "a",
]


def _texts():
    sentences = conll_data.read_conll(shared_path("conll2003", "eng.testa"), "dev")
    dev = [" ".join(s.words) for s in sentences[:40] if len(s.words) > 3][:12]
    longest = " ".join(w for s in sentences[:200] for w in s.words)[:400]
    return dev + HAND_MADE + ["", "   ", longest]


TEXTS = _texts()


@pytest.fixture(scope="module")
def ner(tmp_path_factory, uncased_vocab_file):
    import keras

    from bert_tf.checkpoints import export_original
    from bert_tf.config import BertConfig
    from bert_tf.modeling.classifier import build_token_classifier

    root = tmp_path_factory.mktemp("ner")
    config = BertConfig(**TINY_CONFIG)
    keras.utils.set_random_seed(6)
    model = perturbed(build_token_classifier(config, len(LABELS)), seed=8, scale=0.1)
    folder = root / "ner_output"
    export_original(model, config, uncased_vocab_file, str(folder))
    (folder / "labels.txt").write_text("".join(f"{label}\n" for label in LABELS))
    made = serving.export("ner", folder, root / "made", max_seq_length=MAX_SEQ_LENGTH)
    compiled = serving.export("ner", folder, root / "made_xla", max_seq_length=MAX_SEQ_LENGTH,
                              jit_compile=True)
    export, export_xla = root / "served", root / "served_xla"
    shutil.copytree(made, export)
    shutil.copytree(compiled, export_xla)
    for made_folder in (made, compiled, folder):
        shutil.rmtree(made_folder)
    runs = [{"name": "all", "signature": "serving_default", "inputs": {"text": TEXTS}},
            {"name": "metadata", "signature": "metadata", "inputs": {}},
            {"name": "none", "signature": "serving_default", "inputs": {"text": []}},
            {"name": "empty", "signature": "serving_default", "inputs": {"text": ["", " \n"]}}]
    runs += [{"name": f"alone{i}", "signature": "serving_default", "inputs": {"text": [text]}}
             for i, text in enumerate(TEXTS[-6:])]
    runs = ([{**run, "export": str(export)} for run in runs]
            + [{**run, "name": f"xla/{run['name']}", "export": str(export_xla)} for run in runs])
    return model, export, run_client(root, runs)


def _word_spans(text):
    """The basic tokenizer's words of `text` (case kept) and their [start, end) in it."""
    spans, position = [], 0
    for word in BasicTokenizer(do_lower_case=False).tokenize(text):
        start = text.index(word, position)
        spans.append((word, start, start + len(word)))
        position = start + len(word)
    return spans


def _python_entities(model, tokenizer, text):
    """(entities as (type, start, end, text), truncated, tags) the Python way."""
    spans = _word_spans(text)
    counts = [len(p) for p in tagging_features.word_piece_ids(tokenizer, [w for w, _, _ in spans])]
    fitting = int(np.searchsorted(np.cumsum(counts), MAX_SEQ_LENGTH - 2, side="right"))
    kept = spans[:fitting]
    if not kept:
        return [], len(spans) > 0, []
    sentence = conll_data.TaggedSentence("t", tuple(w for w, _, _ in kept),
                                         ("O",) * len(kept), 1)
    windows = tagging_features.tagging_windows([sentence], tokenizer, LABELS, MAX_SEQ_LENGTH,
                                               doc_stride=MAX_SEQ_LENGTH)
    assert len(windows) == 1
    columns = tagging_features.window_columns(windows, MAX_SEQ_LENGTH)
    logits = model({k: columns[k] for k in ("input_ids", "input_mask", "segment_ids")},
                   training=False)
    tags = tagging_features.predicted_tags(windows, np.asarray(logits), [len(kept)], LABELS)[0]
    found = [(e.type, kept[e.start][1], kept[e.end - 1][2]) for e in entities(tags)]
    return [(kind, s, e, text[s:e]) for kind, s, e in found], fitting < len(spans), tags


def test_entities_equal_the_python_path(ner, uncased_vocab_file):
    model, _, outputs = ner
    tokenizer = FullTokenizer(uncased_vocab_file)
    total = multi_word = ill_formed = 0
    kinds = set()
    for i, text in enumerate(TEXTS):
        expected, truncated, tags = _python_entities(model, tokenizer, text)
        count = outputs["all/num_entities"][i]
        served = [(outputs["all/entity_type"][i, j], int(outputs["all/entity_start"][i, j]),
                   int(outputs["all/entity_end"][i, j]), outputs["all/entity_text"][i, j])
                  for j in range(count)]
        assert served == expected, (i, text, tags)
        assert outputs["all/truncated"][i] == truncated, i
        # Padding past the text's own entities.
        assert (outputs["all/entity_start"][i, count:] == -1).all()
        assert (outputs["all/entity_type"][i, count:] == "").all()
        total += count
        multi_word += sum(" " in e[3] for e in expected)
        kinds |= {e[0] for e in expected}
        ill_formed += sum(t.startswith("I-") and (k == 0 or tags[k - 1] == "O")
                          for k, t in enumerate(tags))
    # The inputs tell right from wrong: many entities of every type, some of
    # several words, some opened by I- after O; a few texts truncated.
    assert total > 30 and multi_word > 3 and ill_formed > 3, (total, multi_word, ill_formed)
    assert kinds == {"PER", "LOC", "ORG", "MISC"}
    truncated = outputs["all/truncated"].tolist()
    assert truncated[-1] and 0 < sum(truncated) < len(TEXTS) // 2, truncated


def test_offsets_index_the_text_as_sent(ner):
    outputs = ner[2]
    for i, text in enumerate(TEXTS):
        for j in range(outputs["all/num_entities"][i]):
            start, end = outputs["all/entity_start"][i, j], outputs["all/entity_end"][i, j]
            assert text[start:end] == outputs["all/entity_text"][i, j]
    # Accents and case are the text's own, not the uncased model's folded forms.
    found = {str(t) for t in outputs["all/entity_text"].ravel()}
    assert any(any(ord(c) > 127 for c in t) for t in found)
    assert any(any(c.isupper() for c in t) for t in found)


def test_an_answer_does_not_depend_on_its_batch(ner):
    outputs = ner[2]
    first = len(TEXTS) - 6
    for i in range(6):
        count = outputs[f"alone{i}/num_entities"][0]
        assert count == outputs["all/num_entities"][first + i]
        for key in ("entity_type", "entity_start", "entity_end", "entity_text"):
            assert (outputs[f"alone{i}/{key}"][0, :count]
                    == outputs[f"all/{key}"][first + i, :count]).all(), (i, key)


def test_empty_texts_and_batches(ner):
    outputs = ner[2]
    assert outputs["empty/num_entities"].tolist() == [0, 0]
    assert outputs["empty/truncated"].tolist() == [False, False]
    assert outputs["empty/entity_start"].shape == (2, 0)
    assert sorted(k.split("/")[1] for k in outputs if k.startswith("none/")) == [
        "entity_end", "entity_start", "entity_text", "entity_type", "num_entities",
        "truncated"]
    assert all(outputs[k].shape[0] == 0 for k in outputs if k.startswith("none/"))


def test_a_compiled_export_answers_as_the_plain_one(ner):
    outputs = ner[2]
    for run in ("all", "metadata", "none", "empty", *(f"alone{i}" for i in range(6))):
        assert_compiled_answers_equal(outputs, run, f"xla/{run}")


def test_metadata(ner):
    outputs = ner[2]
    assert str(outputs["metadata/kind"]) == "ner"
    assert outputs["metadata/labels"].tolist() == LABELS
    assert int(outputs["metadata/max_seq_length"]) == MAX_SEQ_LENGTH
    assert bool(outputs["metadata/do_lower_case"])


def test_saved_model_cli_lists_the_signature(ner):
    shown = saved_model_cli_show(ner[1])
    assert "signature_def['serving_default']" in shown
    assert "signature_def['pairs']" not in shown
    assert "inputs['text'] tensor_info:" in shown
    for name in ("entity_type", "entity_start", "entity_end", "entity_text", "num_entities",
                 "truncated", "labels"):
        assert f"outputs['{name}'] tensor_info:" in shown


def test_labels_must_be_bio_tags(tmp_path, uncased_vocab_file):
    from bert_tf.config import BertConfig
    from bert_tf.modeling.classifier import build_token_classifier

    model = build_token_classifier(BertConfig.named("tiny", vocab_size=30522), 2)
    with pytest.raises(ValueError, match="label 'PER' is not O, B-<type> or I-<type>"):
        serving.export("ner", model, tmp_path / "served", vocab_file=uncased_vocab_file,
                       labels=["O", "PER"])
    with pytest.raises(ValueError, match="2 outputs but 3 labels"):
        serving.export("ner", model, tmp_path / "served", vocab_file=uncased_vocab_file,
                       labels=["O", "B-PER", "I-PER"])
