"""Inputs shared by the serving tests and the fixture that serves them."""

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
