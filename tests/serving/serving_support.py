"""Inputs and helpers shared by the serving tests and the fixtures that serve them."""

import json
import pathlib
import subprocess
import sys

import numpy as np

MAX_SEQ_LENGTH = 32
LABELS = ["contradiction", "entailment", "neutral"]
TOP_K = 4
LONG = " ".join(["Supercalifragilistic antidisestablishmentarianism, again."] * 30)
TEXTS = ["Hello, world!", "", LONG, "Ünïcödé café naïve — 東京 ΣΊΣΥΦΟΣ 🙂", "a"]
# The last two pairs' B has no tokens: each is packed as its A alone, as in the original.
TEXTS_A = ["The cat sat.", "", LONG, "Ünïcödé café", "The cat sat.", "Only A."]
TEXTS_B = ["A dog ran!", "Only B.", "short b", LONG, "", "\u200b"]
MASKED = ["The [MASK] sat on the [MASK].", "no mask here", "[MASK]",
          "start [MASK] " + LONG + " [MASK]", "Ünïcödé [mask] [MASK] café"]
MASKED_A = ["The [MASK] sat.", "nothing"]
MASKED_B = ["On the [MASK].", LONG + " [MASK]"]
# For the comparison with HuggingFace's fast tokenizer, which lower-cases a
# final capital sigma differently from the original (docs/ARCHITECTURE.md).
HF_TEXTS = ([text for text in TEXTS if "Σ" not in text]
            + ["Ünïcödé café naïve — 東京 🙂"])


def perturbed(model, seed, scale=0.05):
    """Moves every weight (zero biases, unit LayerNorm scales too) by random noise.

    Freshly initialised biases are zeros and LayerNorm scales ones; noise on
    every weight lets a comparison see a weight that is lost or misplaced.
    """
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        value = variable.numpy()
        variable.assign(value + rng.normal(0.0, scale, value.shape).astype(value.dtype))
    return model


# The tiny model of the span-QA and NER export tests (real uncased vocabulary).
TINY_CONFIG = dict(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=37, max_position_embeddings=64, type_vocab_size=2)


def run_client(root, runs):
    """Answers `runs` in a fresh process that imports only TensorFlow (`load_exports.py`).

    Returns `{run name / output name: numpy array}`; fails the test with the
    client's stderr if it fails.
    """
    root = pathlib.Path(root)
    (root / "requests.json").write_text(json.dumps(runs), encoding="utf-8")
    client = subprocess.run(
        [sys.executable, str(pathlib.Path(__file__).parent / "load_exports.py"),
         str(root / "requests.json"), str(root / "outputs.npz")],
        capture_output=True, text=True, timeout=600, cwd=root)
    assert client.returncode == 0, client.stderr[-3000:]
    with np.load(root / "outputs.npz") as outputs:
        return dict(outputs)


def assert_compiled_answers_equal(outputs, plain, compiled, tolerance=1e-5):
    """Every output of the runs named `compiled/...` equals its `plain/...` twin.

    A compiled export (`jit_compile=True`) runs the model on lengths rounded
    up to a bucket, so per-token outputs may be longer: they must agree on
    the plain run's positions, and an `input_mask` must be 0 past them.
    Strings and integers must be equal; floats within `tolerance`.
    """
    names = sorted(key[len(plain) + 1:] for key in outputs if key.startswith(f"{plain}/"))
    assert names and names == sorted(
        key[len(compiled) + 1:] for key in outputs if key.startswith(f"{compiled}/"))
    for name in names:
        expected, got = outputs[f"{plain}/{name}"], outputs[f"{compiled}/{name}"]
        if name.split("/")[-1] == "jit_compile":
            assert not expected and got
            continue
        assert got.ndim == expected.ndim and all(
            g >= e for g, e in zip(got.shape, expected.shape)), name
        if name.endswith("input_mask"):
            assert got.sum() == expected.sum(), name
        got = got[tuple(slice(0, size) for size in expected.shape)]
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, atol=tolerance, err_msg=name)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=name)


def saved_model_cli_show(export_dir):
    """What TensorFlow's `saved_model_cli show --all` prints for `export_dir` (it must succeed)."""
    cli = pathlib.Path(sys.executable).parent / "saved_model_cli"
    shown = subprocess.run([str(cli), "show", "--dir", str(export_dir), "--all"],
                           capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    return shown.stdout
