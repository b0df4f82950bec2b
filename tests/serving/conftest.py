"""Exports of tiny models with the real uncased vocabulary, served by a fresh client.

One session fixture builds a pretraining-style folder (encoder + masked-LM
+ NSP heads) and a run_classifier-style folder (encoder + output_weights/
output_bias + labels.txt) with random, perturbed weights, exports the three
kinds from them plain and the masked LM also XLA-compiled (and
an encoder from all-MiniLM-L6-v2's HuggingFace folder), moves the exports
elsewhere, deletes the folders (checkpoints and vocabularies) and runs
every request in ONE subprocess that imports only tensorflow and
tensorflow_text (`load_exports.py`).
"""

import pathlib
import shutil
import sys
import types

import pytest

# Makes this folder's helper modules importable by its tests.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from serving_support import (HF_TEXTS, LABELS, MASKED, MASKED_A, MASKED_B,  # noqa: E402
                             MAX_SEQ_LENGTH, TEXTS, TEXTS_A, TEXTS_B, TOP_K, perturbed,
                             run_client)


def _folders(root, vocab_file):
    """Writes the two source folders; returns (pretrainer, classifier) models in memory."""
    import keras

    from bert_tf.checkpoints import export_original
    from bert_tf.config import BertConfig
    from bert_tf.modeling import BertEncoder, BertPretrainer, ClassificationHead

    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=37,
                        max_position_embeddings=64, type_vocab_size=2)
    pretrainer = perturbed(BertPretrainer(config), seed=1)
    export_original(pretrainer, config, vocab_file, str(root / "pretrained"))
    encoder = BertEncoder(config)
    head = ClassificationHead(len(LABELS), name="classifier")
    classifier = perturbed(
        keras.Model(encoder.input, head(encoder(encoder.input)["pooled_output"])), seed=2)
    export_original(classifier, config, vocab_file, str(root / "classifier"))
    (root / "classifier" / "labels.txt").write_text("".join(f"{l}\n" for l in LABELS))
    return pretrainer, classifier


def _requests(exports):
    runs = [{"name": "minilm/texts", "export": str(exports["minilm"]),
             "signature": "serving_default", "inputs": {"text": HF_TEXTS}}]
    for kind, texts, (texts_a, texts_b) in (
            ("encoder", TEXTS, (TEXTS_A, TEXTS_B)),
            ("classifier", TEXTS, (TEXTS_A, TEXTS_B)),
            ("masked_lm", MASKED, (MASKED_A, MASKED_B)),
            ("masked_lm_xla", MASKED, (MASKED_A, MASKED_B))):
        export = str(exports[kind])
        runs += [
            {"name": f"{kind}/texts", "export": export, "signature": "serving_default",
             "inputs": {"text": texts}},
            {"name": f"{kind}/pairs", "export": export, "signature": "pairs",
             "inputs": {"text_a": texts_a, "text_b": texts_b}},
            {"name": f"{kind}/metadata", "export": export, "signature": "metadata",
             "inputs": {}},
            {"name": f"{kind}/empty", "export": export, "signature": "serving_default",
             "inputs": {"text": []}},
        ]
        # Each text alone: a batch's padding must not change anyone's answer.
        runs += [{"name": f"{kind}/alone{i}", "export": export,
                  "signature": "serving_default", "inputs": {"text": [text]}}
                 for i, text in enumerate(texts)]
    return runs


@pytest.fixture(scope="session")
def served(tmp_path_factory, uncased_vocab_file, minilm_dir):
    """The models, the moved exports and every output the client got."""
    from bert_tf import serving

    root = tmp_path_factory.mktemp("serving")
    pretrainer, classifier = _folders(root, uncased_vocab_file)
    made = {
        "encoder": serving.export("encoder", root / "pretrained", root / "made" / "encoder",
                                  max_seq_length=MAX_SEQ_LENGTH),
        "masked_lm": serving.export("masked_lm", str(root / "pretrained"),
                                    root / "made" / "masked_lm",
                                    max_seq_length=MAX_SEQ_LENGTH, top_k=TOP_K),
        "classifier": serving.export("classifier", str(root / "classifier"),
                                     root / "made" / "classifier",
                                     max_seq_length=MAX_SEQ_LENGTH),
        # Compiled with XLA, on lengths rounded up to buckets: the masked LM
        # runs the whole encoder and a head (test_text_module.py compares
        # the encoder's compiled outputs in process).
        "masked_lm_xla": serving.export("masked_lm", root / "pretrained",
                                        root / "made" / "masked_lm_xla",
                                        max_seq_length=MAX_SEQ_LENGTH, jit_compile=True,
                                        top_k=TOP_K),
        # Real weights from a HuggingFace folder, for the comparison with HF.
        "minilm": serving.export("encoder", minilm_dir, root / "made" / "minilm",
                                 max_seq_length=MAX_SEQ_LENGTH),
    }
    exports = {kind: root / "moved" / kind for kind in made}
    for kind, path in made.items():
        shutil.copytree(path, exports[kind])
    for folder in ("made", "pretrained", "classifier"):
        shutil.rmtree(root / folder)
    outputs = run_client(root, _requests(exports))
    return types.SimpleNamespace(pretrainer=pretrainer, classifier=classifier,
                                 exports=exports, outputs=outputs)


def _classifier_folder(folder, vocab_file, num_hidden_layers):
    """Writes a run_classifier.py-style folder of a tiny classifier; returns (folder, model)."""
    import keras

    from bert_tf.checkpoints import export_original
    from bert_tf.config import BertConfig
    from bert_tf.modeling import BertEncoder, ClassificationHead

    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=num_hidden_layers,
                        num_attention_heads=4, intermediate_size=37,
                        max_position_embeddings=64)
    encoder = BertEncoder(config)
    head = ClassificationHead(len(LABELS), name="classifier")
    model = perturbed(
        keras.Model(encoder.input, head(encoder(encoder.input)["pooled_output"])), seed=3)
    export_original(model, config, vocab_file, str(folder))
    (folder / "labels.txt").write_text("".join(f"{l}\n" for l in LABELS))
    return folder, model


@pytest.fixture(scope="session")
def classifier_folder(tmp_path_factory, uncased_vocab_file):
    """A run_classifier.py-style folder of a tiny 2-layer classifier; returns (folder, model)."""
    return _classifier_folder(tmp_path_factory.mktemp("run_classifier_output"),
                              uncased_vocab_file, num_hidden_layers=2)


@pytest.fixture(scope="session")
def one_layer_classifier_folder(tmp_path_factory, uncased_vocab_file):
    """As `classifier_folder`, one layer deep: for tests of the files an export reads and
    writes, which do not depend on what the model computes (each export traces less)."""
    return _classifier_folder(tmp_path_factory.mktemp("one_layer_run_classifier_output"),
                              uncased_vocab_file, num_hidden_layers=1)
