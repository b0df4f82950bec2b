"""Helpers for running whole task families in-process on tiny models and real data, and
for probing which words a family's model reads."""

import numpy as np

from bert_tf.config import BertConfig
from bert_tf.tasks.model_files import ModelFiles
from bert_tf.tasks.run_options import RunOptions
from tests_shared import shared_path

TINY = dict(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=128, type_vocab_size=2)


def tiny_model_files(**overrides):
    """A 2-layer, width-32 model over the real uncased vocabulary (random weights)."""
    return ModelFiles(BertConfig(**dict(TINY, **overrides)),
                      str(shared_path("vocab", "bert-base-uncased-vocab.txt")))


def quick_options(output_dir, **overrides):
    """`RunOptions` for seconds-long runs: batch 8, one epoch, 2 steps per call."""
    fields = dict(output_dir=str(output_dir), train_batch_size=8, eval_batch_size=8,
                  predict_batch_size=8, num_train_epochs=1.0, steps_per_execution=2,
                  learning_rate=1e-3)
    fields.update(overrides)
    return RunOptions(**fields)


def glue_subset(tmp_path, task, rows, files=("train.tsv", "dev.tsv", "test.tsv")):
    """The header and first `rows` lines of each of a real GLUE task's files."""
    folder = tmp_path / task
    folder.mkdir(exist_ok=True)
    for name in files:
        lines = shared_path("glue", task, name).read_text(encoding="utf-8-sig").splitlines()
        (folder / name).write_text("\n".join(lines[:rows + 1]) + "\n", encoding="utf-8")
    return folder


def read_results(path):
    """`{key: value string}` of an eval_results.txt."""
    return dict(line.split(" = ") for line in path.read_text().splitlines())


CONLL_FILES = ("eng.train", "eng.testa", "eng.testb")


def conll_subset(tmp_path, sentences):
    """The first `sentences` sentences of each real CoNLL-2003 file, after a -DOCSTART-."""
    folder = tmp_path / "conll"
    folder.mkdir()
    for name in CONLL_FILES:
        lines = shared_path("conll2003", name).read_text().splitlines()
        lines = [line for line in lines if not line.startswith("-DOCSTART-")]
        blanks = [i for i, line in enumerate(lines) if not line.strip()]
        kept = lines[:blanks[sentences - 1] + 1]
        (folder / name).write_text("-DOCSTART- -X- O O\n\n" + "\n".join(kept) + "\n")
    return folder


def read_predictions(path):
    """`(gold, predicted)` tag lists per sentence of a `word gold predicted` file."""
    gold, predicted = [[]], [[]]
    for line in path.read_text().splitlines():
        if not line:
            gold.append([])
            predicted.append([])
            continue
        word, g, p = line.split(" ")
        gold[-1].append(g)
        predicted[-1].append(p)
    return gold[:-1], predicted[:-1]


# Probes of what a model reads: inputs of LENGTH positions whose real text ends at REAL.
LENGTH, REAL = 12, 10


def padded_inputs(shape):
    """Model inputs of `shape` (`[..., LENGTH]`): random words, padding from `REAL` on."""
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 2000, shape).astype("int32")
    mask = np.ones_like(ids)
    mask[..., REAL:] = 0
    return {"input_ids": ids * mask, "input_mask": mask, "segment_ids": 0 * ids}


def changed_words(inputs, positions):
    """`inputs` with other words at `positions` (an index or slice of the last axis)."""
    ids = inputs["input_ids"].copy()
    ids[..., positions] = 2000 + ids[..., positions]
    return dict(inputs, input_ids=ids)


def model_outputs(model, inputs):
    """The model's outputs as one array (a dict's stacked on a last axis, by name)."""
    outputs = model(inputs)
    if isinstance(outputs, dict):
        return np.stack([np.asarray(outputs[name]) for name in sorted(outputs)], axis=-1)
    return np.asarray(outputs)


def differs(a, b):
    """A new head's logits are near 0.01, and one word changed moves them by 1e-5 or more
    (outputs that do not depend on it come out equal to the bit)."""
    return np.abs(a - b).max() > 1e-6
