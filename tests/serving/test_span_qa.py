"""The span-QA export against the Python path (our span model + our SQuAD post-processing).

A tiny span model over the real uncased vocabulary (random, perturbed
weights) is written as a run_squad-style folder and exported twice:
`n_best` 5 (SQuAD 1.1), and `n_best` = `max_seq_length` with SQuAD 2.0 null
answers. Real dev questions, on contexts many windows long (some with
accents and CJK), are answered by a fresh client that imports only
tensorflow and tensorflow_text (`load_exports.py`).

The export pairs the best logits among each window's context pieces only;
the original ranks all positions, padding and question included, and drops
those afterwards. So the n_best 5 export is compared with the Python path
on logits whose non-context positions are masked, and the exhaustive one
(where both see every candidate) on the model's raw logits.
"""

import gzip
import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import serving
from bert_tf.tasks import squad_features, squad_postprocessing
from bert_tf.tasks.squad_data import SquadExample, split_words
from bert_tf.tokenization import FullTokenizer
from serving_support import (TINY_CONFIG, assert_compiled_answers_equal, perturbed,
                             run_client, saved_model_cli_show)
from tests_shared import shared_path

MAX_SEQ_LENGTH = 48
SPAN_OPTIONS = {"doc_stride": 16, "max_query_length": 12, "n_best_size": 5,
                "max_answer_length": 8}
EXHAUSTIVE_V2 = dict(SPAN_OPTIONS, n_best_size=MAX_SEQ_LENGTH, version_2_with_negative=True,
                     null_score_diff_threshold=-0.1)
LONG_QUESTION = ("Which of the many different and very long named things, counted in "
                 "every way that anyone could ever think of, is meant here?")
# Questions whose Python answer is the fallback to whole words (an [UNK] CJK
# character in the span), which the export answers with the exact span instead.
FALLBACKS = {"v1": 2, "v2": 2}
# (article, paragraph) of dev-v1.1: long English contexts, then accents and CJK.
PARAGRAPHS = [(0, 0), (0, 5), (2, 3), (25, 52), (36, 0), (36, 2)]


def _questions():
    with gzip.open(shared_path("squad", "dev-v1.1.json.gz"), "rt", encoding="utf-8") as f:
        data = json.load(f)["data"]
    pairs = []
    for article, paragraph in PARAGRAPHS:
        found = data[article]["paragraphs"][paragraph]
        pairs += [(qa["question"], found["context"]) for qa in found["qas"][:2]]
    pairs.append((LONG_QUESTION, pairs[0][1]))
    pairs.append(("", pairs[2][1]))
    return pairs


QUESTIONS = _questions()


@pytest.fixture(scope="module")
def span_qa(tmp_path_factory, uncased_vocab_file):
    import keras

    from bert_tf.checkpoints import export_original
    from bert_tf.config import BertConfig
    from bert_tf.modeling import build_span_model

    root = tmp_path_factory.mktemp("span_qa")
    config = BertConfig(**TINY_CONFIG)
    keras.utils.set_random_seed(5)
    model = perturbed(build_span_model(config), seed=4)
    export_original(model, config, uncased_vocab_file, str(root / "squad_output"))
    exports = {}
    for name, options, jit_compile in (("v1", SPAN_OPTIONS, False), ("v2", EXHAUSTIVE_V2, False),
                                       ("v1_xla", SPAN_OPTIONS, True)):
        made = serving.export("span_qa", root / "squad_output", root / "made" / name,
                              max_seq_length=MAX_SEQ_LENGTH, span_options=options,
                              jit_compile=jit_compile)
        exports[name] = root / name
        shutil.copytree(made, exports[name])
    shutil.rmtree(root / "made")
    shutil.rmtree(root / "squad_output")
    runs = []
    for name in exports:
        export = str(exports[name])
        runs += [
            {"name": f"{name}/all", "export": export, "signature": "serving_default",
             "inputs": {"question": [q for q, _ in QUESTIONS],
                        "context": [c for _, c in QUESTIONS]}},
            {"name": f"{name}/metadata", "export": export, "signature": "metadata",
             "inputs": {}},
            {"name": f"{name}/none", "export": export, "signature": "serving_default",
             "inputs": {"question": [], "context": []}},
            {"name": f"{name}/empty", "export": export, "signature": "serving_default",
             "inputs": {"question": ["Who?", "", ""], "context": ["", "", "   \n"]}},
        ]
        runs += [{"name": f"{name}/alone{i}", "export": export, "signature": "serving_default",
                  "inputs": {"question": [q], "context": [c]}}
                 for i, (q, c) in enumerate(QUESTIONS[:3])]
    return model, exports, run_client(root, runs)


def _python_path(model, vocab_file, options, mask_non_context):
    """predictions, nbest lists, null odds and window examples of QUESTIONS, the Python way."""
    examples = [SquadExample(str(i), question, split_words(context)[0])
                for i, (question, context) in enumerate(QUESTIONS)]
    features = squad_features.convert_examples_to_features(
        examples, FullTokenizer(vocab_file), MAX_SEQ_LENGTH, options["doc_stride"],
        options["max_query_length"])
    columns = squad_features.feature_columns(features, MAX_SEQ_LENGTH, False)
    del columns["unique_ids"]
    outputs = model(columns, training=False)
    starts, ends = (np.asarray(outputs[k]) for k in ("start_logits", "end_logits"))
    if mask_non_context:
        context = np.zeros_like(starts, bool)
        for row, feature in enumerate(features):
            context[row, feature.doc_offset:feature.doc_offset + feature.doc_length] = True
        starts, ends = np.where(context, starts, -1e30), np.where(context, ends, -1e30)
    answers = squad_postprocessing.predict_answers(
        examples, features, starts, ends, options["n_best_size"],
        options["max_answer_length"], True, options.get("version_2_with_negative", False),
        options.get("null_score_diff_threshold", 0.0))
    return (*answers, [f.example_index for f in features])


def _normalized(text):
    return " ".join(text.split())


def _falls_back(tokenizer, text):
    """Whether the original's `get_final_text` would give up on these words.

    It looks for the pieces' text in the words' basic-tokenized text, which
    fails when a piece is [UNK], and maps characters one to one, which fails
    when tokenizing changes the number of non-space characters.
    """
    tokenized = " ".join(tokenizer.basic_tokenizer.tokenize(text))
    return ("[UNK]" in tokenizer.tokenize(text)
            or len(text.replace(" ", "")) != len(tokenized.replace(" ", "")))


@pytest.mark.parametrize("name,options", [("v1", SPAN_OPTIONS), ("v2", EXHAUSTIVE_V2)])
def test_answers_equal_the_python_path(span_qa, uncased_vocab_file, name, options):
    model, _, outputs = span_qa
    predictions, nbest, null_odds, window_examples = _python_path(
        model, uncased_vocab_file, options, mask_non_context=name == "v1")
    answer, start, end = (outputs[f"{name}/all/{key}"] for key in ("answer", "start", "end"))
    score = outputs[f"{name}/all/score"]
    # Several windows per context, but one for the last (no question, short context).
    windows = [window_examples.count(i) for i in range(len(QUESTIONS))]
    assert min(windows[:-1]) >= 2 and max(windows) >= 9 and windows[-1] == 1
    answered = fallbacks = 0
    tokenizer = FullTokenizer(uncased_vocab_file)
    for i, (_, context) in enumerate(QUESTIONS):
        expected = predictions[str(i)]
        # Ours is the context's own text (its whitespace kept); the Python
        # path joins the context's words with single spaces.
        if _normalized(answer[i]) != _normalized(expected):
            # The Python path could not align its text with the context's
            # characters and fell back to the span's whole words.
            assert _falls_back(tokenizer, expected) and _normalized(answer[i]) in expected, (
                i, answer[i], expected)
            fallbacks += 1
        if expected:
            answered += 1
            assert context[start[i]:end[i]] == answer[i]
            best = next(entry for entry in nbest[str(i)] if entry["text"])
            np.testing.assert_allclose(score[i], best["start_logit"] + best["end_logit"],
                                       atol=1e-5, err_msg=str(i))
        else:
            assert (start[i], end[i]) == (-1, -1)
        if name == "v2":
            assert outputs["v2/all/score"][i] != 0.0
            np.testing.assert_allclose(outputs["v2/all/null_score_diff"][i],
                                       null_odds[str(i)], atol=1e-5)
    assert fallbacks == FALLBACKS[name]
    # SQuAD 2.0: the threshold decides some questions each way.
    assert answered == len(QUESTIONS) if name == "v1" else 0 < answered < len(QUESTIONS)


@pytest.mark.parametrize("name", ["v1", "v2"])
def test_an_answer_does_not_depend_on_its_batch(span_qa, name):
    outputs = span_qa[2]
    for i in range(3):
        for key in ("answer", "start", "end"):
            assert outputs[f"{name}/alone{i}/{key}"][0] == outputs[f"{name}/all/{key}"][i]
        np.testing.assert_allclose(outputs[f"{name}/alone{i}/score"][0],
                                   outputs[f"{name}/all/score"][i], atol=1e-5)


def test_empty_inputs_get_no_answer(span_qa):
    outputs = span_qa[2]
    assert outputs["v1/empty/answer"].tolist() == ["", "", ""]
    assert outputs["v1/empty/start"].tolist() == [-1, -1, -1]
    assert outputs["v1/empty/end"].tolist() == [-1, -1, -1]
    assert outputs["v1/empty/score"].tolist() == [0.0, 0.0, 0.0]
    for name in ("v1", "v2"):
        assert all(value.shape == (0,) for key, value in outputs.items()
                   if key.startswith(f"{name}/none/"))
    assert sorted(k.split("/")[-1] for k in outputs if k.startswith("v2/none/")) == [
        "answer", "end", "null_score_diff", "score", "start"]


def test_a_compiled_export_answers_as_the_plain_one(span_qa):
    for run in ("all", "metadata", "none", "empty", "alone0", "alone1", "alone2"):
        assert_compiled_answers_equal(span_qa[2], f"v1/{run}", f"v1_xla/{run}")


def test_metadata(span_qa):
    outputs = span_qa[2]
    assert str(outputs["v1/metadata/kind"]) == "span_qa"
    assert int(outputs["v1/metadata/max_seq_length"]) == MAX_SEQ_LENGTH
    for key, value in EXHAUSTIVE_V2.items():
        expected = np.float32(value) if isinstance(value, float) else value
        assert outputs[f"v2/metadata/{key}"].item() == expected, key


@pytest.fixture(scope="module")
def loaded_v1(span_qa):
    return tf.saved_model.load(str(span_qa[1]["v1"]))


def test_saved_model_cli_lists_the_signatures(span_qa):
    shown = saved_model_cli_show(span_qa[1]["v2"])
    assert "signature_def['serving_default']" in shown
    assert "signature_def['metadata']" in shown
    assert "signature_def['pairs']" not in shown
    for name in ("question", "context"):
        assert f"inputs['{name}'] tensor_info:" in shown
    for name in ("answer", "start", "end", "score", "null_score_diff", "doc_stride"):
        assert f"outputs['{name}'] tensor_info:" in shown


def test_mismatched_lengths_fail_clearly_and_invalid_utf8_is_dropped_before_offsets_count(
        loaded_v1):
    """Questions and contexts of different counts are refused by name; bytes that are not
    UTF-8 are dropped before the answer's character offsets are counted.

    One test: each test's seeding clears TensorFlow's kernel cache, and the
    loaded signature's graph takes seconds to set up again.
    """
    served = loaded_v1
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="question and context must have the same length"):
        served.signatures["serving_default"](question=tf.constant(["a", "b"]),
                                             context=tf.constant(["c"]))
    question, context = QUESTIONS[4]
    broken = context.encode("utf-8").replace(b" ", b" \xff\xe2\x82 ", 5)
    clean = broken.decode("utf-8", "ignore")
    assert clean != context and len(clean) == len(context) + 5
    answers = [served.signatures["serving_default"](question=tf.constant([question]),
                                                    context=tf.constant([text]))
               for text in (broken, clean.encode("utf-8"))]
    start, end = int(answers[0]["start"][0]), int(answers[0]["end"][0])
    assert start >= 0 and answers[0]["answer"][0].numpy().decode() == clean[start:end]
    for key in ("answer", "start", "end", "score"):
        assert answers[0][key].numpy() == answers[1][key].numpy()
