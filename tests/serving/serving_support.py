"""Inputs and helpers shared by the serving tests and the fixtures that serve them."""

import numpy as np

MAX_SEQ_LENGTH = 32
LABELS = ["contradiction", "entailment", "neutral"]
TOP_K = 4
LONG = " ".join(["Supercalifragilistic antidisestablishmentarianism, again."] * 30)
TEXTS = ["Hello, world!", "", LONG, "Ünïcödé café naïve — 東京 ΣΊΣΥΦΟΣ 🙂", "a"]
TEXTS_A = ["The cat sat.", "", LONG, "Ünïcödé café"]
TEXTS_B = ["A dog ran!", "Only B.", "short b", LONG]
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
